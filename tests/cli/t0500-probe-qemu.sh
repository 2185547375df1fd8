#!/bin/sh
# test: serial (rates and sampled shares: it runs alone)
# codeplace record / counters against QEMU's real gdbstub, running the test
# firmware (tests/fixtures/probe/fw.c): its two loops split the time 75/25.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/probe-lib.sh"

test_expect_success 'the firmware has the layout the tests assume' '
    arm-none-eabi-nm $FW/fw-m0.elf >nm &&
    grep -q "^20000000 B fw_magic$" nm &&
    grep -q "^2000000c B fw_xip$" nm &&
    arm-none-eabi-nm $FW/fw-m7.elf | grep -q "^2000000c B fw_xip$"
'

# QEMU's gdbstub is all-stop: record wants DWT_PCSR on the Cortex-M0 too
# and halts because the stub cannot read while the core runs (t0520 has a
# peer that serves PCSR for a v6-M core).
test_expect_success 'Cortex-M0 (microbit): halting samples give the 75/25 split' '
    start_qemu microbit $FW/fw-m0.elf &&
    $CODEPLACE record --gdb 127.0.0.1:$PORT --elf $FW/fw-m0.elf \
        --target rp2040 --samples 800 --duration 20 -o s.txt --json >r.json 2>err;
    rc=$?; stop_qemu; test $rc -eq 0 &&
    grep -q "\"mode\": \"halt\"" r.json &&
    grep -q "\"mode_reason\": \"the GDB stub cannot read memory while the target runs" r.json &&
    check_split r.json
'

# One QEMU serves the tests below: each run attaches, samples and detaches
# (QEMU stops the guest on attach; the detach lets it run).
start_qemu mps2-an500 $FW/fw-m7.elf || echo "not ok - QEMU did not start"

test_expect_success 'Cortex-M7 (mps2-an500): --halt gives the 75/25 split' '
    $CODEPLACE record --gdb 127.0.0.1:$PORT --elf $FW/fw-m7.elf --halt \
        --samples 800 --duration 20 -o s.txt --json >r.json 2>err &&
    grep -q "\"ended_by\": \"count\"" r.json &&
    check_split r.json
'

# Per sample, in QEMU 7.2's ack mode (no QStartNoAckMode): the interrupt,
# the stop reply's '+' with 'p f' (QEMU answers 'p' once the target
# description was read; 'g' would bring all 17 registers, 136 hex digits),
# the PC's '+' with 'c': three writes ("\x03", "+$pf#d6", "+$c#63"); in,
# the stop reply, a '+', the PC (8 hex digits) and a '+'.
test_expect_success '--halt: three writes per sample, the PC read alone' '
    $CODEPLACE record --gdb 127.0.0.1:$PORT --elf $FW/fw-m7.elf --halt \
        --samples 300 --duration 20 -o s.txt --json >r.json 2>err &&
    python3 - <<-\EOF
	import json
	j = json.load(open("r.json"))
	n, l = j["samples"], j["link"]
	print(n, l, j["stop_us"])
	assert n == 300, n
	assert l["sends"] == 3 * n, l
	assert l["bytes_out"] == n * (1 + 7 + 6), l
	assert 30 * n <= l["bytes_in"] <= 34 * n, l
	assert l["waits"] >= 2 * n, l
	s = j["stop_us"]
	assert abs(s["halt"] + s["read_pc"] + s["resume"] - j["stop_per_sample_us"]) < 1, s
	EOF
'

test_expect_success '--halt --rate beyond the link: a warning with the stop and the lateness' '
    $CODEPLACE record --gdb 127.0.0.1:$PORT --elf $FW/fw-m7.elf --halt \
        --rate 100000 --duration 1 -o s.txt >out 2>err &&
    grep -q "warning: --rate 100000: [0-9]* samples/s taken: a stop took [0-9]* us and the sampler woke [0-9]* us late on average, against a period of 10 us" err
'

test_expect_success 'the samples file is valid and adds up' '
    $CODEPLACE record --gdb 127.0.0.1:$PORT --elf $FW/fw-m7.elf --halt \
        --rate 200 --duration 1 -o s.txt --json >r.json 2>err;
    rc=$?; test $rc -eq 0 &&
    head -1 s.txt >first && echo "# codeplace samples 1" >expect &&
    test_cmp expect first &&
    grep -q "^# source: probe-halt$" s.txt &&
    grep -q "^# rate_hz: 200$" s.txt &&
    python3 - <<-\EOF
	import json, re
	j = json.load(open("r.json"))
	lines = open("s.txt").read().splitlines()
	hdr = dict(l[2:].split(": ", 1) for l in lines if l.startswith("# ") and ": " in l)
	data = [l.split() for l in lines if not l.startswith("#")]
	assert all(re.fullmatch("0x[0-9a-f]{8}", a) and c.isdigit() for a, c in data), data[:3]
	total = sum(int(c) for a, c in data)
	assert total == int(hdr["total"]) == j["samples"], (total, hdr, j["samples"])
	# a rate asked for is kept (within 10 %: no timing assert, a bound)
	assert j["samples"] <= 1.1 * 200 * j["seconds"] + 2, j
	assert hdr["elf"].startswith("fnv1a64:") or len(hdr["elf"]) >= 16
	EOF
