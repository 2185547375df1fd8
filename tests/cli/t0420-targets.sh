#!/bin/sh
# Targets are files (docs/formats/target.md): the parser's errors, a user's
# --target FILE, --cache and --as over a QEMU machine's memory map, the
# trace's target as the default, the check that code ran from cached
# memory, and layouts and budgets checked against the target's memories.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
FW=$CP_ROOT/build/fw
MKTRACE=$CP_ROOT/build/san/tests/mktrace
ELF="--elf $FX/m0.elf --map $FX/m0.map"

# A target file of a made-up board: rp2040's cache over a small map.
my_board() {
    cat >"$1" <<-\EOF
	codeplace-target 1
	name        myboard
	board       My Board
	cpu         cortex-m0plus
	clock       48000000
	cpi         1.5
	cache.size          8K
	cache.ways          2
	cache.line          16
	cache.replacement   lru
	cache.hit_cycles    1
	cache.miss_cycles   40
	fast        sram
	memory  flash  flash  0x10000000  2M   FLASH
	memory  sram   sram   0x20000000  64K  RAM
	EOF
}

test_expect_success 'the presets are files; each lists the file it came from' '
    $CODEPLACE target >out &&
    for t in rp2040 rp2350 imxrt1062 mps2-an385 mps2-an500 mps2-an505 microbit; do
        grep -q "^$t .*/targets/$t.target$" out || return 1
    done &&
    $CODEPLACE target --json >all.json &&
    python3 -c "import json; d = json.load(open(\"all.json\")); assert len(d) == 7, d; assert all(t[\"file\"].endswith(t[\"name\"] + \".target\") for t in d)"
'

test_expect_success 'the QEMU presets: code memory at the cached window' '
    $CODEPLACE target mps2-an385 --json >a.json &&
    $CODEPLACE target mps2-an505 --json >b.json &&
    $CODEPLACE target microbit --json >c.json &&
    python3 - <<-\EOF
	import json
	a, b, c = (json.load(open(f)) for f in ("a.json", "b.json", "c.json"))
	def flash(t): return [(m["base"], m["size"]) for m in t["memories"] if m["kind"] == "flash"]
	assert a["cpu"] == "cortex-m3" and flash(a) == [(0, 4 << 20)], a
	assert b["cpu"] == "cortex-m33" and flash(b)[0] == (0x10000000, 4 << 20), b
	assert c["cpu"] == "cortex-m0" and flash(c) == [(0, 256 << 10)], c
	assert a["cache"]["size"] == 16384 and a["cache"]["line"] == 8
	EOF
'

test_expect_success 'a target FILE, its own and CODEPLACE_TARGETS' '
    my_board my.target &&
    $CODEPLACE target ./my.target >out &&
    grep -q "^target:  myboard (My Board)$" out &&
    grep -q "8192 bytes, 2-way, 16-byte lines, 256 sets" out &&
    mkdir dir && cp my.target dir/myboard.target &&
    CODEPLACE_TARGETS=$PWD/dir $CODEPLACE target myboard >out2 &&
    grep -q "^file:    $PWD/dir/myboard.target$" out2 &&
    CODEPLACE_TARGETS=$PWD/dir $CODEPLACE target >list &&
    grep -q "^myboard " list &&
    test_exit 2 $CODEPLACE target myboard 2>err &&
    grep -q "no target .myboard." err
'

test_expect_success 'an installed binary finds share/codeplace/targets next to it' '
    mkdir -p p/bin p/share/codeplace/targets &&
    cp "$CODEPLACE" p/bin/codeplace &&
    cp "$CP_ROOT"/targets/rp2040.target p/share/codeplace/targets/ &&
    ./p/bin/codeplace target >out &&
    grep -q "^rp2040 .*$PWD/p/share/codeplace/targets/rp2040.target$" out &&
    test $(grep -c target$ out) = 1 &&
    test_exit 2 ./p/bin/codeplace target imxrt1062 2>err &&
    grep -q "no target .imxrt1062. (looked for imxrt1062.target in $PWD/p/share/codeplace/targets" err
'

bad_target() { # LINE-TO-ADD-OR-SED EXPECTED-MESSAGE
    my_board b.target &&
    eval "$1" &&
    test_exit 1 $CODEPLACE target ./b.target 2>err &&
    grep -q "$2" err || { cat err; false; }
}

