#!/bin/sh
# codeplace plan --samples on the demo firmware: a plan from PC samples
# alone (samples made from a trace with `samples --poisson`, as a probe
# would take them) against the trace-driven rank plan, both re-simulated
# on the trace with `sim --layout`.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
ELF=$FW/demo-rp2040.elf MAP=$FW/demo-rp2040.map
D=$TEST_TMP/d
mkdir -p $D

$CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
    --iter codeplace_iteration -n 6 -q -o $D/stock.trace >/dev/null &&
$CODEPLACE samples $D/stock.trace --poisson 97 --elf $ELF -q -o $D/s.txt ||
    echo "not ok - trace or samples failed"

warm() { # LAYOUT: warm misses per iteration of the trace under LAYOUT
    $CODEPLACE sim $D/stock.trace --elf $ELF --map $MAP ${1:+--layout $1} \
        --json -q | python3 -c 'import json, sys; print(json.load(sys.stdin)["warm"]["misses_mean"])'
}

test_expect_success 'samples rank plan: within 10 % of the trace rank plan, re-simulated' '
    $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt --target rp2040 \
        --budget 16K --strategy rank --layout s.layout -q >out &&
    $CODEPLACE plan $ELF --map $MAP --trace $D/stock.trace --target rp2040 \
        --budget 16K --strategy rank --layout t.layout -q >/dev/null &&
    stock=$(warm) && s=$(warm s.layout) && t=$(warm t.layout) &&
    echo "stock $stock samples-rank $s trace-rank $t" &&
    python3 -c "import sys; st, s, t = map(float, sys.argv[1:]); assert abs(s - t) <= 0.10 * t and s < 0.5 * st, (st, s, t)" $stock $s $t
'

test_expect_success 'samples hot block plan: fewer misses than stock, RAM within budget' '
    $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt --target rp2040 \
        --budget 16K --strategy hotblock --layout h.layout --json -q >h.json 2>err &&
    grep -q "warning: the flash hot block is ordered from samples alone" err &&
    stock=$(warm) && h=$(warm h.layout) && echo "stock $stock samples-hotblock $h" &&
    arm-none-eabi-nm $ELF >nm.txt &&
    python3 - h.json $stock $h nm.txt <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1])); st, h = float(sys.argv[2]), float(sys.argv[3])
	addr = {l.split()[2]: int(l.split()[0], 16) for l in open(sys.argv[4]) if len(l.split()) == 3}
	r = j["results"][0]
	assert j["evidence"] == "samples" and j["prediction"] is False, j
	assert r["strategy"] == "samples-hotblock" and r["misses_per_iteration"] is None, r
	assert 0 < r["fast_bytes"] <= 16384 and r["hot_bytes"] > 0, r
	assert h < 0.5 * st, (st, h)
	# the block holds one cache size (16 KiB on the rp2040) of the hottest
	# sampled code, in link order; the rest of the sampled code stays put
	assert r["hot_bytes"] <= 16384 and r["flash_left_bytes"] > 0, r
	hot = sorted((i for i in r["items"] if i["region"] == "flash"), key=lambda i: i["offset"])
	at = [addr[i["name"]] for i in hot if i["name"] in addr]
	assert len(at) > 0.9 * len(hot) and at == sorted(at), at
	PY
'

test_expect_success 'with a budget, samples alone leave flash as linked by default' '
    $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt --target rp2040 \
        --budget 16K --json -q >d.json 2>err &&
    ! grep -q "hot block is ordered" err &&
    python3 - d.json <<-\PY
	import json, sys
	r = json.load(open(sys.argv[1]))["results"][0]
	assert r["strategy"] == "samples-rank" and r["hot_bytes"] == 0, r
	assert not [i for i in r["items"] if i["region"] == "flash"], r
	PY
'

test_expect_success 'with no budget, the hot block is the plan, with a warning' '
    $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt --target rp2040 \
        --layout z.layout --json -q >z.json 2>err &&
    grep -q "warning: the flash hot block is ordered from samples alone" err &&
    python3 -c "import json, sys; r = json.load(open(sys.argv[1]))[\"results\"][0]; assert r[\"strategy\"] == \"samples-hotblock\" and r[\"fast_bytes\"] == 0 and 0 < r[\"hot_bytes\"] <= 16384, r" z.json
