#!/bin/sh
# codeplace trace: the virtual board against independent counts (unicorn's
# per-instruction hook, binutils' disassembly, QEMU's execution log), the
# checksums the same code computes on the host and in QEMU, the guard
# rails, and the trace file read back.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
FW=$CP_ROOT/build/fw
CHECK="python3 $CP_ROOT/tests/cli/check-trace.py"
HARNESS="--init codeplace_init --iter codeplace_iteration"
# unicorn 2.0 frees part of its translation cache only at exit.
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
# The host build of the fixture prints "N 0xCHECKSUM" after 10, 20, 300.
want() { "$FX/tr-host" | awk -v n="$1" '$1 == n { print $2 }'; }

test_expect_success 'M0+ harness: 300 iterations, checksum as on the host, file reread' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 300 \
        --result codeplace_result -o run.trace >out &&
    grep -q "^result:       codeplace_result = $(want 300) " out &&
    grep -q "^iterations:   300 " out &&
    grep -q "^ended:        done$" out &&
    $CODEPLACE trace --info run.trace >info &&
    grep -q "^iterations:   300 complete (300 marks" info &&
    grep -q "^target:       rp2040 (cortex-m0plus)$" info &&
    grep -q "^source:       unicorn$" info &&
    grep -q "^ended:        done$" info &&
    grep -q "^elf:          $($CODEPLACE image $FX/tr-m0.elf | sed -n "s/^hash: *//p")$" info
'

test_expect_success 'M0+ harness: per-iteration counts equal a per-instruction hook count' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 300 -o run.trace >/dev/null &&
    $CODEPLACE trace --info run.trace --per-iteration >blocks &&
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 300 \
        --count-each --per-iteration >each &&
    test $(wc -l <each) = 300 &&
    test_cmp each blocks
'

test_expect_success 'M0+: runs and flash reads agree with objdump' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 20 -o run.trace >/dev/null &&
    $CODEPLACE trace --info run.trace --records >rec &&
    grep -q "^read 0x1" rec &&
    $CHECK $FX/tr-m0.elf rec
'

test_expect_success 'M7: checksum, RAM code uncached, runs and reads agree with objdump' '
    $CODEPLACE trace -q $FX/tr-m7.elf --target imxrt1062 $HARNESS -n 20 \
        --result codeplace_result -o run.trace >out &&
    grep -q "^result:       codeplace_result = $(want 20) " out &&
    $CODEPLACE trace --info run.trace --records >rec &&
    $CHECK $FX/tr-m7.elf rec &&
    ram=$(arm-none-eabi-nm $FX/tr-m7.elf | sed -n "s/^\(2[0-9a-f]*\) T mix_in_ram$/\1/p") &&
    test -n "$ram" &&
    grep -q "^fetch 0x$ram [0-9]* [0-9]* u$" rec &&
    ! grep "^fetch 0x6" rec | grep -q " u$" &&
    $CODEPLACE trace --info run.trace --json >i.json &&
    python3 -c "import json; d = json.load(open(\"i.json\")); assert d[\"uncached_instructions\"] > 0 and d[\"iterations\"] == 20 and d[\"cpu\"] == \"cortex-m7\", d"
'

test_expect_success 'Cortex-M33 (rp2350) runs the ARMv6-M build to the same checksum' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2350 $HARNESS -n 20 \
        --result codeplace_result -o run.trace >out 2>err &&
    ! grep -q "outside every memory" err &&
    grep -q "^result:       codeplace_result = $(want 20) " out &&
    $CODEPLACE trace --info run.trace | grep -q "^target:       rp2350 (cortex-m33)$"
'

test_expect_success 'free-run from reset: marks, checksum, counts equal a per-instruction hook' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 --mark codeplace_mark -n 20 \
        --result codeplace_result -o run.trace >out &&
    grep -q "^result:       codeplace_result = $(want 20) " out &&
    grep -q "^peripherals:  0 reads, 20 writes$" out &&
    $CODEPLACE trace --info run.trace --per-iteration >blocks &&
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 --mark codeplace_mark -n 20 \
        --count-each --per-iteration >each &&
    test $(wc -l <each) = 20 &&
    test_cmp each blocks
'