test_expect_success 'target file errors name the file, the line and what is wrong' '
    bad_target "sed -i 1d b.target" "b.target:1: not a target file" &&
    bad_target "sed -i 1s/1/2/ b.target" "b.target:1: target file version 2" &&
    bad_target "echo colour blue >>b.target" "b.target:16: unknown key .colour." &&
    bad_target "echo memory more sram 0x2000f000 8K >>b.target" \
        "b.target:16: memory more (0x2000f000..0x20010fff) overlaps memory sram (0x20000000..0x2000ffff, line 15)" &&
    bad_target "sed -i \"s/^cache.line .*/cache.line 12/\" b.target" \
        "b.target:9: cache.line: 12 bytes is not a power of two" &&
    bad_target "sed -i \"s/^cache.size .*/cache.size 12K/\" b.target" \
        "b.target:7: cache.size 12288 is not cache.ways \* cache.line \* sets" &&
    bad_target "sed -i /^cpi/d b.target" "b.target: no .cpi. line" &&
    bad_target "sed -i \"s/^fast .*/fast flash/\" b.target" \
        "b.target:13: fast: memory .flash. is flash, not sram" &&
    bad_target "echo name other >>b.target" "b.target:16: .name. is given twice (first on line 2)" &&
    bad_target "sed -i \"s/^cpu .*/cpu z80/\" b.target" "b.target:4: cpu: .z80. is not" &&
    bad_target ": >b.target" "b.target: empty file"
'

# A trace of the tr fixture on QEMU's mps2-an500 map (code at 0).
an500_trace() {
    $CODEPLACE trace -q $FX/tr-mps2.elf --target mps2-an500 --mark codeplace_mark \
        -n 6 -o "$1"
}

test_expect_success 'the trace names its target; sim defaults to it' '
    an500_trace a.trace &&
    $CODEPLACE trace --info a.trace >info &&
    grep -q "^target:       mps2-an500 " info &&
    $CODEPLACE sim a.trace --json -q >d.json &&
    $CODEPLACE sim a.trace --target mps2-an500 --json -q >e.json &&
    cmp d.json e.json &&
    python3 -c "import json; d = json.load(open(\"d.json\")); assert d[\"target\"] == \"mps2-an500\" and d[\"iterations\"][1][\"accesses\"] > 0, d"
'

test_expect_success '--cache and --as put another cache over the same memory map' '
    an500_trace a.trace &&
    $CODEPLACE sim a.trace --as imxrt1062 --json -q >as.json &&
    $CODEPLACE sim a.trace --cache 32K,2,32 --dreads no --json -q >c.json &&
    $CODEPLACE sim a.trace --json -q >d.json &&
    python3 - <<-\EOF
	import json
	a, c, d = (json.load(open(f)) for f in ("as.json", "c.json", "d.json"))
	assert a["cache"]["size"] == 32768 and a["cache"]["line"] == 32, a["cache"]
	assert d["cache"]["size"] == 16384 and d["cache"]["line"] == 8, d["cache"]
	ma = [i["misses"] for i in a["iterations"]]
	mc = [i["misses"] for i in c["iterations"]]
	md = [i["misses"] for i in d["iterations"]]
	assert ma == mc, (ma, mc)
	assert ma != md, (ma, md)
	EOF
'

test_expect_success 'another target than the trace.s: a warning, and none cached: an error' '
    an500_trace a.trace &&
    test_exit 1 $CODEPLACE sim a.trace --target rp2040 2>err &&
    grep -q "a.trace was recorded for target .mps2-an500.; using .rp2040." err &&
    grep -q "error: a.trace: none of its .* instructions ran from rp2040.s cached memory" err &&
    grep -q "Try --target mps2-an500 --as rp2040" err &&
    $CODEPLACE sim a.trace --target rp2040 --allow-uncached -q >out 2>err &&
    grep -q "allow-uncached" err &&
    test_exit 1 $CODEPLACE sim a.trace --target imxrt1062 2>err &&
    grep -q "none of its" err
'

test_expect_success 'fewer than half of an iteration cached: a loud warning' '
    printf "%s\n" M "F 0x10000000 40 20" "F 0x20000100 80 40" "R 3" |
        $MKTRACE h.trace rp2040 &&
    $CODEPLACE sim h.trace -q >out 2>err &&
    grep -q "warning: h.trace: in 4 of 4 iterations most instructions ran from rp2040.s fast memory .sram. (33.3% overall from its cached memory): the cache figures cover only the cached part" err &&
    ! grep -q "try a target" err &&
    printf "%s\n" M "F 0x10000000 40 20" "F 0x50000100 80 40" "R 3" |
        $MKTRACE p.trace rp2040 &&
    $CODEPLACE sim p.trace -q --allow-uncached >out 2>err &&
    grep -q "warning: p.trace: in 4 of 4 iterations fewer than half of the instructions ran from rp2040.s cached memory (80 of 240 overall, 33.3%); most of the rest ran" err &&
    grep -q "try " err &&
    printf "%s\n" M "F 0x10000000 80 40" "F 0x20000100 40 20" "R 3" |
        $MKTRACE g.trace rp2040 &&
    $CODEPLACE sim g.trace -q >out 2>err &&
    ! grep -q warning err
'

test_expect_success 'report --trace: the same checks' '
    printf "# codeplace samples 1\n0x10000124 5\n" >s.txt &&
    printf "%s\n" M "F 0x20000100 80 40" "R 3" | $MKTRACE r.trace rp2040 &&
    test_exit 1 $CODEPLACE report s.txt $ELF --trace r.trace 2>err &&
    grep -q "none of its 160 instructions ran from rp2040.s cached memory" err &&
    $CODEPLACE report s.txt $ELF --trace r.trace --allow-uncached >out 2>err
