#!/bin/sh
# codeplace plan --threads: several annealing chains per search, each in its
# own thread. With a move budget (--time 0) the same inputs, seed and
# number of chains give byte-identical artefacts whatever the scheduling;
# every chain makes its moves and one wins each search; progress stays one
# line per report; --time says which chains it paced.
. "$(dirname "$0")/lib.sh"
need_demo 'plan --threads on the demo firmware'

test_expect_success 'trace the demo' '
    $CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 3 -q -o $TEST_TMP/run.trace >/dev/null
'
T=$TEST_TMP/run.trace
P="$ELF --map $MAP --trace $T --target rp2040 --seed 3"

test_expect_success '--threads 2 --time 0: the same list and layout twice' '
    for k in 1 2; do
        $CODEPLACE plan $P --strategy combined --budget 4K --threads 2 \
            --search-moves 400 --descent-passes 0 --time 0 --list l$k.list --layout l$k.layout \
            --json -o p$k.json 2>$TEST_TMP/err$k || return 1
    done &&
    test_cmp l1.list l2.list &&
    test_cmp l1.layout l2.layout &&
    test_cmp p1.json p2.json &&
    test "$(jget p1.json "len(d[\"results\"][0][\"chains\"])")" = 2 &&
    test "$(jget p1.json "[c[\"moves\"] for c in d[\"results\"][0][\"chains\"]]")" = "[1200, 1200]" &&
    test "$(jget p1.json "d[\"results\"][0][\"search_moves\"]")" = 2400 &&
    test "$(jget p1.json "sum(c[\"searches_won\"] for c in d[\"results\"][0][\"chains\"])")" = 3 &&
    test "$(jget p1.json "d[\"results\"][0][\"stopped_by_time\"]")" = False
'

test_expect_success 'one progress line per report, over the chains' '
    grep "^plan: anneal: " $TEST_TMP/err1 >lines &&
    test "$(grep -c "^plan: anneal: [0-9]* of 400 moves (2 chains, [0-9]* in all), best" lines)" = 30 &&
    test "$(grep -c "^plan: anneal: 2 chains, 800 moves in .* misses/iteration from chain [12] (1: .*, 2: " lines)" = 3 &&
    test "$(wc -l <lines)" = 33
'

test_expect_success '--threads 1 is one chain, as the search has always run' '
    $CODEPLACE plan $P --strategy colour --threads 1 --search-moves 400 --descent-passes 0 \
        --time 0 --layout one.layout --json -o one.json 2>err &&
    grep -q "^plan: anneal: 400 of 400 moves" err &&
    grep -q "^plan: anneal: 400 moves (" err &&
    test "$(jget one.json "len(d[\"results\"][0][\"chains\"])")" = 1 &&
    $CODEPLACE plan $P --strategy colour --threads 2 --search-moves 400 --descent-passes 0 \
        --time 0 --json -o two.json -q &&
    python3 -c "import sys; sys.exit(0 if $(jget two.json "d[\"results\"][0][\"chains\"][0][\"last_misses_per_iteration\"]") == $(jget one.json "d[\"results\"][0][\"chains\"][0][\"last_misses_per_iteration\"]") else 1)"
'

test_expect_success '--time says which chains it paced' '
    $CODEPLACE plan $P --strategy colour --threads 2 --search-moves 100000000 \
        --time 0.001 --json -o cut.json 2>err &&
    grep "paced the search in chains 1 and 2 of 2 ([0-9]* moves made in all)" err &&
    test "$(jget cut.json "[c[\"searches_stopped_by_time\"] for c in d[\"results\"][0][\"chains\"]]")" = "[1, 1]"
'

test_expect_success '--threads out of range is a usage error' '
    test_exit 2 $CODEPLACE plan $P --threads 0 2>err &&
    grep -q "threads 0: give 1 to 8" err &&
    test_exit 2 $CODEPLACE plan $P --threads 9 2>err &&
    grep -q "threads 9: give 1 to 8" err
'

test_done
