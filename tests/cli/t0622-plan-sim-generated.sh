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

# A function called by two names (ldexp, scalbn) in fast memory: ld makes
# a stub per name, and the second name's @stub line lists the branches
# that use it. Before it did, sim sent every call through the first line
# for that function and measured 1,715.3 misses per iteration for this
# plan where plan predicted 1,716.7.
test_expect_success 'a second name of a function has its own stub, used by its branches only' '
    here=$PWD && (cd "$CP_ROOT" && $CODEPLACE plan $ELF --map $MAP \
        --trace $TEST_TMP/gen.trace --target rp2040 --cache 16K,4,8,plru \
        --cache-seed 5 --strategy ram --budget 8K --search-moves 30 \
        --descent-passes 0 --time 0 --layout $here/a.layout --json \
        -q -o $here/a.json) &&
    head -1 a.layout >got && echo "# codeplace layout 3" >want && test_cmp want got &&
    grep "^@stub .* scalbn@0x.* from:0x" a.layout &&
    $CODEPLACE sim $TEST_TMP/gen.trace --elf $ELF --map $MAP --target rp2040 \
        --cache 16K,4,8,plru --seed 5 --layout a.layout --json -q -o s.json &&
    same $(jget a.json "d[\"results\"][0][\"misses_per_iteration\"]") \
         $(jget s.json "d[\"warm\"][\"misses_mean\"]")
'

test_done
