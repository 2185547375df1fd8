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
# The app (bench/pico-board/, also the bench's): main.c on the board,
# work.c on both, host.c the host's main.
A=$CP_ROOT/bench/pico-board
B=$TEST_TMP/app-b

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
    grep "reads the boot ROM at 0x000000.. (by the instruction at PC 0x[0-9a-f]* (rom_funcs\{0,1\}_lookup+0x[0-9a-f]*)" err &&
    grep "no ROM is loaded: give the chip.s boot ROM with --rom FILE" err &&
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

test_expect_success 'a hook on every instruction counts the same iterations' '
    $CODEPLACE trace "$B/app.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --mark app_mark -n 3 --per-iteration -o r.trace >a 2>/dev/null &&
    $CODEPLACE trace "$B/app.elf" --target rp2040 --rom "$CP_BOOTROM" \
        --mark app_mark -n 3 --per-iteration --count-each >b 2>/dev/null &&
    test_cmp a b &&
    test $(wc -l <a) = 3
'

test_done
