#!/bin/sh
# DWT_PCSR on ARMv6-M: record samples PCSR without halting by default on a
# Cortex-M0+ (RP2040) and falls back to halting only when the register
# reads 0 or never changes. The peer (probe-peer.py) is a scripted probe
# that speaks OpenOCD's Tcl RPC or the GDB remote protocol (non-stop) for a
# simulated v6-M core spending 3/4 of its time in one loop.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/probe-lib.sh"
PEER="$CP_ROOT/tests/cli/probe-peer.py"

# peer PROTO MODE: starts the peer, sets PEER_PID and PEER_PORT
peer() {
    rm -f port
    python3 "$PEER" port peer.log "$1" "$2" & PEER_PID=$!
    for i in $(seq 1 200); do test -s port && break; sleep 0.05; done
    PEER_PORT=$(cat port)
}

# split FILE: loop_a has 3/4 of the samples (the peer is deterministic)
split() {
    python3 - "$1" <<-\PY
	import sys
	d = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
	a = sum(int(c) for x, c in d if 0x10000100 <= int(x, 16) < 0x10000200)
	b = sum(int(c) for x, c in d if 0x10000200 <= int(x, 16) < 0x10000300)
	assert a + b >= 100 and abs(a / (a + b) - 0.75) < 0.02, (a, b)
	PY
}

test_expect_success 'OpenOCD, rp2040: DWT_PCSR is the default, no halt' '
    peer tcl pcsr &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
        --samples 400 --duration 10 -o s.txt --json >r.json 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 0 &&
    grep -q "\"mode\": \"pcsr\"" r.json &&
    grep -q "\"mode_reason\": \"DWT_PCSR changes while the core runs\"" r.json &&
    grep -q "^# source: probe-pcsr$" s.txt &&
    grep -q "enabled the DWT (DEMCR.TRCENA was 0)" err &&
    ! grep -q "^halt$" peer.log &&
    grep -q "^read_memory 0xe000101c 32 1$" peer.log &&
    split s.txt
'

test_expect_success 'OpenOCD, rp2040: text output says which mode ran and why' '
    peer tcl pcsr &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
        --samples 50 -o s.txt >out 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 0 &&
    grep -q "^mode:      DWT_PCSR: DWT_PCSR changes while the core runs$" out
'

test_expect_success 'OpenOCD: PCSR reads 0: falls back to halting and says why' '
    peer tcl zero &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
        --samples 200 --duration 10 -o s.txt --json >r.json 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 0 &&
    grep -q "\"mode\": \"halt\"" r.json &&
    grep -q "\"mode_reason\": \"DWT_PCSR at 0xe000101c reads as 0 (16 reads): this core does not implement it\"" r.json &&
    grep -q "note: DWT_PCSR at 0xe000101c reads as 0 (16 reads): this core does not implement it; sampling by halting" err &&
    grep -q "^# source: probe-halt$" s.txt &&
    test $(grep -c "^halt$" peer.log) -eq 200 &&
    test $(grep -c "^read_memory 0xe000101c" peer.log) -eq 16 &&
    split s.txt
'

test_expect_success 'OpenOCD: PCSR never changes: falls back to halting' '
    peer tcl constant &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
        --samples 20 -o s.txt >out 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 0 &&
    grep -q "^mode:      halting: DWT_PCSR at 0xe000101c reads the same value 0x10000100 16 times" out
'

test_expect_success '--pcsr when PCSR reads 0: error, exit 1, no halting' '
    peer tcl zero &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 --pcsr \
        --samples 20 -o s.txt >out 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 1 &&
    grep -q "^codeplace: error: DWT_PCSR at 0xe000101c reads as 0 (16 reads): this core does not implement it; sample with --halt$" err &&
    ! grep -q "^halt$" peer.log
'

test_expect_success '--halt on rp2040: halts, says it was asked for' '
    peer tcl pcsr &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 --halt \
        --samples 40 -o s.txt --json >r.json 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 0 &&
    grep -q "\"mode_reason\": \"--halt\"" r.json &&
    test $(grep -c "^halt$" peer.log) -eq 40
'

test_expect_success 'GDB non-stop stub, rp2040: DWT_PCSR without halting' '
    peer gdb pcsr &&
    $CODEPLACE record --gdb 127.0.0.1:$PEER_PORT --target rp2040 \
        --samples 400 --duration 10 -o s.txt --json >r.json 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 0 &&
    grep -q "\"mode\": \"pcsr\"" r.json &&
    grep -q "^QNonStop:1$" peer.log &&
    ! grep -q "^vCont;t$" peer.log &&
    grep -q "^me000101c,4$" peer.log &&
    split s.txt
'

test_expect_success 'GDB non-stop stub: PCSR reads 0: halts with vCont;t' '
    peer gdb zero &&
    $CODEPLACE record --gdb 127.0.0.1:$PEER_PORT --target rp2040 \
        --samples 100 --duration 10 -o s.txt --json >r.json 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 0 &&
    grep -q "\"mode\": \"halt\"" r.json &&
    grep -q "reads as 0 (16 reads)" r.json &&
    test $(grep -c "^vCont;t$" peer.log) -ge 100 &&
    split s.txt
'

test_done