'

test_expect_success 'a target with DWT_PCSR on an all-stop stub falls back to halting' '
    $CODEPLACE record --gdb 127.0.0.1:$PORT --target imxrt1062 \
        --duration 0.3 -o s.txt >out 2>err;
    rc=$?; test $rc -eq 0 &&
    grep -q "cannot read memory while the target runs; sampling by halting" err &&
    grep -q "halting" out
'

test_expect_success '--pcsr on an all-stop stub: clear error, exit 1' '
    $CODEPLACE record --gdb 127.0.0.1:$PORT --target imxrt1062 --pcsr \
        --duration 0.3 -o s.txt >out 2>err;
    rc=$?; test $rc -eq 1 &&
    grep -q "^codeplace: error: 127.0.0.1:[0-9]*: the GDB stub cannot read memory while the target runs" err
'

test_expect_success 'Ctrl-C ends the recording and keeps the samples' '
    { $CODEPLACE record --gdb 127.0.0.1:$PORT --elf $FW/fw-m7.elf --halt \
        -o s.txt --json >r.json 2>err & } &&
    rec=$! && sleep 1 && kill -INT $rec; wait $rec; rc=$?
    test $rc -eq 0 &&
    grep -q "\"ended_by\": \"interrupted\"" r.json &&
    grep -q "^# total: [1-9]" s.txt
'

test_expect_success 'counters over GDB: flush, zero, window, read (firmware mimic)' '
    $CODEPLACE counters --gdb 127.0.0.1:$PORT --ctr-base 0x2000000c \
        --window 0.3 --events 10 --json >c.json 2>err;
    rc=$?; test $rc -eq 0 &&
    python3 - <<-\EOF
	import json
	j = json.load(open("c.json"))
	for w in ("run", "idle"):
	    r = j[w]
	    # the firmware adds 3 hits and 4 accesses per round
	    assert r["hits"] > 0 and r["hits"] * 4 == r["accesses"] * 3, r
	    assert r["misses"] == r["accesses"] - r["hits"], r
	    assert not r["saturated"]
	d = j["run"]["misses"] - j["idle"]["misses"]
	assert j["misses_over_idle"] == d
	assert abs(j["misses_per_event"] - d / 10) < 1e-9
	EOF
'

# --ping: the load is codeplace's own bench latency against a UDP echo
# service on loopback (bench echo, on a free port).
EPORT=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
$CODEPLACE bench echo --listen 127.0.0.1:$EPORT --duration 120 >/dev/null 2>&1 &
ECHO_PID=$!

test_expect_success 'counters --ping: misses per echo answered, in text and JSON' '
    $CODEPLACE counters --gdb 127.0.0.1:$PORT --ctr-base 0x2000000c \
        --ping 127.0.0.1:$EPORT --count 20 --interval 10 --label stock \
        --json -o stock.json 2>err || { cat err; false; } &&
    python3 - stock.json <<-\EOF &&
	import json, sys
	j = json.load(open(sys.argv[1]))
	assert j["kind"] == "codeplace counters 1" and j["label"] == "stock", j
	p = j["ping"]
	assert p["protocol"] == "udp" and 5 <= p["sent"] <= 20 and 1 <= p["answered"] <= p["sent"], p
	assert j["events"] == p["answered"]
	assert abs(j["misses_per_echo"] - j["misses_over_idle"] / p["answered"]) < 1e-6, j
	assert abs(j["echo_rate_hz"] - p["answered"] / j["run"]["seconds"]) < 1e-6, j
	assert abs(j["idle"]["seconds"] - j["run"]["seconds"]) < 0.5, j
	EOF
    $CODEPLACE counters --gdb 127.0.0.1:$PORT --ctr-base 0x2000000c \
        --ping 127.0.0.1:$EPORT --count 10 --interval 10 >out 2>err &&
    cat out &&
    grep -E -q "^echoes: [0-9]+ of [0-9]+ answered by 127.0.0.1:$EPORT in [0-9.]+ s \([0-9.]+/s\), median round trip [0-9]+ us$" out &&
    grep -E -q "^misses per echo: -?[0-9.]+ \([0-9]+ echoes\)$" out
'