test_expect_success 'free-run past the end of the firmware says where it stopped' '
    test_exit 1 $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 --mark codeplace_mark \
        -n 60 -o run.trace >out 2>err &&
    grep -q "stopped at PC .* (a branch to itself) after 49 of 60 iterations; the trace so far is kept" err &&
    $CODEPLACE trace --info run.trace >info &&
    grep -q "^ended:        stopped$" info
'

test_expect_success 'ARMv6-M refuses a Thumb-2 instruction; the M7 runs it' '
    test_exit 1 $CODEPLACE trace -q $FX/thumb2-m0.elf --target rp2040 -o run.trace >out 2>err &&
    grep -q "invalid instruction for cortex-m0plus at PC 0x10000014 (uses_thumb2+0x2): f04f 0178" err &&
    $CODEPLACE trace --info run.trace | grep -q "^ended:        fault$" &&
    test_exit 1 $CODEPLACE trace -q $FX/thumb2-m0.elf --target imxrt1062 \
        --max-insns 1000 -o run7.trace >out 2>err &&
    grep -q "ran past --max-insns 1000" err &&
    ! grep -q "invalid instruction" err &&
    $CODEPLACE trace --info run7.trace | grep -q "^ended:        instruction limit$"
'

test_expect_success 'unmapped memory: the error names the address, the PC and the function' '
    test_exit 1 $CODEPLACE trace -q $FX/thumb2-m0.elf --target rp2040 --entry bad_load \
        -o run.trace 2>err &&
    grep -q "read of unmapped memory at 0x30000010 (4 bytes) by the instruction at PC 0x1000001c (bad_load+0x2)" err
'

test_expect_success '--periph makes memory read as zero and counts' '
    test_exit 1 $CODEPLACE trace -q $FX/thumb2-m0.elf --target rp2040 --entry bad_load \
        --periph 0x30000000:0x1000 --max-insns 300 -o run.trace >out 2>err &&
    grep -q "ran past --max-insns 300" err &&
    grep -q "^peripherals:  100 reads, 0 writes$" out &&
    test_must_fail $CODEPLACE trace $FX/thumb2-m0.elf --target rp2040 --periph 0x30000000 -o x.trace 2>err &&
    grep -q "BASE:SIZE" err
'

test_expect_success 'Ctrl-C ends the run with a valid trace' '
    $CODEPLACE trace -q $FX/thumb2-m0.elf --target imxrt1062 --max-insns 0 \
        -o run.trace >out 2>err &
    pid=$! &&
    sleep 2 && kill -INT $pid && wait $pid &&
    grep -q "interrupted by SIGINT after 0 iterations; the trace so far is kept and valid" err &&
    $CODEPLACE trace --info run.trace >info &&
    grep -q "^ended:        interrupted$" info
'

test_expect_success '--timeout ends the run with a valid trace' '
    $CODEPLACE trace -q $FX/thumb2-m0.elf --target imxrt1062 --max-insns 0 --timeout 0.5 \
        -o run.trace >out 2>err &&
    grep -q "stopped by --timeout" err &&
    $CODEPLACE trace --info run.trace | grep -q "^ended:        time limit$"
'

test_expect_success '--info: a cut file is an error naming the byte; --partial reads it' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 300 -o run.trace >/dev/null &&
    head -c 100000 run.trace >cut.trace &&
    test_exit 1 $CODEPLACE trace --info cut.trace 2>err &&
    grep -q "^codeplace: error: .cut.trace.: byte [0-9]*: truncated trace" err &&
    $CODEPLACE trace --info cut.trace --partial >info &&
    grep -q "^ended:        truncated" info &&
    printf "not a trace" >bad.trace &&
    test_exit 1 $CODEPLACE trace --info bad.trace 2>err &&
    grep -q "bad.trace.: byte 0: not a codeplace trace" err
'

test_expect_success 'an image outside the target'"'"'s memories runs from RAM, with a warning' '
    $CODEPLACE trace -q $FX/tr-m7.elf --target rp2350 $HARNESS -n 2 -o run.trace >out 2>err &&
    grep -q "warning: .*tr-m7.elf.: 0x6[0-9a-f]*+0x[0-9a-f]* lies outside every memory of rp2350: mapped as RAM" err &&
    $CODEPLACE trace --info run.trace --records | grep "^fetch 0x6" | grep -q " u$"
'

