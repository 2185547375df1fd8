#!/bin/sh
# docs/cli.md against `codeplace help`, and one meaning per short option.
. "$(dirname "$0")/lib.sh"
DOC=$CP_ROOT/scripts/cli-doc

test_expect_success 'docs/cli.md is what codeplace help says (scripts/cli-doc)' '
    python3 $DOC $CODEPLACE >cli.md &&
    test_cmp "$CP_ROOT/docs/cli.md" cli.md
'

test_expect_success 'every command and subcommand of the tables has a section' '
    $CODEPLACE help >top &&
    sed -n "/^commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p" top >names &&
    test -s names &&
    while read c; do
        grep -q "^## codeplace $c\$" "$CP_ROOT/docs/cli.md" || exit 1
    done <names &&
    for s in "bench udp" "bench compare" "calc clock" "calc energy"; do
        grep -q "^## codeplace $s\$" "$CP_ROOT/docs/cli.md" || exit 1
    done
'

test_expect_success 'a short option means one long option in every command' '
    python3 $DOC --check $CODEPLACE >out &&
    test_cmp /dev/null out
'

test_expect_success 'the check fails on a letter with two meanings' '
    cat >fake <<-\EOS &&
	#!/bin/sh
	case "$*" in
	help) printf "usage: codeplace <command>\n\ncommands:\n  a           one\n  b           two\n" ;;
	"help a") printf "usage: codeplace a X\n\none\n\noptions:\n  -t, --target NAME         x\n" ;;
	"help b") printf "usage: codeplace b Y\n\ntwo\n\noptions:\n  -t, --trace FILE          y\n" ;;
	esac
	EOS
    chmod +x fake &&
    test_exit 1 python3 $DOC --check ./fake >out &&
    grep -q "^-t means --target in a; --trace in b" out
'

test_expect_success 'the ELF: positional or --elf, not both' '
    E=$CP_FIXTURES/m0.elf &&
    $CODEPLACE diff $E $E >a &&
    $CODEPLACE diff --elf $E -e $E >b &&
    test_cmp a b &&
    test_exit 2 $CODEPLACE diff $E --elf $E 2>err &&
    grep -q "both as arguments or both with --elf" err &&
    test_exit 2 $CODEPLACE plan $E --elf $E --trace x -t rp2040 2>err &&
    grep -q "the ELF is given twice" err
'

test_expect_success 'sim, samples, report: the ELF in any argument position or with --elf' '
    E=$CP_FIXTURES/tr-m0.elf &&
    $CODEPLACE trace -q $E -t rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 3 -o run.trace >/dev/null &&
    $CODEPLACE sim run.trace $E --top 5 >a &&
    $CODEPLACE sim $E run.trace --top 5 >b &&
    $CODEPLACE sim run.trace --elf $E --top 5 >c &&
    test_cmp a b && test_cmp a c && grep -q codeplace_iteration a &&
    $CODEPLACE samples run.trace $E --every 50 -o s1.txt &&
    $CODEPLACE samples run.trace -e $E --every 50 -o s2.txt &&
    test_cmp s1.txt s2.txt &&
    $CODEPLACE report s1.txt $E >r1 &&
    $CODEPLACE report $E s1.txt >r2 &&
    $CODEPLACE report s1.txt --elf $E >r3 &&
    test_cmp r1 r2 && test_cmp r1 r3 &&
    test_exit 2 $CODEPLACE report s1.txt 2>err &&
    grep -q "give the ELF the samples come from" err &&
    test_exit 2 $CODEPLACE sim run.trace $E --elf $E 2>err &&
    grep -q "the ELF is given twice" err
'

test_done
