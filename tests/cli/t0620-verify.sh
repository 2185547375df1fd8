#!/bin/sh
# codeplace verify: a relinked demo image against the plan it was linked
# from (real arm-none-eabi ld through firmware/relink.sh), and relinks that
# went wrong: a pattern that matches nothing, a shifted hot block, a plan
# made without the map.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
ELF=$FW/demo-rp2040.elf
MAP=$FW/demo-rp2040.map
HARNESS="--init codeplace_init --iter codeplace_iteration"
S=$TEST_TMP/shared
mkdir -p $S

test_expect_success 'setup: a plan of the demo and its relink' '
    $CODEPLACE trace -q $ELF --target rp2040 $HARNESS -n 3 -o $S/stock.trace >/dev/null &&
    $CODEPLACE plan $ELF --map $MAP --trace $S/stock.trace --target rp2040 \
        --strategy combined --budget 4K --search-moves 500 --descent-passes 0 -q \
        --emit $S/place --layout $S/p.layout >/dev/null &&
    grep -q "^# stubs: flash [0-9]* fast [0-9]* bytes 16 text_end 0x" $S/p.layout &&
    sh $CP_ROOT/firmware/relink.sh rp2040 $S/place $S/out
'

test_expect_success 'the relinked image is as planned' '
    $CODEPLACE verify $S/p.layout $S/out.elf --map $S/out.map --emit $S/place >out &&
    n=$(grep -c "^[^#@]" $S/p.layout) &&
    grep -q "^functions: $n of $n where the plan put them$" out &&
    grep -q "^patterns:  \([0-9]*\) of \1 matched" out &&
    grep -q "^stubs:     \([0-9]*\) in flash (plan \1), \([0-9]*\) in fast memory (plan \2)$" out &&
    grep -q "^result:    as planned (0 differences)$" out &&
    $CODEPLACE verify $S/p.layout $S/out.elf --map $S/out.map --emit $S/place --json >j &&
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"ok\"] and d[\"functions\"] > 100 and d[\"functions\"] == d[\"functions_ok\"] and d[\"differences\"] == [], d" j
'

# ld orders its stubs by its own stub hash table: the plan's stub at an
# address may reach another function. A layout whose @stub lines say where
# ld really put each stub gets no note; two of them swapped get one.
test_expect_success 'stubs that reach another function than planned: a note, not a difference' '
    arm-none-eabi-nm $S/out.elf >nm.txt &&
    python3 - $S/p.layout nm.txt <<-\EOF &&
	import sys
	ven = {}
	for l in open(sys.argv[2]):
	    f = l.split()
	    if len(f) == 3 and f[2].startswith("__") and f[2].endswith("_veneer"):
	        ven[f[2][2:-7]] = int(f[0], 16) & ~1
	out, named = [], []
	for l in open(sys.argv[1]):
	    f = l.split()
	    if l.startswith("@stub ") and f[4].split("@")[0] in ven:
	        f[1] = "0x%08x" % ven[f[4].split("@")[0]]
	        named.append(len(out))
	        l = " ".join(f) + "\n"
	    out.append(l)
	assert len(named) >= 2, named
	open("true.layout", "w").writelines(out)
	a, b = named[0], named[1]
	fa, fb = out[a].split(), out[b].split()
	fa[1], fb[1] = fb[1], fa[1]
	out[a], out[b] = " ".join(fa) + "\n", " ".join(fb) + "\n"
	open("swapped.layout", "w").writelines(out)
	EOF
    $CODEPLACE verify true.layout $S/out.elf --map $S/out.map >out &&
    ! grep -q "^note:" out &&
    grep -q "^result:    as planned (0 differences)$" out &&
    $CODEPLACE verify swapped.layout $S/out.elf --map $S/out.map >out &&
    grep -q "^note:      2 of [0-9]* stubs reach another function than the plan.s stub at their address" out &&
    grep -q "plan --refine-from this image and its map predicts it exactly" out &&
    grep -q "^result:    as planned (0 differences)$" out &&
    $CODEPLACE verify swapped.layout $S/out.elf --map $S/out.map --json >j &&
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"stubs\"][\"elsewhere\"] == 2 and d[\"stubs\"][\"named\"] >= 2, d" j
'

test_expect_success 'a layout planned for a target file: found by name, or given with --target' '
    sed "s/^name  *rp2040$/name myboard/" $CP_ROOT/targets/rp2040.target >my.target &&
    sed "s/^# target: rp2040 /# target: myboard /" $S/p.layout >my.layout &&
    grep -q "^# target: myboard " my.layout &&
    test_exit 1 $CODEPLACE verify my.layout $S/out.elf --map $S/out.map 2>err &&
    grep -q "my.layout.: its target .myboard.: .*--target FILE" err &&
    $CODEPLACE verify my.layout $S/out.elf --map $S/out.map --target my.target >out &&
    grep -q "^result:    as planned (0 differences)$" out &&
    mkdir tdir && cp my.target tdir/myboard.target &&
    CODEPLACE_TARGETS=$PWD/tdir $CODEPLACE verify my.layout $S/out.elf --map $S/out.map >out &&
    grep -q "^result:    as planned (0 differences)$" out &&
    $CODEPLACE verify $S/p.layout $S/out.elf --map $S/out.map -t my.target >out 2>err &&
    grep -q "planned for rp2040; verifying it for myboard" err
