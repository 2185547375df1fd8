#!/bin/sh
# plan/ has no call circle among its files: the strategies, the RAM
# selection, the annealing chains and the search they share call one
# another in one direction only, and so do the model (model.c, at the
# bottom), what ld does with it (ldstub, picolink, after, layout), its
# evaluation through cache/ (walk) and the link set-up and refinement on
# top of them (link) (scripts/circles, on the objects the test build
# compiled).
. "$(dirname "$0")/lib.sh"
OBJ=$CP_ROOT/build/san/plan

test_expect_success 'the objects of plan/ are built' '
    test -f $OBJ/strategy.o && test -f $OBJ/select.o &&
    test -f $OBJ/chains.o && test -f $OBJ/anneal.o
'

test_expect_success 'no circle is left in plan/' '
    test -f $OBJ/link.o && test -f $OBJ/walk.o &&
    python3 $CP_ROOT/scripts/circles $OBJ >out &&
    : >expect &&
    test_cmp expect out
'

test_expect_success 'scripts/circles finds a circle' '
    mkdir cyc && cd cyc &&
    printf "void b(void);\nvoid a(void) { b(); }\n" >a.c &&
    printf "void a(void);\nvoid b(void) { a(); }\n" >b.c &&
    printf "void a(void);\nvoid c(void) { a(); }\n" >c.c &&
    cc -c a.c b.c c.c &&
    test_exit 1 python3 $CP_ROOT/scripts/circles . >out &&
    echo "circle: a b" >expect &&
    test_cmp expect out
'

test_done
