#!/bin/sh
# The demo firmware (firmware/, mk/firmware.mk): the four builds, their CPU,
# harness symbols and vector table, codeplace image on them, the QEMU
# reference results against firmware/expected.txt, and the placement hooks
# (codeplace_ram.ld / codeplace_flash.ld) through a relink.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
RELINK=$CP_ROOT/firmware/relink.sh
QREF=$CP_ROOT/firmware/qemu-ref.sh
EXPECTED=$CP_ROOT/firmware/expected.txt
export QEMU_TIMEOUT=60

# nm value of a symbol, as 0x%08x; empty when absent.
sym() {
    arm-none-eabi-nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1; exit }'
}

# in_range VALUE LOW HIGH: LOW <= VALUE < HIGH (hex or decimal)
in_range() {
    [ $(($1)) -ge $(($2)) ] && [ $(($1)) -lt $(($3)) ]
}

for b in rp2040 imxrt1062 microbit mps2-an500; do
    test_expect_success "$b: ELF and map are built" "
        test -s $FW/demo-$b.elf && test -s $FW/demo-$b.map &&
        grep -q '^Memory Configuration' $FW/demo-$b.map
    "
done

for b in rp2040 microbit; do
    test_expect_success "$b: ARMv6-M (v6S-M), soft float" "
        readelf -A $FW/demo-$b.elf >attr &&
        grep -q 'Tag_CPU_arch: v6S-M' attr &&
        grep -q 'Tag_THUMB_ISA_use: Thumb-1' attr &&
        ! grep -q 'Tag_FP_arch' attr
    "
done
for b in imxrt1062 mps2-an500; do
    test_expect_success "$b: ARMv7E-M (v7E-M), soft float" "
        readelf -A $FW/demo-$b.elf >attr &&
        grep -q 'Tag_CPU_arch: v7E-M' attr &&
        ! grep -q 'Tag_FP_arch' attr &&
        ! grep -q 'Tag_ABI_VFP_args: VFP registers' attr
    "
done

for b in rp2040 imxrt1062 microbit mps2-an500; do
    test_expect_success "$b: harness symbols" "
        arm-none-eabi-nm $FW/demo-$b.elf >syms &&
        grep -q ' T codeplace_init\$' syms &&
        grep -q ' T codeplace_iteration\$' syms &&
        grep -q ' T codeplace_mark\$' syms &&
        grep -q ' B codeplace_result\$' syms &&
        grep -q ' T codeplace_reset_handler\$' syms
    "
done

# vector table at the start of flash: initial SP = top of the stack RAM,
# reset vector = codeplace_reset_handler with the Thumb bit, = ELF entry.
check_vectors() { # elf flash stack
    python3 - "$@" <<-\EOF
	import struct, subprocess, sys
	elf, flash, stack = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3], 16)
	nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout
	syms = {l.split()[2]: int(l.split()[0], 16) for l in nm.splitlines() if len(l.split()) == 3}
	assert syms["codeplace_vectors"] == flash, hex(syms["codeplace_vectors"])
	data = open(elf, "rb").read()
	phoff, = struct.unpack_from("<I", data, 28)
	phnum, = struct.unpack_from("<H", data, 44)
	entry, = struct.unpack_from("<I", data, 24)
	for i in range(phnum):
	    t, off, va, pa, fsz = struct.unpack_from("<IIIII", data, phoff + 32 * i)
	    if t == 1 and pa == flash:
	        sp, reset = struct.unpack_from("<II", data, off)
	        break
	else:
	    sys.exit("no segment loads at 0x%08x" % flash)
	assert sp == stack, "initial SP 0x%08x" % sp
	assert reset == syms["codeplace_reset_handler"] | 1, "reset 0x%08x" % reset
	assert entry == reset, "entry 0x%08x" % entry
	EOF
}
test_expect_success 'rp2040: vector table at 0x10000000, SP at the top of 264 KiB SRAM' '
    check_vectors $FW/demo-rp2040.elf 0x10000000 0x20042000
'
test_expect_success 'imxrt1062: vector table at 0x60000000, SP at the top of DTCM' '
    check_vectors $FW/demo-imxrt1062.elf 0x60000000 0x20080000
