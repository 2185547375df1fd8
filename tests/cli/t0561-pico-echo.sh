#!/bin/sh
# The lwIP UDP echo as a pico-sdk 2.2.0 pico_stdlib application
# (firmware/pico/lwip-echo: pico-sdk's lib/lwip through its pico_lwip
# libraries, NO_SYS=1, frames injected by the harness) and its host
# reference (firmware/pico/host: the same echo.c and lwIP sources, host
# gcc): traced on the virtual board from reset and in harness mode with the
# host's results; planned at 0 and 8 KiB, each plan built with
# codeplace_apply() and traced again: every name placed, verified, the same
# results, and the misses within 2 % of the prediction. One stock build,
# relinked per plan.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
# unicorn's own allocations when code in SRAM is written, not codeplace's
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
PB=$TEST_TMP/pico-echo
HB=$TEST_TMP/host
ELF=$PB/echo.elf

TRACE="$CODEPLACE trace $ELF --target rp2040 --rom $CP_BOOTROM"

# host_result N: the host build's codeplace_result after N iterations
host_result() { sed -n "s/^codeplace_result after $1 iterations: //p" "$HB/out"; }
# trace_result SYM FILE: SYM's value in a trace's summary
trace_result() { sed -n "s/^result: *$1 = \(0x[0-9a-f]*\) .*/\1/p" "$2"; }

S=$TEST_TMP/stock

# plan_at NAME BUDGET STRATEGY: plans the stock image from its harness trace
# (in the build directory, where the map's object paths resolve) into
# $S/NAME (the snippets), $S/NAME.layout and $S/NAME.json.
plan_at() {
    (cd "$PB" && $CODEPLACE plan "$S/echo.elf" --map "$S/echo.elf.map" \
        --trace "$S/stock.trace" -t rp2040 --budget "$2" --strategy "$3" \
        -n 0 --time 0 -q \
        --layout "$S/$1.layout" --emit "$S/$1" --json -o "$S/$1.json")
}
# apply NAME: the stock build directory relinked with plan NAME
apply() { pico_build "$CP_ROOT/firmware/pico/lwip-echo" "$PB" -DCODEPLACE_PLAN="$S/$1"; }
# applies NAME: the misses per iteration plan NAME predicts (all of it applies)
applies() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([r for r in d["results"] if r["strategy"] == d["best"]][0]["misses_per_iteration"])' "$S/$1.json"; }
# warm TRACE: warm misses per iteration of the applied image
warm() {
    $CODEPLACE sim "$1" "$ELF" --map "$ELF.map" --json -q -o "$1.sim.json" 2>/dev/null &&
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["warm"]["misses_mean"])' "$1.sim.json"
}
# within2 P M: M within 2 % of P (P = 0 wants M = 0)
within2() { awk -v p="$1" -v m="$2" 'BEGIN { d = m - p; if (d < 0) d = -d; exit !(p != "" && m != "" && d <= 0.02 * p) }'; }
# sram_names NAME: the names of the list's sram group
sram_names() { sed -n '/^# region: sram/,/^# region: flash/p' "$S/$1/codeplace.list" | grep -v "^#" | awk '{print $1}'; }

nm_addr() { arm-none-eabi-nm "$1" | awk -v s="$2" '$3 == s {print $1}'; }

test_expect_success 'the host build of the echo answers every request' '
    cmake -S "$CP_ROOT/firmware/pico/host" -B "$HB" -DPICO_SDK_PATH="$CP_PICO_SDK" >cfg 2>&1 &&
    make -C "$HB" echo-host >build 2>&1 &&
    "$HB/echo-host" 300 >out &&
    cat >expect <<-\EOT &&
	codeplace_result after 1 iterations: 0x70a8f5a5
	codeplace_result after 10 iterations: 0xab9673a0
	codeplace_result after 300 iterations: 0x006796e7
	codeplace_errors: 0
	EOT
    test_cmp expect out &&
    cp out "$HB/out"
'

# The harness checks what comes back: a reply whose payload lwIP was handed
# changed (udp_sendto wrapped by the linker) counts one error per echo.
test_expect_success 'the harness counts a changed reply as an error' '
    cat >bad.c <<-\EOT &&
	#include "lwip/udp.h"
	err_t __real_udp_sendto(struct udp_pcb *, struct pbuf *, const ip_addr_t *, u16_t);
	err_t __wrap_udp_sendto(struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *a, u16_t port);
	err_t __wrap_udp_sendto(struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *a, u16_t port)
	{
	    ((unsigned char *)p->payload)[3] ^= 1;
	    return __real_udp_sendto(pcb, p, a, port);
	}
	EOT
    F=$CP_ROOT/firmware &&
    gcc -std=c99 -D_DEFAULT_SOURCE -I"$F/common" -I"$F/demo" -I"$F/pico/lwip-echo" \
        -I"$F/pico/lwip-echo/host" -I"$CP_PICO_SDK/lib/lwip/src/include" \
        -Wl,--wrap=udp_sendto -o bad bad.c "$F/pico/lwip-echo/echo.c" \
        "$F/demo/crc32.c" "$F/pico/common/host_main.c" "$HB/liblwip-host.a" &&
    test_exit 1 ./bad 5 >out &&
    grep -x "codeplace_errors: 5" out
