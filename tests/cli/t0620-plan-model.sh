#!/bin/sh
# codeplace plan's figures come from the same cache model as codeplace sim:
# under every replacement policy the planner's prediction of a flash layout
# is what sim --layout measures; several weighted workloads are planned
# together and each one's prediction is confirmed by sim on its own trace;
# a failed evaluation is an error, never a figure; the same inputs and seed
# give the same plan, and the colouring is never worse than the hot block.
. "$(dirname "$0")/lib.sh"
need_demo 'plan model on the demo firmware'

test_expect_success 'trace two different workloads of the demo' '
    $CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 4 -q -o $TEST_TMP/udp.trace >/dev/null &&
    $CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
        --iter codeplace_iteration_parse -n 6 -q -o $TEST_TMP/parse.trace >/dev/null
'
UDP=$TEST_TMP/udp.trace
PARSE=$TEST_TMP/parse.trace

for spec in 16K,2,8,lru 16K,2,8,fifo 16K,2,8,random 16K,4,8,plru; do
    test_expect_success "$spec: the planner predicts what sim --layout measures" "
        \$CODEPLACE plan $ELF --map $MAP --trace $UDP --target rp2040 \
            --cache $spec --cache-seed 5 --strategy colour --search-moves 150 --descent-passes 0 \
            --time 0 --layout p.layout --json -q -o p.json &&
        \$CODEPLACE sim $UDP --elf $ELF --map $MAP --target rp2040 --cache $spec \
            --seed 5 --layout p.layout --json -q -o s.json &&
        \$CODEPLACE sim $UDP --elf $ELF --map $MAP --target rp2040 --cache $spec \
            --seed 5 --json -q -o $TEST_TMP/stock-$(echo $spec | tr , -).json &&
        same \$(jget p.json \"d['results'][0]['misses_per_iteration']\") \
             \$(jget s.json \"d['warm']['misses_mean']\") &&
        same \$(jget p.json \"d['results'][0]['stock_misses_per_iteration']\") \
             \$(jget $TEST_TMP/stock-$(echo $spec | tr , -).json \"d['warm']['misses_mean']\")
    "
done

# The stock simulations of the tests above, with lru and with fifo.
test_expect_success 'the policies differ on the demo (the test above can fail)' '
    ! same $(jget $TEST_TMP/stock-16K-2-8-lru.json "d[\"warm\"][\"misses_mean\"]") \
           $(jget $TEST_TMP/stock-16K-2-8-fifo.json "d[\"warm\"][\"misses_mean\"]")
'

test_expect_success 'two weighted workloads: each prediction is what sim measures' '
    $CODEPLACE plan $ELF --map $MAP --target rp2040 --trace $UDP \
        --trace $PARSE:0.25 --strategy colour --search-moves 150 --descent-passes 0 --time 0 \
        --layout mw.layout --json -q -o mw.json &&
    $CODEPLACE plan $ELF --map $MAP --target rp2040 --trace $UDP \
        --trace $PARSE:0.25 --strategy colour --search-moves 150 --descent-passes 0 --time 0 -q >mw.txt &&
    grep -q "^workloads" mw.txt && grep -q "parse.trace *0.25" mw.txt &&
    test "$(jget mw.json "len(d[\"results\"][0][\"workloads\"])")" = 2 &&
    i=0 && for t in $UDP $PARSE; do
        $CODEPLACE sim $t --elf $ELF --map $MAP --layout mw.layout --json -q -o w.json &&
        $CODEPLACE sim $t --elf $ELF --map $MAP --json -q -o ws.json &&
        same $(jget mw.json "d[\"results\"][0][\"workloads\"][$i][\"misses_per_iteration\"]") \
             $(jget w.json "d[\"warm\"][\"misses_mean\"]") &&
        same $(jget mw.json "d[\"results\"][0][\"workloads\"][$i][\"stock_misses_per_iteration\"]") \
             $(jget ws.json "d[\"warm\"][\"misses_mean\"]") || return 1
        i=$((i + 1))
    done &&
    python3 - mw.json <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))["results"][0]
	a, b = r["workloads"]
	assert b["weight"] == 0.25 and a["weight"] == 1
	# genuinely different workloads
	assert b["stock_misses_per_iteration"] < 0.5 * a["stock_misses_per_iteration"], (a, b)
	# the figure of the plan is the weighted mean
	want = (a["misses_per_iteration"] + 0.25 * b["misses_per_iteration"]) / 1.25
	assert abs(r["misses_per_iteration"] - want) < 1e-3, (r["misses_per_iteration"], want)
	EOF
'

test_expect_success 'a failed evaluation is an error, not a plan' '
    test_exit 1 env CODEPLACE_PLAN_FAIL_AFTER=3 $CODEPLACE plan $ELF --map $MAP \
        --trace $UDP --target rp2040 --strategy colour --search-moves 50 --descent-passes 0 \
        --layout bad.layout -q 2>err &&
    grep -q "out of memory" err &&
    ! test -e bad.layout &&
    test_exit 1 env CODEPLACE_PLAN_FAIL_AFTER=1 $CODEPLACE plan $ELF --map $MAP \
        --trace $UDP --target rp2040 --budget 4K --strategy combined \
        --search-moves 50 --descent-passes 0 -q 2>err &&
    grep -q "out of memory" err
'

test_expect_success 'same inputs and seed: the same plan; colour no worse than the hot block' '
    for k in 1 2; do
        $CODEPLACE plan $ELF --map $MAP --trace $UDP --target rp2040 \
            --strategy colour --search-moves 300 --descent-passes 0 --seed 7 --time 0 \
            --layout c$k.layout --json -q -o c$k.json || return 1
    done &&
    test_cmp c1.layout c2.layout &&
    $CODEPLACE plan $ELF --map $MAP --trace $UDP --target rp2040 \
        --strategy hotblock --json -q -o h.json &&
    python3 -c "import sys; sys.exit(0 if $(jget c1.json "d[\"results\"][0][\"misses_per_iteration\"]") <= $(jget h.json "d[\"results\"][0][\"misses_per_iteration\"]") else 1)"
