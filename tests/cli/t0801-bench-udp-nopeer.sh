#!/bin/sh
# codeplace bench udp, the parts no neighbour's load can move: usage
# errors, help, a peer that never answers (every request lost, whatever the
# timing), more passes than 256, Ctrl-C. They run in parallel with the
# other files; the sweeps against real peers, whose counts need replies in
# time, are t0800 (# test: serial).
. "$(dirname "$0")/lib.sh"

# Free UDP ports on loopback (the kernel picks them): one for socat, one
# that nobody listens on.
NOPEER=$(udp_port) PORT4=$(udp_port)

# bench udp CSV checks and per-step figures (tests/cli/csvsum.py).
CSVSUM="python3 $CP_ROOT/tests/cli/csvsum.py"

test_expect_success 'usage errors exit 2 and say what is wrong' '
    test_exit 2 $CODEPLACE bench udp 2>err &&
    grep -q "give one HOST" err &&
    test_exit 2 $CODEPLACE bench udp 127.0.0.1 --rates 10:5:1 2>err &&
    grep -q "START <= STOP" err &&
    test_exit 2 $CODEPLACE bench udp 127.0.0.1 --rates 200000 2>err &&
    grep -q "outside" err &&
    test_exit 2 $CODEPLACE bench udp 127.0.0.1 --size 8 2>err &&
    grep -q "give 24..65507" err &&
    test_exit 2 $CODEPLACE bench nosuch 2>err &&
    grep -q "not a bench subcommand" err &&
    test_exit 1 $CODEPLACE bench udp no.such.host.invalid 2>err &&
    grep -q "codeplace: error: bench udp: cannot resolve" err
'

test_expect_success 'help bench lists every subcommand; subcommand help' '
    $CODEPLACE help bench >out &&
    for s in udp latency sink usbmon compare echo; do
        grep -q "^  $s " out || exit 1
    done &&
    $CODEPLACE bench help sink | grep -q "usage: codeplace bench sink" &&
    $CODEPLACE bench help udp >a && $CODEPLACE bench udp --help >b && test_cmp a b
'

test_expect_success 'more passes than 256: JSON and SVG keep every pass' '
    $CODEPLACE bench udp 127.0.0.1:$NOPEER --rates 20 --step 0.05 --timeout 1 \
        --passes 300 --json -o s.json --svg s.svg -q &&
    python3 - s.json s.svg <<-\PY
	import json, sys, xml.dom.minidom
	d = json.load(open(sys.argv[1]))
	assert len(d["passes"]) == 300, len(d["passes"])
	assert d["summary"]["passes"] == 300, d["summary"]
	svg = open(sys.argv[2]).read()
	xml.dom.minidom.parseString(svg)
	assert "pass 300" in svg and "pass 17<" in svg, "passes missing from the SVG"
	PY
'

test_expect_success 'no peer: every request lost, exit 0' '
    $CODEPLACE bench udp 127.0.0.1:$NOPEER --rates 50 --step 0.2 --timeout 50 \
        --csv -o s.csv -q && $CSVSUM s.csv >sum &&
    awk "{ if (\$5 != 0 || \$6 != \$3) exit 1 }" sum
'

if have socat; then
test_expect_success 'Ctrl-C keeps and writes the finished steps' '
    socat UDP-LISTEN:$PORT4,bind=127.0.0.1,reuseaddr PIPE & sp=$!
    sleep 0.3
    $CODEPLACE bench udp 127.0.0.1:$PORT4 --rates 10:1000:10 --step 0.5 \
        --csv -o s.csv --svg s.svg -q 2>err & cp=$!
    sleep 2.2; kill -INT $cp; wait $cp; rc=$?
    kill $sp; wait $sp 2>/dev/null
    test $rc = 1 && grep -q "interrupted" err &&
    $CSVSUM s.csv >sum && n=$(wc -l <sum) &&
    test $n -ge 1 && test $n -lt 100 &&
    grep -q "</svg>" s.svg
'
else
test_skip 'Ctrl-C with a socat peer' 'socat is not installed'
fi

test_done
