#!/bin/sh
# The loop on a stock Zephyr 3.5.0 UDP service that is not an echo and on
# which nothing was tuned: samples/net/sockets/coap_server for mps2_an385
# (docs/zephyr.md), with the codeplace module and an empty list, built as
# t0323 builds it (lan9118, IPv4, minimal libc) and with CONFIG_LOG=n: the
# sample logs three lines per request through the shell's log backend (an
# 8-byte TX ring, one UART interrupt per byte), which lands in a varying
# number of requests and made the instructions per request swing 2-10x
# from run to run. Driven by tests/cli/coap-get.py (CoAP GET /test, one at
# a time, 50 ms after each answer: the next request finds the server back
# in recvfrom). Recorded, planned at 0 and 8 KiB with --for zephyr,
# relinked with each list, recorded again the same way, every sram name in
# RAM, verify as planned at budget 0.
# Compared as for echo_server: the plan's predicted warm misses per
# iteration against the re-trace's mean, within 2 % or within the
# re-trace's own iteration noise (tests/cli/zephyr-loop-lib.sh). Besides the request,
# some iterations hold the kernel's SysTick interrupt (tickless idle,
# nothing due), at budget 0 each with 4x a request's misses; how many of
# 100 follows the wall-clock time per request (8 quiet, 10 during a Zephyr
# build), so the two recordings are made alike, one after the other.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
. "$CP_ROOT/tests/cli/zephyr-loop-lib.sh"

W=$ZL_W
ZL_N=100

# zl_record NAME ELF TRACE: 100 requests after 5 (tests/cli/zephyr-loop-lib.sh).
zl_record() {
    $CODEPLACE trace --qemu mps2-an385 "$2" --mark z_impl_zsock_sendto \
        --udp 5683 --run "python3 $CP_ROOT/tests/cli/coap-get.py $W/$1.count" \
        -n 100 --skip 5 --timeout 150 -o "$3"
}

test_expect_success 'coap_server builds with the module, an empty list and CONFIG_LOG=n' '
    printf "# codeplace name list 1\n" >"$W/codeplace.list" &&
    zephyr_build $CP_ZEPHYR/zephyr/samples/net/sockets/coap_server mps2_an385 "$W/b" \
        -DEXTRA_CONF_FILE=$CP_ZEPHYR/zephyr/samples/net/sockets/echo_server/overlay-smsc911x.conf \
        -DCONFIG_NET_IPV6=n -DCONFIG_NET_CONFIG_NEED_IPV6=n \
        -DCONFIG_NET_IPV4=y -DCONFIG_NET_CONFIG_NEED_IPV4=y \
        -DCONFIG_NET_TCP_ISN_RFC6528=n -DCONFIG_NEWLIB_LIBC=n -DCONFIG_MINIMAL_LIBC=y \
        -DCONFIG_LOG=n -DCONFIG_NET_LOG=n -DZEPHYR_EXTRA_MODULES="$CP_ROOT" \
        -DCONFIG_CODEPLACE=y "-DCONFIG_CODEPLACE_LIST=\"$W/codeplace.list\"" &&
    grep -q "codeplace: .*codeplace.list: 0 functions to SRAM, 0 to ITCM, 0 first in flash" "$W/b.log" &&
    grep -q "^# CONFIG_LOG is not set$" "$W/b/zephyr/.config" &&
    arm-none-eabi-objdump -t "$W/b/zephyr/zephyr.elf" | grep -q "\.ram_text_reloc.* codeplace_sram_anchor$"
'

test_expect_success 'the base image: every request answered, the same work in each (within 3 %)' '
    base=$(zl_rec base) && echo "base $base" && test -n "$base" &&
    cat "$W/base.count" && read sent answered <"$W/base.count" &&
    test "$answered" -ge 100 && test $((sent - answered)) -le 5 &&
    $CODEPLACE trace --info "$W/base.trace" --per-iteration | awk "{ print \$2 }" | sort -n >ins &&
    test $(wc -l <ins) = 100 &&
    min=$(sed -n 1p ins) && max=$(sed -n 100p ins) && echo "min $min max $max" &&
    test $((100 * (max - min))) -le $((3 * min))
'

test_expect_success 'budget 0: relinked from the list, verify finds every function where the plan put it' '
    p0=$(zl_plan 0) && test -n "$p0" && echo "$p0" >"$W/p0.pred" &&
    grep -q "^# hot block: start 0x000000c0 " "$W/p0.list" &&
    zl_relink "$W/p0.list" &&
    zl_verify "$W/p0.layout"
'

test_expect_success 'budget 0: measured within 2 % of the prediction' '
    zl_rec m0 && zl_within2 "$(cat "$W/p0.pred")" m0
'

test_expect_success 'budget 8K: every sram name in RAM, verify as planned, measured within 2 % of the prediction' '
    p8=$(zl_plan 8192) && test -n "$p8" &&
    zl_relink_sram "$W/p8192.list" &&
    zl_verify "$W/p8192.layout" &&
    zl_rec m8192 && zl_within2 "$p8" m8192
'

test_done
