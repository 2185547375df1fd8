#!/bin/sh
# codeplace plan on the demo firmware: the loop that proves a plan. Plan,
# relink with the emitted GNU ld snippets (real arm-none-eabi ld), trace
# the new image on the virtual board, simulate it with codeplace sim, and
# compare with the prediction (scripts/plan-loop does the steps). Each
# test runs in its own directory and plans for itself; the stock trace they
# all start from is made once here, and each test takes a copy of it.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
N=4
STOCK=$TEST_TMP/stock
mkdir -p "$STOCK"
if $CODEPLACE trace "$FW/demo-rp2040.elf" --target rp2040 --init codeplace_init \
        --iter codeplace_iteration --result codeplace_result -n $N -q \
        -o "$STOCK/stock-rp2040.trace" >"$STOCK/stock-rp2040.trace.txt" &&
    $CODEPLACE sim "$STOCK/stock-rp2040.trace" "$FW/demo-rp2040.elf" \
        --map "$FW/demo-rp2040.map" --json -q -o "$STOCK/stock-rp2040.sim.json"; then
    :
else
    echo "# cannot make the stock trace of the demo firmware" >&2
fi

field() { # LINE KEY
    echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# Searches counted in moves (repeatable, and bounded in time under ASan).
run_loop() { # TARGET STRATEGY BUDGET -> sets $line; files in ./loop
    W=$PWD/loop
    mkdir -p "$W" && cp "$STOCK"/stock-* "$W"/ &&
    line=$(CODEPLACE=$CODEPLACE PLAN_ARGS="--search-moves 8000 --descent-passes 0 --time 0" \
        sh "$CP_ROOT/scripts/plan-loop" "$1" "$2" "$3" "$W" $N)
}

placed_where_planned() { # TAG: every flash address of the layout in the ELF
    arm-none-eabi-nm $W/$1.elf >nm.txt &&
    python3 - $W/$1.layout nm.txt <<-\EOF
	import sys
	nm = {}
	for l in open(sys.argv[2]):
	    p = l.split()
	    if len(p) == 3: nm.setdefault(p[2], int(p[0], 16) & ~1)
	bad = n = 0
	for l in open(sys.argv[1]):
	    if l.startswith("#"): continue
	    name, region, place = l.split()[:3]
	    if region != "flash" or name not in nm: continue
	    n += 1
	    if nm[name] != int(place, 16): bad += 1; print("moved:", name, hex(nm[name]), place)
	assert n > 50 and bad == 0, (n, bad)
	EOF
}

check() { # python condition over the fields of $line
    python3 - "$line" "$1" <<-\EOF
	import sys
	f = dict(kv.split("=", 1) for kv in sys.argv[1].split())
	num = {k: float(v) for k, v in f.items() if k not in ("target", "strategy", "budget", "result_stock", "result_placed")}
	ok = eval(sys.argv[2], {}, dict(num, same=f["result_stock"] == f["result_placed"] and f["result_stock"] != ""))
	print(sys.argv[1])
	sys.exit(0 if ok else 1)
	EOF
}

test_expect_success 'rp2040 hot block: same result, prediction exact, fewer misses' '
    run_loop rp2040 hotblock 0 &&
    check "same and abs(predicted - measured) <= 0.001 * measured and measured < stock and insns_predicted == insns_measured"
'

test_expect_success 'rp2040 colour: within 10 %, most conflict misses gone' '
    run_loop rp2040 colour 0 &&
    check "same and abs(predicted - measured) <= 0.10 * measured and measured < stock" &&
    python3 - "$W/rp2040-colour-0.plan.json" <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))["results"][0]
	# conflict misses: set-associative minus fully associative
	assert r["conflict_misses_after"] < 0.5 * r["conflict_misses_before"], (
	    r["conflict_misses_before"], r["conflict_misses_after"])
	EOF
    placed_where_planned rp2040-colour-0
'

test_expect_success 'rp2040 combined 16K: RAM within budget, warm misses cut by 80 % or more, placed as planned, the snippets; beats ranking by instructions per byte (its prediction: plans with fast memory are predicted exactly, t0610 and t0625)' '
    run_loop rp2040 combined 16K &&
    check "same and measured <= 0.2 * stock and abs(predicted - measured) <= 0.25 * measured" &&
    map=$W/rp2040-combined-16K.map &&
    start=$(sed -n "s/^ *0x\([0-9a-f]*\) *__ramfunc_start = .*/\1/p" $map) &&
    end=$(sed -n "s/^ *0x\([0-9a-f]*\) *__ramfunc_end = .*/\1/p" $map) &&
    test $((0x$end - 0x$start)) -le 16384 &&
    test $((0x$end - 0x$start)) -gt 12000 &&
    placed_where_planned rp2040-combined-16K &&
    d=$W/rp2040-combined-16K.place &&
    grep -q "^    \. = __codeplace_hot_start + 0x" $d/codeplace_flash.ld &&
    grep -q "^    \*libgcc\.a:[a-z0-9_]*\.o(\.text)" $d/codeplace_ram.ld &&
    grep -q "^    \*libc\.a:" $d/codeplace_ram.ld &&
    grep -q "^# region: sram$" $d/codeplace.list &&
    grep -q "^# region: flash$" $d/codeplace.list &&
    grep -q "^codeplace_zephyr_apply(" $d/codeplace.cmake &&
    grep -q "codeplace_apply(\${target}" $d/codeplace_pico.cmake &&
    comb=$(field "$line" measured) && here=$PWD &&
    (cd "$CP_ROOT" && $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace $STOCK/stock-rp2040.trace --target rp2040 --strategy rank \
        --budget 16K --time 0 --json -q -o "$here/rank.json") &&
    rank=$(python3 -c "import json; print(json.load(open(\"rank.json\"))[\"results\"][0][\"misses_per_iteration\"])") &&
    python3 -c "import sys; print($comb, $rank); sys.exit(0 if $comb < $rank else 1)"
'

test_expect_success 'usage and input errors' '
    test_exit 2 $CODEPLACE plan $FW/demo-rp2040.elf --trace x 2>err &&
    grep -q "target is required" err &&
    test_exit 2 $CODEPLACE plan $FW/demo-rp2040.elf --target rp2040 --trace x --strategy best 2>err &&
    grep -q "not one of" err &&
    test_exit 1 $CODEPLACE plan $FW/demo-rp2040.elf --target rp2040 --trace nosuch.trace 2>err &&
    grep -q "nosuch.trace" err &&
    test_exit 1 $CODEPLACE plan $FW/demo-imxrt1062.elf --map $FW/demo-imxrt1062.map --target imxrt1062 \
        --trace $STOCK/stock-rp2040.trace 2>err &&
    grep -q "trace of another image" err
'

test_done
