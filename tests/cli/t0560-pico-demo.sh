#!/bin/sh
# The demo workload as a pico-sdk 2.2.0 pico_stdlib application
# (firmware/pico/demo, built from the vendored tree with PICO_BOARD=pico)
# and its host reference (firmware/pico/host: the same sources, host gcc):
# traced on the virtual board from reset and in harness mode (boot ROM from
# the vendored tree) with the host's results; planned at 0 and 8 KiB,
# each plan built with codeplace_apply() (both groups) in the same build
# directory and traced again: every name placed, verified, the same
# results, and the misses within 2 % of the prediction. One stock build,
# relinked per plan.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
# unicorn's own allocations when code in SRAM is written, not codeplace's
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
PB=$TEST_TMP/pico-demo
HB=$TEST_TMP/host
ELF=$PB/demo.elf

TRACE="$CODEPLACE trace $ELF --target rp2040 --rom $CP_BOOTROM --result codeplace_result"

# host_result N: the host build's codeplace_result after N iterations
host_result() { sed -n "s/^codeplace_result after $1 iterations: //p" "$HB/out"; }
# trace_result FILE: the result line of a trace's summary
trace_result() { sed -n "s/^result: *codeplace_result = \(0x[0-9a-f]*\) .*/\1/p" "$1"; }

S=$TEST_TMP/stock

# plan_at NAME BUDGET STRATEGY: plans the stock image from its harness trace
# (in the build directory, where the map's object paths resolve) into
# $S/NAME (the snippets), $S/NAME.layout and $S/NAME.json. A shorter search
# than the default keeps the file's time down; the prediction is as exact.
plan_at() {
    (cd "$PB" && $CODEPLACE plan "$S/demo.elf" --map "$S/demo.elf.map" \
        --trace "$S/stock.trace" -t rp2040 --budget "$2" --strategy "$3" \
        -n 0 --search-moves 5000 --time 0 -q \
        --layout "$S/$1.layout" --emit "$S/$1" --json -o "$S/$1.json")
}
# apply NAME: the stock build directory relinked with plan NAME
apply() { pico_build "$CP_ROOT/firmware/pico/demo" "$PB" -DCODEPLACE_PLAN="$S/$1"; }
# applies NAME: the misses per iteration plan NAME predicts (all of it applies)
applies() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([r for r in d["results"] if r["strategy"] == d["best"]][0]["misses_per_iteration"])' "$S/$1.json"; }
# warm TRACE [ELF]: warm misses per iteration (of the applied image)
warm() {
    $CODEPLACE sim "$1" "${2:-$ELF}" --map "${2:-$ELF}.map" --json -q -o "$1.sim.json" 2>/dev/null &&
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["warm"]["misses_mean"])' "$1.sim.json"
}
# within2 P M: M within 2 % of P (P = 0 wants M = 0)
within2() { awk -v p="$1" -v m="$2" 'BEGIN { d = m - p; if (d < 0) d = -d; exit !(p != "" && m != "" && d <= 0.02 * p) }'; }
# sram_names NAME: the names of the list's sram group
sram_names() { sed -n '/^# region: sram/,/^# region: flash/p' "$S/$1/codeplace.list" | grep -v "^#" | awk '{print $1}'; }

nm_addr() { arm-none-eabi-nm "$1" | awk -v s="$2" '$3 == s {print $1}'; }

test_expect_success 'the host build of the demo gives the QEMU reference results' '
    cmake -S "$CP_ROOT/firmware/pico/host" -B "$HB" -DPICO_SDK_PATH="$CP_PICO_SDK" >cfg 2>&1 &&
    make -C "$HB" demo-host >build 2>&1 &&
    "$HB/demo-host" 300 >out &&
    cp out "$HB/out" &&
    sed -n "s/^microbit \([0-9]*\) \(0x[0-9a-f]*\)$/codeplace_result after \1 iterations: \2/p" \
        "$CP_ROOT/firmware/expected.txt" >expect &&
    test $(wc -l <expect) = 3 &&
    test_cmp expect out
'

