#!/bin/sh
# Every example of every command's --help runs as written (the pipeline
# commands here; plan, verify and the network and probe commands in
# t0012..t0015), and every command's examples are run by one of these
# files. help-examples-lib.sh says how.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/help-examples-lib.sh"
EX_CMDS="image trace sim apply target samples report diff calc calc_clock calc_miss-cost calc_bus calc_energy"
FX=$CP_FIXTURES
HARNESS="--init codeplace_init --iter codeplace_iteration"
QFLAGS="-nographic -monitor none -serial none -semihosting-config enable=on,target=native"

# fw.elf and fw.map: the small harness fixture (tests/fixtures/tr.c)
fw() {
    cp $FX/tr-m0.elf fw.elf && cp $FX/tr-m0.map fw.map
}

setup_image() {
    ln -s "$CP_ROOT/build" build && fw
}

# Free-running from reset needs a firmware that loops: the demo. The QEMU
# exec log is a FIFO, as docs/trace.md shows for logs too large to keep.
setup_trace() {
    ln -s "$CP_ROOT/build" build &&
    cp build/fw/demo-rp2040.elf fw.elf &&
    test -f "$CP_ROOT/build/codeplace-qemu.so" &&
    mkfifo qemu.log &&
    { qemu-system-arm -M mps2-an500 $QFLAGS -kernel build/fw/demo-mps2-an500.elf \
        -d exec,nochain -singlestep -D qemu.log </dev/null >/dev/null 2>&1 &
      echo $! >qemu.pid; }
}

setup_sim() {
    fw &&
    codeplace trace -q fw.elf --target rp2040 $HARNESS -n 8 -o run.trace &&
    codeplace plan -q fw.elf --map fw.map --trace run.trace --target rp2040 \
        --budget 1K --strategy ram --layout plan.layout &&
    timeout 60 codeplace trace -q --qemu mps2-an385 $FX/irq-an385.elf \
        --mark codeplace_mark -n 20 -o an385.trace
}

setup_apply() {
    cp $FX/tr-m0.elf twin.elf && cp $FX/tr-m0.map twin.map &&
    cp $FX/tr-m0.elf board.elf && cp $FX/tr-m0.map board.map &&
    codeplace trace -q twin.elf --target rp2040 $HARNESS -n 8 -o q.trace
}

setup_target() {
    mkdir boards &&
    sed "s/^name .*/name        myboard/" "$CP_ROOT/targets/rp2040.target" \
        >boards/myboard.target
}

# gmon.out as OpenOCD's `profile` writes it (tests/cli/mkgmon.py), a
# CPDUMP of the on-target profiler among console noise, a trace
samples_inputs() {
    fw &&
    python3 "$CP_ROOT/tests/cli/mkgmon.py" gmon.out 1000 \
        10000148x30 1000019cx10 100000d4x5 &&
    python3 - <<-\PY &&
	import zlib
	body = "CPDUMP 1 cpu=cortex-m0plus rate_hz=1000 duration_ms=45 samples=45 dropped=0 buckets=3\n" \
	       "S 10000148 1e\nS 1000019c a\nS 100000d4 5\n"
	open("console.log", "w").write("*** Booting ***\nuart:~$ codeplace dump\n" + body
	                               + "E 3 %08x\nuart:~$ \n" % zlib.crc32(body.encode()))
	PY
    codeplace trace -q fw.elf --target rp2040 $HARNESS -n 8 -o run.trace
}
setup_samples() { samples_inputs; }
setup_report() {
    samples_inputs && codeplace samples run.trace --every 100 -o samples.txt
}

setup_diff() {
    mkdir build-1.2 build-1.3 firmware &&
    cp $FX/m0.elf build-1.2/fw.elf && cp $FX/m0-nosec.elf build-1.3/fw.elf &&
    cp $FX/tr-m0.elf old.elf && cp $FX/tr-m0.elf new.elf &&
    codeplace trace -q old.elf --target rp2040 $HARNESS -n 8 -o run.trace &&
    codeplace plan -q old.elf --map $FX/tr-m0.map --trace run.trace \
        --target rp2040 --strategy ram --budget 256 --list firmware/placement.txt
}

setup_calc() { :; }
setup_calc_clock() { :; }
setup_calc_miss_cost() { :; }
setup_calc_bus() { :; }
setup_calc_energy() { :; }

run_all

test_expect_success 'every command with examples has them run by a t001[1-5] file' '
    cut -f1 "$EXAMPLES" | sort -u | tr " " _ >have &&
    sed -n "s/^EX_CMDS=\"\(.*\)\"$/\1/p" "$CP_ROOT"/tests/cli/t001[1-5]-help-examples*.sh |
        tr " " "\n" | sort >run &&
    test_cmp have run
'

test_expect_success 'the lists of examples not run here and run until Ctrl-C are examples' '
    cut -f2 "$EXAMPLES" >all &&
    printf "%s\n%s\n" "$NOT_HERE" "$INTERRUPT" | cut -d"|" -f1 >listed &&
    test $(wc -l <listed) -le 4 &&
    while IFS= read -r e; do
        grep -Fxq -- "$e" all || { echo "not an example: $e"; exit 1; }
    done <listed
'

test_expect_success 'an example that fails fails its test' '
    printf "x\tcodeplace image nosuch.elf\n" >"$EXAMPLES.x" &&
    EXAMPLES="$EXAMPLES.x" &&
    setup_x() { :; } &&
    ! run_examples x >out &&
    grep -q "^exit 1: codeplace image nosuch.elf" out
'

test_done