'

test_expect_success 'a samples-only plan says it is a ranking and prints no miss figure' '
    $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt --target rp2040 \
        --budget 16K --list hot.list >out &&
    grep -q "^note: a plan from PC samples alone is a ranking, not a prediction: no miss figure" out &&
    ! grep -E "[0-9] misses" out &&
    grep -q "^# predicted: nothing: ranked from PC samples" hot.list &&
    ! grep -q " misses, " hot.list &&
    grep -q "^__muldi3 *\*libgcc\.a:[^ ]*(\.text) # 92 bytes, [0-9]* samples, libgcc.a" hot.list
'

test_expect_success 'a samples plan that hits the file size limit leaves the old list, no partial one' '
    echo old >hot.list &&
    (ulimit -f 1; test_must_fail $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt \
        --target rp2040 --budget 16K --list hot.list --layout hot.layout >/dev/null 2>err) &&
    grep -q "hot.list.*File too large" err &&
    test "$(cat hot.list)" = old &&
    ! test -e hot.layout &&
    test -z "$(ls | grep "\.tmp\.")"
'

test_expect_success 'busy-wait loops: found from the code, kept out of fast memory' '
    $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt --target rp2040 \
        --budget 16K --list hot.list --json -q >j.json &&
    python3 - j.json hot.list <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1]))
	spin = {b["name"]: b for b in j["busy_wait"]}
	# demo_crc32: a bitwise CRC loop, a few instructions and a backward bne
	b = spin["demo_crc32"]
	assert b["loop_samples"] >= 0.8 * b["samples"] and b["loop_end"] - b["loop"] <= 32, b
	ram = [i["name"] for i in j["results"][0]["items"] if i["region"] == "sram"]
	assert not set(spin) & set(ram), set(spin) & set(ram)
	lines = open(sys.argv[2]).read().split("# region: flash")[0]
	assert "\ndemo_crc32 " not in lines
	PY
'

test_expect_success '--no-ram keeps a hot function out of fast memory' '
    $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt --target rp2040 \
        --budget 16K --no-ram __muldi3 --list hot.list -q >/dev/null &&
    sed -n "/^# region: sram/,/^# region: flash/p" hot.list >ram &&
    ! grep -q "^__muldi3 " ram && grep -q "^__umul128 " ram
'

test_expect_success 'with --trace: the samples plan is a candidate simulated on the trace' '
    $CODEPLACE plan $ELF --map $MAP --trace $D/stock.trace --samples $D/s.txt \
        --target rp2040 --budget 16K --strategy rank --json -q >j.json &&
    python3 - j.json <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1]))
	r = {x["strategy"]: x for x in j["results"]}
	s = r["samples-hotblock"]
	assert s["misses_per_iteration"] > 0 and s["conflict_misses_after"] is None, s
	assert s["misses_per_iteration"] < s["stock_misses_per_iteration"], s
	PY
'

test_expect_success 'samples of another image: error naming the file, exit 1' '
    sed "s/^# elf: .*/# elf: fnv1a64:0123456789abcdef/" $D/s.txt >other.txt &&
    test_exit 1 $CODEPLACE plan $ELF --map $MAP --samples other.txt \
        --target rp2040 --budget 16K 2>err &&
    grep -q "^codeplace: error: other.txt: the samples are of another image (theirs fnv1a64:0123456789abcdef" err
'

test_expect_success 'samples alone: strategies that need a trace are usage errors' '
    test_exit 2 $CODEPLACE plan $ELF --map $MAP --samples $D/s.txt \
        --target rp2040 --budget 16K --strategy colour 2>err &&
    grep -q "strategy colour needs a trace" err &&
    test_exit 2 $CODEPLACE plan $ELF --map $MAP --target rp2040 2>err &&
    grep -q "give --trace" err
'

test_done