test_expect_success '--uart to a file that cannot be written: an error and exit 1, the trace kept' '
    test_exit 1 $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 2 \
        --uart $PWD/no/such/dir/uart.txt -o run.trace >out 2>err &&
    grep -q "^codeplace: error: --uart: cannot write .*/no/such/dir/uart.txt" err &&
    grep -q "^ended:        done$" out &&
    $CODEPLACE trace --info run.trace >info &&
    grep -q "^iterations:   2 complete" info
'

test_expect_success 'usage errors' '
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf -o x.trace 2>err &&
    grep -q "give the target" err &&
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target nope -o x.trace 2>err &&
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 2>err &&
    grep -q "with -o" err &&
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 --iter codeplace_iteration \
        --mark codeplace_mark -o x.trace &&
    test_exit 1 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 --iter no_such_fn -o x.trace 2>err &&
    grep -q "no symbol .no_such_fn." err
'

if have qemu-system-arm; then
    test_expect_success 'QEMU import: counts per iteration equal the virtual board (M7)' '
        timeout 60 qemu-system-arm -M mps2-an500 -nographic -monitor none -serial none \
            -semihosting-config enable=on,target=native -kernel $FX/tr-mps2.elf \
            -d exec,nochain -singlestep -D q.log &&
        $CODEPLACE trace --from-qemu q.log --elf $FX/tr-mps2.elf --target mps2-an500 \
            --mark codeplace_mark -n 20 -o q.trace --per-iteration >qemu &&
        $CODEPLACE trace -q $FX/tr-mps2.elf --target imxrt1062 --mark codeplace_mark \
            -n 20 --count-each --per-iteration >board &&
        test $(wc -l <qemu) = 20 &&
        test_cmp board qemu &&
        $CODEPLACE trace --info q.trace >info &&
        grep -q "^source:       qemu$" info &&
        grep -q "^iterations:   20 complete" info
    '
    # QEMU ran the image on mps2-an500 (code at 0); on the i.MX RT1062 0 is
    # ITCM and its cached flash is at 0x60000000: a trace of it said to be
    # the RT1062'"'"'s would hold no cached fetch. Refused before QEMU runs.
    test_expect_success 'QEMU import and run: an image of another memory map than the target is refused' '
        test_exit 1 $CODEPLACE trace --from-qemu q.log --elf $FX/tr-mps2.elf \
            --target imxrt1062 --mark codeplace_mark -n 20 -o x.trace 2>err &&
        grep -q "^codeplace: error: .*tr-mps2.elf. is not an image for imxrt1062: none of its code lies in imxrt1062.s cached memory (.flash. at 0x60000000); it is at 0x00000000, in itcm memory .itcm., so its trace would hold no cached fetch: give the target of the memory map it was built for (these fit: [a-z0-9, -]*mps2-an500[a-z0-9, -]*), and take imxrt1062.s cache with sim --as imxrt1062$" err &&
        ! test -e x.trace &&
        test_exit 1 $CODEPLACE trace --qemu mps2-an500 $FX/tr-mps2.elf --target imxrt1062 \
            --mark codeplace_mark -n 20 -o x.trace 2>err &&
        grep -q "is not an image for imxrt1062: none of its code lies in" err &&
        ! test -e x.trace &&
        test_exit 1 $CODEPLACE trace --from-qemu q.log --elf $FX/tr-mps2.elf \
            --target rp2040 --mark codeplace_mark -n 20 -o x.trace 2>err &&
        grep -q "is not an image for rp2040: it is built for Armv7E-M, which the cortex-m0plus (a baseline core) cannot run" err &&
        ! test -e x.trace
    '
    test_expect_success 'QEMU import: a log line that is not a trace line is an error' '
        printf "Trace 0: 0x1 [00000000/00000000/0/1] x\nTrace 0: garbage\n" >bad.log &&
        test_exit 1 $CODEPLACE trace --from-qemu bad.log --elf $FX/tr-mps2.elf -o x.trace 2>err &&
        grep -q "bad.log.: line 2: not a QEMU exec trace line" err
    '
else
    test_skip 'QEMU import' 'qemu-system-arm missing'
fi

