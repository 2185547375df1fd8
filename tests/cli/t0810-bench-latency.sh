#!/bin/sh
# test: serial (rates and sampled shares: it runs alone)
# codeplace bench latency: UDP round trips to socat, ICMP echo to loopback
# (ping socket or raw socket), the histogram and the output formats.
. "$(dirname "$0")/lib.sh"
PORT=$((25000 + $$ % 4000))

test_expect_success 'usage errors' '
    test_exit 2 $CODEPLACE bench latency 2>err && grep -q "give one HOST" err &&
    test_exit 2 $CODEPLACE bench latency 127.0.0.1 --count 0 2>err &&
    test_exit 2 $CODEPLACE bench latency 127.0.0.1 --interval 0.001 2>err &&
    test_exit 2 $CODEPLACE bench latency 127.0.0.1 --bins 0 2>err
'

if have socat; then
test_expect_success 'UDP to socat: every probe answered, histogram adds up' '
    socat UDP-LISTEN:$PORT,bind=127.0.0.1,reuseaddr PIPE & sp=$!
    sleep 0.3
    $CODEPLACE bench latency 127.0.0.1:$PORT --count 50 --interval 5 --bins 8 \
        --json -q >l.json; rc=$?
    kill $sp; wait $sp 2>/dev/null
    test $rc = 0 && python3 - l.json <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["protocol"] == "udp" and d["probes"] == 50
	assert d["sent"] + 0 <= 50 and d["answered"] + d["late"] + d["lost"] == d["sent"], d
	assert d["lost"] == 0
	h = d["histogram"]
	assert len(h) == 8 and sum(b["count"] for b in h) == d["answered"], h
	assert d["min_us"] <= d["median_us"] <= d["p90_us"] <= d["p99_us"] <= d["max_us"]
	PY
'
fi

test_expect_success 'ICMP echo to 127.0.0.1 (ping socket, or raw socket as root)' '
    if $CODEPLACE bench latency 127.0.0.1 --icmp --count 20 --interval 5 >out 2>err; then
        cat out &&
        grep -q "^latency to 127.0.0.1 (icmp, \(ping\|raw\) socket): 20 probes" out &&
        grep -q "^sent 20, answered 20, lost 0" out &&
        test $(grep -c " us |" out) = 10
    else
        cat err && grep -q "no ICMP socket" err
    fi
'

test_expect_success 'CSV: one row per answered probe' '
    if $CODEPLACE bench latency 127.0.0.1 --icmp --count 10 --interval 2 --csv >l.csv 2>err; then
        head -1 l.csv >h && echo "probe,rtt_us" >want && test_cmp want h &&
        test $(wc -l <l.csv) = 11
    else
        grep -q "no ICMP socket" err
    fi
'

test_done
