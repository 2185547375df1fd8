#!/bin/sh
# No silent zeros: a register the virtual board does not model (the ADC)
# is counted per register, and the loop pico-sdk's adc_init runs to wait
# for it stops the run with the register, the PC and the function named,
# long before the instruction limit. So does a wait on a modelled register
# that nothing on the board changes (UART input); a long sleep, which
# reads the timer's unchanging high word millions of times, does not.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vendor-lib.sh"
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
A=$TEST_TMP/adc
B=$TEST_TMP/adc-b
mkdir -p "$A"

cat >"$A/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.13)
set(PICO_NO_PICOTOOL 1)
include(${PICO_SDK_PATH}/external/pico_sdk_import.cmake)
project(adc C CXX ASM)
pico_sdk_init()
add_executable(adc main.c)
target_link_libraries(adc pico_stdlib hardware_adc)
CM

cat >"$A/main.c" <<'C'
#include <stdio.h>
#include "pico/stdlib.h"
#include "hardware/adc.h"

__attribute__((noinline)) uint32_t peek(void)
{
    /* One read of the ADC's FIFO status: counted, not a loop. */
    return adc_hw->fcs;
}

__attribute__((noinline)) int wait_key(void)
{
    return getchar();
}

volatile int never;

int main(void)
{
    stdio_init_all();
    sleep_ms(200);
    printf("slept\n");
    if (never)
        wait_key();
    printf("adc %lu\n", (unsigned long)peek());
    adc_init();
    adc_select_input(0);
    printf("read %u\n", adc_read());
    for (;;)
        tight_loop_contents();
}
C

test_expect_success 'the ADC app builds' '
    pico_build "$A" "$B"
'

test_expect_success 'polling ADC_CS stops the run, naming register, function and the reading instruction; sleep_ms(200) before it runs through' '
    test_must_fail $CODEPLACE trace "$B/adc.elf" --target rp2040 \
        --rom "$CP_BOOTROM" --uart uart.txt -o run.trace >out 2>err &&
    printf "slept\r\nadc 0\r\n" >want &&
    test_cmp want uart.txt &&
    grep "error: .*adc.elf: polling ADC_CS 0x4004c000 in adc_init+0x[0-9a-f]*, 1,000,000 times (a register the virtual board does not model)" err &&
    grep "^unmodelled:   1,000,001 reads of 2 registers" out &&
    grep "^              ADC_CS  *0x4004c000 1,000,000$" out &&
    grep "^              ADC_FCS  *0x4004c008 1$" out &&
    grep "^instructions: [0-9,]* " out >n &&
    test "$(sed "s/^instructions: \([0-9,]*\) .*/\1/; s/,//g" n)" -lt 40000000 &&
    pc=$(sed -n "s/.* in adc_init+0x\([0-9a-f]*\),.*/\1/p" err) &&
    arm-none-eabi-nm "$B/adc.elf" | awk "\$3 == \"adc_init\" {print \$1}" >base &&
    addr=$(printf "%x" $((0x$(cat base) + 0x$pc))) &&
    arm-none-eabi-objdump -d "$B/adc.elf" --start-address=0x$addr \
        --stop-address=$((0x$addr + 2)) >dis &&
    grep "^ *$addr:.*ldr" dis
'

test_expect_success 'waiting for UART input stops, naming UARTFR and its value' '
    test_must_fail $CODEPLACE trace "$B/adc.elf" --target rp2040 \
        --rom "$CP_BOOTROM" --init peek --iter wait_key -n 1 -o run.trace >out 2>err &&
    grep "error: .*adc.elf: polling UART0_UARTFR 0x40034018 in stdio_uart_in_chars+0x[0-9a-f]*, 1,000,000 times, always 0x00000090 with no peripheral write between" err
'

test_expect_success 'harness: an --init main never calls is named, not run forever' '
    test_must_fail $CODEPLACE trace "$B/adc.elf" --target rp2040 \
        --rom "$CP_BOOTROM" --init wait_key --iter peek -n 1 \
        --max-insns 3000000 -o run.trace >out 2>err &&
    grep "the start-up from reset never reached wait_key in 3000000 instructions (--max-insns): harness mode runs it to --init, or to main" err
'

test_expect_success 'JSON lists the unmodelled registers' '
    $CODEPLACE trace "$B/adc.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --json -o run.trace >j 2>/dev/null;
    python3 -c "import json,sys; d=json.load(open(\"j\")); u=d[\"unmodelled\"]; assert d[\"end\"] == \"stopped\"; assert u[0] == {\"register\": \"ADC_CS\", \"address\": 0x4004c000, \"reads\": 1000000}, u; assert d[\"unmodelled_reads\"] == 1000001"
'

test_done
