#!/bin/sh
# zephyr/samples/udp_echo on mps2_an385, the Ethernet twin of the USB
# sample: built on the vendored Zephyr 3.5.0 (LAN9220 driver, QEMU's
# user-network address), run in qemu-system-arm -M mps2-an385 with user
# networking (a free 127.0.0.1 port forwarded to the guest's port 7) and
# swept by codeplace bench udp. Rates far below what the guest answers on
# a loaded host (docs/zephyr.md measures the sweep; past saturation QEMU's
# lan9118 model stops receiving for good): every request sent is answered.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
B=$TEST_TMP/mps2
ELF=$B/zephyr/zephyr.elf
CSVSUM="python3 $CP_ROOT/tests/cli/csvsum.py"

test_expect_success 'udp_echo builds for mps2_an385: LAN9220 Ethernet at 10.0.2.15, no USB' '
    zephyr_build "$CP_ROOT/zephyr/samples/udp_echo" mps2_an385 "$B" &&
    C=$B/zephyr/.config &&
    grep -qx "CONFIG_UDP_ECHO_ETH=y" $C &&
    grep -qx "CONFIG_ETH_SMSC911X=y" $C &&
    grep -qx "CONFIG_NET_CONFIG_MY_IPV4_ADDR=\"10.0.2.15\"" $C &&
    grep -qx "CONFIG_NET_CONFIG_MY_IPV4_GW=\"10.0.2.2\"" $C &&
    ! grep -q "^CONFIG_USB_DEVICE_STACK" $C &&
    arm-none-eabi-nm "$ELF" >syms &&
    grep -q " T udp_echo_netif_start$" syms && grep -q " T main$" syms
'

test_expect_success 'in QEMU the twin answers every request of bench udp at 20, 50, 100/s' '
    port=$(udp_port)
    timeout 150 qemu-system-arm -M mps2-an385 -kernel "$ELF" -display none \
        -monitor none -serial file:serial.txt \
        -nic user,model=lan9118,hostfwd=udp:127.0.0.1:$port-:7 & qp=$!
    python3 "$CP_ROOT/tests/cli/udp-wait.py" $port 0.5 120 >wait &&
    $CODEPLACE bench udp 127.0.0.1:$port --rates 20,50,100 --step 1 --passes 2 --timeout 2000 \
        --csv -o s.csv -q; rc=$?
    alive=no; kill -0 $qp 2>/dev/null && alive=yes
    kill $qp; wait $qp 2>/dev/null
    cat wait serial.txt; echo "qemu alive at the end: $alive"
    test $rc = 0 && test $alive = yes &&
    grep -q "UDP echo on 10.0.2.15:7" serial.txt &&
    $CSVSUM s.csv >sum && cat sum &&
    test $(wc -l <sum) = 6 &&
    awk "{ if (\$3 == 0 || \$5 != \$3 || \$6 != 0 || \$7 != 0 || \$8 != 0) exit 1 }" sum &&
    test "$(cut -d" " -f1 sum | tr "\n" " ")" = "20 50 100 20 50 100 "
'

test_done
