#!/bin/sh
# trace --qemu --run on a stock Zephyr 3.5.0 UDP service that is not an echo:
# samples/net/sockets/coap_server for mps2_an385, with echo_server's
# overlay-smsc911x.conf for the lan9118 and IPv4 instead of IPv6 (QEMU's
# user network forwards IPv4; the sample serves one family), the minimal
# libc (Debian's newlib has no retargetable locks). The traffic is the
# command's from the start: tests/cli/coap-get.py sends CoAP GET /test, one
# at a time, and codeplace sends nothing of its own (an echo probe would
# never be answered).
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"

if ! have qemu-system-arm || ! test -f $CP_ROOT/build/codeplace-qemu.so; then
    test_skip 'stock Zephyr CoAP server under trace --qemu --run' 'qemu-system-arm or the plugin missing'
    test_done
fi

CS=$TEST_TMP/coap
ELF=$CS/zephyr/zephyr.elf
test_expect_success 'build coap_server for mps2_an385 (IPv4, lan9118)' '
    zephyr_build $CP_ZEPHYR/zephyr/samples/net/sockets/coap_server mps2_an385 $CS \
        -DEXTRA_CONF_FILE=$CP_ZEPHYR/zephyr/samples/net/sockets/echo_server/overlay-smsc911x.conf \
        -DCONFIG_NET_IPV6=n -DCONFIG_NET_CONFIG_NEED_IPV6=n \
        -DCONFIG_NET_IPV4=y -DCONFIG_NET_CONFIG_NEED_IPV4=y \
        -DCONFIG_NET_TCP_ISN_RFC6528=n -DCONFIG_NEWLIB_LIBC=n -DCONFIG_MINIMAL_LIBC=y &&
    grep -q "^CONFIG_NET_CONFIG_MY_IPV4_ADDR=\"192.0.2.1\"$" $CS/zephyr/.config
'

test_expect_success '--run: CoAP GETs from the start, every iteration recorded' '
    timeout 150 $CODEPLACE trace --qemu mps2-an385 $ELF --mark z_impl_zsock_sendto \
        --udp 5683 --run "python3 $CP_ROOT/tests/cli/coap-get.py $PWD/coap.count" \
        -n 50 --skip 5 --timeout 120 -o coap.trace >out 2>err &&
    cat out coap.count &&
    grep -q "^iterations:   50 " out &&
    grep -q "^ended:        done$" out &&
    grep -q "^stopped by:   the recorder after the 50 iterations of -n$" out &&
    ! grep -q "^echoes:" out &&
    read sent answered <coap.count &&
    test "$answered" -ge 50 && test $((sent - answered)) -le 5 &&
    $CODEPLACE trace --info coap.trace --per-iteration >per &&
    test $(wc -l <per) = 50 &&
    awk "{ print \$2 }" per | sort -n | sed -n 25p >median && cat median &&
    test $(cat median) -ge 20000 && test $(cat median) -le 1000000
'

test_done
