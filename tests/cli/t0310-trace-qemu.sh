#!/bin/sh
# codeplace-qemu.so and trace --qemu against independent counts: QEMU's own
# execution log (-d exec,nochain -singlestep) of the same image, imported
# with the blocks that did not run dropped; exception contexts against the
# functions each instruction of that log is in; the trace kept valid when
# the run is cut short; --from-qemu on a real log with "Stopped" lines.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
PLUGIN=$CP_ROOT/build/codeplace-qemu.so
IRQ=$FX/irq-an385.elf
FOREVER=$FX/irq-forever.elf
QFLAGS="-display none -monitor none -serial none -semihosting-config enable=on,target=native"
sym() { arm-none-eabi-nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1 }'; }

if ! have qemu-system-arm || ! test -f "$PLUGIN"; then
    test_skip 'QEMU recorder' 'qemu-system-arm or build/codeplace-qemu.so missing'
    test_done
fi

test_expect_success 'trace --qemu: per-iteration counts equal the exec log (M7, 20 iterations)' '
    timeout 60 qemu-system-arm -M mps2-an500 $QFLAGS -kernel $FX/tr-mps2.elf \
        -d exec,nochain -singlestep -D q.log &&
    $CODEPLACE trace --from-qemu q.log --elf $FX/tr-mps2.elf \
        --mark codeplace_mark -n 20 -o q.trace --per-iteration >log &&
    timeout 60 $CODEPLACE trace -q --qemu mps2-an500 $FX/tr-mps2.elf \
        --mark codeplace_mark -n 20 -o p.trace >out &&
    grep -q "^ended:        done$" out &&
    grep -q "^iterations:   20 " out &&
    $CODEPLACE trace --info p.trace --per-iteration >plugin &&
    test $(wc -l <plugin) = 20 &&
    test_cmp log plugin &&
    $CODEPLACE trace --info p.trace >info &&
    grep -q "^source:       qemu-plugin$" info &&
    grep -q "^target:       mps2-an500 (cortex-m7)$" info &&
    grep -q "version 2)$" info &&
    ! grep -q "^flash reads:  0$" info &&
    $CODEPLACE trace --info p.trace --records >recs &&
    python3 $CP_ROOT/tests/cli/check-trace.py $FX/tr-mps2.elf recs >chk &&
    cat chk && ! grep -q "^#   0 runs" chk
'

if test -f $CP_ROOT/build/fw/demo-mps2-an500.elf; then
test_expect_success 'demo firmware: every fetch run holds the instructions objdump finds (page ends too)' '
    timeout 60 $CODEPLACE trace -q --qemu mps2-an500 $CP_ROOT/build/fw/demo-mps2-an500.elf \
        --mark codeplace_mark -n 3 -o d.trace >out &&
    $CODEPLACE trace --info d.trace --records >recs &&
    python3 $CP_ROOT/tests/cli/check-trace.py $CP_ROOT/build/fw/demo-mps2-an500.elf recs >chk &&
    cat chk && grep -q " 0 problems" chk
'
fi

