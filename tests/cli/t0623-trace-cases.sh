#!/bin/sh
# The same trace is taken the same way by sim, plan and report --trace:
# one cut short is read up to its last block (a warning, the same
# figures), one of another target whose code ran outside the target's
# cached memory is an error in all three.
. "$(dirname "$0")/lib.sh"
need_demo 'traces cut short and of another target'
MKTRACE=$CP_ROOT/build/san/tests/mktrace

test_expect_success 'a demo trace, cut 8 bytes short' '
    $CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 3 -q -o $TEST_TMP/run.trace >/dev/null &&
    size=$(wc -c <$TEST_TMP/run.trace) &&
    head -c $((size - 8)) $TEST_TMP/run.trace >$TEST_TMP/cut.trace &&
    $CODEPLACE samples $TEST_TMP/run.trace --elf $ELF --rate 4000 -q \
        -o $TEST_TMP/s.txt
'
CUT=$TEST_TMP/cut.trace

test_expect_success 'cut short: sim, plan and report warn alike and agree' '
    $CODEPLACE sim $CUT --elf $ELF --map $MAP --json -o sim.json 2>sim.err &&
    $CODEPLACE plan $ELF --map $MAP --trace $CUT --strategy hotblock \
        --time 0 --json -o plan.json 2>plan.err &&
    $CODEPLACE report $TEST_TMP/s.txt --elf $ELF --map $MAP --trace $CUT \
        --json -o rep.json 2>rep.err &&
    for f in sim plan; do
        grep "warning: $CUT: the recording was cut short; using its [0-9]* complete records" $f.err ||
            return 1
    done &&
    grep "warning: $CUT: the recording was cut short" rep.err &&
    test "$(grep "cut short; using its" sim.err)" = "$(grep "cut short; using its" plan.err)" &&
    same $(jget plan.json "d[\"results\"][0][\"stock_misses_per_iteration\"]") \
         $(jget sim.json "d[\"warm\"][\"misses_mean\"]")
'

# Code at 0x20000100 (the RP2040's SRAM): none of it in the cached flash.
test_expect_success 'none of the trace in the cached memory: the same error in sim, plan and report' '
    printf "%s\n" M "F 0x20000100 80 40" "R 3" | $MKTRACE r.trace rp2040 &&
    printf "# codeplace samples 1\n0x10000124 5\n" >s.txt &&
    test_exit 1 $CODEPLACE sim r.trace --elf $ELF --map $MAP 2>sim.err &&
    test_exit 1 $CODEPLACE plan $ELF --map $MAP --trace r.trace --time 0 2>plan.err &&
    test_exit 1 $CODEPLACE report s.txt --elf $ELF --trace r.trace 2>rep.err &&
    for f in sim plan rep; do
        grep -q "error: r.trace: none of its 160 instructions ran from rp2040.s cached memory" $f.err ||
            return 1
    done
'

test_done