'

test_expect_success 'a user.s target file: named with its hash in the trace' '
    sed "s/^name .*/name tr-board/; s/0x10000000  2M/0x00000000  4M/; s/0x20000000  64K/0x20000000  4M/" \
        "$CP_ROOT/targets/mps2-an500.target" >tb.target &&
    sed -i "s/^name .*/name        tr-board/" tb.target &&
    $CODEPLACE trace -q $FX/tr-mps2.elf --target ./tb.target --mark codeplace_mark -n 4 -o u.trace &&
    $CODEPLACE trace --info u.trace >info &&
    grep -E -q "^target: +tr-board@[0-9a-f]{8} " info &&
    test_exit 1 $CODEPLACE sim u.trace 2>err &&
    grep -q "give --target NAME or --target FILE" err &&
    $CODEPLACE sim u.trace --target ./tb.target -q >out 2>err &&
    ! grep -q warning err &&
    echo "# changed" >>tb.target &&
    $CODEPLACE sim u.trace --target ./tb.target -q >out 2>err &&
    grep -q "recorded with another file of target .tr-board." err
'

test_expect_success 'plan takes the trace.s target; a budget larger than the fast memory is an error' '
    HARNESS="--init codeplace_init --iter codeplace_iteration" &&
    $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 $HARNESS -n 3 -o p.trace &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace p.trace \
        --strategy hotblock -q >out &&
    grep -q "target rp2040" out &&
    test_exit 2 $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace p.trace --budget 1M 2>err &&
    grep -q "budget 1,048,576 bytes does not fit rp2040.s sram (270,336 bytes at 0x20000000)" err &&
    test_exit 1 $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace p.trace --target imxrt1062 2>err &&
    grep -q "recorded for target .rp2040.; using .imxrt1062." err &&
    grep -q "no code in the cached flash window of imxrt1062" err
'

# Layouts against the target's memories (issue 15, case 7). fx_sum is at
# 0x10000124 (32 bytes) in the m0 fixture; RP2040 flash ends at 0x10ffffff.
layout_case() { # LINE EXPECTED
    printf "%s\n" M "F 0x10000124 4 2" "R 2" | $MKTRACE l.trace rp2040 &&
    printf "# codeplace layout 1\n%s\n" "$1" >x.layout &&
    test_exit 1 $CODEPLACE sim l.trace $ELF --layout x.layout 2>err &&
    grep -q "$2" err || { cat err; false; }
}

test_expect_success 'layout: a function past the end of flash' '
    layout_case "fx_sum flash 0x10fffff0 32 x" \
        "x.layout:2: fx_sum at 0x10fffff0 (32 bytes) runs past the end of flash memory .flash."
'

test_expect_success 'layout: an odd address' '
    layout_case "fx_sum flash 0x10100001 32 x" "x.layout:2: fx_sum at 0x10100001: an odd address"
'

test_expect_success 'layout: an SRAM placement at a flash address' '
    layout_case "fx_sum sram 0x10004000 32 x" \
        "x.layout:2: fx_sum in region sram at 0x10004000, but that address is flash memory .flash., not rp2040 sram memory"
'

test_expect_success 'layout: an @shift that moves flash into SRAM' '
    layout_case "@shift 0x10000000 268435456" \
        "x.layout:2: @shift moves .* to 0x2000...., outside rp2040.s cached flash .flash."
'

# fx_sum in SRAM: its fetch (one line access per iteration from flash)
# no longer goes through the cache.
test_expect_success 'layout: a good layout still applies' '
    printf "%s\n" M "F 0x10000124 4 2" "R 2" | $MKTRACE l.trace rp2040 &&
    printf "# codeplace layout 1\nfx_sum sram 0x20000100 32 y\n" >ok.layout &&
    $CODEPLACE sim l.trace $ELF --layout ok.layout -q >out 2>err &&
    ! test -s err &&
    grep -q "^layout:     ok.layout (1 placed: 0 at addresses, 0 coloured, 1 in RAM; 0 not in the image)$" out &&
    $CODEPLACE sim l.trace $ELF --csv -q | cut -d, -f1-5 >stock.csv &&
    $CODEPLACE sim l.trace $ELF --layout ok.layout --csv -q | cut -d, -f1-5 >ram.csv &&
    printf "%s\n" iteration,instructions,accesses,hits,misses 0,2,1,0,1 1,2,1,1,0 2,2,1,1,0 >expect &&
    test_cmp expect stock.csv &&
    printf "%s\n" iteration,instructions,accesses,hits,misses 0,2,0,0,0 1,2,0,0,0 2,2,0,0,0 >expect &&
    test_cmp expect ram.csv
'

test_done
