#!/bin/sh
# The text reports of image, trace --info, sim, plan, report and verify on
# the fixtures, each compared whole with its golden file in
# tests/cli/expect/ (test_cmp_expect): a figure that changes shows in the
# diff. After a change that is meant, regenerate them all with
#   sh tests/tools/regen-expect
# and commit the files with the change (docs/testing.md).
#
# Each command runs in one directory that holds the fixtures as symbolic
# links and the trace, so the reports name them without a path; plan runs
# with --time 0 (no wall-clock limit: the same moves on a loaded machine)
# and the default seed. tr-m0.elf is compiled and linked in one step, so
# its map names a temporary object (ccXXXXXX.o): no report here prints
# object names of tr-m0.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
G=$TEST_TMP/g
mkdir -p $G
# unicorn 2.0 frees part of its translation cache only at exit.
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
in_g() { (cd $G && "$@"); }
SMALL="--cache 512,2,8"

test_expect_success 'setup: the fixtures, a trace of tr-m0 and its samples' '
    for f in m0.elf m0.map tr-m0.elf tr-m0.map; do
        ln -s "$FX/$f" $G/$f || return 1
    done &&
    in_g $CODEPLACE trace -q tr-m0.elf --map tr-m0.map --target rp2040 \
        --init codeplace_init --iter codeplace_iteration -n 20 -o run.trace >out &&
    grep -q "^iterations:   20 " out &&
    in_g $CODEPLACE samples run.trace --every 7 --elf tr-m0.elf -o s.txt 2>/dev/null &&
    test -s $G/s.txt
'

test_expect_success 'image m0.elf --map m0.map' '
    in_g $CODEPLACE image m0.elf --map m0.map >out 2>err &&
    ! test -s err &&
    test_cmp_expect image-m0.out out
'

test_expect_success 'trace --info of tr-m0, 20 iterations' '
    in_g $CODEPLACE trace --info run.trace >out &&
    test_cmp_expect trace-info-tr-m0.out out
'

test_expect_success 'sim of tr-m0 on the rp2040 cache' '
    in_g $CODEPLACE sim run.trace --elf tr-m0.elf --map tr-m0.map -q >out &&
    test_cmp_expect sim-tr-m0.out out
'

test_expect_success 'sim of tr-m0 on a 512-byte cache' '
    in_g $CODEPLACE sim run.trace --elf tr-m0.elf --map tr-m0.map $SMALL -q >out &&
    test_cmp_expect sim-tr-m0-512.out out
'

test_expect_success 'plan of tr-m0 on a 512-byte cache, 256 bytes of SRAM' '
    in_g $CODEPLACE plan tr-m0.elf --map tr-m0.map --trace run.trace \
        --target rp2040 $SMALL --budget 256 --time 0 -q \
        --layout p.layout >out 2>/dev/null &&
    test_cmp_expect plan-tr-m0-512.out out
'

test_expect_success 'report of the samples of tr-m0, with the misses of its trace' '
    in_g $CODEPLACE report s.txt --elf tr-m0.elf --map tr-m0.map \
        --trace run.trace $SMALL >out 2>/dev/null &&
    test_cmp_expect report-tr-m0-512.out out
'

# The plan's layout against the image it was made from (not relinked):
# every function the plan moves is a difference, and the exit status is 1.
test_expect_success 'verify of the plan against tr-m0 as linked' '
    test -s $G/p.layout &&
    (cd $G && test_exit 1 $CODEPLACE verify p.layout tr-m0.elf --map tr-m0.map) >out 2>err &&
    grep -q "tr-m0.elf is the image the plan was made from" err &&
    test_cmp_expect verify-tr-m0.out out
'

test_done
