#!/bin/sh
# plan resolves the object files its map names by relative path
# (build/fw/obj/m0/demo/calib.o) where the link saw them: from another
# directory than the build's it finds them against the map's directory and
# its parents, or in --build-dir, and predicts what it predicts from the
# project root: the same misses, the same linker stubs in the same order,
# no "is a guess" warning.
. "$(dirname "$0")/lib.sh"
FW=build/fw
HARNESS="--init codeplace_init --iter codeplace_iteration"
$CODEPLACE trace -q $CP_ROOT/$FW/demo-rp2040.elf --target rp2040 $HARNESS \
    -n 2 -o $TEST_TMP/stock.trace >/dev/null || echo "not ok - no trace"

# plan_in DIR ELF MAP NAME [OPTION...]: plan from DIR into $TEST_TMP/NAME.*
plan_in() {
    dir=$1 elf=$2 map=$3 name=$4
    shift 4
    (cd $dir && $CODEPLACE plan $elf --map $map --trace $TEST_TMP/stock.trace \
        --target rp2040 --strategy ram --budget 8K --time 0 "$@" \
        --layout $TEST_TMP/$name.layout --json -o $TEST_TMP/$name.json \
        2>$TEST_TMP/$name.err)
}

# same NAME: NAME's figure and stubs are the project root's
same() {
    grep -q "in the order of GNU ld 2.40.s stub table" $TEST_TMP/$1.err &&
    ! grep -q "is a guess" $TEST_TMP/$1.err &&
    ! grep -q "cannot be read from here" $TEST_TMP/$1.err &&
    grep "^@stub" $TEST_TMP/root.layout >$TEST_TMP/root.stubs &&
    grep "^@stub" $TEST_TMP/$1.layout >$TEST_TMP/$1.stubs &&
    test -s $TEST_TMP/root.stubs &&
    test_cmp $TEST_TMP/root.stubs $TEST_TMP/$1.stubs &&
    python3 - $TEST_TMP/root.json $TEST_TMP/$1.json <<-\PY
	import json, sys
	a, b = (json.load(open(f))["results"][0] for f in sys.argv[1:3])
	assert a["stub_order"] == b["stub_order"] == "ld", (a["stub_order"], b["stub_order"])
	assert a["misses_per_iteration"] == b["misses_per_iteration"], (a["misses_per_iteration"], b["misses_per_iteration"])
	assert a["flash_stubs"] == b["flash_stubs"] > 0, (a["flash_stubs"], b["flash_stubs"])
	PY
}

test_expect_success 'from the project root (the link ran there)' '
    plan_in $CP_ROOT $FW/demo-rp2040.elf $FW/demo-rp2040.map root &&
    grep -q "in the order of GNU ld 2.40.s stub table" $TEST_TMP/root.err &&
    ! grep -q "is a guess" $TEST_TMP/root.err
'

test_expect_success 'from /tmp: the map.s parents hold build/fw/obj, the same prediction' '
    d=$(mktemp -d /tmp/cp-plandir.XXXXXX) &&
    plan_in $d $CP_ROOT/$FW/demo-rp2040.elf $CP_ROOT/$FW/demo-rp2040.map tmp;
    rc=$?; rmdir $d; test $rc -eq 0 &&
    same tmp
'

test_expect_success 'a map away from the build: a guess that says to give --build-dir; with it, the same prediction' '
    d=$(mktemp -d /tmp/cp-plandir.XXXXXX) &&
    cp $CP_ROOT/$FW/demo-rp2040.map $d/demo.map &&
    plan_in $d $CP_ROOT/$FW/demo-rp2040.elf demo.map away &&
    grep -q "warning: the order of the [0-9]* linker stubs in flash is a guess (cannot read the section headers of .build/fw/obj/m0/demo/calib.o. (named in .demo.map., not found relative to the current directory, the map.s or a parent of it: give the directory the link ran in with --build-dir)" $TEST_TMP/away.err &&
    plan_in $d $CP_ROOT/$FW/demo-rp2040.elf demo.map built --build-dir $CP_ROOT;
    rc=$?; rm -r $d; test $rc -eq 0 &&
    same built
'

test_expect_success '--build-dir must be a directory, and goes with --map' '
    test_exit 2 $CODEPLACE plan $CP_ROOT/$FW/demo-rp2040.elf \
        --map $CP_ROOT/$FW/demo-rp2040.map --trace $TEST_TMP/stock.trace \
        --build-dir $CP_ROOT/README.md 2>err &&
    grep -q "plan: --build-dir: .*README.md. is not a directory" err &&
    test_exit 2 $CODEPLACE plan $CP_ROOT/$FW/demo-rp2040.elf \
        --trace $TEST_TMP/stock.trace --build-dir $CP_ROOT 2>err &&
    grep -q "plan: --build-dir goes with --map" err
'

test_done
