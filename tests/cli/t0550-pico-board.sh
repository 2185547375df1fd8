#!/bin/sh
# A pico-sdk 2.2.0 pico_stdlib app on the virtual board (targets/rp2040,
# src/emu/rp2040.c): from reset through boot2, crt0, runtime init and main,
# and in harness mode after the real start-up. It prints over UART, sleeps
# and reads the timer, divides with the SIO divider (32- and 64-bit), uses
# float through the boot ROM's table and a hardware spinlock; its result
# must be the one the same code computes on the host.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vendor-lib.sh"
# unicorn keeps part of its code cache until exit (code written to SRAM).
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
A=$TEST_TMP/app
B=$TEST_TMP/app-b
mkdir -p "$A"

cat >"$A/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
set(PICO_NO_PICOTOOL 1)
include(${PICO_SDK_PATH}/external/pico_sdk_import.cmake)
project(app C CXX ASM)
pico_sdk_init()
add_executable(app main.c work.c)
target_compile_options(app PRIVATE -ffp-contract=off)
target_link_libraries(app pico_stdlib hardware_sync)
pico_add_extra_outputs(app)
CM

cat >"$A/work.h" <<'C'
#include <stdint.h>
uint32_t work(uint32_t seed);
C

cat >"$A/work.c" <<'C'
/* The same code on the board and on the host: 32-bit signed and unsigned
 * division and remainder, 64-bit division, single-precision float (the
 * operations the RP2040 ROM rounds as IEEE 754 does). */
#include "work.h"

uint32_t work(uint32_t seed)
{
    uint32_t h = 2166136261u, x = seed;
    for (int i = 1; i <= 64; i++) {
        x = x * 1103515245u + 12345u;
        int32_t a = (int32_t)x, b = (int32_t)((x >> 7) | 1);
        int32_t bs = (i & 1) ? b : -b;
        h = (h ^ (uint32_t)(a / bs)) * 16777619u;
        h = (h ^ (uint32_t)(a % bs)) * 16777619u;
        uint32_t ub = (x >> (i % 29)) | 1;
        h = (h ^ (x / ub)) * 16777619u;
        h = (h ^ (x % ub)) * 16777619u;
        uint64_t w = ((uint64_t)x << 32) | h;
        h = (h ^ (uint32_t)(w / (ub | 0x10000u))) * 16777619u;
        float f = (float)(int32_t)(x >> 8) / (float)(i * 7 + 1);
        f = f * 1.5f - 3.25f;
        h = (h ^ (uint32_t)(int32_t)f) * 16777619u;
    }
    return h;
}
C

cat >"$A/main.c" <<'C'
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
C

cat >"$A/host.c" <<'C'
#include <stdio.h>
#include "work.h"
int main(void) { printf("%08x\n", (unsigned)work(12345)); return 0; }
C

test_expect_success 'the app builds with pico-sdk and on the host' '
    pico_build "$A" "$B" &&
    gcc -O2 -ffp-contract=off -o "$TEST_TMP/host" "$A/host.c" "$A/work.c" &&
    "$TEST_TMP/host" >"$TEST_TMP/want" &&
    test -s "$TEST_TMP/want"
'
W=$(cat "$TEST_TMP/want" 2>/dev/null)

test_expect_success 'from reset: boot2, crt0, runtime init, main; UART as on the chip' '
    $CODEPLACE trace "$B/app.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --mark app_mark -n 3 --uart uart.txt -o run.trace >out 2>err &&
    printf "sleep_us(100) ok\r\nbusy_wait_us(50) ok\r\nwork %s\r\nagain %s\r\n" "$W" "$W" >want &&
    test_cmp want uart.txt &&
    grep "^iterations:   3 " out &&
    grep "^ended:        done" out &&
    ! grep "^unmodelled:" out
'

test_expect_success '-v shows the UART output' '
    $CODEPLACE trace "$B/app.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --mark app_mark -n 1 -v -o run.trace >out 2>err &&
    grep "^uart0: " err &&
    grep "^work $W" err
'

test_expect_success 'harness mode runs the start-up to --init, then init and iter' '
    $CODEPLACE trace "$B/app.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --init app_init --iter app_iter -n 4 --expect 0x$W \
        --result app_result -o h.trace >out 2>err &&
    grep "^result:       app_result = 0x$W" out &&
    grep "^returns:      app_init 0x00000000; app_iter [0-9]* in every iteration" out
'

test_expect_success 'harness mode without --init runs the start-up to main' '
    $CODEPLACE trace "$B/app.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --iter app_work -n 2 --expect 0x$W -o h.trace >out 2>err &&
    grep "^ended:        done" out
'

test_expect_success 'the start-up is part of the harness run, before the first mark' '
    $CODEPLACE trace "$B/app.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --iter app_work -n 2 --json -o h.trace >j &&
    sed -n "s/.*\"pre_instructions\": \([0-9]*\).*/\1/p" j >pre &&
    test "$(cat pre)" -gt 1000
'

test_expect_success 'without a ROM the run stops at the first use, naming it' '
    test_must_fail $CODEPLACE trace "$B/app.elf" --target rp2040 \
        --mark app_mark -n 1 -o run.trace >out 2>err &&
    grep "reads the rom at 0x000000.. (by the instruction at PC 0x[0-9a-f]* (rom_funcs\{0,1\}_lookup+0x[0-9a-f]*)" err &&
    grep "no ROM loaded: give the chip.s boot ROM with --rom FILE" err &&
    grep "dump_image rom.bin 0 16384" err
'

test_expect_success 'a ROM larger than the ROM memory is refused' '
    head -c 20000 /dev/zero >big.bin &&
    test_must_fail $CODEPLACE trace "$B/app.elf" --target rp2040 \
        --rom big.bin --mark app_mark -n 1 -o run.trace 2>err &&
    grep "big.bin.: larger than the 16384 bytes" err
'

test_expect_success 'ROM code is fetched past the XIP cache (uncached)' '
    $CODEPLACE trace "$B/app.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --mark app_mark -n 1 -o r.trace >/dev/null 2>&1 &&
    $CODEPLACE trace --info r.trace --records >rec &&
    grep "^fetch 0x0000[0-3][0-9a-f]\{3\} .* u$" rec >rom &&
    test -s rom &&
    ! grep "^fetch 0x0000[0-3][0-9a-f]\{3\} [0-9]* [0-9]*$" rec
'

test_done
