#!/bin/sh
# codeplace sim: hand-made traces with known answers, the report adding up
# in every format, layouts, and bad input. Traces are written by
# build/san/tests/mktrace from the text descriptions below.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
MKTRACE=$CP_ROOT/build/san/tests/mktrace
CHECK="python3 $CP_ROOT/tests/cli/check-sim.py"
ELF="--elf $FX/m0.elf --map $FX/m0.map"

# fx_sum (0x10000124) and two unknown lines 8 KiB and 16 KiB above it share
# set 36 of the RP2040's 2-way cache: every warm access misses there.
three_in_one_set() {
    printf '%s\n' 'F 0x10000000 16 8' 'M' \
        'F 0x10000124 4 2' 'F 0x10002124 4 2' 'F 0x10004124 4 2' \
        'F 0x20000000 64 32' 'R 9' | $MKTRACE "$1" rp2040
}

test_expect_success 'three hot lines in one set of a 2-way cache' '
    three_in_one_set t.trace &&
    $CODEPLACE sim t.trace $ELF --csv -q >out.csv &&
    cat >expect <<-\EOF &&
	iteration,instructions,accesses,hits,misses,compulsory,capacity,conflict,ideal,footprint_lines,cycles
	0,38,3,0,3,3,0,0,3,3,259.4
	1,38,3,0,3,0,0,3,0,3,259.4
	2,38,3,0,3,0,0,3,0,3,259.4
	EOF
    head -4 out.csv >got &&
    test_cmp expect got &&
    test $(wc -l <out.csv) -eq 11
'

test_expect_success 'function, library and set tables are per warm iteration in text, CSV and JSON' '
    three_in_one_set t.trace &&
    $CODEPLACE sim t.trace $ELF -q >out &&
    grep -E -q "^  fx_sum +32 +2\.0 +1\.0 " out &&
    $CODEPLACE sim t.trace $ELF --csv --by function -q >f.csv &&
    head -1 f.csv >h &&
    echo "function,addr,size,instructions_per_iteration,accesses_per_iteration,misses_per_iteration,misses_per_byte_per_iteration" >want &&
    test_cmp want h &&
    grep -q "^fx_sum,0x10000124,32,2.000,1.000,1.000,0.031250$" f.csv &&
    $CODEPLACE sim t.trace $ELF --csv --by set -q >s.csv &&
    grep -q "^36,3,3.00,3.000$" s.csv &&
    $CODEPLACE sim t.trace $ELF --json -q >s.json &&
    python3 -c "import json; d = json.load(open(\"s.json\")); f = [x for x in d[\"functions\"] if x[\"name\"] == \"fx_sum\"][0]; n = d[\"warm\"][\"iterations\"]; assert n == 9 and f[\"misses\"] == 9 and f[\"misses_per_iteration\"] == 1, (n, f)"
'

test_expect_success 'text report: 3C, ideal bound, the set and the why' '
    three_in_one_set t.trace &&
    $CODEPLACE sim t.trace $ELF -q >out &&
    grep -E -q "^    conflict +0 +3\.0$" out &&
    grep -E -q "^  ideal bound +3 +0\.0$" out &&
    grep -q "1 of 1,024 sets hold more than 2" out &&
    grep -q "a layout can remove these" out &&
    grep -E -q "^  fx_sum +32 +2\.0 +1\.0 " out &&
    grep -E -q "^      0  \.{36}3\.{27}$" out
'

test_expect_success 'a layout that moves fx_sum out of the set removes the misses' '
    three_in_one_set t.trace &&
    cat >colour.layout <<-\EOF &&
	# codeplace layout 1
	# target: rp2040
	# name     region  place    size  reason
	fx_sum     flash   set:200  32    colour: away from set 36
	EOF
    $CODEPLACE sim t.trace $ELF --layout colour.layout --csv -q >out.csv &&
    sed -n 3p out.csv >got &&
    echo "1,38,3,3,0,0,0,0,0,3,49.4" >expect &&
    test_cmp expect got &&
    cat >ram.layout <<-\EOF &&
	# codeplace layout 1
	fx_sum     sram    -        32    ram
	EOF
    $CODEPLACE sim t.trace $ELF --layout ram.layout --csv -q >out.csv &&
    sed -n 2,3p out.csv >got &&
    printf "0,38,2,0,2,2,0,0,2,2,189.4\n1,38,2,2,0,0,0,0,0,2,49.4\n" >expect &&
    test_cmp expect got
