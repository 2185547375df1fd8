#!/bin/sh
# The halting sampler against QEMU's gdbstub, next to a Python client doing
# the same round trips (bench/gdbhalt.py) on the same QEMU in the same run:
# samples per second at a rate asked for (RATE, default 2500) and as fast
# as the link allows, where a stop's time goes (interrupt to stop reply, PC
# read, resume), how late the sampler woke, waits for the stub per sample,
# and fw_loop_a's share (75 % expected, with a 95 % interval). Clients take
# turns, ROUNDS times (default 5), SECS seconds each (default 3), so that a
# change of the machine's load hits them alike; the last lines give each
# client's median over the rounds and its samples pooled for the split.
#   sh bench/gdbstub.sh            RATE=2500 ROUNDS=5 SECS=3
# Needs build/codeplace and the probe fixtures (make probe-fixtures).
cd "$(dirname "$0")/.."
make --no-print-directory build/codeplace probe-fixtures >/dev/null || exit 1
RATE=${RATE:-2500} ROUNDS=${ROUNDS:-5} SECS=${SECS:-3}
TEST_TMP=$(mktemp -d)
trap 'rm -rf "$TEST_TMP"' EXIT
CP_FIXTURES=build/fixtures
. tests/cli/probe-lib.sh
ELF=$FW/fw-m7.elf
start_qemu mps2-an500 "$ELF" || { echo "gdbstub: QEMU did not start"; exit 1; }
echo "# $(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg), QEMU $(qemu-system-arm --version | sed -n 's/.*version \([^ ]*\).*/\1/p')"
printf '%-22s %6s %9s %8s %7s %7s %7s %7s %6s %s\n' client rate samples/s stop_us halt read resume late waits "fw_loop_a share"
rc=0
for r in $(seq 1 "$ROUNDS"); do
    for rate in "$RATE" 0; do
        ./build/codeplace record -q --gdb 127.0.0.1:$PORT --elf "$ELF" --halt \
            $( [ "$rate" != 0 ] && echo --rate $rate ) --duration "$SECS" \
            -o "$TEST_TMP/s.txt" --json >"$TEST_TMP/c.json" || rc=1
        python3 bench/gdbhalt.py $PORT "$SECS" $rate "$ELF" >"$TEST_TMP/p.json" || rc=1
        python3 bench/gdbhalt.py $PORT "$SECS" $rate "$ELF" --unbatched >"$TEST_TMP/u.json" || rc=1
        python3 - "$rate" "$TEST_TMP/c.json" "$TEST_TMP/p.json" "$TEST_TMP/u.json" >>"$TEST_TMP/rows" <<-\PY
	import json, math, sys
	rate = sys.argv[1]
	for path in sys.argv[2:]:
	    j = json.load(open(path))
	    if "functions" in j:  # codeplace record --json
	        f = {x["name"]: x["samples"] for x in j["functions"]}
	        a, b = f.get("fw_loop_a", 0), f.get("fw_loop_b", 0)
	        name, waits = "codeplace", j["link"]["waits"] / max(j["samples"], 1)
	        late = j.get("late_us", 0)
	    else:
	        a, b = j["fw_loop_a"], j["fw_loop_b"]
	        name, waits, late = j["client"], j["waits_per_sample"], j["late_us"]
	    n = a + b
	    p = a / n if n else 0
	    ci = 1.96 * math.sqrt(p * (1 - p) / n) if n else 0
	    s = j["stop_us"]
	    print("%-22s %6s %9.0f %8.0f %7.0f %7.0f %7.0f %7.0f %6.2f %.3f +- %.3f (%d:%d, %.2f:1)"
	          % (name, rate, j["rate_hz"], j["stop_per_sample_us"], s["halt"],
	             s["read_pc"], s["resume"], late, waits, p, ci, a, b, a / max(b, 1)))
	PY
        tail -3 "$TEST_TMP/rows"
    done
done
stop_qemu
echo "# medians over $ROUNDS rounds; split pooled"
python3 - "$TEST_TMP/rows" <<-\PY
	import math, re, statistics, sys
	rows = {}
	for l in open(sys.argv[1]):
	    name, rest = l[:22].strip(), l[22:].split()
	    a, b = map(int, re.search(r"\((\d+):(\d+),", l).groups())
	    rows.setdefault((name, rest[0]), []).append(
	        [float(x) for x in rest[1:8]] + [a, b])
	for (name, rate), v in rows.items():
	    med = [statistics.median(r[i] for r in v) for i in range(7)]
	    a, b = sum(r[7] for r in v), sum(r[8] for r in v)
	    p = a / (a + b)
	    ci = 1.96 * math.sqrt(p * (1 - p) / (a + b))
	    print("%-22s %6s %9.0f %8.0f %7.0f %7.0f %7.0f %7.0f %6.2f %.3f +- %.3f (%d:%d, %.2f:1)"
	          % tuple([name, rate] + med + [p, ci, a, b, a / b]))
	PY
exit $rc
