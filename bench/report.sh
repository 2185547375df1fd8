#!/bin/sh
# Report speed: converting a trace of the demo firmware into samples
# (instructions per second through the sampler), and `codeplace report` on
# a large samples file (every halfword of the demo's code sampled) in text
# and HTML, and with the trace's cache misses. Needs build/codeplace and the
# demo firmware (make firmware).
cd "$(dirname "$0")/.."
make --no-print-directory build/codeplace firmware >/dev/null || exit 1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CP=./build/codeplace
FW=build/fw/demo-rp2040
now() { date +%s.%N; }
$CP trace -q $FW.elf --map $FW.map --target rp2040 --init codeplace_init \
    --iter codeplace_iteration -n 10 -o "$T/run.trace" >/dev/null || exit 1
insns=$($CP trace --info "$T/run.trace" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])')
t0=$(now)
$CP samples -q "$T/run.trace" $FW.elf --every 100 -o "$T/s.txt" || exit 1
t1=$(now)
python3 - "$insns" "$t0" "$t1" <<-\PY
	import sys
	n, a, b = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
	print("samples from a trace: %d instructions in %.2f s = %.1f M instructions/s"
	      % (n, b - a, n / (b - a) / 1e6))
	PY
# A samples file with every halfword of .text: the worst case for attribution.
$CP image $FW.elf --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = [s for s in d["sections"] if s["name"] == ".text"][0]
print("# codeplace samples 1")
for a in range(t["addr"], t["addr"] + t["size"], 2):
    print("0x%08x %d" % (a, 1 + a % 7))' >"$T/big.txt"
lines=$(grep -c "^0x" "$T/big.txt")
for mode in text html trace; do
    case $mode in
    text) args="" ;;
    html) args="--html $T/r.html" ;;
    trace) args="--trace $T/run.trace" ;;
    esac
    t0=$(now)
    $CP report -q "$T/big.txt" $FW.elf --map $FW.map $args >/dev/null || exit 1
    t1=$(now)
    python3 -c "import sys; print('report (%s): %d addresses in %.2f s' % ('$mode', $lines, $t1 - $t0))"
done
