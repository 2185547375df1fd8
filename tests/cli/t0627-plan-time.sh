#!/bin/sh
# codeplace plan --time: a limit on the whole run, counted from the
# command's start (reading the trace and building the model count, and so
# do the RAM selections): a plan whose searches could not make their moves
# in it ends within it (plus the last evaluations) and says it was paced;
# a RAM selection the limit stops keeps what it chose, and the plan it
# leaves is valid: its prediction is what sim --layout measures.
. "$(dirname "$0")/lib.sh"
need_demo 'plan --time on the demo firmware'

now() {
    python3 -c 'import time; print(time.monotonic())'
}

test_expect_success 'trace the demo (16 iterations)' '
    $CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 16 -q -o $TEST_TMP/run.trace >/dev/null
'
T=$TEST_TMP/run.trace
P="$ELF --map $MAP --trace $T --target rp2040"

# Searches far longer than the limit: before --time counted the whole run,
# this plan took the limit plus the set-up, both RAM selections and the
# final evaluations. Timed with the optimised build (the one users time:
# the sanitizer build's set-up alone takes several seconds on a busy
# machine); the margin is for the last evaluations and a busy machine.
CPO=$CP_ROOT/build/codeplace
test_expect_success '--time 3 bounds the whole combined plan and says it was paced' '
    t0=$(now) &&
    $CPO plan $P --strategy combined --budget 16K --search-moves 100000000 \
        --time 3 --json -o cut.json 2>err &&
    t1=$(now) &&
    python3 -c "import sys; w = $t1 - $t0; print(\"wall\", w); sys.exit(0 if w < 3 + 3 else 1)" &&
    grep "combined: --time 3 paced the search" err &&
    test "$(jget cut.json "d[\"results\"][0][\"stopped_by_time\"]")" = True
'

# auto runs seven strategies, each with its own final evaluations.
test_expect_success 'the same with auto: every strategy within the one limit' '
    t0=$(now) &&
    $CPO plan $P --budget 16K --search-moves 100000000 --time 3 \
        --json -o auto.json 2>err &&
    t1=$(now) &&
    python3 -c "import sys; w = $t1 - $t0; print(\"wall\", w); sys.exit(0 if w < 3 + 8 else 1)" &&
    grep "paced the search" err
'

test_expect_success 'the sanitizer build: paced, and nothing it reports is wrong' '
    $CODEPLACE plan $P --strategy combined --budget 16K --search-moves 100000000 \
        --time 3 --layout c.layout --json -o sc.json 2>err &&
    grep "combined: --time 3 paced the search" err &&
    $CODEPLACE sim $T --elf $ELF --map $MAP --target rp2040 \
        --layout c.layout --json -q -o s.json &&
    same $(jget sc.json "d[\"results\"][0][\"misses_per_iteration\"]") \
         $(jget s.json "d[\"warm\"][\"misses_mean\"]")
'

# A limit the selection cannot finish in: it stops after some sections,
# keeps them, and the plan is exact (its stubs included). How long the
# set-up takes depends on the machine, so the limit doubles until a
# selection stops with sections chosen.
test_expect_success 'a RAM selection stopped by --time keeps a valid plan' '
    found= &&
    for t in 1 2 4 8 16; do
        $CPO plan $P --strategy ram --budget 16K --time $t \
            --layout r.layout --json -o r.json 2>err &&
        cut=$(jget r.json "d[\"results\"][0][\"fast_selections_stopped_by_time\"]") &&
        fb=$(jget r.json "d[\"results\"][0][\"fast_bytes\"]") &&
        echo "--time $t: stopped $cut, $fb bytes" &&
        if test $cut = 1; then
            grep "ram: --time $t stopped the RAM selection before it was done" err
        else
            ! grep "stopped the RAM selection" err
        fi &&
        if test $cut = 1 && test $fb -gt 0; then found=$t; break; fi
    done &&
    test -n "$found" &&
    test $fb -le 16384 &&
    $CODEPLACE sim $T --elf $ELF --map $MAP --target rp2040 \
        --layout r.layout --json -q -o s.json &&
    same $(jget r.json "d[\"results\"][0][\"misses_per_iteration\"]") \
         $(jget s.json "d[\"warm\"][\"misses_mean\"]") &&
    grep -q " sram " r.layout
'

test_expect_success '--time 0.5: the selection was stopped (the test above can fail)' '
    $CODEPLACE plan $P --strategy ram --budget 16K --time 0.5 --json -o r.json 2>err &&
    test "$(jget r.json "d[\"results\"][0][\"fast_selections_stopped_by_time\"]")" = 1
'

test_expect_success '--time 0: the selection is never stopped' '
    $CODEPLACE plan $P --strategy ram --budget 16K --time 0 --json -o z.json 2>err &&
    test "$(jget z.json "d[\"results\"][0][\"fast_selections_stopped_by_time\"]")" = 0 &&
    ! grep "stopped" err
'

test_done
