#!/bin/sh
# codeplace sim on the demo firmware traced by the virtual board: the report
# adds up, agrees with the trace's own instruction counts, and a layout that
# moves the function with the most misses into SRAM removes its misses.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
CHECK="python3 $CP_ROOT/tests/cli/check-sim.py"

if ! [ -f "$FW/demo-rp2040.elf" ]; then
    test_skip 'sim on the demo firmware' 'build/fw/demo-rp2040.elf not built (make firmware)'
    test_done
    exit 0
fi

for t in rp2040 imxrt1062; do
    test_expect_success "$t: trace 4 iterations, the report adds up" "
        \$CODEPLACE trace $FW/demo-$t.elf --target $t --map $FW/demo-$t.map \
            --init codeplace_init --iter codeplace_iteration -n 4 -o run.trace -q &&
        \$CODEPLACE trace --info run.trace --per-iteration --json >info.json &&
        \$CODEPLACE sim run.trace --elf $FW/demo-$t.elf --map $FW/demo-$t.map \
            --json -q >sim.json &&
        $CHECK sim.json &&
        python3 - <<-\EOF
	import json
	s = json.load(open('sim.json')); i = json.load(open('info.json'))
	its = s['iterations']
	assert len(its) == 4, len(its)
	assert [x['instructions'] for x in its] == i['per_iteration'], 'instructions differ'
	assert s['prologue_records'] > 0
	c = its[0]
	assert c['misses'] > 0 and c['compulsory'] == c['footprint_lines'] > 100, c
	assert all(x['misses'] <= c['misses'] + 1000 for x in its[1:])
	names = [f['name'] for f in s['functions']]
	assert 'codeplace_iteration' in names, names[:10]
	libs = [l['name'] for l in s['libraries']]
	assert 'libc.a' in libs and 'libgcc.a' in libs, libs
	EOF
    "
done

test_expect_success 'rp2040: the function with the most misses moved to SRAM' '
    $CODEPLACE trace $FW/demo-rp2040.elf --target rp2040 \
        --init codeplace_init --iter codeplace_iteration -n 3 -o run.trace -q &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --csv --by function -q >f.csv &&
    top=$(sed -n 2p f.csv | cut -d, -f1) &&
    test -n "$top" &&
    printf "# codeplace layout 1\n%s sram - 0 most misses\n" "$top" >ram.layout &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --layout ram.layout --json -q >moved.json &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --json -q >base.json &&
    $CHECK moved.json &&
    TOP=$top python3 - <<-\EOF
	import json, os
	top = os.environ["TOP"]
	b = json.load(open("base.json")); m = json.load(open("moved.json"))
	fb = {f["name"]: f for f in b["functions"]}
	fm = {f["name"]: f for f in m["functions"]}
	assert fb[top]["misses"] > 0 and fm[top]["misses"] == 0 and fm[top]["accesses"] == 0
	assert m["uncached_instructions"] == fb[top]["instructions"]
	assert m["warm"]["sum"]["accesses"] < b["warm"]["sum"]["accesses"]
	EOF
'

test_expect_success 'rp2040: a layout from codeplace plan, evaluated by sim' '
    $CODEPLACE trace $FW/demo-rp2040.elf --target rp2040 \
        --init codeplace_init --iter codeplace_iteration -n 3 -o run.trace -q &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace run.trace \
        --target rp2040 --strategy hotblock --layout hot.layout --json -q >plan.json &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --json -q >base.json &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --layout hot.layout --json -q >hot.json &&
    $CHECK hot.json &&
    python3 - <<-\EOF
	import json
	p = json.load(open("plan.json"))["results"][0]
	b = json.load(open("base.json")); h = json.load(open("hot.json"))
	def warm(r): return r["warm"]["sum"]["misses"] / r["warm"]["iterations"]
	# Two separate evaluators of the same trace: the stock figures agree
	# exactly, and so do the figures of the planned layout (it carries the
	# new addresses of the sections and the @shift of what follows .text).
	assert abs(warm(b) - p["stock_misses_per_iteration"]) < 0.01, (warm(b), p)
	assert h["layout"] == "hot.layout"
	assert abs(warm(h) - p["misses_per_iteration"]) <= 0.01 * warm(h), (
	    warm(h), p["misses_per_iteration"])
	assert warm(h) < warm(b)
	EOF
'

test_expect_success 'a trace of another image: a warning alone, an error with --layout' '
    $CODEPLACE trace $FW/demo-rp2040.elf --target rp2040 \
        --init codeplace_init --iter codeplace_iteration -n 2 -o run.trace -q &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace run.trace \
        --target rp2040 --strategy hotblock --layout hot.layout -q >/dev/null &&
    $CODEPLACE sim run.trace --elf $FW/demo-imxrt1062.elf --target rp2040 -q >out 2>err &&
    grep -q "^codeplace: warning: run.trace was recorded from another image .*functions may be misnamed" err &&
    test_exit 1 $CODEPLACE sim run.trace --elf $FW/demo-imxrt1062.elf --target rp2040 \
        --layout hot.layout -q >out 2>err &&
    grep -q "^codeplace: error: run.trace was recorded from another image .*layout hot.layout moves that image.s functions" err &&
    test_must_fail test -s out &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --layout hot.layout -q >out 2>err &&
    ! grep -q "another image" err
'

test_expect_success 'a layout planned for another image: an error naming it' '
    $CODEPLACE trace $FW/demo-rp2040.elf --target rp2040 \
        --init codeplace_init --iter codeplace_iteration -n 2 -o run.trace -q &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace run.trace \
        --target rp2040 --strategy hotblock --layout hot.layout -q >/dev/null &&
    grep -q "^# target: rp2040  image: " hot.layout &&
    sed "s/  image: [^ ]*/  image: fnv1a64:0123456789abcdef/" hot.layout >other.layout &&
    ! cmp -s hot.layout other.layout &&
    test_exit 1 $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --layout other.layout -q >out 2>err &&
    grep -q "^codeplace: error: other.layout was planned for another image (fnv1a64:0123456789abcdef; " err &&
    grep -v "^# target:" hot.layout >hand.layout &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --layout hand.layout -q >out 2>err &&
    test -s out
'

test_expect_success 'why: fewer misses than a fully associative cache, no share above 100 %' '
    $CODEPLACE trace $FW/demo-rp2040.elf --target rp2040 \
        --init codeplace_init --iter codeplace_iteration -n 3 -o run.trace -q &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --cache 1K,2,8 >out &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --cache 1K,2,8 --json -q >w.json &&
    python3 - <<-\EOF
	import json, re
	w = json.load(open("w.json"))["warm"]["sum"]
	# The case this checks: the 2-way cache beats fully associative LRU.
	assert w["conflict"] < 0, w
	t = open("out").read()
	assert "no conflict misses to remove" in t, t
	assert "would take" in t and "more than the" in t, t
	for p in re.findall(r"\(([0-9]+)%\)", t):
	    assert int(p) <= 100, p
	EOF
'

test_done
