#!/bin/sh
# codeplace bench sink: real clients (iperf2's client, socat), 1,000
# concurrent connections, idle and half-open time-outs, and a new
# connection served while an old one sits open.
. "$(dirname "$0")/lib.sh"
ulimit -n 4096 2>/dev/null

# Starts the sink on a free loopback port in the background: sets $sk (pid)
# and $port; events go to sink.jsonl.
start_sink() {
    $CODEPLACE bench sink --listen 127.0.0.1:0 --json -o sink.jsonl -q "$@" & sk=$!
    n=0
    while ! grep -q '"listen"' sink.jsonl 2>/dev/null; do
        sleep 0.05; n=$((n + 1)); test $n -lt 200 || return 1
    done
    port=$(sed -n '1s/.*:\([0-9]*\)".*/\1/p' sink.jsonl)
}

cat >"$TEST_TMP/check.py" <<'PY'
# check.py sink.jsonl: prints "conn bytes reason" per close, then the summary
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[0]["event"] == "listen" and ev[-1]["event"] == "summary"
closes = [e for e in ev if e["event"] == "close"]
for e in closes:
    print(e["conn"], e["bytes"], e["reason"])
s = ev[-1]
# Interval bytes add up to the total; close bytes too.
assert sum(e["bytes"] for e in ev if e["event"] == "interval") == s["bytes"], s
assert sum(e["bytes"] for e in closes) == s["bytes"]
print("summary", s["opened"], s["closed"], s["peak"], s["idle"], s["half_open"], s["bytes"])
PY
CHECK="python3 $TEST_TMP/check.py"

test_expect_success 'usage errors' '
    test_exit 2 $CODEPLACE bench sink extra 2>err &&
    test_exit 2 $CODEPLACE bench sink --interval 0 2>err &&
    test_exit 2 $CODEPLACE bench sink --listen 127.0.0.1:99999 2>err &&
    grep -q "bad port" err
'

test_expect_success 'a port in use: exit 1 naming the address' '
    start_sink --duration 3 &&
    test_exit 1 $CODEPLACE bench sink --listen 127.0.0.1:$port --duration 1 2>err &&
    grep -q "cannot listen on 127.0.0.1:$port" err &&
    kill -INT $sk && wait $sk
'

if have socat; then
test_expect_success 'socat: the exact bytes of a file, closed at eof' '
    head -c 3000017 /dev/urandom >blob &&
    start_sink --conns 1 --duration 20 &&
    socat -u FILE:blob TCP:127.0.0.1:$port &&
    wait $sk && $CHECK sink.jsonl >out && cat out &&
    cat >want <<-\EOF &&
	1 3000017 eof
	summary 1 1 1 0 0 3000017
	EOF
    test_cmp want out
'

test_expect_success 'idle and half-open time out; a new connection is not blocked' '
    start_sink --conns 3 --idle 1 --duration 20 || exit 1
    (printf abc; sleep 4) | socat -u - TCP:127.0.0.1:$port & c1=$!
    sleep 4 | socat -u - TCP:127.0.0.1:$port & c2=$!
    n=0
    while test $(grep -c "\"open\"" sink.jsonl) -lt 2 && test $n -lt 100; do
        sleep 0.05; n=$((n + 1))
    done
    head -c 1000 /dev/zero | socat -u - TCP:127.0.0.1:$port
    wait $sk; rc=$?
    kill $c1 $c2 2>/dev/null; wait $c1 $c2 2>/dev/null
    test $rc = 0 && $CHECK sink.jsonl >out && cat out &&
    head -1 out >first && echo "3 1000 eof" >want && test_cmp want first &&
    grep -q "^[12] 3 idle$" out && grep -q "^[12] 0 half-open$" out &&
    grep -q "^summary 3 3 3 1 1 1003$" out
'
fi

if have iperf; then
test_expect_success "iperf2's client (iperf -c): every byte counted" '
    start_sink --conns 2 --duration 30 &&
    iperf -c 127.0.0.1 -p $port -n 4M >/dev/null &&
    iperf -c 127.0.0.1 -p $port -n 1M -l 1000 >/dev/null &&
    wait $sk && $CHECK sink.jsonl >out && cat out &&
    grep -q "^1 4194304 eof$" out && grep -q "^2 1048576 eof$" out &&
    grep -q "^summary 2 2 [12] 0 0 5242880$" out
'
fi

cat >"$TEST_TMP/many.py" <<'PY'
# many.py PORT N: opens N connections at once, sends i+1 bytes on the i-th,
# keeps them all open until every one is connected and has sent, then closes.
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"x" * (i + 1))
    socks.append(s)
time.sleep(1.0)
for s in socks:
    s.close()
print(n * (n + 1) // 2)
PY
test_expect_success '1,000 concurrent connections' '
    start_sink --conns 1000 --duration 60 &&
    python3 $TEST_TMP/many.py $port 1000 >total &&
    wait $sk && $CHECK sink.jsonl >out &&
    tail -1 out >s && echo "summary 1000 1000 1000 0 0 $(cat total)" >want &&
    test_cmp want s &&
    test $(grep -c " eof$" out) = 1000
'

test_done