test_expect_success 'irq fixture, -singlestep: instructions and iterations equal the log; Stopped lines dropped' '
    timeout 60 qemu-system-arm -M mps2-an385 $QFLAGS -kernel $IRQ \
        -d exec,nochain -singlestep -D i.log &&
    grep -q "^Stopped execution of TB chain before" i.log &&
    $CODEPLACE trace --from-qemu i.log --elf $IRQ --mark codeplace_mark -n 39 \
        -o il.trace >imp &&
    grep -q "dropped [1-9][0-9]* of blocks that did not run" imp &&
    vec=$(printf "vec=11:%s,vec=14:%s,vec=15:%s,vec=19:%s" \
        $(sym $IRQ svc_handler) $(sym $IRQ pendsv_handler) \
        $(sym $IRQ systick_handler) $(sym $IRQ irq3_handler)) &&
    timeout 60 qemu-system-arm -M mps2-an385 $QFLAGS -kernel $IRQ -singlestep \
        -plugin $PLUGIN,out=is.trace,mark=$(sym $IRQ codeplace_mark),marks=39,cached=0x0:0x400000,$vec &&
    $CODEPLACE trace --info il.trace --per-iteration >log &&
    $CODEPLACE trace --info is.trace --per-iteration >plugin &&
    test $(wc -l <plugin) = 39 &&
    test_cmp log plugin &&
    $CODEPLACE trace --info il.trace --json | python3 -c "import json,sys; print(json.load(sys.stdin)[\"instructions\"])" >n1 &&
    $CODEPLACE trace --info is.trace --json | python3 -c "import json,sys; print(json.load(sys.stdin)[\"instructions\"])" >n2 &&
    test_cmp n1 n2 &&
    $CODEPLACE trace --info is.trace --records >rec &&
    arm-none-eabi-nm -n $IRQ >nm &&
    python3 $CP_ROOT/tests/cli/check-qemu-ctx.py i.log rec nm >ctx &&
    cat ctx &&
    grep -q "^switches: 273$" ctx
'

test_expect_success 'trace --qemu on the irq fixture: contexts from the vector table; --info and sim agree' '
    timeout 60 $CODEPLACE trace -q --qemu mps2-an385 $IRQ --mark codeplace_mark \
        -n 30 -o r.trace >out &&
    grep -q "^contexts:     210 switches$" out &&
    $CODEPLACE trace --info r.trace >info &&
    grep -q "^iterations:   30 complete (30 marks" info &&
    $CODEPLACE sim r.trace --elf $IRQ --as imxrt1062 --json >sim.json &&
    python3 -c "import json; d=json.load(open(\"sim.json\")); assert len(d[\"iterations\"]) == 30, len(d[\"iterations\"])"
'

test_expect_success 'sim --by-context: the contexts add up to sim'"'"'s warm misses' '
    timeout 60 $CODEPLACE trace -q --qemu mps2-an505 $FX/irq-an505.elf \
        --target mps2-an505 --mark codeplace_mark -n 39 -o r.trace >out &&
    grep -q "^contexts:     273 switches$" out &&
    for g in 128,2,8 256,1,8 256,4,8,fifo; do
        $CODEPLACE sim -q r.trace --cache $g --json >sim.json &&
        $CODEPLACE sim r.trace --cache $g --by-context --json >ctx.json &&
        python3 -c "