'

test_expect_success 'a pattern that matched nothing and a section left out are found' '
    cp -r $S/place bad &&
    sed -i "0,/(\.text\.\([a-z_0-9]*\))/s//(.text.\1_gone)/" bad/codeplace_ram.ld &&
    awk "/^    \\*/ && !done { done = 1; next } { print }" $S/place/codeplace_flash.ld >bad/codeplace_flash.ld &&
    ! cmp -s bad/codeplace_ram.ld $S/place/codeplace_ram.ld &&
    ! cmp -s bad/codeplace_flash.ld $S/place/codeplace_flash.ld &&
    sh $CP_ROOT/firmware/relink.sh rp2040 bad wrong &&
    test_exit 1 $CODEPLACE verify $S/p.layout wrong.elf --map wrong.map --emit bad >out &&
    grep -q "^no-match   codeplace_ram.ld: \*.*_gone): matched no input section of the relinked map: ld ignored it$" out &&
    grep -q "^region     .*: at 0x1[0-9a-f]*, outside sram" out &&
    grep -q "^moved      .*: at 0x1[0-9a-f]*, the plan put it at 0x1" out &&
    grep -q "^result:    DIFFERS" out &&
    test_exit 1 $CODEPLACE verify $S/p.layout wrong.elf --map wrong.map --emit $S/place >out2 &&
    grep -q "^stubs " out2
'

test_expect_success 'a plan made without the map: patterns ld ignored' '
    $CODEPLACE plan $ELF --trace $S/stock.trace --target rp2040 --strategy combined \
        --budget 4K --search-moves 500 --descent-passes 0 -q --emit nomap --layout nomap.layout >plan.out 2>plan.err &&
    grep -q "^UNVERIFIED prediction: no --map" plan.out &&
    grep -q "UNVERIFIED prediction: no --map" nomap/codeplace_ram.ld &&
    sh $CP_ROOT/firmware/relink.sh rp2040 nomap nm &&
    test_exit 1 $CODEPLACE verify nomap.layout nm.elf --map nm.map --emit nomap >out &&
    grep -q "^no-match   .*(\.text\.__aeabi_[a-z0-9]*): matched no input section" out
'

test_expect_success 'usage and input errors' '
    test_exit 2 $CODEPLACE verify $S/p.layout 2>err &&
    grep -q "give the layout and the relinked ELF" err &&
    test_exit 2 $CODEPLACE verify $S/p.layout $S/out.elf --emit $S/place 2>err &&
    grep -q "needs the relinked map" err &&
    printf "name flash 0x10000000 4 x\n" >bad.layout &&
    test_exit 1 $CODEPLACE verify bad.layout $S/out.elf 2>err &&
    grep -q "bad.layout:1: not a layout file" err &&
    test_exit 1 $CODEPLACE verify $S/p.layout $ELF --map $MAP >out 2>err &&
    grep -q "is the image the plan was made from" err &&
    test_exit 2 $CODEPLACE verify $S/p.layout $S/out.elf --elf $S/out.elf 2>err &&
    grep -q "the ELF is given twice" err &&
    test_exit 1 $CODEPLACE verify $S/p.layout nosuch.elf 2>err &&
    grep -q "nosuch.elf" err
'

test_expect_success 'the ELF as --elf, in either place' '
    $CODEPLACE verify --elf $S/out.elf $S/p.layout -m $S/out.map --emit $S/place >out &&
    grep -q "^result:    as planned (0 differences)$" out &&
    $CODEPLACE verify $S/out.elf $S/p.layout --map $S/out.map >out2 &&
    grep -q "^result:    as planned (0 differences)$" out2
'

# One reader for every command: a line of the wrong shape is the same
# error in verify as in sim (verify used to skip it and complain of the
# missing target header instead).
same_error() {
    $CODEPLACE verify $1 $ELF 2>verr
    test $? = 1 || return 1
    $CODEPLACE sim $S/stock.trace $ELF --layout $1 -q -o /dev/null 2>serr
    test $? = 1 || return 1
    echo "codeplace: error: $1:2: $2" >expect &&
    test_cmp expect verr && test_cmp expect serr
}

test_expect_success 'sim and verify read a layout through one reader: the same errors' '
    printf "# codeplace layout 2\nf flash 0x10000000\n" >short.layout &&
    same_error short.layout "expected NAME REGION PLACE SIZE REASON" &&
    printf "# codeplace layout 1\n@stub 0x10000000 8 1 main\n" >v1.layout &&
    same_error v1.layout "@stub lines need layout version 2 (the file says 1)"
'

test_done
