#!/bin/sh
# test: serial (QEMU under UDP traffic: a starved vCPU turns idle echoes into back-to-back ones, and the means follow)
# The whole-system loop on the echo firmware (firmware/ws/, mps2-an385):
# trace --qemu under UDP echo traffic, sim with a cache smaller than an
# echo's code (the RP2040's cache policy and timing, 2 KiB, 2-way, 8-byte
# lines: an echo touches about 2.5 KB of code and flash data), plan a flash
# layout (colour, no fast memory) and a plan with 1 KiB of SRAM, relink each
# with firmware/relink.sh, trace the relinked image under traffic again and
# compare the plan's prediction with what the new trace measures; verify
# the relinked images; and the misses per idle echo from an independent
# LRU model over QEMU's exec log (tests/cli/wsfw-count.py --cache).
#
# Which figures must agree, and how closely:
# - An idle echo (the request arrives while the system waits in WFI, no
#   SysTick interrupt in it) runs the same instructions every time
#   (firmware/ws/reference.txt). One that follows another idle echo starts
#   from the cache state an identical echo left, so its misses are a
#   function of the layout alone: the plan's model (sim --layout on the
#   stock trace) and the relinked run must give the same number, exactly,
#   and so must the independent model for the stock layout.
# - The mean over the warm echoes of a run also holds the echoes that a
#   SysTick interrupt (the tickless kernel's 0.64 s wrap, the housekeeping
#   thread's 1 s wake-up: +120 and +500 instructions) lands in, and the
#   echo after each. QEMU runs SysTick from the host's clock, so whether
#   and where those land differs from run to run (a run of 50 echoes at
#   100/s lasts about 0.5 s: none, one or two of them). Such a pair of
#   echoes costs up to about 200 misses more than two idle ones in these
#   layouts, so two pairs more in one run than in the other move a mean
#   over 49 echoes by about 8. The tolerance is 10 % of the prediction
#   plus 8 misses per echo.
# - --skip 20 leaves out the probes queued while the guest booted, which
#   it answers back to back (no idle between them: about 166 instructions
#   fewer); their number depends on how fast the host runs QEMU.
# QEMU is stopped by its PID (the plugin exits it at mark N; checked
# gone); traffic is loopback only, on a free port codeplace picks.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
ELF=$FW/ws-mps2-an385.elf
MAP=$FW/ws-mps2-an385.map
CACHE="--as rp2040 --cache 2K,2,8"
REF=$CP_ROOT/firmware/ws/reference.txt
W=$TEST_TMP/loop
mkdir -p "$W"

if ! have qemu-system-arm || ! test -f $CP_ROOT/build/codeplace-qemu.so || ! test -f $ELF; then
    test_skip 'whole-system loop' 'qemu-system-arm, the plugin or the echo firmware missing'
    test_done
fi

# record PREFIX ELF: trace under traffic into PREFIX.trace (stdout in
# PREFIX.out); every echo answered byte for byte but the few still in
# flight when the plugin stops QEMU at mark 50 (the request that reached
# it is never answered), and QEMU gone.
record() {
    timeout 60 $CODEPLACE trace --qemu mps2-an385 "$2" --mark codeplace_mark \
        --udp 7 --rate 100 --size 64 -n 50 --skip 20 --timeout 40 \
        -o "$1.trace" >"$1.out" 2>"$1.err" &&
    cat "$1.out" &&
    grep -q "^iterations:   50 " "$1.out" &&
    grep -q "^ended:        done$" "$1.out" &&
    sent=$(sed -n "s/^echoes: *\([0-9]*\) sent, \([0-9]*\) answered, 0 wrong.*/\1/p" "$1.out") &&
    answered=$(sed -n "s/^echoes: *\([0-9]*\) sent, \([0-9]*\) answered, 0 wrong.*/\2/p" "$1.out") &&
    test "$answered" -ge 30 && test $((sent - answered)) -le 5 &&
    pid=$(sed -n "s/.*(pid \([0-9]*\)).*/\1/p" "$1.err") && test -n "$pid" &&
    ! kill -0 $pid 2>/dev/null
}

# idle CSV: the most common instruction count of the iterations of a
# sim --csv (the idle echo's)
idle() {
    awk -F, 'NR > 2 { n[$2]++ } END { for (k in n) if (n[k] > best) { best = n[k]; v = k } print v }' "$1"
}