import json
s = json.load(open(\"sim.json\")); c = json.load(open(\"ctx.json\"))
want = sum(i[\"misses\"] for i in s[\"iterations\"][1:])
assert want > 0 and c[\"misses\"] == want, (c[\"misses\"], want)
names = [x[\"name\"] for x in c[\"contexts\"]]
assert names == [\"thread\", \"SVCall\", \"PendSV\", \"SysTick\", \"IRQ 3\"], names
assert sum(x[\"misses\"] > 0 for x in c[\"contexts\"]) >= 3
assert c[\"context_switches\"] == 7 * 38
" || return 1
    done &&
    $CODEPLACE sim r.trace --cache 128,2,8 --by-context >txt &&
    grep -q "^SysTick " txt && grep -q "^total " txt
'

test_expect_success 'sim --by-context on a trace without contexts warns' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 --mark codeplace_mark -n 3 -o u.trace &&
    $CODEPLACE sim u.trace --by-context >txt 2>err &&
    grep -q "holds no exception contexts" err &&
    grep -q "^thread " txt
'

test_expect_success 'trace --qemu: --timeout keeps a valid trace and stops QEMU by its pid' '
    test_exit 0 timeout 60 $CODEPLACE trace --qemu mps2-an385 $FOREVER \
        --mark codeplace_mark -n 100000000 --timeout 1 -o t.trace >out 2>err &&
    grep -q "^ended:        time limit$" out &&
    grep -q "stopped by --timeout" err &&
    pid=$(sed -n "s/.*(pid \([0-9]*\)).*/\1/p" err) &&
    test -n "$pid" && ! kill -0 $pid 2>/dev/null &&
    $CODEPLACE trace --info t.trace >info &&
    grep -q "^ended:        time limit$" info
'

test_expect_success 'trace --qemu: Ctrl-C keeps a valid trace' '
    ( timeout 60 $CODEPLACE trace --qemu mps2-an385 $FOREVER \
        --mark codeplace_mark -n 100000000 -o c.trace >out 2>err & echo $! >pid; wait ) &
    i=0; while ! grep -q "pid [0-9]" err 2>/dev/null && test $i -lt 100; do sleep 0.1; i=$((i+1)); done &&
    sleep 0.5 && kill -INT $(cat pid) && wait &&
    grep -q "^ended:        interrupted$" out &&
    qpid=$(sed -n "s/.*(pid \([0-9]*\)).*/\1/p" err) &&
    ! kill -0 $qpid 2>/dev/null &&
    $CODEPLACE trace --info c.trace >info &&
    grep -q "^ended:        interrupted$" info
'

test_expect_success 'trace --qemu: the firmware ending first is a failure with a valid trace' '
    test_exit 1 timeout 60 $CODEPLACE trace --qemu mps2-an385 $IRQ \
        --mark codeplace_mark -n 100 -o e.trace >out 2>err &&
    grep -q "the firmware stopped after 39 of 100 iterations" err &&
    $CODEPLACE trace --info e.trace >info &&
    grep -q "^ended:        stopped$" info
'

test_expect_success 'plugin: QEMU killed outright leaves a trace readable up to its last block' '
    qemu-system-arm -M mps2-an385 $QFLAGS -kernel $FOREVER \
        -plugin $PLUGIN,out=k.trace,mark=$(sym $FOREVER codeplace_mark) \
        </dev/null >/dev/null 2>&1 &
    qpid=$! &&
    i=0; while test $(stat -c %s k.trace 2>/dev/null || echo 0) -lt 200000 && test $i -lt 300; do
        sleep 0.1; i=$((i+1)); done &&
    kill -9 $qpid && { wait $qpid; true; } &&
    test_exit 1 $CODEPLACE trace --info k.trace 2>err &&
    grep -q "truncated trace" err &&
    $CODEPLACE trace --info k.trace --partial >info &&
    grep -q "^ended:        truncated" info &&
    grep -q "^iterations:   [1-9][0-9]* complete" info
'

test_expect_success 'make install: the installed binary finds the plugin in PREFIX/lib/codeplace' '
    make -C $CP_ROOT --no-print-directory install PREFIX=$PWD/inst >/dev/null &&
    test -x inst/lib/codeplace/codeplace-qemu.so &&
    timeout 60 inst/bin/codeplace trace -q --qemu mps2-an385 $IRQ --mark codeplace_mark \
        -n 5 -o inst.trace >out &&
    grep -q "^ended:        done$" out
'

test_expect_success 'trace --qemu: usage errors' '
    test_exit 2 $CODEPLACE trace --qemu nope $IRQ --mark codeplace_mark -o x.trace 2>err &&
    grep -q "unknown machine" err &&
    test_exit 2 $CODEPLACE trace --qemu mps2-an385 $IRQ -o x.trace 2>err &&
    grep -q "needs --mark" err &&
    test_exit 2 $CODEPLACE trace --qemu mps2-an385 $IRQ --mark codeplace_mark --rate 5 -o x.trace 2>err &&
    grep -q "go with --udp" err &&
    test_exit 1 $CODEPLACE trace --qemu mps2-an385 $IRQ --mark nosuch -o x.trace 2>err &&
    grep -q "nosuch" err
'

test_expect_success '--from-qemu: a Stopped line that names another block is an error' '
    printf "Trace 0: 0x1 [00000000/00000062/0/1] x\nStopped execution of TB chain before 0x1 [00000070] y\n" >bad.log &&
    test_exit 1 $CODEPLACE trace --from-qemu bad.log --elf $IRQ -o x.trace 2>err &&
    grep -q "bad.log.: line 2: a block stopped before 0x00000070 does not follow" err
'

test_done
