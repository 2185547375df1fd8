#!/bin/sh
# codeplace plan --descent-passes: after the annealing, every hot section
# tried at every start colour. The descent only keeps what lowers the
# misses, so it never ends worse than the search without it; its plan is
# exact (sim --layout measures what it predicts) and repeatable; under
# --time it has its own part of a search's time.
. "$(dirname "$0")/lib.sh"
need_demo 'plan --descent-passes on the demo firmware'

test_expect_success 'trace the demo (4 iterations)' '
    $CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 4 -q -o $TEST_TMP/run.trace >/dev/null
'
T=$TEST_TMP/run.trace
P="$ELF --map $MAP --trace $T --target rp2040 --strategy colour --search-moves 1000 --time 0"
CPO=$CP_ROOT/build/codeplace
miss() { jget $1 "d[\"results\"][0][\"misses_per_iteration\"]"; }

test_expect_success 'one pass lowers the misses of the same search, and says so' '
    $CPO plan $P --descent-passes 0 --json -o $TEST_TMP/d0.json 2>err0 &&
    grep "descent: 0 passes, 0 sections moved" err0 &&
    $CPO plan $P --descent-passes 1 --layout $TEST_TMP/d1.layout --json -o $TEST_TMP/d1.json 2>err1 &&
    grep "descent: 1 pass, [1-9][0-9]* sections moved" err1 &&
    echo "$(miss $TEST_TMP/d0.json) -> $(miss $TEST_TMP/d1.json)" &&
    python3 -c "import sys; sys.exit(0 if $(miss $TEST_TMP/d1.json) < $(miss $TEST_TMP/d0.json) else 1)"
'

test_expect_success 'the descent plan is exact: sim --layout measures its prediction' '
    $CODEPLACE sim $T --elf $ELF --map $MAP --target rp2040 \
        --layout $TEST_TMP/d1.layout --json -q -o s.json &&
    same $(miss $TEST_TMP/d1.json) $(jget s.json "d[\"warm\"][\"misses_mean\"]")
'

test_expect_success 'the sanitizer build makes the same plan' '
    $CODEPLACE plan $P --descent-passes 1 --layout s1.layout -q >/dev/null &&
    cmp $TEST_TMP/d1.layout s1.layout
'

test_expect_success '--jobs 1 and 4 make the plan of the default 2 (the tries shared by threads)' '
    for j in 1 4; do
        $CPO plan $P --descent-passes 1 --jobs $j --layout j$j.layout -q >/dev/null &&
        cmp $TEST_TMP/d1.layout j$j.layout || return 1
    done &&
    test_exit 2 $CPO plan $P --jobs 0 2>err && grep -q "jobs 0: give 1 to 8" err
'

test_expect_success 'under --time the descent has its own part: an annealing the clock stops leaves it time' '
    start=$(date +%s) &&
    $CPO plan $ELF --map $MAP --trace $T --target rp2040 --strategy colour \
        --search-moves 100000000 --time 6 --json -o t.json 2>errt &&
    end=$(date +%s) &&
    grep "descent: 1 pass, [0-9]* sections moved" errt &&
    grep "paced the search" errt &&
    test "$(jget t.json "d[\"results\"][0][\"stopped_by_time\"]")" = True &&
    echo "$((end - start)) s" && test $((end - start)) -le 9
'

# Code only the iterations past the planning ones run (the demo's fourth
# iteration runs code its first two do not): the search cannot see where
# it goes, so after the descent each section with such code goes to its
# best colour on every iteration. Seed 2 is a search whose moves left one
# of them where the fourth iteration misses more; the pass moves it, and
# the plan's figure is the one the pass reached, as sim measures it.
test_expect_success 'sections run only past the planning iterations are placed on every iteration' '
    $CPO plan -v $P --plan-iterations 2 --seed 2 --layout late.layout \
        --json -o late.json 2>errl &&
    line=$(grep "sections run code only in the iterations past the planning ones" errl) &&
    echo "$line" &&
    python3 - "$line" $(miss late.json) <<-\EOF &&
	import re, sys
	m = re.search(r"(\d+) sections .*; (\d+) moved .*: ([\d.]+) -> ([\d.]+) misses", sys.argv[1])
	n, moved, a, b = int(m[1]), int(m[2]), float(m[3]), float(m[4])
	assert n >= 1 and moved >= 1 and b < a, sys.argv[1]
	assert abs(float(sys.argv[2]) - b) < 0.05, (sys.argv[2], b)
	EOF
    $CODEPLACE sim $T --elf $ELF --map $MAP --target rp2040 \
        --layout late.layout --json -q -o sl.json &&
    same $(miss late.json) $(jget sl.json "d[\"warm\"][\"misses_mean\"]")
'

test_expect_success 'a bad count is a usage error' '
    test_exit 2 $CPO plan $P --descent-passes x 2>err &&
    grep "descent-passes" err
'

test_done