test_expect_success 'bench compare: counters files per label, next to sweeps' '
    $CODEPLACE counters --gdb 127.0.0.1:$PORT --ctr-base 0x2000000c \
        --ping 127.0.0.1:$EPORT --count 10 --interval 10 --label placed \
        --json -o placed.json 2>err &&
    cp "$TEST_TMP/$(($test_count - 1))/stock.json" stock.json &&
    printf "# label: stock\npass,rate,requested,sent,answered,reply_rate\n1,100,100,100,100,100\n1,200,200,200,150,150\n" >stock.csv &&
    $CODEPLACE bench compare stock.csv stock.json placed.json >out &&
    python3 - stock.json placed.json out <<-\EOF &&
	import json, sys
	a, b = (json.load(open(f))["misses_per_echo"] for f in sys.argv[1:3])
	lines = open(sys.argv[3]).read().splitlines()
	row = {l.split()[0]: l.split() for l in lines if l.startswith(("stock ", "placed "))}
	# the counters table: name n misses/echo echoes/s peak
	t = [l.split() for l in lines[lines.index(next(l for l in lines if "misses/echo" in l)) + 1:] if l.split() and l.split()[0] in ("stock", "placed")]
	assert abs(float(t[0][2]) - a) < 0.06 and t[0][4] == "150", t
	assert abs(float(t[1][2]) - b) < 0.06 and t[1][4] == "-", t
	assert any(l.startswith("placed - stock: ") and "misses per echo" in l for l in lines)
	EOF
    $CODEPLACE bench compare stock.json placed.json --json >c.json &&
    python3 -c "import json; c = json.load(open(\"c.json\"))[\"counters\"]; assert [x[\"name\"] for x in c] == [\"stock\", \"placed\"], c"
'

test_expect_success 'counters --ping: nobody answers: error, exit 1; usage errors exit 2' '
    DEAD=$(python3 -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
    test_exit 1 $CODEPLACE counters --gdb 127.0.0.1:$PORT --ctr-base 0x2000000c \
        --ping 127.0.0.1:$DEAD --count 3 --interval 10 2>err &&
    grep -q "answered none of the [1-3] echoes: no misses per echo" err &&
    test_exit 2 $CODEPLACE counters --gdb x:1 --ctr-base 0x2000000c --ping h --events 3 2>err &&
    grep -q "drop --load, --window, --events" err &&
    test_exit 2 $CODEPLACE counters --gdb x:1 --ctr-base 0x2000000c --count 3 2>err &&
    grep -q "go with --ping" err
'

test_expect_success 'counters --no-idle: the run window only' '
    $CODEPLACE counters --gdb 127.0.0.1:$PORT --ctr-base 0x2000000c \
        --window 0.2 --no-idle >out 2>err;
    rc=$?; test $rc -eq 0 &&
    grep -E -q "^run +0\.[0-9]+ +[1-9]" out && ! grep -q "^idle" out
'

stop_qemu
kill $ECHO_PID 2>/dev/null; wait $ECHO_PID 2>/dev/null

test_expect_success 'the stub going away mid-recording: exit 1, samples kept' '
    start_qemu mps2-an500 $FW/fw-m7.elf &&
    { $CODEPLACE record --gdb 127.0.0.1:$PORT --elf $FW/fw-m7.elf --halt \
        -o s.txt >out 2>err & } &&
    rec=$! &&
    # Wait for the first flushed samples (bounded), then pull the plug.
    # QEMU closes the socket, or first sends the W00 (exited) stop reply
    # when the sampler was waiting for one: either ends the recording.
    n=0 &&
    while ! grep -q "^0x" s.txt 2>/dev/null && test $n -lt 300; do
        sleep 0.1; n=$((n + 1))
    done &&
    stop_qemu; wait $rec; rc=$?
    test $rc -eq 1 &&
    grep -E -q "codeplace: error: 127.0.0.1:[0-9]+: (the probe closed the connection|connection lost|the target exited).*kept the [1-9][0-9]* samples" err &&
    head -1 s.txt | grep -q "^# codeplace samples 1$" &&
    grep -q "^0x000000" s.txt
'

test_expect_success 'nobody listening: clear error, exit 1' '
    port=$(free_port) &&
    test_exit 1 $CODEPLACE record --gdb 127.0.0.1:$port -o s.txt 2>err &&
    grep -q "cannot connect to 127.0.0.1:$port: Connection refused" err &&
    test ! -e s.txt
'

test_expect_success 'counters: usage errors exit 2' '
    test_exit 2 $CODEPLACE counters --gdb x:1 2>err &&
    grep -q "give --target" err &&
    test_exit 2 $CODEPLACE counters --target imxrt1062 --gdb x:1 2>err &&
    grep -q "imxrt1062 has no cache counters" err &&
    test_exit 2 $CODEPLACE counters --target rp2040 2>err &&
    test_exit 2 $CODEPLACE record --gdb x:1 --openocd y 2>err &&
    test_exit 2 $CODEPLACE record --gdb x:1 2>err &&
    grep -q "give the samples file with -o" err
'

test_done
