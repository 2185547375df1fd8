#!/bin/sh
# The command dispatcher: help, version, exit codes, errors.
. "$(dirname "$0")/lib.sh"

test_expect_success 'no arguments prints usage and exits 2' '
    test_exit 2 $CODEPLACE 2>err &&
    grep -q "usage: codeplace <command>" err
'

test_expect_success '--version' '
    $CODEPLACE --version >out &&
    grep -E -q "^codeplace [0-9]+\.[0-9]+\.[0-9]+$" out
'

test_expect_success 'help lists every command of the table' '
    $CODEPLACE help >out &&
    grep -q "^  image " out &&
    grep -q "^  target " out &&
    grep -q "^  help " out
'

test_expect_success 'help COMMAND and COMMAND --help print the same' '
    $CODEPLACE help image >a &&
    $CODEPLACE image --help >b &&
    test_cmp a b &&
    grep -q -- "--map FILE" a &&
    grep -q -- "--json" a
'

test_expect_success 'unknown command: exit 2 and a clear error' '
    test_exit 2 $CODEPLACE frobnicate 2>err &&
    grep -q "codeplace: error: .frobnicate. is not a codeplace command" err
'

test_expect_success 'unknown option: exit 2 and the usage line' '
    test_exit 2 $CODEPLACE image --bogus x.elf 2>err &&
    grep -q "unknown option .--bogus." err &&
    grep -q "usage: codeplace image" err
'

test_expect_success 'missing option argument: exit 2' '
    test_exit 2 $CODEPLACE image x.elf --map 2>err &&
    grep -q "needs an argument" err
'

test_expect_success 'help for a missing command exits 2' '
    test_exit 2 $CODEPLACE help nosuch 2>err &&
    grep -q "no command" err
'

test_expect_success 'nested commands: help GROUP SUB, GROUP help SUB and GROUP SUB --help agree' '
    for c in "bench udp" "bench latency" "bench sink" "bench usbmon" \
             "bench compare" "bench echo" "calc clock" "calc miss-cost" \
             "calc bus" "calc energy"; do
        set -- $c &&
        $CODEPLACE help $1 $2 >a &&
        $CODEPLACE $1 help $2 >b &&
        $CODEPLACE $1 $2 --help >c &&
        test_cmp a b && test_cmp a c &&
        grep -q "^usage: codeplace $1 $2 " a || exit 1
    done
'

test_expect_success 'a group lists the subcommands of its table' '
    $CODEPLACE help calc >out &&
    for s in clock miss-cost bus energy; do
        grep -q "^  $s " out || exit 1
    done &&
    $CODEPLACE calc --help >b && test_cmp out b
'

test_expect_success 'nested command errors name the whole command' '
    test_exit 2 $CODEPLACE help bench nosuch 2>err &&
    grep -q "help: .nosuch. is not a bench subcommand" err &&
    test_exit 2 $CODEPLACE help image udp 2>err &&
    grep -q "help: .image. has no subcommands" err &&
    test_exit 2 $CODEPLACE bench nosuch 2>err &&
    grep -q "error: .nosuch. is not a bench subcommand" err &&
    test_exit 2 $CODEPLACE calc clock --bogus 2>err &&
    grep -q "calc clock: unknown option .--bogus." err &&
    grep -q "try .codeplace help calc clock." err &&
    test_exit 2 $CODEPLACE calc 2>err &&
    grep -q "^  clock " err
'

test_expect_success 'target list and one target' '
    $CODEPLACE target >out &&
    grep -q "^rp2040 " out && grep -q "^imxrt1062 " out &&
    $CODEPLACE target rp2040 >one &&
    grep -q "16384 bytes, 2-way, 8-byte lines, 1024 sets" one
'

test_expect_success 'target --cache overrides and validates the geometry' '
    $CODEPLACE target rp2040 --cache 32K,4,16,plru >out &&
    grep -q "32768 bytes, 4-way, 16-byte lines, 512 sets, plru" out &&
    test_exit 2 $CODEPLACE target rp2040 --cache 16K,3,8 2>err &&
    grep -q "power of two" err
'

test_expect_success 'target --json is valid JSON' '
    $CODEPLACE target imxrt1062 --json >out &&
    python3 -c "import json,sys; d=json.load(open(\"out\")); assert d[\"cache\"][\"sets\"]==512, d"
'

test_expect_success '-o writes the file; an unwritable -o fails with exit 1' '
    $CODEPLACE target -o list.txt &&
    grep -q rp2350 list.txt &&
    test_exit 1 $CODEPLACE target -o /nonexistent/dir/x 2>err &&
    grep -q "cannot create ./nonexistent/dir/x." err
'

test_expect_success 'a full disk on stdout is an error, not silence' '
    if [ -w /dev/full ]; then
        test_exit 1 $CODEPLACE help >/dev/full 2>err &&
        grep -q "cannot write" err
    fi
'

test_done
