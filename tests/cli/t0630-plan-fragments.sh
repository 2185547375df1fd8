#!/bin/sh
# The Zephyr and pico-sdk fragments state the prediction of what those
# integrations apply, not the full plan's: pico-sdk applies the flash group
# whole and the fast-memory group without the members of libraries ld finds
# with -l; Zephyr keeps the hot block's order but not its padding, and
# moves no archive members.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw

# The demo's trace, made once; each test takes a copy.
mk_trace() {
    cp "$TEST_TMP/s.trace" s.trace
}

num() { # FILE PREFIX: the number after PREFIX
    sed -n "s/^# $2 \([0-9.]*\) misses per iteration.*/\1/p" "$1"
}

test_expect_success 'trace the demo' '
    $CODEPLACE trace $FW/demo-rp2040.elf -t rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 4 -o $TEST_TMP/s.trace -q >/dev/null
'

test_expect_success 'a flash-only plan: pico-sdk applies all of it, its prediction is the full plan' '
    mk_trace &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace s.trace \
        -t rp2040 --strategy hotblock --emit p -q --json -o plan.json &&
    pico=$(num p/codeplace_pico.cmake "pico-sdk applies:") &&
    full=$(sed -n "s/^# (the full plan: \([0-9.]*\), stock [0-9.]*).*/\1/p" p/codeplace_pico.cmake) &&
    test -n "$pico" && test "$pico" = "$full" &&
    grep -q "all of the plan" p/codeplace_pico.cmake &&
    ! grep -q "^# predicted:" p/codeplace_pico.cmake &&
    ! grep -q "^# predicted:" p/codeplace.cmake &&
    grep -q "^ \* predicted:" p/codeplace_flash.ld
'

# The Zephyr module places archive members by archive and object
# (docs/zephyr.md): all of the plan, its text after the relocated code's
# flash copy.
test_expect_success 'RAM and flash: archive members counted as the snippets name them' '
    mk_trace &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace s.trace \
        -t rp2040 --strategy combined --budget 16K --search-moves 5000 --descent-passes 0 --time 0 \
        --emit p -q >/dev/null &&
    full=$(sed -n "s/^ \* predicted: \([0-9.]*\) .*/\1/p" p/codeplace_ram.ld) &&
    pico=$(num p/codeplace_pico.cmake "pico-sdk applies:") &&
    zeph=$(num p/codeplace.cmake "Zephyr applies:") &&
    test -n "$full" && test -n "$pico" && test -n "$zeph" &&
    python3 -c "import sys; sys.exit(0 if $pico > $full else 1)" &&
    n=$(grep -c "^    \*[^(]*\.a:" p/codeplace_ram.ld) &&
    test $n -gt 0 &&
    grep -q "^#   [0-9]* fast-memory sections* not moved (in a library ld finds with -l" p/codeplace_pico.cmake &&
    ! grep -q "hot-block sections* not placed" p/codeplace_pico.cmake &&
    ! grep -q "not moved" p/codeplace.cmake &&
    grep -q "^# (the full plan: .*); all of the plan.$" p/codeplace.cmake
'

test_done