# steady CSV COLUMN: the distinct values of COLUMN (5: misses, 10:
# footprint lines) over the idle iterations that follow an idle one
steady() {
    awk -F, -v want=$(idle "$1") -v c=$2 \
        'NR > 1 && $2 == want && prev == want { print $c } { prev = $2 }' "$1" | sort -u
}

# json FILE EXPR
json() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(eval(sys.argv[2], {"d": d}))' "$@"
}

test_expect_success 'stock: trace --qemu --udp 7 -n 50, echoes answered, idle echo as the reference' '
    cd "$W" && record stock $ELF &&
    $CODEPLACE sim stock.trace --elf $ELF $CACHE --dreads no -q --csv -o stock-i.csv &&
    $CODEPLACE sim stock.trace --elf $ELF --map $MAP $CACHE -q --csv -o stock.csv &&
    $CODEPLACE sim stock.trace --elf $ELF --map $MAP $CACHE -q --json -o stock.json &&
    awk "\$1 == \"mps2-an385\" && \$2 == 64 { print \$3, \$4 }" $REF >want &&
    echo $(idle stock-i.csv) $(steady stock-i.csv 10) >got &&
    test_cmp want got &&
    test $(steady stock.csv 5 | wc -l) = 1 &&
    test $(awk -F, -v w=$(idle stock.csv) "NR > 2 && \$2 == w" stock.csv | wc -l) -ge 30
'

test_expect_success 'misses per idle echo: an LRU model over the exec log equals sim, exactly' '
    cd "$W" &&
    timeout 100 python3 $CP_ROOT/tests/cli/wsfw-count.py mps2-an385 $ELF \
        -n 30 --size 64 --cache 2K,2,8 --timeout 80 >count; rc=$?
    cat count && test $rc = 0 &&
    grep -q "0 dropped (rewound), 0 unmatched" count &&
    sed -n "s/^cache: *2048,2,8 lru, instruction fetches only: \([0-9]*\) misses per idle echo.*/\1/p" count >want &&
    sed -n "s/^per echo: *[0-9]* instructions, \([0-9]*\) lines of 8 bytes.*/\1/p" count >>want &&
    steady stock-i.csv 5 >got && steady stock-i.csv 10 >>got &&
    test $(wc -l <want) = 2 && test_cmp want got &&
    echo "independent model, fetches only: $(sed -n 1p want) misses per idle echo, sim $(sed -n 1p got)" >>summary
'

# plan_loop NAME STRATEGY BUDGET: plan on the stock trace, relink, record,
# compare. The searches are bounded by moves, not time, so that the same
# trace gives the same plan. With fast memory, calls between flash and
# SRAM go through GNU ld's long-branch stubs, which ld lays out in the
# order of its stub hash table; the first plan predicts that order
# (docs/plan.md), so plan --refine-from the relinked image, which reads the
# stubs back, must predict the same figure. plan runs where the link ran,
# so that the objects the map names are found.
plan() {
    (cd $CP_ROOT && $CODEPLACE plan "$@")
}
plan_loop() {
    cd "$W" &&
    args="$ELF --map $MAP --trace $W/stock.trace $CACHE --strategy $2 --budget $3
        -n 0 --plan-iterations 8 --search-moves 2000 --descent-passes 0 --time 0 -q" &&
    plan $args --emit $W/$1.place --list $W/$1.list --layout $W/$1.layout \
        --json -o $W/$1.plan.json &&
    test -s $1.list && test -s $1.place/codeplace_flash.ld &&
    $CP_ROOT/firmware/relink.sh ws-mps2-an385 $1.place $1 &&
    $CODEPLACE verify $1.layout $1.elf --map $1.map --emit $1.place >$1.verify &&
    cat $1.verify && grep -q "^result: *as planned (0 differences)$" $1.verify &&
    first=$(json $1.plan.json "round(d[\"results\"][0][\"misses_per_iteration\"], 2)") &&
    order=$(json $1.plan.json "d[\"results\"][0][\"stub_order\"]") &&
    if test "$3" != 0; then
        test "$order" = ld &&
        plan $args --refine-from $W/$1.elf --refine-map $W/$1.map \
            --layout $W/$1.refined.layout --json -o $W/$1.refined.json &&
        mv $1.refined.layout $1.layout && mv $1.refined.json $1.plan.json &&
        $CODEPLACE verify $1.layout $1.elf --map $1.map --emit $1.place >$1.verify &&
        grep -q "^result: *as planned (0 differences)$" $1.verify
    fi &&
    record $1 $1.elf &&
    $CODEPLACE sim stock.trace --elf $ELF --layout $1.layout $CACHE -q --csv -o $1.pred.csv &&
    $CODEPLACE sim $1.trace --elf $1.elf --map $1.map $CACHE -q --csv -o $1.csv &&
    $CODEPLACE sim $1.trace --elf $1.elf --map $1.map $CACHE -q --json -o $1.json &&
    pi=$(idle $1.pred.csv) && mi=$(idle $1.csv) &&
    pm=$(steady $1.pred.csv 5) && mm=$(steady $1.csv 5) &&
    echo "idle echo: predicted $pi instructions, $pm misses; measured $mi, $mm" &&
    test "$pi" = "$mi" && test $(echo "$pm" | wc -l) = 1 && test -n "$pm" &&
    test "$pm" = "$mm" &&
    p=$(json $1.plan.json "round(d[\"results\"][0][\"misses_per_iteration\"], 2)") &&
    m=$(json $1.json "round(d[\"warm\"][\"misses_mean\"], 2)") &&
    s=$(json stock.json "round(d[\"warm\"][\"misses_mean\"], 2)") &&
    echo "$1 ($2, budget $3): stock $s, predicted $p (first pass $first), measured $m misses per warm echo; idle echo $pm predicted, $mm measured" |
        tee -a summary &&
    test "$p" = "$first" &&
    python3 -c "import sys; p, m = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(m - p) <= 0.10 * p + 8 else 1)" $p $m
}