test_expect_success 'the demo builds as a pico-sdk app with its start-up and the demo sources' '
    pico_build "$CP_ROOT/firmware/pico/demo" "$PB" &&
    test -f "$PB/demo.elf.map" &&
    mkdir -p "$S" && cp "$ELF" "$ELF.map" "$S/" &&
    test "$(nm_addr "$ELF" __boot2_start__)" = 10000000 &&
    for s in main runtime_init codeplace_init codeplace_iteration codeplace_mark \
             demo_filter demo_report demo_parse_line; do
        case $(nm_addr "$ELF" $s) in 10??????) ;; *) echo "$s not in flash"; exit 1 ;; esac
    done &&
    case $(nm_addr "$ELF" codeplace_result) in 200?????) ;; *) exit 1 ;; esac &&
    grep -q "firmware/demo/filter.c.o" "$PB/demo.elf.map" &&
    arm-none-eabi-nm "$ELF" | grep -q " __wrap___aeabi_idiv$" &&
    ! arm-none-eabi-nm "$ELF" | grep -q " __wrap___aeabi_dadd$" &&
    ! arm-none-eabi-nm "$ELF" | grep -q " __wrap_snprintf$"
'

test_expect_success 'from reset the demo computes the host.s results on the virtual board' '
    $TRACE --mark codeplace_mark -n 10 -o free.trace >free.txt 2>&1 &&
    grep -x "mode: *free-run" free.txt &&
    grep -q "^ended: *done" free.txt &&
    test -n "$(host_result 10)" &&
    test "$(trace_result free.txt)" = "$(host_result 10)"
'

test_expect_success 'in harness mode, after the real start-up, the same results' '
    $TRACE --init codeplace_init --iter codeplace_iteration -n 1 -o /dev/null >h1.txt 2>&1 &&
    test "$(trace_result h1.txt)" = "$(host_result 1)" &&
    $TRACE --init codeplace_init --iter codeplace_iteration -n 10 -o "$S/stock.trace" >h.txt 2>&1 &&
    grep -x "mode: *harness" h.txt &&
    test "$(trace_result h.txt)" = "$(host_result 10)"
'

test_expect_success 'plans at 0 and 8 KiB from the harness trace, all of each for pico-sdk' '
    plan_at p0 0 colour &&
    plan_at p8 8K combined &&
    grep "all of the plan" "$S/p0/codeplace_pico.cmake" &&
    grep "all of the plan" "$S/p8/codeplace_pico.cmake" &&
    test -z "$(sram_names p0)" &&
    test -n "$(sram_names p8)"
'

# memmap_default.ld links libgcc and libm into SRAM: the stock image calls
# them from flash through about 50 stubs at the end of .text, which the
# relink lays out again, and the 8 KiB plan moves some of their callers
# and callees to SRAM too; the prediction follows both.
for plan in p0 p8; do
    test_expect_success "plan $plan built with codeplace_apply(): every name placed, verified" "
        apply $plan &&
        ! grep 'codeplace: warning' $PB.log &&
        ! grep -E 'codeplace: demo.elf: (sram|flash): .* [1-9][0-9]* not$' $PB.log &&
        for n in \$(sram_names $plan); do
            case \$(nm_addr $ELF \$n) in 200?????) ;; *) echo \"\$n not in SRAM\"; exit 1 ;; esac
        done &&
        $CODEPLACE verify $S/$plan.layout $ELF --map $ELF.map >verify.out &&
        grep '^result: *as planned' verify.out
    "
    test_expect_success "plan $plan: the host.s results from reset and in harness mode" "
        $TRACE --mark codeplace_mark -n 10 -o /dev/null >free.txt 2>&1 &&
        test \"\$(trace_result free.txt)\" = \"\$(host_result 10)\" &&
        $TRACE --init codeplace_init --iter codeplace_iteration -n 10 -o $S/$plan.trace >h.txt 2>&1 &&
        test \"\$(trace_result h.txt)\" = \"\$(host_result 10)\"
    "
    test_expect_success "plan $plan: the misses measured within 2 % of the prediction, below stock" "
        p=\$(applies $plan) &&
        m=\$(warm $S/$plan.trace) &&
        s=\$(warm $S/stock.trace $S/demo.elf) &&
        echo \"$plan: stock \$s, predicted \$p, measured \$m\" &&
        within2 \"\$p\" \"\$m\" &&
        awk -v s=\"\$s\" -v m=\"\$m\" 'BEGIN { exit !(m < s) }'
    "
done

test_done
