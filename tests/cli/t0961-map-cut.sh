#!/bin/sh
# A map file cut short is never silent: every command that reads a map
# (image, sim, report, plan, apply, verify, trace) checks it against the
# ELF (img_map_check: every section the linker wrote, every function in an
# input section it lists) and stops with the file and what it lacks. The
# demo's map cut at 60 % of its length by head -c ends in its debug
# sections: the code it describes is whole, only the sections after the
# cut are missing.
. "$(dirname "$0")/lib.sh"
need_demo 'a cut map of the demo'
HARNESS="--init codeplace_init --iter codeplace_iteration"
S=$TEST_TMP/shared
mkdir -p $S
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"

cut_at() { # PERCENT MAP OUT
    head -c $(($(wc -c <"$2") * $1 / 100)) "$2" >"$3"
}

# refused OUT ERR: nothing on stdout, the error names the cut map and says
# what it lacks.
refused() {
    ! test -s "$1" &&
    grep -q "^codeplace: error: map file '.*cut.map' is cut short or of another build than '$ELF': [0-9]* of the ELF's [0-9]* sections are not in it (\.debug" "$2"
}

test_expect_success 'setup: a trace, samples, a plan, its list and layout (whole map)' '
    cut_at 60 $MAP $S/cut.map &&
    $CODEPLACE trace -q $ELF --target rp2040 $HARNESS -n 2 -o $S/d.trace >/dev/null &&
    $CODEPLACE samples $S/d.trace --every 7 --elf $ELF -o $S/smp.txt 2>/dev/null &&
    $CODEPLACE plan $ELF --map $MAP --trace $S/d.trace --target rp2040 \
        --strategy hotblock --budget 4K -q --list $S/hot.list \
        --layout $S/p.layout -o /dev/null 2>err &&
    ! grep -q warning err &&
    test -s $S/hot.list && test -s $S/p.layout
'

test_expect_success 'image: the whole map passes, the cut one is refused' '
    $CODEPLACE image $ELF --map $MAP >out 2>err &&
    ! test -s err &&
    test_exit 1 $CODEPLACE image $ELF --map $S/cut.map >out 2>err &&
    refused out err &&
    grep -q "(\.debug_line, \.debug_frame, " err &&
    grep -q "its last line ([0-9]*) has no end$" err
'

test_expect_success 'sim and report refuse the cut map' '
    test_exit 1 $CODEPLACE sim $S/d.trace --elf $ELF --map $S/cut.map >out 2>err &&
    refused out err &&
    test_exit 1 $CODEPLACE report $S/smp.txt --elf $ELF --map $S/cut.map >out 2>err &&
    refused out err
'

test_expect_success 'plan refuses the cut map unless --unverified' '
    test_exit 1 $CODEPLACE plan $ELF --map $S/cut.map --trace $S/d.trace \
        --target rp2040 --strategy hotblock --budget 4K >out 2>err &&
    ! test -s out &&
    grep -q "^codeplace: error: map file .*cut.map. is cut short .*(or --unverified to plan anyway)$" err &&
    $CODEPLACE plan $ELF --map $S/cut.map --trace $S/d.trace --target rp2040 \
        --strategy hotblock --budget 4K --unverified >out 2>err &&
    grep -q "^UNVERIFIED prediction: map file .*cut.map. is cut short" out
'

# Cut in its code sections (900 lines), the map used to leave functions in
# no input section, which apply called "not in the cached flash window".
test_expect_success 'apply refuses the cut map, and gives no other reason' '
    $CODEPLACE apply $S/hot.list $ELF --map $MAP >out 2>err &&
    test_exit 1 $CODEPLACE apply $S/hot.list $ELF --map $S/cut.map >out 2>err &&
    refused out err &&
    head -n 900 $MAP >cut.map &&
    test_exit 1 $CODEPLACE apply $S/hot.list $ELF --map cut.map >out 2>err &&
    ! test -s out &&
    grep -q "^codeplace: error: map file .cut.map. is cut short or of another build than .*; [0-9]* function(s) lie in no input section it lists" err &&
    ! grep -q "flash window" err
'

test_expect_success 'verify and trace refuse the cut map' '
    test_exit 1 $CODEPLACE verify $S/p.layout $ELF --map $S/cut.map >out 2>err &&
    refused out err &&
    test_exit 1 $CODEPLACE trace -q $ELF --map $S/cut.map --target rp2040 $HARNESS \
        -n 1 -o t.trace >out 2>err &&
    refused out err &&
    ! test -e t.trace
'

# Cut anywhere, at a line end too: the map lacks a section or a function,
# or (cut in its head) the whole memory map.
test_expect_success 'a map cut at any tenth, at a line end, is refused' '
    lines=$(wc -l <$MAP) &&
    for pct in 5 10 20 30 40 50 60 70 80 90 99; do
        head -n $((lines * pct / 100)) $MAP >cut.map &&
        test_exit 1 $CODEPLACE image $ELF --map cut.map >out 2>err &&
        grep -q "cut.map.* cut short" err &&
        ! grep -q "has no end" err || { echo "cut at $pct %"; return 1; }
    done
'

test_expect_success 'the fixture map cut anywhere by bytes is refused' '
    for pct in 10 30 50 60 70 90 99; do
        cut_at $pct $CP_FIXTURES/m0.map cut.map &&
        test_exit 1 $CODEPLACE image $CP_FIXTURES/m0.elf --map cut.map >out 2>err &&
        grep -q "cut.map.* cut short" err || { echo "cut at $pct %"; return 1; }
    done
'

test_expect_success 'a debug section of another size in the map does not match' '
    sed -E "s/^(\.debug_frame +0x00000000 +)0x[0-9a-f]+/\10x00000004/" $MAP >other.map &&
    ! cmp -s $MAP other.map &&
    test_exit 1 $CODEPLACE image $ELF --map other.map >out 2>err &&
    grep -q "^codeplace: error: map file .other.map. does not match .*: section \.debug_frame is 0x4 bytes in the map but 0x[0-9a-f]* in the ELF" err
'

test_done
