#!/bin/sh
# trace --qemu on stock Zephyr 3.5.0: samples/net/sockets/echo_server for
# mps2_an385 with its overlay-smsc911x.conf, built as it comes (its address
# 192.0.2.1 from its own .config, which codeplace reads next to the ELF),
# recorded with the tool's own echo traffic and a library function as the
# mark (z_impl_zsock_sendto: one per echo). While the guest boots, QEMU's
# user network holds every frame for it until it answers ARP and then hands
# them over in one burst; more than CONFIG_NET_PKT_RX_COUNT (16) of them and
# the driver drops one with the lan9118's RX fast-forward, which QEMU 7.2
# gets wrong: nothing is received after it. The readiness wait must never
# leave more than one probe held. Then the end of a run names who stopped
# QEMU: the recorder at -n, --timeout, Ctrl-C, or the guest.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"

if ! have qemu-system-arm || ! test -f $CP_ROOT/build/codeplace-qemu.so; then
    test_skip 'stock Zephyr under trace --qemu' 'qemu-system-arm or the plugin missing'
    test_done
fi

# one build for the whole file (each case runs in a directory of its own)
ES=$TEST_TMP/es
ELF=$ES/zephyr/zephyr.elf
test_expect_success 'build echo_server for mps2_an385 as it comes' '
    zephyr_build $CP_ZEPHYR/zephyr/samples/net/sockets/echo_server mps2_an385 $ES \
        -DEXTRA_CONF_FILE=overlay-smsc911x.conf -DCONFIG_NET_TCP_ISN_RFC6528=n &&
    grep -q "^CONFIG_NET_CONFIG_MY_IPV4_ADDR=\"192.0.2.1\"$" $ES/zephyr/.config &&
    grep -q "^CONFIG_NET_PKT_RX_COUNT=16$" $ES/zephyr/.config
'

# echoes FIELD: the count of the "echoes:" line of out
echoes() {
    sed -n "s/^echoes: *\([0-9,]*\) sent, \([0-9,]*\) answered, \([0-9,]*\) wrong replies, \([0-9]*\) unanswered, \([0-9]\) in flight.*/\\$1/p" out | tr -d ,
}

test_expect_success 'stock echo_server: the readiness wait leaves it working, every echo answered' '
    timeout 150 $CODEPLACE trace --qemu mps2-an385 $ELF --mark z_impl_zsock_sendto \
        --udp 4242 -n 50 --skip 20 --timeout 120 -o $TEST_TMP/stock.trace >out 2>err &&
    cat out err &&
    grep -q "^the guest is 192.0.2.1 ($ES/zephyr/.config)" err &&
    grep -q "^iterations:   50 " out &&
    grep -q "^ended:        done$" out &&
    grep -q "^stopped by:   the recorder after the 50 iterations of -n$" out &&
    sent=$(echoes 1) answered=$(echoes 2) wrong=$(echoes 3) lost=$(echoes 4) fly=$(echoes 5) &&
    test "$sent" -ge 70 && test "$wrong" = 0 && test "$lost" = 0 &&
    test $((answered + fly)) = "$sent" &&
    sed -n "s/.*ARP after \([0-9.]*\) s, \([0-9]*\) probes.*/\1 \2/p" err >probes &&
    read arp probes <probes &&
    test "$probes" -ge 1 &&
    awk -v a=$arp -v p=$probes "BEGIN { exit !(p <= int(a / 1.5) + 1 + 4) }" &&
    $CODEPLACE trace --info $TEST_TMP/stock.trace --per-iteration >per &&
    test $(wc -l <per) = 50 &&
    awk "{ print \$2 }" per | sort -n | sed -n 25p >median && cat median &&
    test $(cat median) -ge 15000 && test $(cat median) -le 30000
'

