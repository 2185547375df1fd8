#!/bin/sh
# Every fuzz harness (tests/fuzz/fuzz-*.c) builds with libFuzzer and runs
# clean over its committed seed corpus, which holds the inputs that once
# crashed a parser. Long fuzzing runs: `make fuzz`.
. "$(dirname "$0")/lib.sh"

if have clang; then
    test_expect_success 'fuzz harnesses pass their seed corpora' '
        sh "$CP_ROOT/tests/fuzz/run" --regress >out 2>&1 || { cat out; false; } &&
        ! grep -q "^not ok" out &&
        grep -q "^ok fuzz-elf regression" out &&
        grep -q "^ok fuzz-map regression" out &&
        grep -q "^ok fuzz-samples regression" out &&
        grep -q "^ok fuzz-dump regression" out &&
        grep -q "^ok fuzz-names regression" out &&
        grep -q "^ok fuzz-layout regression" out &&
        grep -q "^ok fuzz-target regression" out &&
        grep -q "^ok fuzz-qemulog regression" out &&
        grep -q "^ok fuzz-apply regression" out &&
        grep -q "^ok fuzz-snippet regression" out &&
        grep -q "^ok fuzz-counters regression" out &&
        grep -q "^ok fuzz-ocd regression" out &&
        grep -q "^ok fuzz-ldstub regression" out
    '
else
    test_skip 'fuzz harnesses pass their seed corpora' 'clang missing'
fi

test_done
