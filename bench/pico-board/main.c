/* A pico-sdk pico_stdlib app for the virtual board: the figures of
 * bench/trace-pico.sh and the checks of tests/cli/t0550-pico-board.sh. */
#include <stdio.h>
#include "pico/stdlib.h"
#include "hardware/sync.h"
#include "work.h"

volatile uint32_t app_result;
static spin_lock_t *lock;

__attribute__((noinline)) uint32_t app_init(void)
{
    lock = spin_lock_init(spin_lock_claim_unused(true));
    return 0;
}

/* One iteration: the work under a hardware spinlock. */
__attribute__((noinline)) uint32_t app_iter(void)
{
    uint32_t save = spin_lock_blocking(lock);
    uint32_t r = work(12345);
    spin_unlock(lock, save);
    app_result = r;
    return r;
}

__attribute__((noinline)) uint32_t app_work(void)
{
    return work(12345);
}

__attribute__((noinline)) void app_mark(void)
{
    __asm volatile("");
}

int main(void)
{
    stdio_init_all();
    app_init();
    uint64_t t0 = time_us_64();
    sleep_us(100);
    uint64_t t1 = time_us_64();
    busy_wait_us(50);
    uint64_t t2 = time_us_64();
    printf("sleep_us(100) %s\n", t1 - t0 >= 100 && t1 - t0 < 150 ? "ok" : "wrong");
    printf("busy_wait_us(50) %s\n", t2 - t1 >= 50 && t2 - t1 < 60 ? "ok" : "wrong");
    printf("work %08lx\n", (unsigned long)app_iter());
    printf("again %08lx\n", (unsigned long)app_work());
    for (;;) {
        app_mark();
        app_iter();
    }
}
