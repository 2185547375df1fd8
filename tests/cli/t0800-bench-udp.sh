#!/bin/sh
# test: serial (rates and sampled shares: it runs alone)
# codeplace bench udp: the sweep against real echo peers (socat on loopback;
# socat in network namespaces with nftables rules that drop and duplicate
# requests by sequence number, so that the counts are exact), a scripted
# peer that reorders and delays (in addition), the output formats. Usage,
# help, a peer that never answers and Ctrl-C are t0801 (in parallel).
. "$(dirname "$0")/lib.sh"
# Free UDP ports on loopback, one per peer (the kernel picks them).
PORT=$(udp_port) PORT1=$(udp_port) PORT2=$(udp_port) PORT5=$(udp_port) PORT6=$(udp_port)

# bench udp CSV checks and per-step figures (tests/cli/csvsum.py).
CSVSUM="python3 $CP_ROOT/tests/cli/csvsum.py"

if have socat; then
test_expect_success 'loopback, socat UDP-LISTEN PIPE: every request answered' '
    socat UDP-LISTEN:$PORT,bind=127.0.0.1,reuseaddr PIPE & sp=$!
    sleep 0.3 &&
    $CODEPLACE bench udp 127.0.0.1:$PORT --rates 50,100 --step 0.5 --passes 2 \
        --timeout 300 --csv -o s.csv --svg s.svg --label loop -q; rc=$?
    kill $sp; wait $sp 2>/dev/null
    test $rc = 0 && $CSVSUM s.csv >sum && cat sum &&
    test $(wc -l <sum) = 4 &&
    awk "{ if (\$5 != \$3 || \$6 != 0 || \$8 != 0) exit 1 }" sum &&
    grep -q "^# label: loop" s.csv &&
    test $(grep -o "class=.line." s.svg | wc -l) = 3
'

test_expect_success 'loopback, socat UDP-RECVFROM fork EXEC:cat' '
    socat UDP-RECVFROM:$PORT1,bind=127.0.0.1,reuseaddr,fork EXEC:cat & sp=$!
    sleep 0.3 &&
    $CODEPLACE bench udp 127.0.0.1:$PORT1 --rates 10 --step 1 --timeout 1000 \
        --csv -o s.csv -q; rc=$?
    kill $sp; wait $sp 2>/dev/null
    test $rc = 0 && $CSVSUM s.csv >sum && cat sum &&
    awk "{ if (\$5 + \$7 != \$3 || \$6 != 0) exit 1 }" sum
'

test_expect_success 'JSON: steps, passes and the summary' '
    socat UDP-LISTEN:$PORT2,bind=127.0.0.1,reuseaddr PIPE & sp=$!
    sleep 0.3 &&
    $CODEPLACE bench udp 127.0.0.1:$PORT2 --rates 40,80 --step 0.5 --passes 2 \
        --json -q >s.json; rc=$?
    kill $sp; wait $sp 2>/dev/null
    test $rc = 0 && python3 - s.json <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["format"] == "codeplace-sweep" and d["version"] == 1
	assert len(d["steps"]) == 4 and len(d["passes"]) == 2
	for s in d["steps"]:
	    assert s["requested"] == s["rate"] / 2, s
	    assert s["answered"] + s["late"] + s["lost"] == s["sent"], s
	s = d["summary"]
	assert s["passes"] == 2
	for k in ("all_answered_rate_mean", "all_answered_rate_sd", "peak_reply_rate_mean", "peak_reply_rate_sd"):
	    assert k in s
	PY
'

test_expect_success 'bench echo answers the sweep' '
    $CODEPLACE bench echo --listen 127.0.0.1:$PORT6 2>eerr & ep=$!
    sleep 0.5 &&
    $CODEPLACE bench udp 127.0.0.1:$PORT6 --rates 200 --step 1 --timeout 300 \
        --csv -o s.csv -q; rc=$?
    kill -INT $ep; wait $ep; erc=$?
    test $rc = 0 && test $erc = 0 && $CSVSUM s.csv >sum && cat sum eerr &&
    awk "{ if (\$5 + \$7 != \$3 || \$6 != 0) exit 1 }" sum &&
    read rate req sent skipped answered lost late dup reord <sum &&
    grep -q "echoed $((sent + 1)) datagrams" eerr
'

else
test_skip 'socat peers' 'socat is not installed'
fi

# ---- network namespaces: exact loss and duplication with nftables ----
NS=cpt$$
ns_cleanup() {
    ip netns del ${NS}a 2>/dev/null
    ip netns del ${NS}b 2>/dev/null
}
ns_setup() {
    ip netns add ${NS}a && ip netns add ${NS}b &&
    ip link add ${NS}va type veth peer name ${NS}vb &&
    ip link set ${NS}va netns ${NS}a && ip link set ${NS}vb netns ${NS}b &&
    ip -n ${NS}a addr add 10.201.0.1/24 dev ${NS}va &&
    ip -n ${NS}b addr add 10.201.0.2/24 dev ${NS}vb &&
    ip -n ${NS}a link set ${NS}va up && ip -n ${NS}b link set ${NS}vb up &&
    ip -n ${NS}a link set lo up && ip -n ${NS}b link set lo up
}
trap 'ns_cleanup; rm -rf "$TEST_TMP"' EXIT
if ! have ip || ! have nft || ! have socat; then
    test_skip 'namespaces: exact loss and duplication' 'needs ip, nft and socat'
