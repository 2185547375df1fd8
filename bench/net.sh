#!/bin/sh
# Network benchmark figures (docs/BENCHMARKS.md), all on loopback:
#  1. bench udp pacing: achieved request rate against the requested one,
#     up to 100,000/s, against codeplace's own echo (bench echo).
#  2. bench sink throughput, against iperf3's server in the same run:
#     iperf3 -c -> iperf3 -s, iperf -c (iperf2) -> codeplace bench sink,
#     and iperf -c -> iperf -s for reference; 1 and 4 parallel streams.
# Environment: SECS (seconds per measurement, default 5).
cd "$(dirname "$0")/.."
CP=build/codeplace
SECS=${SECS:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
RT=""
[ "$(id -u)" = 0 ] && RT="--realtime"

echo "-- bench udp pacing on loopback ($SECS s per step${RT:+, SCHED_FIFO sender})"
$CP bench echo --listen 127.0.0.1:19007 --duration $((SECS * 6 + 10)) -q &
echo_pid=$!
sleep 0.3
$CP bench udp 127.0.0.1:19007 --rates 1000,10000,50000,100000 --step "$SECS" \
    --timeout 200 $RT --csv -q -o "$T/pace.csv" || exit 1
python3 - "$T/pace.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
print("%10s %12s %8s %8s %10s %10s" % ("requested", "achieved/s", "error%", "skipped", "sent_late", "replies/s"))
for r in rows:
    req, ach = float(r["rate"]), float(r["achieved_rate"])
    print("%10.0f %12.1f %+8.2f %8s %10s %10.1f" % (req, ach, 100 * (ach - req) / req,
          r["skipped"], r["sent_late"], float(r["reply_rate"])))
PY
kill $echo_pid 2>/dev/null; wait $echo_pid 2>/dev/null

tput() { # iperf3 JSON -> receiver Mbit/s
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.0f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))' "$1"
}
for par in 1 4; do
    echo "-- TCP sink on loopback, $par stream(s), $SECS s"
    iperf3 -s -1 -p 19201 >/dev/null 2>&1 &
    i3=$!
    sleep 0.5
    iperf3 -c 127.0.0.1 -p 19201 -t "$SECS" -P $par -J >"$T/i3.json" 2>/dev/null
    wait $i3
    echo "iperf3 -c -> iperf3 -s:              $(tput "$T/i3.json") Mbit/s"

    $CP bench sink --listen 127.0.0.1:19202 --conns $par --duration $((SECS + 20)) --json -q -o "$T/sink.jsonl" &
    sk=$!
    sleep 0.3
    iperf -c 127.0.0.1 -p 19202 -t "$SECS" -P $par >/dev/null 2>&1
    wait $sk
    # Throughput over the connections' own lifetimes (first open to last close).
    python3 - "$T/sink.jsonl" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
cl = [e for e in ev if e["event"] == "close"]
t0 = min(e["t"] - e["secs"] for e in cl); t1 = max(e["t"] for e in cl)
print("iperf -c -> codeplace bench sink:     %.0f Mbit/s" % (sum(e["bytes"] for e in cl) * 8 / (t1 - t0) / 1e6))
PY

    iperf -s -p 19203 >"$T/i2s.txt" 2>&1 &
    i2=$!
    sleep 0.5
    iperf -c 127.0.0.1 -p 19203 -t "$SECS" -P $par -f m >"$T/i2.txt" 2>&1
    kill $i2 2>/dev/null; wait $i2 2>/dev/null
    echo "iperf -c -> iperf -s (reference):    $(grep -E 'Mbits/sec' "$T/i2.txt" | tail -1 | sed 's/.* \([0-9.]*\) Mbits\/sec.*/\1/') Mbit/s"
done
