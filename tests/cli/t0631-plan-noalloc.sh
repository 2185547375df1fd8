#!/bin/sh
# Reads through a non-allocating alias of the cached flash (the RP2040's
# 0x11000000, targets/rp2040.target): the cache looks them up and never
# fills a line for them. A small image built here with real
# arm-none-eabi-gcc and ld reads a table in .rodata through the cached
# window in one function and through the alias in another; the planner's
# figures must be what codeplace sim measures, on the stock image, under a
# layout (sim --layout, whose @shift moves the alias's reads with the
# table) and on the image relinked with the plan, under every policy.
. "$(dirname "$0")/lib.sh"
D=$TEST_TMP/na
mkdir -p $D
cat >$D/app.c <<\EOF
#include <stdint.h>
#include "codeplace.h"
volatile uint32_t codeplace_result;
#define R(i) (uint32_t)((i) * 2654435761u)
#define R4(i) R(i), R(i + 1), R(i + 2), R(i + 3)
#define R16(i) R4(i), R4(i + 4), R4(i + 8), R4(i + 12)
#define R64(i) R16(i), R16(i + 16), R16(i + 32), R16(i + 48)
static const uint32_t table[256] = {R64(0), R64(64), R64(128), R64(192)};
/* The RP2040's non-allocating alias of the same flash. */
#define NOALLOC(p) ((const volatile uint32_t *)((uintptr_t)(p) + 0x01000000u))
__attribute__((noinline)) static uint32_t cached_sum(uint32_t x)
{
    for (uint32_t i = 0; i < 64; i++)
        x = (x << 3 | x >> 29) ^ table[(x + i) & 63];
    return x;
}
__attribute__((noinline)) static uint32_t alias_sum(uint32_t x)
{
    const volatile uint32_t *t = NOALLOC(table);
    for (uint32_t i = 0; i < 64; i++)
        x = (x * 33u) ^ t[(x >> 7) & 255];
    return x;
}
__attribute__((noinline)) static uint32_t mix(uint32_t x, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        x = (x << 5 | x >> 27) ^ (x + 0x9e3779b9u);
    return x;
}
void codeplace_init(void) { codeplace_runtime_init(); }
void codeplace_iteration(void)
{
    uint32_t r = codeplace_result;
    for (uint32_t i = 0; i < 8; i++)
        r = cached_sum(r) + alias_sum(r ^ i) + mix(r, 5);
    codeplace_result = r;
}
void codeplace_iteration_parse(void) { codeplace_iteration(); }
EOF
HARNESS="--init codeplace_init --iter codeplace_iteration --result codeplace_result"
CACHE=256,2,8 # small enough that the table and the code compete

na_link() { # PLACEDIR OUT
    arm-none-eabi-gcc -mcpu=cortex-m0plus -mthumb --specs=picolibc.specs \
        -nostartfiles -Wl,--gc-sections -L$1 -L$CP_ROOT/firmware/ld/default \
        -L$CP_ROOT/firmware/ld -T $CP_ROOT/firmware/ld/rp2040.ld \
        -Wl,-Map=$2.map -o $2.elf $D/app.o $D/startup.o
}

# warm FILE: the warm misses per iteration of a sim --json report
warm() {
    python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['warm']['misses_mean'])" "$1"
}

# close A B: equal to a millionth
close() {
    python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(a, b); sys.exit(0 if abs(a - b) < 1e-6 else 1)" "$1" "$2"
}

test_expect_success 'build and trace the image: the alias reads are in the trace' '
    for f in $D/app.c $CP_ROOT/firmware/common/startup.c; do
        arm-none-eabi-gcc -mcpu=cortex-m0plus -mthumb -std=c99 -Os -Wall -Wextra \
            -Werror -ffunction-sections -fdata-sections --specs=picolibc.specs \
            -I$CP_ROOT/firmware/common -c -o $D/$(basename $f .c).o $f || return 1
    done &&
    na_link $CP_ROOT/firmware/ld/default $D/stock &&
    $CODEPLACE trace -q $D/stock.elf --target rp2040 $HARNESS -n 4 \
        -o $D/stock.trace >$D/trace.txt &&
    arm-none-eabi-objdump -d $D/stock.elf | grep -A12 "<alias_sum>:" >alias.dis &&
    $CODEPLACE sim $D/stock.trace $D/stock.elf --map $D/stock.map --target rp2040 \
        --cache $CACHE --json -q -o $D/stock.sim.json &&
    $CODEPLACE sim $D/stock.trace $D/stock.elf --map $D/stock.map --target rp2040 \
        --cache $CACHE --by function --csv -q -o by.csv &&
    grep -q "^?0x11" by.csv
'

test_expect_success 'the planner counts the alias reads as sim does (stock figure)' '
    $CODEPLACE plan $D/stock.elf --map $D/stock.map --trace $D/stock.trace \
        --target rp2040 --cache $CACHE --strategy hotblock --json -q -o p.json &&
    p=$(python3 -c "import json; print(json.load(open(\"p.json\"))[\"results\"][0][\"stock_misses_per_iteration\"])") &&
    close "$p" "$(warm $D/stock.sim.json)"
'

# POLICY STRATEGY BUDGET [CACHE]: plan, sim --layout, relink, trace, sim; the
# prediction, the layout's figure and the measurement agree, and the
# relinked image computes what the stock one does.
loop() {
    c=${4:-$CACHE},$1 &&
    w=$D/$1-$2-$3 && mkdir -p $w &&
    $CODEPLACE plan $D/stock.elf --map $D/stock.map --trace $D/stock.trace \
        --target rp2040 --cache $c --strategy $2 --budget $3 \
        --search-moves 2000 --descent-passes 0 --time 0 --emit $w/place --layout $w/p.layout \
        --json -q -o $w/plan.json &&
    pred=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"results\"][0][\"misses_per_iteration\"])" $w/plan.json) &&
    $CODEPLACE sim $D/stock.trace $D/stock.elf --map $D/stock.map --target rp2040 \
        --cache $c --layout $w/p.layout --json -q -o $w/layout.sim.json &&
    close "$pred" "$(warm $w/layout.sim.json)" &&
    na_link $w/place $w/out &&
    $CODEPLACE trace -q $w/out.elf --target rp2040 $HARNESS -n 4 \
        -o $w/out.trace >$w/trace.txt 2>/dev/null &&
    a=$(sed -n "s/^result: *codeplace_result = \(0x[0-9a-f]*\).*/\1/p" $D/trace.txt) &&
    b=$(sed -n "s/^result: *codeplace_result = \(0x[0-9a-f]*\).*/\1/p" $w/trace.txt) &&
    test -n "$a" && test "$a" = "$b" &&
    $CODEPLACE sim $w/out.trace $w/out.elf --map $w/out.map --target rp2040 \
        --cache $c --json -q -o $w/out.sim.json 2>/dev/null &&
    close "$pred" "$(warm $w/out.sim.json)"
}

test_expect_success 'LRU, colour: predicted = sim --layout = relinked' '
    loop lru colour 0
'

test_expect_success 'LRU, RAM: predicted = sim --layout = relinked (the alias reads move with .rodata)' '
    loop lru ram 64 &&
    grep -q "^@shift 0x[0-9a-f]* -" $D/lru-ram-64/p.layout
'

test_expect_success 'LRU, combined: predicted = sim --layout = relinked' '
    loop lru combined 96
'

test_expect_success 'FIFO, random and tree-PLRU: predicted = sim --layout = relinked' '
    loop fifo combined 96 &&
    loop random colour 0 &&
    loop plru combined 96 512,4,8
'

test_done
