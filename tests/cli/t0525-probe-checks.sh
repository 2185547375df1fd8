#!/bin/sh
# record and counters refuse figures they cannot stand behind: --samples 0,
# an ELF that is not what the board runs or not for the target, a samples
# file the disk has no room for, cache counters that counted nothing. The
# peer is the scripted probe of t0520 (tests/cli/probe-peer.py): OpenOCD's
# Tcl RPC for a v6-M core whose PC is 3/4 of the time in a loop at
# 0x10000100 and 1/4 in one at 0x10000200; every other word reads 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/probe-lib.sh"
PEER="$CP_ROOT/tests/cli/probe-peer.py"

peer() {
    rm -f port
    python3 "$PEER" port peer.log "$1" "$2" & PEER_PID=$!
    for i in $(seq 1 200); do test -s port && break; sleep 0.05; done
    PEER_PORT=$(cat port)
}

# The image the peer "runs": RP2040 flash, the two loops where its PCs are.
cat >"$TEST_TMP/loops.s" <<-\EOF
	.syntax unified
	.thumb
	.text
	.global _start
	.thumb_func
_start:	b _start
	.org 0x100
	.global loop_a
	.type loop_a, %function
	.thumb_func
loop_a:	nop
	nop
	b loop_a
	.size loop_a, . - loop_a
	.org 0x200
	.global loop_b
	.type loop_b, %function
	.thumb_func
loop_b:	nop
	nop
	b loop_b
	.size loop_b, . - loop_b
	EOF
arm-none-eabi-gcc -mcpu=cortex-m0plus -nostdlib -Wl,-Ttext=0x10000000 \
    -o "$TEST_TMP/loops.elf" "$TEST_TMP/loops.s" || echo "not ok - cannot build loops.elf"
LOOPS=$TEST_TMP/loops.elf

test_expect_success 'record --samples 0 is refused (it is not "without limit")' '
    test_exit 2 $CODEPLACE record --openocd 127.0.0.1:1 --samples 0 \
        -o s.txt 2>err &&
    grep -q "^codeplace: error: --samples: give N > 0 (without --samples, record stops at --duration or Ctrl-C)" err &&
    test ! -e s.txt
'

test_expect_success 'record --elf of the image the board runs: shares, no warning' '
    peer tcl pcsr &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
        --elf $LOOPS --samples 400 -o s.txt >out 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 0 &&
    ! grep -q "warning" out err &&
    grep -E -q "^loop_a +[0-9,]+ +7[0-9]\.[0-9]%$" out &&
    grep -E -q "^loop_b +[0-9,]+ +2[0-9]\.[0-9]%$" out
'

test_expect_success 'record --elf of another image: warning in the summary, exit 1' '
    peer tcl pcsr &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
        --elf $FW/fw-m0.elf --samples 400 -o s.txt --json >r.json 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 1 &&
    grep -q "warning: 100.0% of the samples are in no function of $FW/fw-m0.elf: is it the image the board runs?" err &&
    grep -q "\"unknown_share\": 1" r.json &&
    grep -q "^# total: 400$" s.txt &&
    peer tcl pcsr &&
    $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
        --elf $FW/fw-m0.elf --samples 100 -o s.txt >out 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 1 &&
    grep -q "^warning:   100.0% of the samples are in no function of $FW/fw-m0.elf: the shares below are not the firmware.s$" out
'

test_expect_success 'record --target imxrt1062 with an RP2040 ELF is refused' '
    test_exit 1 $CODEPLACE record --openocd 127.0.0.1:1 --target imxrt1062 \
        --elf $LOOPS -o s.txt 2>err &&
    grep -q "^codeplace: error: .$LOOPS. is not an image for imxrt1062: its segment at 0x10000000 (0x[0-9a-f]* bytes) lies outside imxrt1062.s memories (itcm 0x00000000, dtcm 0x20000000, ocram 0x20200000, flash 0x60000000): give the target it was built for$" err &&
    test ! -e s.txt
'

test_expect_success 'record --target rp2040 with a Cortex-M7 ELF is refused' '
    test_exit 1 $CODEPLACE record --openocd 127.0.0.1:1 --target rp2040 \
        --elf $FW/fw-m7.elf -o s.txt 2>err &&
    grep -q "is not an image for rp2040: it is built for Armv7E-M, which the cortex-m0plus (a baseline core) cannot run" err
'

test_expect_success 'record -o on a full disk: an error, exit 1' '
    peer tcl pcsr &&
    test_exit 1 $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT \
        --target rp2040 --samples 20 -o /dev/full 2>err;
    rc=$?; wait $PEER_PID; test $rc -eq 0 &&
    grep -q "cannot write ./dev/full.: No space left on device" err &&
    if unshare -rm true 2>/dev/null; then
        mkdir mnt && peer tcl pcsr &&
        unshare -rm sh -c "mount -t tmpfs -o size=8k tmpfs mnt &&
            head -c 4096 /dev/zero >mnt/filler &&
            $CODEPLACE record --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
                --samples 2000 -o mnt/s.txt >out 2>err; echo \$? >rc;
            cp mnt/s.txt streamed.txt"
        wait $PEER_PID; test "$(cat rc)" = 1 &&
        grep -q "^codeplace: error: cannot write .mnt/s.txt.: No space left on device (the samples streamed to it stay, without the .# total. line)$" err &&
        ! grep -q "^# total:" streamed.txt && ! grep -q "^written:" out
    else
        echo "no user namespaces: the tmpfs case is skipped" >&2
    fi
'

test_expect_success 'counters reading 0 accesses says so, exit 1 (no "0 misses")' '
    peer tcl nocount &&
    $CODEPLACE counters --openocd 127.0.0.1:$PEER_PORT --target rp2040 \
        --window 0.1 --json >c.json 2>err; rc=$?
    wait $PEER_PID; test $rc -eq 1 &&
    grep -q "^codeplace: error: the run window counted 0 cache accesses in 0.[0-9]* s: the counters at 0x14000000 did not count" err &&
    test ! -s c.json
'

test_done
