#!/bin/sh
# More of pico-sdk's runtime on the virtual board: the unique board ID (the
# ROM's flash functions drive the SSI), pico_rand (ROSC RANDOMBIT, a bus
# performance counter it claims by its reset value: with reads of zero it
# stopped on a hard assert), a flash erase through the ROM, sleep_ms.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vendor-lib.sh"
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
A=$TEST_TMP/rt
B=$TEST_TMP/rt-b
mkdir -p "$A"

cat >"$A/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
set(PICO_NO_PICOTOOL 1)
include(${PICO_SDK_PATH}/external/pico_sdk_import.cmake)
project(rt C CXX ASM)
pico_sdk_init()
add_executable(rt main.c)
target_link_libraries(rt pico_stdlib pico_rand pico_unique_id hardware_flash)
CM

cat >"$A/main.c" <<'C'
#include <stdio.h>
#include "pico/stdlib.h"
#include "pico/rand.h"
#include "pico/unique_id.h"
#include "hardware/flash.h"
#include "hardware/sync.h"

/* An SVC: unicorn's Cortex-M0 model would take it as a NOP. */
__attribute__((noinline)) void svc_call(void)
{
    __asm volatile("svc #5");
}

/* Pending PendSV, as an RTOS does to switch threads. */
__attribute__((noinline)) void pendsv(void)
{
    *(volatile uint32_t *)0xe000ed04 = 1u << 28;
}

volatile int never;

int main(void)
{
    stdio_init_all();
    if (never) {
        svc_call();
        pendsv();
    }
    char id[2 * PICO_UNIQUE_BOARD_ID_SIZE_BYTES + 1];
    pico_get_unique_board_id_string(id, sizeof id);
    printf("id %s\n", id);
    uint32_t a = get_rand_32(), b = get_rand_32();
    printf("rand %s\n", a != b ? "differ" : "same");
    uint32_t s = save_and_disable_interrupts();
    flash_range_erase(0x100000, FLASH_SECTOR_SIZE);
    restore_interrupts(s);
    absolute_time_t t0 = get_absolute_time();
    sleep_ms(2);
    printf("slept %s\n", absolute_time_diff_us(t0, get_absolute_time()) >= 2000 ? "ok" : "short");
    for (;;)
        tight_loop_contents();
}
C

test_expect_success 'the app builds' '
    pico_build "$A" "$B"
'

test_expect_success 'unique ID, pico_rand, a flash erase and sleep_ms run through' '
    test_must_fail $CODEPLACE trace "$B/rt.elf" --target rp2040 \
        --rom "$CP_BOOTROM" --uart uart.txt -o run.trace >out 2>err &&
    grep "the firmware stopped at PC 0x[0-9a-f]* (main+0x[0-9a-f]*) (a branch to itself)" err &&
    tr -d "\r" <uart.txt >got &&
    printf "id 0000000000000000\nrand differ\nslept ok\n" >want &&
    test_cmp want got &&
    ! grep "PERFSEL\|BUSCTRL+0x00c\|ROSC\|IO_QSPI" out
'

test_expect_success 'an SVC or a pended PendSV stops the run: no exceptions here' '
    test_must_fail $CODEPLACE trace "$B/rt.elf" --target rp2040 \
        --rom "$CP_BOOTROM" --iter svc_call -n 1 -o run.trace >out 2>err &&
    grep "the firmware stopped at PC 0x[0-9a-f]* (svc_call+0x0): SVC #5 (the board takes no exceptions)" err &&
    test_must_fail $CODEPLACE trace "$B/rt.elf" --target rp2040 \
        --rom "$CP_BOOTROM" --iter pendsv -n 1 -o run.trace >out 2>err &&
    grep "the firmware pends an exception (ICSR 0xe000ed04: PendSV, SysTick or NMI, as an RTOS does to switch threads): the board takes no exceptions, in the block at pendsv+0x0" err
'

test_done