test_expect_success 'the exec log of the same run (-d exec,nochain -singlestep) imports to the plugin'"'"'s counts' '
    printf "#!/bin/sh\nexec qemu-system-arm \"\$@\" -d exec,nochain -singlestep -D %s\n" $PWD/q.log >qemu-log &&
    chmod +x qemu-log &&
    CODEPLACE_QEMU=$PWD/qemu-log timeout 150 $CODEPLACE trace --qemu mps2-an385 $ELF \
        --mark z_impl_zsock_sendto --udp 4242 -n 10 --timeout 120 -o p.trace >out 2>err &&
    grep -q "^ended:        done$" out &&
    $CODEPLACE trace --from-qemu q.log --elf $ELF --mark z_impl_zsock_sendto -n 10 \
        -o l.trace >imp &&
    cat imp &&
    grep -q "dropped [1-9][0-9]* of blocks that did not run" imp &&
    grep -q "^checked:      one instruction per line, each following the last ([1-9][0-9]* exception entries)$" imp &&
    $CODEPLACE trace --from-qemu q.log --elf $ELF --mark z_impl_zsock_sendto -n 10 \
        -o l.trace --per-iteration >log &&
    $CODEPLACE trace --info p.trace --per-iteration >plugin &&
    test $(wc -l <plugin) = 10 &&
    test_cmp plugin log
'

test_expect_success 'sim --cache 16K,2,8 on the stock trace: warm misses per echo in range' '
    $CODEPLACE sim $TEST_TMP/stock.trace $ELF --cache 16K,2,8 >sim &&
    med=$(sed -n "s/^warm misses: median \([0-9,]*\)\.[0-9],.*/\1/p" sim | tr -d ,) &&
    echo "$med" && test "$med" -ge 700 && test "$med" -le 1400
'

test_expect_success '--timeout with a guest that never reaches the mark: codeplace stopped QEMU' '
    test_exit 0 timeout 60 $CODEPLACE trace --qemu mps2-an385 $ELF --mark z_impl_zsock_sendto \
        -n 10 --timeout 4 -o t.trace >out 2>err &&
    grep -q "^stopped by:   codeplace stopped QEMU at --timeout (4 s)$" out &&
    grep -q "stopped by --timeout after 0 of 10 iterations" err &&
    ! grep -q "firmware stopped" err &&
    $CODEPLACE trace --info t.trace >info &&
    grep -q "^ended:        time limit$" info
'

test_expect_success '--run with a command that never gets an answer: --timeout, not the firmware' '
    test_exit 0 timeout 60 $CODEPLACE trace --qemu mps2-an385 $ELF --mark z_impl_zsock_sendto \
        --udp 4242 --run "sleep 60" -n 10 --timeout 4 -o r.trace >out 2>err &&
    grep -q "^stopped by:   codeplace stopped QEMU at --timeout (4 s)$" out &&
    ! grep -q "firmware stopped" err &&
    ! grep -q "did not answer" err
'

test_expect_success 'Ctrl-C during the traffic: codeplace stopped QEMU, the iterations so far kept' '
    ( timeout 90 $CODEPLACE trace --qemu mps2-an385 $ELF --mark z_impl_zsock_sendto \
        --udp 4242 --rate 20 -n 100000 --timeout 80 -o c.trace >out 2>err & echo $! >pid; wait ) &
    i=0; while ! grep -q "the guest answers" err 2>/dev/null && test $i -lt 600; do sleep 0.1; i=$((i+1)); done &&
    sleep 2 && kill -INT $(cat pid) && wait &&
    cat out &&
    grep -q "^stopped by:   codeplace stopped QEMU on Ctrl-C (SIGINT)$" out &&
    grep -q "^ended:        interrupted$" out &&
    n=$(sed -n "s/^iterations:   \([0-9]*\) .*/\1/p" out) && test "$n" -ge 5 &&
    $CODEPLACE trace --info c.trace >info &&
    grep -q "^iterations:   $n complete" info
'

test_expect_success 'the guest ending QEMU itself: named, with its exit status' '
    test_exit 1 timeout 60 $CODEPLACE trace --qemu mps2-an385 $CP_FIXTURES/irq-an385.elf \
        --mark codeplace_mark -n 100 -o g.trace >out 2>err &&
    grep -q "^stopped by:   the guest: QEMU ended by itself (exit status 0)$" out &&
    grep -q "the firmware stopped after 39 of 100 iterations: the guest ended QEMU (exit status 0)" err
'

test_done
