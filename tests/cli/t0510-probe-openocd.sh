#!/bin/sh
# The OpenOCD Tcl RPC client against a real OpenOCD (Debian's openocd) with
# its dummy adapter: no board, so target commands fail in OpenOCD itself and
# must come back as clear codeplace errors. A scripted Tcl peer adds what a
# board-less OpenOCD cannot show (notifications between replies, replies
# that are not OpenOCD's).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/probe-lib.sh"

# OpenOCD with a Cortex-M target on a JTAG chain that is not there; `catch
# init` keeps it serving after the failed scan. Stopped at the end.
OCD_PORT=$(free_port)
timeout 120 openocd -f interface/dummy.cfg -c "transport select jtag" \
    -c "gdb_port disabled" -c "telnet_port disabled" -c "tcl_port $OCD_PORT" \
    -c "jtag newtap chip cpu -irlen 4 -expected-id 0" \
    -c "dap create chip.dap -chain-position chip.cpu" \
    -c "target create chip.cpu cortex_m -dap chip.dap" \
    -c "catch init" </dev/null >"$TEST_TMP/openocd.log" 2>&1 &
OCD_PID=$!
# and one without any target
BARE_PORT=$(free_port)
timeout 120 openocd -f interface/dummy.cfg -c "transport select jtag" \
    -c "gdb_port disabled" -c "telnet_port disabled" -c "tcl_port $BARE_PORT" \
    -c "noinit" </dev/null >"$TEST_TMP/openocd-bare.log" 2>&1 &
BARE_PID=$!
wait_port $OCD_PORT && wait_port $BARE_PORT || echo "not ok - OpenOCD did not start"

test_expect_success 'record: a failed read_memory is a clear error, exit 1' '
    test_exit 1 $CODEPLACE record --openocd 127.0.0.1:$OCD_PORT \
        --target rp2350 --duration 0.2 -o s.txt 2>err &&
    grep -q "^codeplace: error: cannot read DWT_PCSR at 0xe000101c: 127.0.0.1:$OCD_PORT: OpenOCD: .read_memory 0xe000101c 32 1. failed: read_memory: failed to read memory$" err
'

test_expect_success 'record --halt: a failed halt names the command and says why it may be' '
    test_exit 1 $CODEPLACE record --openocd 127.0.0.1:$OCD_PORT --halt \
        --duration 0.2 -o s.txt 2>err &&
    grep -q "OpenOCD: .halt. failed (code -4, no message; OpenOCD.s log says why" err &&
    head -1 s.txt | grep -q "^# codeplace samples 1$"
'

test_expect_success 'an unknown core is refused with the OpenOCD message' '
    test_exit 1 $CODEPLACE record --openocd 127.0.0.1:$OCD_PORT \
        --core rp2040.core1 -o s.txt 2>err &&
    grep -q "OpenOCD: .targets {rp2040.core1}. failed: Target: rp2040.core1 is unknown" err
'

test_expect_success 'the configured core is accepted' '
    test_exit 1 $CODEPLACE record --openocd 127.0.0.1:$OCD_PORT --core chip.cpu \
        --target rp2350 -o s.txt 2>err &&
    grep -q "failed to read memory" err
'

test_expect_success 'counters: a failed write is a clear error' '
    test_exit 1 $CODEPLACE counters --openocd 127.0.0.1:$OCD_PORT \
        --target rp2040 --window 0.1 2>err &&
    grep -q "OpenOCD: .write_memory 0x14000004 32 {0x00000001}. failed: write_memory: failed to write memory" err
'

test_expect_success 'counters on rp2350: the set/way flush loop runs in OpenOCD' '
    test_exit 1 $CODEPLACE counters --openocd 127.0.0.1:$OCD_PORT \
        --target rp2350 --window 0.1 2>err &&
    grep -q "OpenOCD: .for {set a 0x1bffc000} {\$a < 0x1c000000} {incr a 8}" err
'

test_expect_success 'OpenOCD without a target: the error says to give one' '
    test_exit 1 $CODEPLACE record --openocd 127.0.0.1:$BARE_PORT \
        --target rp2350 -o s.txt 2>err &&
    grep -q "invalid command name \"read_memory\" (OpenOCD has no target: start it with a target config" err
'

# A scripted Tcl RPC peer: answers our wrapped commands like OpenOCD, but
# sends a target-event notification before each reply; read_memory of
# DWT_PCSR walks through addresses.
cat >"$TEST_TMP/tclpeer.py" <<-\PY
	import re, socket, sys
	mode = sys.argv[2]
	srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	srv.bind(("127.0.0.1", 0)); srv.listen(1)
	open(sys.argv[1], "w").write(str(srv.getsockname()[1]))
	srv.settimeout(20)
	c, _ = srv.accept(); c.settimeout(20)
	c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
	buf = b""; pc = 0x10000100
	while True:
	    d = c.recv(4096)
	    if not d: break
	    buf += d
	    while b"\x1a" in buf:
	        msg, buf = buf.split(b"\x1a", 1)
	        m = re.match(rb'format "cp(\d+) %d %s" \[catch \{(.*)\} cp_r\] \$cp_r$', msg, re.S)
	        if mode == "garbage":
	            c.sendall(b"HTTP/1.0 400 Bad Request\x1a"); continue
	        c.sendall(b"type target_event event halted\x1a")
	        if not m: c.sendall(b"bad\x1a"); continue
	        seq, cmd = m.group(1), m.group(2)
	        if cmd == b"version": res = b"0 Open On-Chip Debugger 0.12.0 (scripted)"
	        elif cmd.startswith(b"read_memory 0xe000101c"):
	            res = b"0 0x%08x" % pc; pc += 2
	            if pc > 0x10000200: pc = 0x10000100
	        else: res = b"1 invalid command name \"" + cmd.split()[0] + b"\""
	        c.sendall(b"cp" + seq + b" " + res + b"\x1a")
	PY

test_expect_success 'PCSR sampling over Tcl RPC skips notifications' '
    python3 "$TEST_TMP/tclpeer.py" port ok & peer=$! &&
    for i in $(seq 1 100); do test -s port && break; sleep 0.05; done &&
    $CODEPLACE record --openocd 127.0.0.1:$(cat port) --target rp2350 \
        --duration 0.3 -o s.txt --json >r.json 2>err; rc=$?
    kill $peer 2>/dev/null; test $rc -eq 0 &&
    grep -q "\"mode\": \"pcsr\"" r.json &&
    grep -q "^# source: probe-pcsr$" s.txt &&
    grep -E -q "^0x100001[0-9a-f]{2} [1-9]" s.txt &&
    test $(grep -c "^0x1000" s.txt) -ge 5
'

test_expect_success 'a peer that is not OpenOCD is named as such' '
    python3 "$TEST_TMP/tclpeer.py" port garbage & peer=$! &&
    for i in $(seq 1 100); do test -s port && break; sleep 0.05; done &&
    $CODEPLACE record --openocd 127.0.0.1:$(cat port) --timeout 500 \
        -o s.txt 2>err; rc=$?
    kill $peer 2>/dev/null; test $rc -eq 1 &&
    grep -q "not an OpenOCD Tcl port? It answered .HTTP/1.0 400 Bad Request. (127.0.0.1:[0-9]*: no reply within 500 ms)" err
'

kill $OCD_PID $BARE_PID 2>/dev/null
wait $OCD_PID $BARE_PID 2>/dev/null
test_done
