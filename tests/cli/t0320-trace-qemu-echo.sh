#!/bin/sh
# trace --qemu under UDP traffic on the whole-system echo firmware
# (firmware/ws/): QEMU's user network forwards a free 127.0.0.1 port to the
# guest's port 7, codeplace waits for the guest to answer, sends echo
# requests and stops QEMU after N marks. Per echo, the recorded
# instructions and 8-byte lines equal the independent count of
# firmware/ws/reference.txt (tests/cli/wsfw-count.py, from QEMU's exec
# log); --run hands the port to the user's own traffic command.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
ELF=$FW/ws-mps2-an385.elf

if ! have qemu-system-arm || ! test -f $CP_ROOT/build/codeplace-qemu.so || ! test -f $ELF; then
    test_skip 'QEMU recorder under traffic' 'qemu-system-arm, the plugin or the echo firmware missing'
    test_done
fi

# per_echo TRACE: "INSTRUCTIONS LINES COUNT" of the most common iteration
per_echo() {
    $CODEPLACE trace --info "$1" --records | python3 -c '
import collections, sys
its, cur, n = [], None, 0
for l in sys.stdin:
    p = l.split()
    if p[0] == "mark":
        if cur is not None:
            its.append((n, len(cur)))
        cur, n = set(), 0
    elif p[0] == "fetch" and cur is not None:
        a, ln = int(p[1], 16), int(p[2])
        n += int(p[3])
        cur.update(range(a // 8, (a + ln - 1) // 8 + 1))
its.append((n, len(cur)))
(i, l), c = collections.Counter(its).most_common(1)[0]
print(i, l, c)'
}

test_expect_success 'mps2-an385 --udp 7 -n 50: echoes answered, per echo as the independent count' '
    timeout 120 $CODEPLACE trace --qemu mps2-an385 $ELF --mark codeplace_mark \
        --udp 7 --rate 100 --size 64 -n 50 --timeout 90 -o ws.trace >out 2>err &&
    cat out &&
    grep -q "^iterations:   50 " out &&
    grep -q "^ended:        done$" out &&
    sent=$(sed -n "s/^echoes: *\([0-9]*\) sent, \([0-9]*\) answered, 0 wrong.*/\1/p" out) &&
    answered=$(sed -n "s/^echoes: *\([0-9]*\) sent, \([0-9]*\) answered, 0 wrong.*/\2/p" out) &&
    test "$answered" -gt 0 && test $((sent - answered)) -le 5 &&
    grep -q "^contexts:     [1-9]" out &&
    pid=$(sed -n "s/.*(pid \([0-9]*\)).*/\1/p" err) && ! kill -0 $pid 2>/dev/null &&
    awk "\$1 == \"mps2-an385\" && \$2 == 64 { print \$3, \$4 }" \
        $CP_ROOT/firmware/ws/reference.txt >want &&
    per_echo ws.trace >got && cat got &&
    cut -d" " -f1,2 got >got2 && test_cmp want got2 &&
    test $(cut -d" " -f3 got) -ge 10
'

test_expect_success '--run CMD: the traffic of a command of the user'"'"'s own, port in its environment' '
    cat >send.py <<-\EOF &&
	import os, socket, time
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	s.settimeout(1)
	addr = (os.environ["CODEPLACE_UDP_HOST"], int(os.environ["CODEPLACE_UDP_PORT"]))
	ok = 0
	for i in range(40):
	    s.sendto(b"x" * 64, addr)
	    try:
	        ok += s.recv(2048) == b"x" * 64
	    except socket.timeout:
	        pass
	    time.sleep(0.02)
	open("answered", "w").write("%d\n" % ok)
	time.sleep(30)
	EOF
    timeout 120 $CODEPLACE trace -q --qemu mps2-an385 $ELF --mark codeplace_mark \
        --udp 7 --run "python3 send.py" -n 20 --timeout 90 -o run.trace >out &&
    grep -q "^iterations:   20 " out &&
    grep -q "^ended:        done$" out &&
    $CODEPLACE trace --info run.trace >info &&
    grep -q "^iterations:   20 complete" info
'

test_expect_success '--udp: a guest that never answers is an error, the trace stays valid' '
    test_exit 1 timeout 60 $CODEPLACE trace --qemu mps2-an385 $CP_FIXTURES/irq-forever.elf \
        --mark codeplace_mark --udp 7 -n 100000000 --timeout 3 -o none.trace >out 2>err &&
    grep -q "the guest did not answer on UDP port 7" err &&
    $CODEPLACE trace --info none.trace >info &&
    grep -q "^ended:        time limit$" info &&
    grep -q "^stopped by:   codeplace stopped QEMU at --timeout (3 s)$" out
'

test_done