'

# Code that only later iterations run: said, with the --plan-iterations
# that takes it in, after which it is not said again; never with all.
test_expect_success 'code the planning iterations do not run is reported' '
    $CODEPLACE plan $ELF --map $MAP --trace $PARSE --target rp2040 \
        --strategy hotblock --plan-iterations 2 --time 0 >/dev/null 2>err &&
    grep "bytes of code in [0-9]* sections run only in iterations the search does not simulate" err &&
    n=$(sed -n "s/.*--plan-iterations \([0-9]*\) takes them in.*/\1/p" err) &&
    test "$n" -gt 2 &&
    $CODEPLACE plan $ELF --map $MAP --trace $PARSE --target rp2040 \
        --strategy hotblock --plan-iterations $n --time 0 >/dev/null 2>err2 &&
    ! grep "the search does not simulate" err2 &&
    $CODEPLACE plan $ELF --map $MAP --trace $PARSE --target rp2040 \
        --strategy hotblock --plan-iterations 0 --time 0 >/dev/null 2>err3 &&
    ! grep "the search does not simulate" err3
'

# Fast memory the selections leave goes by every iteration's misses: what
# only later iterations run, invisible to them, included. The step says
# what it took and that the cost fell; the plan is what sim --layout
# measures, within the budget. (From the project root, where the map's
# object paths resolve and the stubs' order is ld's.)
test_expect_success 'fast memory left over goes by every iteration'"'"'s misses' '
    here=$PWD &&
    (cd "$CP_ROOT" && $CODEPLACE plan $ELF --map $MAP --trace $UDP --target rp2040 \
        --strategy ram --budget 1K --plan-iterations 2 --time 0 \
        --layout $here/f.layout --json -o $here/f.json 2>$here/err) &&
    line=$(grep "^plan: fast memory: [0-9]* more sections ([0-9]* bytes) by their misses on every iteration" err) &&
    python3 - "$line" f.json <<-\EOF &&
	import json, re, sys
	a, b = (float(x) for x in re.search(r": ([0-9.]+) -> ([0-9.]+) misses", sys.argv[1]).groups())
	r = json.load(open(sys.argv[2]))["results"][0]
	print(a, b, r["fast_bytes"])
	assert b < a and 0 < r["fast_bytes"] <= 1024
	EOF
    $CODEPLACE sim $UDP $ELF --map $MAP --target rp2040 --layout f.layout \
        --json -q -o fs.json &&
    python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(a, b); sys.exit(0 if abs(a - b) < 1e-6 else 1)" \
        $(jget f.json "d[\"results\"][0][\"misses_per_iteration\"]") \
        $(jget fs.json "d[\"warm\"][\"misses_mean\"]")
'

test_expect_success 'progress on stderr, not with -q; weights checked' '
    $CODEPLACE plan $ELF --map $MAP --trace $UDP --target rp2040 \
        --strategy colour --search-moves 200 --descent-passes 0 --time 0 >out 2>err &&
    grep -q "^plan: anneal: 200 moves" err &&
    $CODEPLACE plan $ELF --map $MAP --trace $UDP --target rp2040 \
        --strategy colour --search-moves 200 --descent-passes 0 --time 0 -q >out 2>err &&
    ! grep -q anneal err &&
    test_exit 2 $CODEPLACE plan $ELF --map $MAP --trace $UDP:-1 --target rp2040 2>err &&
    grep -q "positive number" err
'

test_done
