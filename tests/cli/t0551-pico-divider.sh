#!/bin/sh
# The SIO hardware divider of the virtual board (src/emu/rp2040.c, RP2040
# datasheet 2.3.1.5) under a pico-sdk app: signed and unsigned results,
# division by zero and INT_MIN / -1 (which the datasheet leaves undefined:
# the values reported for the chip, src/emu/rp2040.c), the DIRTY flag pico-sdk's divide wrappers
# use to save and restore a division in progress.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vendor-lib.sh"
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
A=$TEST_TMP/div
B=$TEST_TMP/div-b
mkdir -p "$A"

cat >"$A/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
set(PICO_NO_PICOTOOL 1)
include(${PICO_SDK_PATH}/external/pico_sdk_import.cmake)
project(div C CXX ASM)
pico_sdk_init()
add_executable(div main.c)
target_link_libraries(div pico_stdlib hardware_divider)
CM

cat >"$A/main.c" <<'C'
#include <limits.h>
#include <stdio.h>
#include "pico/stdlib.h"
#include "hardware/divider.h"

static void s(int32_t a, int32_t b)
{
    divmod_result_t r = hw_divider_divmod_s32(a, b);
    printf("s %ld / %ld = %ld rem %ld\n", (long)a, (long)b,
           (long)to_quotient_s32(r), (long)to_remainder_s32(r));
}

static void u(uint32_t a, uint32_t b)
{
    divmod_result_t r = hw_divider_divmod_u32(a, b);
    printf("u %lu / %lu = %lu rem %lu\n", (unsigned long)a, (unsigned long)b,
           (unsigned long)to_quotient_u32(r), (unsigned long)to_remainder_u32(r));
}

volatile int32_t va = 1000, vb = 10;

/* A division by the C operator while another is in progress on the
 * divider: pico-sdk's wrapper sees DIRTY, saves the state and restores it. */
static void nested(void)
{
    hw_divider_divmod_s32_start(100, 7);
    int32_t inner = va / vb;
    int32_t q = hw_divider_s32_quotient_wait();
    printf("nested 100 / 7 = %ld, inner %ld\n", (long)q, (long)inner);
}

__attribute__((noinline)) uint32_t div_min(void)
{
    return to_quotient_u32(hw_divider_divmod_s32(INT_MIN, -1));
}

__attribute__((noinline)) uint32_t div_zero(void)
{
    return to_quotient_u32(hw_divider_divmod_s32(-5, 0));
}

int main(void)
{
    stdio_init_all();
    s(100, 9); s(-100, 9); s(100, -9); s(-100, -9);
    s(100, 0); s(-100, 0); s(0, 0);
    s(INT_MIN, -1); s(INT_MAX, 3); s(INT_MIN, 1);
    u(100, 9); u(100, 0); u(0, 0); u(UINT32_MAX, 3); u(UINT32_MAX, UINT32_MAX);
    nested();
    printf("%lx %lx\n", (unsigned long)div_min(), (unsigned long)div_zero());
    for (;;)
        tight_loop_contents();
}
C

test_expect_success 'the divider app builds' '
    pico_build "$A" "$B"
'

test_expect_success 'signed, unsigned, by zero, INT_MIN / -1: as on the chip' '
    $CODEPLACE trace "$B/div.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --max-insns 2000000 --uart uart.txt -o run.trace >out 2>err;
    tr -d "\r" <uart.txt >got &&
    cat >want <<-\EOF &&
	s 100 / 9 = 11 rem 1
	s -100 / 9 = -11 rem -1
	s 100 / -9 = -11 rem 1
	s -100 / -9 = 11 rem -1
	s 100 / 0 = -1 rem 100
	s -100 / 0 = 1 rem -100
	s 0 / 0 = -1 rem 0
	s -2147483648 / -1 = -2147483648 rem 0
	s 2147483647 / 3 = 715827882 rem 1
	s -2147483648 / 1 = -2147483648 rem 0
	u 100 / 9 = 11 rem 1
	u 100 / 0 = 4294967295 rem 100
	u 0 / 0 = 4294967295 rem 0
	u 4294967295 / 3 = 1431655765 rem 0
	u 4294967295 / 4294967295 = 1 rem 0
	nested 100 / 7 = 14, inner 100
	80000000 1
	EOF
    test_cmp want got
'

test_expect_success 'harness mode: the same results returned in r0' '
    $CODEPLACE trace "$B/div.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --iter div_min -n 2 --expect 0x80000000 -o h.trace >out &&
    $CODEPLACE trace "$B/div.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --iter div_zero -n 2 --expect 1 -o h.trace >out
'

test_done
