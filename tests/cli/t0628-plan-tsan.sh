#!/bin/sh
# plan --threads under ThreadSanitizer (build/tsan/codeplace, mk/tsan.mk):
# the annealing chains of a search run in pthreads (src/plan/chains.c) on
# copies of the search state and views of one model; any data race between
# them is a report, and a report fails the test (exit 66, halt_on_error).
# Colour and combined (fast memory, GNU ld's stubs) searches on the demo
# firmware's trace, with move budgets (--time 0) small enough for TSan's
# slowdown. The trace is made by the ASan build ($CODEPLACE). plan runs
# from the project root, where the map's objects are, so that the combined
# plan orders GNU ld's stubs (plan_ldstub_sort) in its threads; its outputs
# are absolute paths under $TEST_TMP.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
ELF=$FW/demo-rp2040.elf
MAP=$FW/demo-rp2040.map
TSAN_CP=$CP_ROOT/build/tsan/codeplace
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"

if ! [ -f "$ELF" ] || ! [ -x "$TSAN_CP" ]; then
    test_skip 'plan --threads under ThreadSanitizer' 'build/fw/demo-rp2040.elf or build/tsan/codeplace not built (make test-deps)'
    test_done
    exit 0
fi

# tsan_plan LOG ARGS...: plan under TSan; exit 0 and no report in LOG
tsan_plan() {
    log=$1
    shift
    (cd "$CP_ROOT" && "$TSAN_CP" plan "$@") 2>"$log"
    rc=$?
    if grep -q "ThreadSanitizer" "$log"; then
        sed -n '/WARNING: ThreadSanitizer/,/^SUMMARY/p' "$log" | head -60
        echo "ThreadSanitizer report (exit $rc)" >&2
        return 1
    fi
    test $rc -eq 0 || { cat "$log"; echo "plan exited $rc" >&2; return 1; }
}

test_expect_success 'trace the demo (ASan build)' '
    $CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 3 -q -o $TEST_TMP/run.trace >/dev/null
'
P="$ELF --map $MAP --trace $TEST_TMP/run.trace --target rp2040 --seed 3 --threads 2 --time 0"

test_expect_success 'the TSan binary reports a race (the checks below can fail)' '
    cat >race.c <<-\EOF &&
	#include <pthread.h>
	static int shared;
	static void *bump(void *p) { (void)p; shared++; return 0; }
	int main(void)
	{
	    pthread_t a, b;
	    pthread_create(&a, 0, bump, 0);
	    pthread_create(&b, 0, bump, 0);
	    pthread_join(a, 0);
	    pthread_join(b, 0);
	    return shared == 2 ? 0 : 3;
	}
	EOF
    ${CC:-cc} -fsanitize=thread -g -O1 -o race race.c -lpthread &&
    test_exit 66 ./race 2>err &&
    grep -q "WARNING: ThreadSanitizer: data race" err
'

test_expect_success 'colour, 2 chains: no ThreadSanitizer report, both chains ran' '
    tsan_plan err $P --strategy colour --search-moves 300 --descent-passes 0 \
        --layout $TEST_TMP/c.layout --json -o $TEST_TMP/c.json &&
    python3 - $TEST_TMP/c.json <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))["results"][0]
	assert [c["moves"] for c in r["chains"]] == [300, 300], r["chains"]
	EOF
'

test_expect_success 'the TSan plan is the ASan plan (same layout)' '
    (cd "$CP_ROOT" && $CODEPLACE plan $P --strategy colour --search-moves 300 --descent-passes 0 \
        --layout $TEST_TMP/a.layout -q >/dev/null) &&
    test_cmp $TEST_TMP/a.layout $TEST_TMP/c.layout
'

# The descent runs in each chain too (the chain's own incremental state).
# A pass over the RP2040's 1,024 sets of 8-byte lines takes about a
# minute under TSan, and a pass cut by --time depends on the machine's
# speed (a slow machine cut the annealing short too), so this check plans
# for a cache of 64-byte lines (128 sets: one pass in a few seconds) with
# no time limit: each chain must end below where its annealing alone ends
# (the same moves, no descent).
C64="--cache 16K,2,64 --strategy colour --search-moves 100"
test_expect_success 'colour, 2 chains with the descent: no ThreadSanitizer report, both descended' '
    tsan_plan err $P $C64 --descent-passes 0 --json -o $TEST_TMP/d0.json &&
    tsan_plan err $P $C64 --descent-passes 1 --json -o $TEST_TMP/d1.json &&
    python3 - $TEST_TMP/d0.json $TEST_TMP/d1.json <<-\EOF
	import json, sys
	c0, c1 = (json.load(open(f))["results"][0]["chains"] for f in sys.argv[1:])
	assert [c["moves"] for c in c0] == [100, 100], c0
	assert [c["moves"] for c in c1] == [100, 100], c1
	for a, b in zip(c0, c1):
	    assert b["last_misses_per_iteration"] < a["last_misses_per_iteration"], (c0, c1)
	EOF
'

# One chain whose descent and late sections' pass share their tries with
# helper threads (--jobs, src/plan/pool.c): no report, and the plan of
# --jobs 1 (the demo's third iteration runs code its first two do not,
# so the late pass runs too).
test_expect_success 'colour, one chain, descent and late pass on 3 threads: no report, the --jobs 1 plan' '
    P1="$ELF --map $MAP --trace $TEST_TMP/run.trace --target rp2040 --seed 3 --time 0 --plan-iterations 2" &&
    tsan_plan err $P1 $C64 --descent-passes 1 --jobs 3 -v \
        --layout $TEST_TMP/j3.layout -o /dev/null &&
    grep "descent: 1 pass, [1-9][0-9]* sections moved" err &&
    grep "sections run code only in the iterations past the planning ones" err &&
    ! grep "run in one thread" err &&
    (cd "$CP_ROOT" && $CODEPLACE plan $P1 $C64 --descent-passes 1 --jobs 1 \
        --layout $TEST_TMP/j1.layout -q >/dev/null) &&
    test_cmp $TEST_TMP/j1.layout $TEST_TMP/j3.layout
'

test_expect_success 'combined 4K, 2 chains, ld stub order: no ThreadSanitizer report' '
    tsan_plan err $P --strategy combined --budget 4K --search-moves 100 --descent-passes 0 \
        --plan-iterations 1 --layout $TEST_TMP/k.layout --json -o $TEST_TMP/k.json &&
    ! grep -q "is a guess" err &&
    python3 - $TEST_TMP/k.json <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))["results"][0]
	assert [c["moves"] for c in r["chains"]] == [300, 300], r["chains"]
	assert r["stub_order"] == "ld" and 0 < r["fast_bytes"] <= 4096, r
	EOF
'

test_done