test_expect_success 'colour, no fast memory: relinked, verified, predicted = measured' '
    plan_loop colour colour 0 &&
    test "$(idle $W/colour.csv)" = "$(awk "\$1 == \"mps2-an385\" && \$2 == 64 { print \$3 }" $REF)" &&
    test $(json $W/colour.plan.json "d[\"results\"][0][\"fast_bytes\"]") = 0 &&
    test $(steady $W/colour.csv 5) -lt $(steady $W/stock.csv 5)
'

test_expect_success '1 KiB of SRAM (combined): relinked, verified, predicted = measured' '
    plan_loop sram combined 1K &&
    grep -q "^# region: sram" $W/sram.list &&
    test $(json $W/sram.plan.json "d[\"results\"][0][\"fast_bytes\"]") -gt 0 &&
    test $(json $W/sram.plan.json "d[\"results\"][0][\"fast_bytes\"]") -le 1024 &&
    test $(steady $W/sram.csv 5) -lt $(steady $W/colour.csv 5)
'

test_expect_success 'a marker a plan moved to SRAM marks every echo, without a warning' '
    mkdir plan &&
    printf "*(.text.codeplace_mark)\n" >plan/codeplace_ram.ld &&
    $CP_ROOT/firmware/relink.sh ws-mps2-an385 plan m &&
    arm-none-eabi-nm m.elf | grep -q "^2000[0-9a-f]* T codeplace_mark$" &&
    timeout 60 $CODEPLACE trace --qemu mps2-an385 m.elf --mark codeplace_mark \
        --udp 7 -n 5 --skip 20 --timeout 40 -o m.trace >out 2>err &&
    cat out err &&
    grep -q "^iterations:   5 " out &&
    ! grep "outside its cached window" err
'

# An image linked for another memory map than --target (tr-mps2.elf, code
# at 0 for mps2-an500, Armv7E-M) is refused before QEMU runs, as record
# refuses it: its trace would not be the target's.
test_expect_success 'an image for another memory map than --target is refused before QEMU runs' '
    test_exit 1 $CODEPLACE trace -q --qemu mps2-an500 $CP_FIXTURES/tr-mps2.elf \
        --target rp2040 --mark codeplace_mark -n 2 -o w.trace >out 2>err &&
    grep -q "^codeplace: error: .*tr-mps2.elf. is not an image for rp2040: it is built for Armv7E-M, which the cortex-m0plus (a baseline core) cannot run$" err &&
    ! test -e w.trace
'

test -f "$W/summary" && sed 's/^/# /' "$W/summary"
test_done
