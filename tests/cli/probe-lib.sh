# Helpers for the probe tests: free loopback ports, QEMU and OpenOCD as
# real peers, each started in the background and stopped by the caller.
FW=$CP_FIXTURES/probe

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT: until something listens there (at most 10 s)
wait_port() {
    python3 - "$1" <<-\PY
	import socket, sys, time
	for _ in range(200):
	    try:
	        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
	        sys.exit(0)
	    except OSError:
	        time.sleep(0.05)
	sys.exit(1)
	PY
}

# start_qemu MACHINE ELF: QEMU halted at reset with its gdbstub on $PORT;
# sets QEMU_PID. -icount makes the guest's time follow its instructions.
start_qemu() {
    PORT=$(free_port)
    qemu-system-arm -M "$1" -icount shift=3,sleep=off -S \
        -gdb tcp:127.0.0.1:$PORT -nographic -monitor none -serial none \
        -kernel "$2" </dev/null >"${TEST_TMP:-.}/qemu.log" 2>&1 &
    QEMU_PID=$!
    # a wait_port connection would be taken as the debugger: wait for the
    # listening socket instead
    for i in $(seq 1 100); do
        ss -ltn 2>/dev/null | grep -q "127.0.0.1:$PORT " && return 0
        sleep 0.05
    done
    return 1
}

stop_qemu() {
    kill "$QEMU_PID" 2>/dev/null
    wait "$QEMU_PID" 2>/dev/null
    return 0
}

# check_split JSON: fw_loop_a has 75 % and fw_loop_b 25 % of the samples in
# the two loops, within 5 points, from at least 300 samples.
check_split() {
    python3 - "$1" <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1]))
	f = {x["name"]: x["samples"] for x in j["functions"]}
	a, b = f.get("fw_loop_a", 0), f.get("fw_loop_b", 0)
	assert a + b >= 300, (a, b, j)
	share = a / (a + b)
	print("fw_loop_a share %.3f of %d" % (share, a + b))
	assert abs(share - 0.75) <= 0.05, share
	PY
}