elif ! ns_setup 2>"$TEST_TMP/ns.err"; then
    ns_cleanup
    test_skip 'namespaces: exact loss and duplication' \
        "cannot create network namespaces here: $(head -1 "$TEST_TMP/ns.err")"
else
# The payload is magic, run, step, sequence, send time: the sequence is the
# 32 bits at bit 160 of the transport header (8 bytes UDP + 12). Requests
# with seq % 8 == 5 are dropped on the way in; replies with seq % 8 == 2 are
# duplicated on the way out (the copy passes the output chain again, so the
# counter counts both). With 100 requests (seq 0..99) that is 12 lost and
# 13 duplicated; if the host stalls and the sweep skips slots, the counts
# still equal the kernel's counters. The echo is socat with a process per
# datagram: socat ... PIPE relays through a byte stream and can merge two
# replies into one datagram, which the rules would see as one.
test_expect_success 'namespaces: loss and duplicates counted exactly (nftables)' "
    ip netns exec ${NS}b nft -f - <<-\EOF &&
	table ip cpt {
	  chain in { type filter hook input priority 0; udp dport 7 @th,160,32 & 7 == 5 counter drop; }
	  chain out { type filter hook output priority 0; udp sport 7 @th,160,32 & 7 == 2 counter dup to 10.201.0.1; }
	}
	EOF
    ip netns exec ${NS}b socat UDP-RECVFROM:7,reuseaddr,fork EXEC:cat & sp=\$!
    sleep 0.3
    ip netns exec ${NS}a \$CODEPLACE bench udp 10.201.0.2 --rates 100 --step 1 \
        --timeout 1000 --csv -o s.csv -q; rc=\$?
    kill \$sp; wait \$sp 2>/dev/null
    test \$rc = 0 && \$CSVSUM s.csv >sum && cat sum &&
    ip netns exec ${NS}b nft list ruleset >rules &&
    drops=\$(sed -n 's/.*== 0x5 counter packets \\([0-9]*\\).*/\\1/p' rules) &&
    dups=\$(sed -n 's/.*== 0x2 counter packets \\([0-9]*\\).*/\\1/p' rules) &&
    read rate req sent skipped answered lost late dup reord <sum &&
    echo drops=\$drops dups=\$dups &&
    test \$lost = \$drops && test \$((2 * dup)) = \$dups &&
    if test \$skipped = 0; then test \$lost = 12 && test \$dup = 13; fi
"
ns_cleanup
fi

# ---- a scripted peer (in addition to the real ones): reorder and delay ----
cat >"$TEST_TMP/peer.py" <<'PY'
# UDP echo that holds the reply to every seq % 10 == 4 until the next reply
# has gone (reordered), delays seq % 10 == 7 by 150 ms (late with a 100 ms
# timeout), and writes what it did to the file named by argv[2] on SIGTERM.
import select, signal, socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
held, delayed, n = None, [], {"reordered": 0, "delayed": 0, "flushed": 0}
def done(*_):
    open(sys.argv[2], "w").write("%(reordered)d %(delayed)d %(flushed)d\n" % n)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
open(sys.argv[2] + ".ready", "w").close()
while True:
    r, _, _ = select.select([s], [], [], 0.01)
    now = time.time()
    for d in [d for d in delayed if d[0] <= now]:
        s.sendto(d[1], d[2]); delayed.remove(d)
    if held and now - held[2] > 0.05:
        s.sendto(held[0], held[1]); held = None; n["flushed"] += 1
    if not r:
        continue
    data, addr = s.recvfrom(65536)
    seq = struct.unpack(">I", data[12:16])[0]
    if seq % 10 == 4:
        held = (data, addr, now); continue
    if seq % 10 == 7:
        delayed.append((now + 0.15, data, addr)); n["delayed"] += 1; continue
    s.sendto(data, addr)
    if held:
        s.sendto(held[0], addr); held = None; n["reordered"] += 1
PY
test_expect_success 'reordered and late replies counted exactly (scripted peer)' '
    python3 $TEST_TMP/peer.py $PORT5 did & pp=$!
    while ! test -f did.ready; do sleep 0.1; done
    $CODEPLACE bench udp 127.0.0.1:$PORT5 --rates 100 --step 1 --timeout 100 \
        --csv -o s.csv -q; rc=$?
    kill $pp; wait $pp
    test $rc = 0 && $CSVSUM s.csv >sum && cat sum did &&
    read rate req sent skipped answered lost late dup reord <sum &&
    read reordered delayed flushed <did &&
    test $reord = $reordered && test $late = $delayed && test $lost = 0 &&
    test $dup = 0 && test $reordered -gt 0 && test $delayed -gt 0
'

test_done