# The demo firmware (make firmware): the virtual board against QEMU's
# reference runs of the same object code.
if [ -f "$FW/demo-rp2040.elf" ] && have qemu-system-arm; then
    ref() { # board -> checksum after 1 iteration, from the QEMU reference run
        timeout 120 qemu-system-arm -M "$1" -nographic -monitor none -serial none \
            -semihosting-config enable=on,target=native -kernel "$FW/demo-$1.elf" 2>&1 |
            sed -n "s/^codeplace_result after 1 iterations: //p"
    }
    test_expect_success 'demo: one iteration on both CPUs gives QEMU'"'"'s checksum' '
        m0=$(ref microbit) && m7=$(ref mps2-an500) && test -n "$m0" && test "$m0" = "$m7" &&
        $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 $HARNESS -n 1 \
            --result codeplace_result -o r0.trace >out0 &&
        grep -q "^result:       codeplace_result = $m0 " out0 &&
        $CODEPLACE trace -q $FW/demo-imxrt1062.elf --target imxrt1062 $HARNESS -n 1 \
            --result codeplace_result -o r7.trace >out7 &&
        grep -q "^result:       codeplace_result = $m0 " out7 &&
        if [ -f "$CP_ROOT/firmware/expected.txt" ]; then
            grep -q "^microbit 1 $m0$" "$CP_ROOT/firmware/expected.txt" &&
            grep -q "^mps2-an500 1 $m0$" "$CP_ROOT/firmware/expected.txt"
        fi
    '
    test_expect_success 'demo: free-run from reset on the RP2040 reaches the same state' '
        $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 $HARNESS -n 2 \
            --result codeplace_result -o h.trace >h &&
        $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 --mark codeplace_mark -n 2 \
            --result codeplace_result -o f.trace >f &&
        grep "^result:" h >rh && grep "^result:" f >rf && test_cmp rh rf &&
        $CODEPLACE trace --info f.trace | grep -q "^iterations:   2 complete"
    '
    # qemu_vs_board QEMU-MACHINE BOARD-ELF TARGET: QEMU's exec log of the
    # reference build, imported while QEMU runs (with the machine's target:
    # the reference build is linked for its memory map), against the trace
    # of the same object code on the virtual board (TARGET).
    qemu_vs_board() {
        mkfifo q.fifo &&
        timeout 120 qemu-system-arm -M $1 -nographic -monitor none -serial none \
            -semihosting-config enable=on,target=native -kernel $FW/demo-$1.elf \
            -d exec,nochain -singlestep -D q.fifo >/dev/null 2>&1 &
        qpid=$!
        $CODEPLACE trace --from-qemu q.fifo --elf $FW/demo-$1.elf --target $1 \
            --mark codeplace_mark -n 3 -o q.trace --per-iteration >qemu
        rc=$?; kill $qpid 2>/dev/null; wait $qpid; test $rc = 0 &&
        $CODEPLACE trace -q $FW/$2 --target $3 $HARNESS -n 3 -o u.trace \
            --per-iteration >board &&
        test $(wc -l <qemu) = 3 &&
        # Iterations 1 and 2 (no semihosting print) differ from the harness
        # count by the same loop overhead: the call of codeplace_mark and
        # the loop of codeplace_main. (Not --count-each: the
        # per-instruction hook of unicorn skips instructions an IT block
        # turns off, which are fetched all the same and which QEMU logs.)
        d1=$(( $(sed -n 2p qemu | cut -d" " -f2) - $(sed -n 2p board | cut -d" " -f2) )) &&
        d2=$(( $(sed -n 3p qemu | cut -d" " -f2) - $(sed -n 3p board | cut -d" " -f2) )) &&
        echo "overhead $d1 $d2" && test $d1 = $d2 && test $d1 -gt 0 && test $d1 -lt 40
    }
    test_expect_success 'demo: QEMU exec log (mps2-an500) against the board (imxrt1062)' '
        qemu_vs_board mps2-an500 demo-imxrt1062.elf imxrt1062
    '
    # The same check passes for microbit against rp2040 (Cortex-M0), but
    # its log is five times longer: run it with CP_SLOW_TESTS=1.
    if [ -n "${CP_SLOW_TESTS:-}" ]; then
        test_expect_success 'demo: QEMU exec log (microbit) against the board (rp2040)' '
            qemu_vs_board microbit demo-rp2040.elf rp2040
        '
    fi
else
    test_skip 'demo firmware runs' 'build/fw or qemu-system-arm missing'
fi

test_done