'
test_expect_success 'microbit: vector table at 0, SP at the top of 16 KiB SRAM' '
    check_vectors $FW/demo-microbit.elf 0x00000000 0x20004000
'
test_expect_success 'mps2-an500: vector table at 0, SP at the top of SSRAM2&3' '
    check_vectors $FW/demo-mps2-an500.elf 0x00000000 0x20400000
'

test_expect_success 'codeplace image reads demo-rp2040 with its map' '
    $CODEPLACE image $FW/demo-rp2040.elf --map $FW/demo-rp2040.map >out &&
    grep -q "^arch:       v6S-M$" out &&
    grep -E -q "^  \.text +0x10000040 " out &&
    grep -E -q "^  SRAM +0x20000000 +270,336 " out &&
    grep -E -q "^  libc\.a " out && grep -E -q "^  libgcc\.a " out &&
    $CODEPLACE image $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --functions --csv >f.csv &&
    grep -q "^vfprintf,0x1000[0-9a-f]*,[0-9]*,.text.vfprintf,.text,libc.a,libc_tinystdio_vfprintf.c.o," f.csv &&
    grep -q "^codeplace_iteration,0x1000[0-9a-f]*,[0-9]*,.text.codeplace_iteration,.text,,demo.o," f.csv &&
    mark=$(sym $FW/demo-rp2040.elf codeplace_mark) &&
    $CODEPLACE image $FW/demo-rp2040.elf --lookup $mark >out &&
    echo "$mark codeplace_mark+0x0" >expect &&
    test_cmp expect out
'

test_expect_success 'codeplace image reads demo-imxrt1062 with its map' '
    $CODEPLACE image $FW/demo-imxrt1062.elf --map $FW/demo-imxrt1062.map >out &&
    grep -q "^arch:       v7E-M$" out &&
    grep -E -q "^  \.text +0x60000040 " out &&
    grep -E -q "^  ITCM +0x00000000 +524,288 " out &&
    grep -E -q "^  DTCM +0x20000000 +524,288 " out &&
    $CODEPLACE image $FW/demo-imxrt1062.elf --map $FW/demo-imxrt1062.map --functions --json >f.json &&
    python3 -c "