'

test_expect_success 'the echo builds as a pico-sdk app on pico-sdk.s lwIP' '
    pico_build "$CP_ROOT/firmware/pico/lwip-echo" "$PB" &&
    test -f "$PB/echo.elf.map" &&
    mkdir -p "$S" && cp "$ELF" "$ELF.map" "$S/" &&
    test "$(nm_addr "$ELF" __boot2_start__)" = 10000000 &&
    for s in main runtime_init codeplace_init codeplace_iteration codeplace_mark \
             lwip_init ethernet_input etharp_input ip4_input udp_input udp_sendto \
             etharp_output; do
        case $(nm_addr "$ELF" $s) in 10??????) ;; *) echo "$s not in flash"; exit 1 ;; esac
    done &&
    grep -q "pico-sdk-2.2.0/lib/lwip/src/core/udp.c.o" "$PB/echo.elf.map" &&
    grep -q "pico_lwip/include" "$PB/build.ninja"
'

test_expect_success 'from reset the echo gives the host.s replies on the virtual board' '
    $TRACE --mark codeplace_mark -n 10 --result codeplace_result -o free.trace >free.txt 2>&1 &&
    grep -x "mode: *free-run" free.txt &&
    grep -q "^ended: *done" free.txt &&
    test -n "$(host_result 10)" &&
    test "$(trace_result codeplace_result free.txt)" = "$(host_result 10)"
'

test_expect_success 'in harness mode, after the real start-up, the same replies and no error' '
    $TRACE --init codeplace_init --iter codeplace_iteration -n 300 \
        --result codeplace_result -o "$S/stock.trace" >h.txt 2>&1 &&
    grep -x "mode: *harness" h.txt &&
    test "$(trace_result codeplace_result h.txt)" = "$(host_result 300)" &&
    $TRACE --init codeplace_init --iter codeplace_iteration -n 300 \
        --result codeplace_errors -o /dev/null >e.txt 2>&1 &&
    test "$(trace_result codeplace_errors e.txt)" = 0x00000000
'

# At 8 KiB the ram strategy (combined finds no miss left to save with
# flash colouring alone and moves nothing).
test_expect_success 'plans at 0 and 8 KiB from the harness trace, all of each for pico-sdk' '
    plan_at p0 0 colour &&
    plan_at p8 8K ram &&
    grep "all of the plan" "$S/p0/codeplace_pico.cmake" &&
    grep "all of the plan" "$S/p8/codeplace_pico.cmake" &&
    test -z "$(sram_names p0)" &&
    test -n "$(sram_names p8)"
'

for plan in p0 p8; do
    test_expect_success "plan $plan built with codeplace_apply(): every name placed, verified" "
        apply $plan &&
        ! grep 'codeplace: warning' $PB.log &&
        ! grep -E 'codeplace: echo.elf: (sram|flash): .* [1-9][0-9]* not$' $PB.log &&
        for n in \$(sram_names $plan); do
            case \$(nm_addr $ELF \$n) in 200?????) ;; *) echo \"\$n not in SRAM\"; exit 1 ;; esac
        done &&
        $CODEPLACE verify $S/$plan.layout $ELF --map $ELF.map >verify.out &&
        grep '^result: *as planned' verify.out
    "
    test_expect_success "plan $plan: the host.s results from reset and in harness mode" "
        $TRACE --result codeplace_result --mark codeplace_mark -n 10 -o /dev/null >free.txt 2>&1 &&
        test \"\$(trace_result codeplace_result free.txt)\" = \"\$(host_result 10)\" &&
        $TRACE --result codeplace_result --init codeplace_init --iter codeplace_iteration -n 300 -o $S/$plan.trace >h.txt 2>&1 &&
        test \"\$(trace_result codeplace_result h.txt)\" = \"\$(host_result 300)\"
    "
    test_expect_success "plan $plan: the misses measured within 2 % of the prediction" "
        p=\$(applies $plan) &&
        m=\$(warm $S/$plan.trace) &&
        echo \"$plan: predicted \$p, measured \$m\" &&
        within2 \"\$p\" \"\$m\"
    "
done

test_done
