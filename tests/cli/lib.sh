# CLI test library, in the style of git's t/test-lib.sh: each test runs in
# its own fresh temporary directory; expected output is written inline.
#
#   . "$(dirname "$0")/lib.sh"
#   test_expect_success 'what it checks' '
#       $CODEPLACE image "$CP_FIXTURES/m0.elf" >out &&
#       grep -q "functions:" out
#   '
#   test_done
#
# Helpers: test_cmp EXPECTED ACTUAL (diff -u), test_cmp_expect NAME ACTUAL
# (against the golden file tests/cli/expect/NAME), test_must_fail CMD (exit
# 1 or 2, not a crash), test_exit N CMD, have PROGRAM (skip when missing),
# need_demo WHAT (the demo firmware, or the file skipped).
: "${CP_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${CODEPLACE:=$CP_ROOT/build/san/codeplace}"
: "${CP_FIXTURES:=$CP_ROOT/build/fixtures}"
export CP_ROOT CODEPLACE CP_FIXTURES
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:exitcode=99}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=99}"
export LC_ALL=C

test_count=0
test_failures=0
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cp-test.XXXXXX")
trap 'rm -rf "$TEST_TMP"' EXIT

test_expect_success() {
    test_count=$((test_count + 1))
    dir="$TEST_TMP/$test_count"
    mkdir -p "$dir"
    if (cd "$dir" && eval "$2") >"$dir.log" 2>&1; then
        echo "ok $test_count - $1"
    else
        echo "not ok $test_count - $1"
        sed 's/^/#   /' "$dir.log"
        test_failures=$((test_failures + 1))
    fi
}

test_skip() {
    test_count=$((test_count + 1))
    echo "skip $test_count - $1 ($2)"
}

test_cmp() {
    diff -u "$1" "$2"
}

# NAME ACTUAL: ACTUAL equals the golden file tests/cli/expect/NAME, whole.
# With CP_REGEN_EXPECT=1 (sh tests/tools/regen-expect, docs/testing.md)
# ACTUAL is written there instead, for git diff to show what changed.
test_cmp_expect() {
    if [ "${CP_REGEN_EXPECT:-}" = 1 ]; then
        mkdir -p "$CP_ROOT/tests/cli/expect" &&
        cp "$2" "$CP_ROOT/tests/cli/expect/$1"
        return
    fi
    if ! [ -f "$CP_ROOT/tests/cli/expect/$1" ]; then
        echo "test_cmp_expect: no golden file tests/cli/expect/$1 (sh tests/tools/regen-expect)" >&2
        return 1
    fi
    diff -u "$CP_ROOT/tests/cli/expect/$1" "$2"
}

# Runs a command that must fail cleanly: exit 1 or 2, never a signal or a
# sanitizer report (exit 99).
test_must_fail() {
    "$@"
    rc=$?
    if [ $rc -eq 1 ] || [ $rc -eq 2 ]; then
        return 0
    fi
    echo "test_must_fail: '$*' exited $rc" >&2
    return 1
}

test_exit() {
    want=$1
    shift
    "$@"
    rc=$?
    if [ $rc -ne "$want" ]; then
        echo "test_exit: '$*' exited $rc, wanted $want" >&2
        return 1
    fi
}

have() {
    command -v "$1" >/dev/null 2>&1
}

# A free UDP port on 127.0.0.1, picked by the kernel.
udp_port() {
    python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# JSON-FILE EXPR: prints EXPR over the document d.
jget() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(eval(sys.argv[2], {"d": d}))' "$@"
}

# A B: the two figures are equal (to the rounding of the JSON).
same() {
    python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(a, b); sys.exit(0 if abs(a - b) <= 1e-6 * max(1, b) else 1)' "$1" "$2"
}

# need_demo WHAT: FW, ELF and MAP of the RP2040 demo firmware (make
# firmware); without it the file ends here, WHAT skipped.
need_demo() {
    FW=$CP_ROOT/build/fw
    ELF=$FW/demo-rp2040.elf
    MAP=$FW/demo-rp2040.map
    if ! [ -f "$ELF" ]; then
        test_skip "$1" 'build/fw/demo-rp2040.elf not built (make firmware)'
        test_done
        exit 0
    fi
}

test_done() {
    echo "# $((test_count - test_failures)) passed, $test_failures failed"
    [ "$test_failures" -eq 0 ]
}