'

test_expect_success 'a cyclic pass over more lines than the cache holds' '
    # 2,100 lines of 8 bytes (16,800 bytes) in a 16 KiB cache: fully
    # associative LRU misses every access, the ideal bound far fewer; the
    # 2-way cache misses only in the 52 sets that get three lines (so the
    # conflict part is negative).
    printf "%s\n" M "F 0x10000000 16800 8400" "R 4" | $MKTRACE c.trace rp2040 &&
    $CODEPLACE sim c.trace --json -q >c.json &&
    $CHECK c.json &&
    python3 - <<-\EOF
	import json
	r = json.load(open("c.json"))
	w = r["iterations"][2]
	assert w["accesses"] == 2100 and w["fully_associative"] == 2100, w
	assert w["misses"] == 3 * 52 and w["conflict"] == 3 * 52 - 2100, w
	assert w["ideal"] < 100, w
	EOF
'

test_expect_success 'a working set that fits misses only in the cold iteration' '
    printf "%s\n" M "F 0x10000000 12000 6000" "R 4" | $MKTRACE f.trace rp2040 &&
    $CODEPLACE sim f.trace --csv -q | cut -d, -f1,5 >got &&
    printf "iteration,misses\n0,1500\n1,0\n2,0\n3,0\n4,0\n" >expect &&
    test_cmp expect got
'

test_expect_success 'every policy and format adds up' '
    printf "%s\n" M "F 0x10000000 9000 10" "F 0x10003000 9000 10" \
        "F 0x10000800 300 10" "F 0x11000100 64 8" "D 0x10006000 4" \
        "F 0x20000100 40 20 1" "R 5" | $MKTRACE m.trace rp2040 &&
    for p in lru fifo random plru; do
        $CODEPLACE sim m.trace $ELF --cache 8K,4,8,$p --json -q >$p.json &&
        $CHECK $p.json || return 1
    done &&
    $CODEPLACE sim m.trace --target imxrt1062 --allow-uncached --json -q >m7.json &&
    $CHECK m7.json
'

test_expect_success 'the SVG heat map is well-formed XML with one cell per set' '
    three_in_one_set t.trace &&
    $CODEPLACE sim t.trace --svg heat.svg -q >/dev/null &&
    python3 - <<-\EOF
	import xml.etree.ElementTree as ET
	t = ET.parse("heat.svg").getroot()
	ns = "{http://www.w3.org/2000/svg}"
	cells = [r for r in t.iter(ns + "rect") if r.find(ns + "title") is not None]
	assert len(cells) == 1024, len(cells)
	hot = [c for c in cells if c.find(ns + "title").text.startswith("set 36:")]
	assert "3 hot lines" in hot[0].find(ns + "title").text
	EOF
'

test_expect_success 'bad input: missing trace, not a trace, bad layout, usage' '
    test_exit 1 $CODEPLACE sim nope.trace --target rp2040 2>err &&
    grep -q "nope.trace" err &&
    echo hello >x.trace &&
    test_exit 1 $CODEPLACE sim x.trace --target rp2040 2>err &&
    grep -q "x.trace" err &&
    three_in_one_set t.trace &&
    printf "# codeplace layout 1\nfx_sum flash set:9999 32 x\n" >bad.layout &&
    test_exit 1 $CODEPLACE sim t.trace $ELF --layout bad.layout 2>err &&
    grep -q "bad.layout:2: colour" err &&
    test_exit 2 $CODEPLACE sim t.trace --cache 3K,2,8 2>err &&
    grep -q "cache" err &&
    test_exit 2 $CODEPLACE sim t.trace --layout bad.layout &&
    test_exit 2 $CODEPLACE sim t.trace --target moon &&
    printf "M\nF 0x10000000 8 4\n" | $MKTRACE n.trace &&
    test_exit 1 $CODEPLACE sim n.trace 2>err &&
    grep -q "names no target" err
'

test_expect_success 'a trace cut short is simulated up to its last block' '
    three_in_one_set t.trace &&
    size=$(wc -c <t.trace) &&
    head -c $((size - 8)) t.trace >cut.trace &&
    $CODEPLACE sim cut.trace --json >cut.json 2>err &&
    $CHECK cut.json
'

test_done
