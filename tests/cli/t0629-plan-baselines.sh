#!/bin/sh
# ram and combined are never worse than the two baselines they end by
# evaluating: the density ranking and the rank plan, with the rest of the
# code as linked; worse in what the planner minimises, the estimated
# cycles (misses, and the instructions calls through linker stubs add). On
# the i.MX RT demo at 32 KiB of ITCM the rank plan is better than what the
# RAM selection reaches alone: ram must then start from it, say so, and
# the selection's steps from there must improve it.
. "$(dirname "$0")/lib.sh"
ELF=$CP_ROOT/build/fw/demo-imxrt1062.elf
MAP=$CP_ROOT/build/fw/demo-imxrt1062.map

if ! [ -f "$ELF" ]; then
    test_skip 'plan baselines on the i.MX RT demo' 'build/fw/demo-imxrt1062.elf not built (make firmware)'
    test_done
    exit 0
fi

C='d["results"][0]["est_cycles_per_iteration"]'

test_expect_success 'trace the i.MX RT demo' '
    $CODEPLACE trace $ELF --target imxrt1062 --init codeplace_init \
        --iter codeplace_iteration -n 6 -q -o $TEST_TMP/run.trace >/dev/null
'
P="$ELF --map $MAP --trace $TEST_TMP/run.trace --target imxrt1062 --budget 32K --time 0 --search-moves 2000 --descent-passes 0"

# Each baseline asked for alone is the one plan reported and the best: it
# moves sections to ITCM only (no hot block, no padding), within the
# 32 KiB budget, and takes fewer misses and cycles than the stock layout.
test_expect_success 'the baselines alone' '
    for s in rank density; do
        (cd "$CP_ROOT" && $CODEPLACE plan $P --strategy $s --json -q -o $TEST_TMP/$s.json) &&
        python3 - $TEST_TMP/$s.json $s <<-\EOF || return 1
	import json, sys
	d = json.load(open(sys.argv[1])); s = sys.argv[2]
	assert d["best"] == s and d["verified"] and d["budget"] == 32768, d["best"]
	assert [r["strategy"] for r in d["results"]] == [s], d["results"]
	r = d["results"][0]
	sizes = sum(i["size"] for i in r["items"])
	print(s, r["est_cycles_per_iteration"], r["stock_est_cycles_per_iteration"],
	      r["misses_per_iteration"], r["stock_misses_per_iteration"], r["fast_bytes"], sizes)
	assert r["items"] and {i["region"] for i in r["items"]} == {"itcm"}, r["items"]
	assert r["hot_bytes"] == 0 and r["pad_bytes"] == 0, (r["hot_bytes"], r["pad_bytes"])
	assert sizes <= r["fast_bytes"] <= 32768, (sizes, r["fast_bytes"])
	assert r["misses_per_iteration"] < r["stock_misses_per_iteration"]
	assert r["est_cycles_per_iteration"] < r["stock_est_cycles_per_iteration"]
	EOF
    done
'

for s in ram combined; do
    test_expect_success "$s is no worse than either baseline" "
        (cd \"\$CP_ROOT\" && \$CODEPLACE plan \$P --strategy $s --json -o \$TEST_TMP/$s.json 2>\$TEST_TMP/$s.err) &&
        python3 -c 'import sys
a, r, d = (float(x) for x in sys.argv[1:])
print(a, r, d)
sys.exit(0 if a <= r + 1e-6 and a <= d + 1e-6 else 1)' \$(jget \$TEST_TMP/$s.json \"\$C\") \$(jget \$TEST_TMP/rank.json \"\$C\") \$(jget \$TEST_TMP/density.json \"\$C\")
    "
done

# The rank plan wins, and the selection's steps from it (on this trace:
# sections taken back out, whose stubs cost more than they saved) make it
# better still; ram says both.
test_expect_success 'ram says when a baseline is the plan, and improves on it' '
    grep "fast memory: the rank plan is better" $TEST_TMP/ram.err &&
    grep "fast memory: the selection.s steps from the rank plan" $TEST_TMP/ram.err &&
    python3 -c "import json,sys
a = json.load(open(sys.argv[1]))[\"results\"][0][\"est_cycles_per_iteration\"]
r = json.load(open(sys.argv[2]))[\"results\"][0][\"est_cycles_per_iteration\"]
print(a, r)
sys.exit(0 if a < r - 1e-6 else 1)" $TEST_TMP/ram.json $TEST_TMP/rank.json
'

# Before the selection tried moves together and took sections back out it
# stood at 22.1 misses with 4,320 bytes (every single move left added
# misses: each shifts the code after it), 7 x the rank plan's 3.1; a
# group of the ranking's first sections together now takes it on (4.0 on
# this trace). Within 1.5 x: a selection that again stops where no single
# move helps fails this.
test_expect_success 'the selection alone ends near the rank plan' '
    python3 -c "import re,sys
t = open(sys.argv[1]).read()
m = re.search(r\"rank plan is better and is the plan \\(([0-9.]+) against ([0-9.]+)\", t)
r, own = (float(m.group(1)), float(m.group(2))) if m else (0, 0)
print(\"rank\", r, \"selection\", own)
sys.exit(0 if m and own <= 1.5 * r else 1)" $TEST_TMP/ram.err
'

test_done
