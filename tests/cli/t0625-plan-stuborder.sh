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

# (The map copied out of the project: its relative object paths resolve
# neither here nor against its directory and parents; t0626 has the cases
# where they do.)
test_expect_success 'objects that cannot be read: the stub order is a guess, and plan says so' '
    cp $FW/demo-rp2040.map elsewhere.map &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map elsewhere.map \
        --trace $TEST_TMP/rp2040/stock.trace --target rp2040 --strategy rank \
        --budget 16K --layout g.layout >out 2>err &&
    grep -q "warning: the order of the [0-9]* linker stubs in flash is a guess (cannot read the section headers of .build/fw/obj/.* give the directory the link ran in with --build-dir)" err &&
    grep -q "relink and plan again with --refine-from for the exact figure" err
'

# A function in fast memory that flash code calls by two names (mix and its
# alias mix2, as the demo's libm calls scalbn as scalbn and as ldexp): ld
# names a stub after the symbol a call's relocation refers to, so it makes
# two for one target address. A small image built here with real
# arm-none-eabi-gcc and ld on the RP2040 memory map, for ARMv6-M and for
# ARMv8-M Baseline (whose stub is ld's 16-byte Thumb-only one too).
A=$TEST_TMP/alias
mkdir -p $A
cat >$A/mix.c <<\EOF
#include <stdint.h>
uint32_t mix(uint32_t x, uint32_t n);
uint32_t mix(uint32_t x, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        x = (x << 5 | x >> 27) ^ (x + 0x9e3779b9u);
    return x;
}
uint32_t mix2(uint32_t x, uint32_t n) __attribute__((alias("mix")));
EOF
cat >$A/app.c <<\EOF
#include <stdint.h>
#include "codeplace.h"
uint32_t mix(uint32_t x, uint32_t n);
uint32_t mix2(uint32_t x, uint32_t n);
volatile uint32_t codeplace_result;
__attribute__((noinline)) static uint32_t by_one(uint32_t x) { return mix(x, 7) + 1; }
__attribute__((noinline)) static uint32_t by_other(uint32_t x) { return mix2(x, 9) ^ 3; }
void codeplace_init(void) { codeplace_runtime_init(); }
void codeplace_iteration(void)
{
    uint32_t r = codeplace_result;
    for (uint32_t i = 0; i < 16; i++)
        r = by_one(r) ^ by_other(r + i);
    codeplace_result = r;
}
void codeplace_iteration_parse(void) { codeplace_iteration(); }
EOF
# The RP2040's facts with another core: the planner takes the stub from it.
sed 's/^cpu .*/cpu         cortex-m23/; s/^name .*/name        m23board/' \
    $CP_ROOT/targets/rp2040.target >$A/m23board.target

# alias_link CPU PLACEDIR OUT: link the objects of CPU/ (paths relative to
# $A, where plan runs, so that the map's paths resolve).
alias_link() {
    arm-none-eabi-gcc -mcpu=$1 -mthumb --specs=picolibc.specs -nostartfiles \
        -Wl,--gc-sections -L$2 -L$CP_ROOT/firmware/ld/default -L$CP_ROOT/firmware/ld \
        -T $CP_ROOT/firmware/ld/rp2040.ld -Wl,-Map=$3.map -o $3.elf \
        $1/app.o $1/mix.o $1/startup.o
}
# alias_loop CPU TARGET STUBTYPE: build, trace, plan mix alone into SRAM
# (a 64-byte cache, so that the stubs' fetches miss), relink, verify, check
# ld's stubs, trace and simulate the relinked image.
alias_loop() {
    cd $A && mkdir -p $1 &&
    for f in mix.c app.c $CP_ROOT/firmware/common/startup.c; do
        arm-none-eabi-gcc -mcpu=$1 -mthumb -std=c99 -Os -Wall -Wextra -Werror \
            -ffunction-sections -fdata-sections --specs=picolibc.specs \
            -I$CP_ROOT/firmware/common -c -o $1/$(basename $f .c).o $f || return 1
    done &&
    alias_link $1 $CP_ROOT/firmware/ld/default $1/stock &&
    $CODEPLACE trace -q $1/stock.elf --target $2 $HARNESS -n 4 -o $1/stock.trace >/dev/null &&
    $CODEPLACE plan $1/stock.elf --map $1/stock.map --trace $1/stock.trace \
        --target $2 --strategy rank --budget 40 --no-ram "by_*" --no-ram "codeplace_*" \
        --cache 64,2,8 --emit $1/place --layout $1/p.layout --json -o $1/plan.json \
        2>$1/plan.err &&
    grep -q "^mix sram 0x20000000 " $1/p.layout &&
    grep -q "^plan: 2 linker stubs in flash, in the order of GNU ld 2.40.s stub table" $1/plan.err &&
    ! grep -q "is a guess" $1/plan.err &&
    grep -q "^# stubs: flash 2 fast 0 bytes 16 " $1/p.layout &&
    grep -q "^@stub 0x1[0-9a-f]* 16 5 mix@0x" $1/p.layout &&
    grep -q "^@stub 0x1[0-9a-f]* 16 5 mix2@0x" $1/p.layout &&
    alias_link $1 $1/place $1/out &&
    arm-none-eabi-objdump -d $1/out.elf >$1/out.dis &&
    grep -A1 "<__mix_veneer>:" $1/out.dis | grep -q "push.*{r0}" &&
    grep -A1 "<__mix2_veneer>:" $1/out.dis | grep -q "push.*{r0}" &&
    $CODEPLACE verify $1/p.layout $1/out.elf --map $1/out.map --target $2 >$1/verify.txt &&
    ! grep -q "^note:" $1/verify.txt &&
    grep -q "^stubs:     2 in flash (plan 2), 0 in fast memory (plan 0)$" $1/verify.txt &&
    grep -q "^result:    as planned (0 differences)$" $1/verify.txt &&
    python3 $CP_ROOT/scripts/ldstub-check $1/out.elf $1/out.map $3 >$1/check.txt &&
    grep -q "^\.text.*__stub at 0x.*: 2 stubs, as predicted" $1/check.txt &&
    ! grep -q DIFFERENT $1/check.txt &&
    $CODEPLACE trace -q $1/out.elf --target $2 $HARNESS -n 4 -o $1/out.trace >/dev/null &&
    $CODEPLACE sim $1/out.trace $1/out.elf --map $1/out.map --target $2 --cache 64,2,8 \
        --json -q -o $1/sim.json 2>/dev/null &&
    python3 - $1/plan.json $1/sim.json <<-\EOF
	import json, sys
	p = json.load(open(sys.argv[1]))["results"][0]
	s = json.load(open(sys.argv[2]))
	assert p["flash_stubs"] == 2, p
	assert p["stub_order"] == "ld", p
	pred, meas = p["misses_per_iteration"], s["warm"]["misses_mean"]
	assert meas > 0 and abs(pred - meas) < 1e-6, (pred, meas)
	EOF
}

test_expect_success 'a fast function called by two names: a stub per name, where ld put them, and the prediction is the measurement' '
    alias_loop cortex-m0plus rp2040 3
'

test_expect_success 'ARMv8-M Baseline (cortex-m23): the same with ld.s 16-byte Thumb-only stubs' '
    alias_loop cortex-m23 $A/m23board.target 3
'

test_done
