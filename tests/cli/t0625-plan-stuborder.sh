#!/bin/sh
# The first plan with fast memory predicts GNU ld's stub order: on the demo
# (rp2040 and imxrt1062), plan --strategy ram, relink with real
# arm-none-eabi-ld (firmware/relink.sh), and require verify to find every
# stub where the layout put it (no note) and the relinked image's warm
# misses, simulated from its own trace, to equal the plan's prediction
# without --refine-from. A plan whose objects cannot be read says its stub
# order is a guess.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
HARNESS="--init codeplace_init --iter codeplace_iteration"

# TARGET BUDGET STUBTYPE WRONGTYPE: plan, relink, verify, check the stub
# sections with scripts/ldstub-check (and that it rejects the wrong stub
# type), trace, sim (in $TEST_TMP/TARGET).
# The plan runs from the project root, where the map's relative object
# paths resolve, as it does in scripts/plan-loop.
loop() {
    d=$TEST_TMP/$1 &&
    mkdir -p $d &&
    $CODEPLACE trace -q $FW/demo-$1.elf --target $1 $HARNESS -n 4 -o $d/stock.trace >/dev/null &&
    (cd $CP_ROOT && $CODEPLACE plan $FW/demo-$1.elf --map $FW/demo-$1.map \
        --trace $d/stock.trace --target $1 --strategy ram --budget $2 \
        --emit $d/place --layout $d/p.layout --json -o $d/plan.json 2>$d/plan.err) &&
    grep -q "in the order of GNU ld 2.40.s stub table" $d/plan.err &&
    ! grep -q "is a guess" $d/plan.err &&
    sh $CP_ROOT/firmware/relink.sh $1 $d/place $d/out &&
    $CODEPLACE verify $d/p.layout $d/out.elf --map $d/out.map >$d/verify.txt &&
    ! grep -q "^note:" $d/verify.txt &&
    grep -q "^stubs:     \([1-9][0-9]*\) in flash (plan \1), \([0-9]*\) in fast memory (plan \2)$" $d/verify.txt &&
    grep -q "^result:    as planned (0 differences)$" $d/verify.txt &&
    (cd $CP_ROOT && python3 scripts/ldstub-check $d/out.elf $d/out.map $3) >$d/check.txt &&
    grep -q "^\.text.*__stub at 0x.*stubs, as predicted" $d/check.txt &&
    ! grep -q DIFFERENT $d/check.txt &&
    ! (cd $CP_ROOT && python3 scripts/ldstub-check $d/out.elf $d/out.map $4) >/dev/null &&
    $CODEPLACE trace -q $d/out.elf --target $1 $HARNESS -n 4 -o $d/out.trace >/dev/null &&
    $CODEPLACE sim $d/out.trace $d/out.elf --map $d/out.map --json -q -o $d/sim.json &&
    python3 - $d/plan.json $d/sim.json <<-\EOF
	import json, sys
	p = json.load(open(sys.argv[1]))["results"][0]
	s = json.load(open(sys.argv[2]))
	assert p["flash_stubs"] > 0, p
	assert "misses_before_refine" not in p, p
	pred, meas = p["misses_per_iteration"], s["warm"]["misses_mean"]
	assert abs(pred - meas) < 1e-6, (pred, meas)
	EOF
}

test_expect_success 'rp2040 ram 16K: ld put every stub where the first plan did, and the prediction is the measurement' '
    loop rp2040 16K 3 22
'

test_expect_success 'imxrt1062 ram 32K: the same with Thumb-2 stubs in flash at 0x60000000 and ITCM' '
    loop imxrt1062 32K 22 3
'

test_expect_success 'objects that cannot be read: the stub order is a guess, and plan says so' '
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace $TEST_TMP/rp2040/stock.trace --target rp2040 --strategy ram \
        --budget 16K --layout g.layout >out 2>err &&
    grep -q "warning: the order of the [0-9]* linker stubs in flash is a guess (cannot read the section headers of .build/fw/obj/" err &&
    grep -q "relink and plan again with --refine-from for the exact figure" err
'

test_done