import json, sys
f = {x[\"name\"]: x for x in json.load(open(\"f.json\"))}
for n in (\"codeplace_init\", \"codeplace_iteration\", \"codeplace_mark\", \"vfprintf\", \"qsort\"):
    assert n in f, n
"
'

test_expect_success 'codeplace image reads the QEMU builds with their maps' '
    $CODEPLACE image $FW/demo-microbit.elf --map $FW/demo-microbit.map >a &&
    grep -q "^arch:       v6S-M$" a &&
    $CODEPLACE image $FW/demo-mps2-an500.elf --map $FW/demo-mps2-an500.map >b &&
    grep -q "^arch:       v7E-M$" b
'

test_expect_success 'expected.txt: every line is BUILD ITERATIONS 0xRESULT' '
    grep -v -E "^(#|$)" $EXPECTED >lines &&
    test $(wc -l <lines) -eq 6 &&
    ! grep -v -E "^(microbit|mps2-an500) (1|10|300) 0x[0-9a-f]{8}$" lines
'

for b in microbit mps2-an500; do
    test_expect_success "QEMU $b: results equal firmware/expected.txt" "
        $QREF $b >out &&
        grep '^$b ' $EXPECTED >expect &&
        test_cmp expect out
    "
done

test_expect_success 'the M0 (microbit) and M7 (mps2-an500) builds agree' '
    grep "^microbit " $EXPECTED | cut -d" " -f2- >a &&
    grep "^mps2-an500 " $EXPECTED | cut -d" " -f2- >b &&
    test_cmp a b
'

test_expect_success 'rp2040 and microbit run the same workload object code' '
    for f in codeplace_iteration demo_filter demo_report vfprintf; do
        arm-none-eabi-nm -S $FW/demo-rp2040.elf | awk -v f=$f "\$4 == f { print \$2 }" >a &&
        arm-none-eabi-nm -S $FW/demo-microbit.elf | awk -v f=$f "\$4 == f { print \$2 }" >b &&
        test -s a && test_cmp a b || return 1
    done
'

# A hand-written plan: vfprintf to fast RAM, demo_crc32 first in .text, and
# demo_filter at the hot block's start + 0x100, the form the planner emits.
write_plan() {
    mkdir -p plan &&
    printf "*(.text.vfprintf)\n" >plan/codeplace_ram.ld &&
    printf "*(.text.demo_crc32)\n. = __codeplace_hot_start + 0x100;\n*(.text.demo_filter)\n" \
        >plan/codeplace_flash.ld
}

# Relinked once, checked by the tests below.
LK=$TEST_TMP/lk
test_expect_success 'relink rp2040, imxrt1062 and the QEMU builds with the plan' '
    write_plan &&
    $RELINK rp2040 plan $LK/placed &&
    $RELINK imxrt1062 plan $LK/placed7 &&
    $RELINK microbit plan $LK/mb &&
    $RELINK mps2-an500 plan $LK/an500 &&
    for f in placed placed7 mb an500; do
        test -s $LK/$f.elf && test -s $LK/$f.map || return 1
    done
'

test_expect_success 'rp2040 relink: vfprintf runs from SRAM, loaded from flash' '
    E=$LK/placed.elf &&
    in_range $(sym $E vfprintf) 0x20000000 0x20042000 &&
    test $(sym $E vfprintf) = $(sym $E __ramfunc_start) &&
    in_range $(sym $E __ramfunc_end) $(($(sym $E vfprintf) + 1)) 0x20042000 &&
    arm-none-eabi-objdump -h $E | grep -A1 " \.ramfunc " >h &&
    grep -q "CODE" h &&
    vma=0x$(awk "NR == 1 { print \$4 }" h) && lma=0x$(awk "NR == 1 { print \$5 }" h) &&
    test $((vma)) -eq $(($(sym $E __ramfunc_start))) &&
    test $((lma)) -eq $(($(sym $E __ramfunc_load))) &&
    in_range $lma 0x10000000 0x10200000 &&
    awk "/^\.ramfunc /,/^\.text /" $LK/placed.map | grep -q "^ \.text\.vfprintf" &&
    in_range $(sym $FW/demo-rp2040.elf vfprintf) 0x10000000 0x10200000
'

test_expect_success 'rp2040 relink: the reset handler copies .ramfunc from its load address' '
    E=$LK/placed.elf &&
    arm-none-eabi-objdump -d $E | awk "/<codeplace_reset_handler>:/,/^\$/" >rh &&
    grep -q "bl.*<copy_words>" rh &&
    for s in __ramfunc_load __ramfunc_start __ramfunc_end; do
        v=$(printf "%08x" $(($(sym $E $s)))) &&
        grep -q "\.word	0x$v" rh || { echo "no literal $s=$v" >&2; return 1; }
    done &&
    arm-none-eabi-objdump -d --start-address=$(sym $E copy_words) \
        --stop-address=$(($(sym $E copy_words) + 12)) $E >cw &&
    grep -q "ldmia" cw && ! grep -q "	bl	" cw
'

test_expect_success 'rp2040 relink: codeplace_flash.ld puts demo_crc32 first in .text' '
    E=$LK/placed.elf &&
    text=0x$(arm-none-eabi-objdump -h $E | awk "\$2 == \".text\" { print \$4 }") &&
    test $((text)) -eq $(($(sym $E demo_crc32))) &&
    test $((text)) -eq $(($(sym $E __codeplace_hot_start))) &&
    test $(($(sym $E demo_filter))) -eq $((text + 0x100)) &&
    test $(($(sym $E __codeplace_hot_end))) -gt $(($(sym $E demo_filter))) &&
    in_range $(sym $FW/demo-rp2040.elf demo_crc32) $((text + 4)) 0x10200000
'

test_expect_success 'imxrt1062 relink: vfprintf runs from ITCM, never at address 0' '
    E=$LK/placed7.elf &&
    in_range $(sym $E vfprintf) 0x00000008 0x00080000 &&
    in_range $(sym $E __ramfunc_load) 0x60000000 0x60800000 &&
    test $(($(sym $E demo_crc32))) -eq $(($(sym $E __codeplace_hot_start)))
'

test_expect_success 'relinked QEMU builds (vfprintf in RAM) still give the expected results' '
    in_range $(sym $LK/mb.elf vfprintf) 0x20000000 0x20004000 &&
    $QREF microbit $LK/mb.elf >out1 &&
    grep "^microbit " $EXPECTED >expect1 &&
    test_cmp expect1 out1 &&
    in_range $(sym $LK/an500.elf vfprintf) 0x20000000 0x20400000 &&
    $QREF mps2-an500 $LK/an500.elf >out2 &&
    grep "^mps2-an500 " $EXPECTED >expect2 &&
    test_cmp expect2 out2
'

test_expect_success 'codeplace image looks up a function moved to RAM' '
    v=$(sym $LK/placed.elf vfprintf) &&
    $CODEPLACE image $LK/placed.elf --map $LK/placed.map --lookup $v >out &&
    echo "$v vfprintf+0x0" >expect &&
    test_cmp expect out
'

test_expect_success 'relink: archive:member and object patterns, as the planner writes them' '
    mkdir -p plan &&
    printf "*libc.a:libc_tinystdio_vfprintf.c.o(.text.vfprintf)\n*libgcc.a:_muldi3.o(.text)\n" \
        >plan/codeplace_ram.ld &&
    printf "*demo.o(.text.codeplace_iteration)\n" >plan/codeplace_flash.ld &&
    $RELINK rp2040 plan lk/am &&
    test $(sym lk/am.elf vfprintf) = $(sym lk/am.elf __ramfunc_start) &&
    in_range $(sym lk/am.elf __muldi3) $(($(sym lk/am.elf vfprintf) + 1)) 0x20042000 &&
    test $(sym lk/am.elf codeplace_iteration) = $(sym lk/am.elf __codeplace_hot_start)
'

test_expect_success 'relink: a missing plan file falls back to the default' '
    mkdir -p plan && printf "*(.text.qsort)\n" >plan/codeplace_flash.ld &&
    $RELINK rp2040 plan lk/p &&
    test $(($(sym lk/p.elf qsort))) -eq $(($(sym lk/p.elf __codeplace_hot_start))) &&
    in_range $(sym lk/p.elf vfprintf) 0x10000000 0x10200000
'

test_expect_success 'relink: usage errors exit 2' '
    test_exit 2 $RELINK rp2040 2>err &&
    grep -q usage err &&
    mkdir -p plan &&
    test_exit 2 $RELINK nosuch plan lk/p 2>err &&
    grep -q "unknown TARGET" err &&
    test_exit 2 $RELINK rp2040 nodir lk/p 2>err &&
    grep -q "no directory" err
'

test_expect_success 'relink: a bad plan fails the link, exit non-zero' '
    mkdir -p plan && printf "*(.text.vfprintf\n" >plan/codeplace_ram.ld &&
    ! $RELINK rp2040 plan lk/p 2>err &&
    grep -q "syntax error" err &&
    test ! -e lk/p.elf
'

FOOT="python3 $CP_ROOT/firmware/footprint.py"
test_expect_success 'footprint.py: bad input and usage' '
    test_exit 1 $FOOT /etc/passwd 2>err &&
    grep -q "^footprint: /etc/passwd: cannot read: .*not a 32-bit little-endian ELF" err &&
    test_exit 1 $FOOT nosuch.elf 2>err &&
    grep -q "nosuch.elf: cannot read" err &&
    test_exit 2 $FOOT --line 3 $FW/demo-microbit.elf 2>err &&
    test_exit 2 $FOOT --iteration 0 $FW/demo-microbit.elf 2>err
'

test_expect_success 'footprint.py: a run cut short by --timeout stops QEMU and says so' '
    test_exit 1 $FOOT --timeout 3 --iteration 100000 $FW/demo-microbit.elf 2>err &&
    grep -q "the run ended before iteration 100000 did" err
'

test_done
