#!/bin/sh
# The lwIP UDP echo as a pico-sdk 2.2.0 pico_stdlib application
# (firmware/pico/lwip-echo: pico-sdk's lib/lwip through its pico_lwip
# libraries, NO_SYS=1, frames injected by the harness) and its host
# reference (firmware/pico/host: the same echo.c and lwIP sources, host
# gcc). The builds are shared by the whole file.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
# libunicorn leaks the code bitmap it builds when the firmware writes to a
# page it also runs code from (QEMU's self-modifying-code path; pico-sdk
# puts code and data side by side in SRAM): a leak in the library, not in
# codeplace (unicorn-engine/unicorn issue 2149), kept out of LSan's report.
printf 'leak:tb_invalidate_phys_page_fast\n' >"$TEST_TMP/lsan.supp"
export LSAN_OPTIONS="suppressions=$TEST_TMP/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
PB=$TEST_TMP/pico-echo
HB=$TEST_TMP/host
ELF=$PB/echo.elf

TRACE="$CODEPLACE trace $ELF --target rp2040 --rom $CP_BOOTROM"

# host_result N: the host build's codeplace_result after N iterations
host_result() { sed -n "s/^codeplace_result after $1 iterations: //p" "$HB/out"; }
# trace_result SYM FILE: SYM's value in a trace's summary
trace_result() { sed -n "s/^result: *$1 = \(0x[0-9a-f]*\) .*/\1/p" "$2"; }

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
        --result codeplace_result -o "$TEST_TMP/stock.trace" >h.txt 2>&1 &&
    grep -x "mode: *harness" h.txt &&
    test "$(trace_result codeplace_result h.txt)" = "$(host_result 300)" &&
    $TRACE --init codeplace_init --iter codeplace_iteration -n 300 \
        --result codeplace_errors -o /dev/null >e.txt 2>&1 &&
    test "$(trace_result codeplace_errors e.txt)" = 0x00000000
'

test_done
