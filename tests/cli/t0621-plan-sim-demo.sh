#!/bin/sh
# plan predicts what sim --layout measures, to the miss and the
# instruction, under every replacement policy (lru, fifo, plru, random)
# and for every strategy, on the demo's trace: both run src/cache/'s
# model, and a layout's linker stubs are fetched by both.
. "$(dirname "$0")/lib.sh"
need_demo 'plan against sim on the demo firmware'
. "$(dirname "$0")/plan-sim.sh"

test_expect_success 'trace the demo' '
    $CODEPLACE trace $ELF --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 2 -q -o $TEST_TMP/demo.trace >/dev/null
'

for spec in 16K,2,8,lru 16K,2,8,fifo 16K,4,8,plru 16K,2,8,random; do
    test_expect_success "$spec: every strategy's prediction is what sim measures" "
        plan_sim_policy $TEST_TMP/demo.trace $spec 1K &&
        grep -q '^@stub' ram.layout && grep -q '^@stub' combined.layout
    "
done

test_done
