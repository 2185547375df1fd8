#!/bin/sh
# RP2350 (Pico 2) images on the virtual board: pico-sdk's start-up looks
# up boot ROM functions first, and without the chip's ROM (32 KiB) the run
# stops there, naming the function and how to read the ROM. The target's
# chip key is checked.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vendor-lib.sh"
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
B=$TEST_TMP/p2-b

test_expect_success 'the board app builds for the Pico 2' '
    pico_build "$CP_ROOT/bench/pico-board" "$B" -DPICO_BOARD=pico2 &&
    arm-none-eabi-readelf -h "$B/app.elf" >h &&
    grep "Machine:.*ARM" h
'

test_expect_success 'no ROM: the first use stops the run, naming it' '
    test_must_fail $CODEPLACE trace "$B/app.elf" --target rp2350 \
        --mark app_mark -n 1 -o run.trace >out 2>err &&
    grep "the firmware reads the boot ROM at 0x000000.. (by the instruction at PC 0x[0-9a-f]* (rom_func_lookup+0x[0-9a-f]*), called from runtime_init_bootrom_reset+0x[0-9a-f]*), and no ROM is loaded" err &&
    grep "dump_image rom.bin 0 32768" err &&
    grep "^ended:        fault" out
'

test_expect_success 'chip: a chip the board does not know is an error with file and line' '
    sed "s/^chip .*/chip rp9999/" "$CP_ROOT/targets/rp2040.target" | sed "s/^name .*/name mine/" >mine.target &&
    test_must_fail $CODEPLACE trace "$B/app.elf" --target ./mine.target \
        --mark app_mark -n 1 -o run.trace 2>err &&
    grep "mine.target:[0-9]*: chip: .rp9999. is not rp2040, rp2350 or none" err
'

test_done
