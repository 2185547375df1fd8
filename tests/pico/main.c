/* A pico_stdlib program: work_init, then iterations of work_iteration,
 * their combined result on stdout (UART). codeplace_init and
 * codeplace_iteration are the harness entry points (codeplace trace --init
 * codeplace_init --iter codeplace_iteration), codeplace_mark the free-run
 * one (--mark codeplace_mark). */
#include <stdio.h>

#include "pico/stdlib.h"
#include "work.h"

uint32_t lib_cold(uint32_t x);

/* The same name as a static function of work.c. */
__attribute__((noinline, noclone)) static uint32_t twice(uint32_t x)
{
    return x + x;
}

volatile uint32_t codeplace_result;
static uint32_t iter;

void codeplace_init(void);
void codeplace_iteration(void);
void codeplace_mark(void);

/* Free-run traces start an iteration each time the PC reaches it. */
__attribute__((used, noinline)) void codeplace_mark(void)
{
    __asm volatile("" ::: "memory");
}

__attribute__((used, noinline)) void codeplace_init(void)
{
    work_init();
    codeplace_result = 0;
    iter = 0;
}

__attribute__((used, noinline)) void codeplace_iteration(void)
{
    codeplace_result = twice(codeplace_result * 33u) + work_iteration(iter++);
}

int main(void)
{
    stdio_init_all();
    codeplace_init();
    for (int i = 0; i < 16; i++) {
        codeplace_mark();
        codeplace_iteration();
    }
    codeplace_mark();
    printf("result %08lx %lu\n", (unsigned long)codeplace_result,
           (unsigned long)lib_cold(iter));
    for (;;)
        tight_loop_contents();
}
