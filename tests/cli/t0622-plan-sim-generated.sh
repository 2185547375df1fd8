#!/bin/sh
# plan predicts what sim --layout measures under every replacement policy
# and for every strategy on a made-up workload over the demo's code
# (tests/cli/gen-calltrace.py: functions run start to end, taking real
# BL / B.W call sites), whose calls reach a function by two names (scalbn
# and its alias ldexp): ld gives each name its own stub, and the layout
# says which branches use which.
. "$(dirname "$0")/lib.sh"
need_demo 'plan against sim on a generated trace'
. "$(dirname "$0")/plan-sim.sh"
MKTRACE=$CP_ROOT/build/san/tests/mktrace

test_expect_success 'generate a trace over the demo image' '
    arm-none-eabi-objdump -d $ELF >dump &&
    hash=$($CODEPLACE image $ELF --json | python3 -c "import json, sys; print(json.load(sys.stdin)[\"hash\"])") &&
    python3 $CP_ROOT/tests/cli/gen-calltrace.py dump 3 4 >gen.txt &&
    $MKTRACE $TEST_TMP/gen.trace rp2040 $hash <gen.txt &&
    $CODEPLACE sim $TEST_TMP/gen.trace --elf $ELF --map $MAP --json -q -o s.json &&
    test "$(jget s.json "d[\"warm\"][\"iterations\"]")" = 3
'

for spec in 16K,2,8,lru 16K,2,8,fifo 16K,4,8,plru 16K,2,8,random; do
    test_expect_success "$spec: every strategy's prediction is what sim measures" "
        plan_sim_policy $TEST_TMP/gen.trace $spec 12K &&
        grep -q '^@stub' ram.layout && grep -q '^@stub' combined.layout
    "
done

# The case the figures above can fail on: a function called by two names
# (ldexp, scalbn) in fast memory (the lru case's density plan); the second
# name's stub lists the branches that use it, the others do not use it.
test_expect_success 'a layout gives a second name of a function its own stub' '
    d=$TEST_TMP/2 &&
    grep "^# codeplace layout 3" $d/density.layout &&
    grep "^@stub .* scalbn@0x.* from:0x" $d/density.layout
'

test_done
