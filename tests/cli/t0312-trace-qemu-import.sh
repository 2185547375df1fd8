#!/bin/sh
# trace --from-qemu is exact or refuses. Exact: on the whole-system echo
# firmware (firmware/ws/: threads, SysTick, PendSV, the lan9118 interrupt)
# under UDP echo traffic, one QEMU run writes both its exec log
# (-d exec,nochain -singlestep) and the plugin's trace (an exec callback on
# every instruction): the import counts what the plugin counts, iteration
# by iteration. Refused, with the line named: a log of whole blocks
# (no -singlestep), the same log in the format of QEMU before 6.0 (no
# cflags field: the successions give it away), a log with lines filtered
# out (-dfilter). A log without nochain but with -singlestep is whole on
# QEMU 7.2 (-singlestep stops direct chaining; the indirect jumps QEMU
# still chains are logged) and counts the same. Under -icount an I/O access
# rewinds its block (cpu_io_recompile): the import drops the first line and
# counts what the plugin counts.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
IRQ=$FX/irq-an385.elf
WS=$CP_ROOT/build/fw/ws-mps2-an385.elf
QFLAGS="-display none -monitor none -serial none -semihosting-config enable=on,target=native"

if ! have qemu-system-arm || ! test -f $CP_ROOT/build/codeplace-qemu.so || ! test -f $WS; then
    test_skip 'QEMU log import' 'qemu-system-arm, the plugin or the echo firmware missing'
    test_done
fi

# wrap LOG: a QEMU for CODEPLACE_QEMU that also writes its exec log to LOG
wrap() {
    printf '#!/bin/sh\nexec qemu-system-arm "$@" -d exec,nochain -singlestep -D %s\n' "$1" >qemu-log &&
    chmod +x qemu-log
}

test_expect_success 'echo firmware under traffic: the import counts what the plugin counts in the same run' '
    wrap $PWD/ws.log &&
    CODEPLACE_QEMU=$PWD/qemu-log timeout 120 $CODEPLACE trace --qemu mps2-an385 $WS \
        --mark codeplace_mark --udp 7 -n 20 --timeout 90 -o p.trace >out 2>err &&
    grep -q "^ended:        done$" out &&
    $CODEPLACE trace --from-qemu ws.log --elf $WS --mark codeplace_mark -n 20 \
        -o l.trace >imp &&
    cat imp &&
    grep -q "^checked:      one instruction per line, each following the last ([1-9][0-9]* exception entries)$" imp &&
    $CODEPLACE trace --from-qemu ws.log --elf $WS --mark codeplace_mark -n 20 \
        -o l.trace --per-iteration >log &&
    $CODEPLACE trace --info p.trace --per-iteration >plugin &&
    test $(wc -l <plugin) = 20 &&
    test_cmp plugin log &&
    for f in l.trace p.trace; do
        $CODEPLACE trace --info $f --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d[\"instructions\"] - d[\"pre_instructions\"])" || return 1
    done >sums &&
    test $(sort -u sums | wc -l) = 1
'

test_expect_success 'under -icount: rewound blocks dropped, the plugin'"'"'s count in the same run' '
    sym() { arm-none-eabi-nm "$1" | awk -v s="$2" "\$3 == s { print \"0x\" \$1 }"; } &&
    timeout 60 qemu-system-arm -M mps2-an385 $QFLAGS -icount shift=3 -kernel $IRQ \
        -d exec,nochain -singlestep -D ic.log \
        -plugin $CP_ROOT/build/codeplace-qemu.so,out=ic.trace,mark=$(sym $IRQ codeplace_mark),marks=0 &&
    grep -q "^cpu_io_recompile: rewound execution of TB to" ic.log &&
    $CODEPLACE trace --from-qemu ic.log --elf $IRQ --mark codeplace_mark -o l.trace >imp &&
    cat imp &&
    grep -q "dropped [1-9][0-9]* of blocks that did not run, [1-9][0-9]* of rewound blocks" imp &&
    $CODEPLACE trace --from-qemu ic.log --elf $IRQ --mark codeplace_mark -n 39 -o l.trace --per-iteration >log &&
    $CODEPLACE trace --info ic.trace --per-iteration >plugin &&
    test $(wc -l <plugin) = 39 &&
    test_cmp plugin log
'

test_expect_success 'a log of whole blocks (no -singlestep) is refused at its first line' '
    timeout 60 qemu-system-arm -M mps2-an385 $QFLAGS -kernel $IRQ -d exec,nochain -D b.log &&
    test_exit 1 $CODEPLACE trace --from-qemu b.log --elf $IRQ --mark codeplace_mark \
        -o b.trace >out 2>err &&
    grep -q "b.log.: line 1: QEMU translated this block for as many instructions as fit (cflags 0x[0-9a-f]*00): its one line stands for instructions the log does not name" err &&
    ! test -s out
'

test_expect_success 'the same log without the cflags field (QEMU before 6.0): a missing line is named' '
    timeout 60 qemu-system-arm -M mps2-an385 $QFLAGS -kernel $IRQ -d exec,nochain -D b.log &&
    sed "s#\(\[[0-9a-f]*/[0-9a-f]*/[0-9a-f]*\)/[0-9a-f]*\]#\1]#" b.log >old.log &&
    ! grep -q "^Trace.*/.*/.*/.*\]" old.log &&
    test_exit 1 $CODEPLACE trace --from-qemu old.log --elf $IRQ --mark codeplace_mark \
        -o b.trace 2>err &&
    grep -q "old.log.: line [0-9]*: PC 0x[0-9a-f]* does not follow the instruction at 0x[0-9a-f]* (line [0-9]*) and is no handler of the vector table: lines are missing" err
'

test_expect_success 'a -dfilter log (lines left out) is refused' '
    timeout 60 qemu-system-arm -M mps2-an385 $QFLAGS -kernel $IRQ -d exec,nochain -singlestep \
        -dfilter 0x0..0x100 -D f.log &&
    test_exit 1 $CODEPLACE trace --from-qemu f.log --elf $IRQ --mark codeplace_mark \
        -o f.trace 2>err &&
    grep -q "f.log.: line [0-9]*: PC .* does not follow the instruction at .* lines are missing" err
'

test_expect_success 'without nochain, -singlestep logs every instruction: the same counts' '
    timeout 60 qemu-system-arm -M mps2-an385 $QFLAGS -kernel $IRQ -d exec,nochain -singlestep -D n.log &&
    timeout 60 qemu-system-arm -M mps2-an385 $QFLAGS -kernel $IRQ -d exec -singlestep -D c.log &&
    $CODEPLACE trace --from-qemu n.log --elf $IRQ --mark codeplace_mark -o n.trace --per-iteration >n &&
    $CODEPLACE trace --from-qemu c.log --elf $IRQ --mark codeplace_mark -o c.trace --per-iteration >c &&
    test $(wc -l <n) = 40 &&
    test_cmp n c
'

test_expect_success 'a Trace line that jumps into the middle of the code is named' '
    printf "Trace 0: 0x1 [00000000/00000090/00000110/ff000201] reset_handler\n" >j.log &&
    printf "Trace 0: 0x1 [00000000/00000062/00000110/ff000201] main\n" >>j.log &&
    test_exit 1 $CODEPLACE trace --from-qemu j.log --elf $IRQ -o j.trace 2>err &&
    grep -q "j.log.: line 2: PC 0x00000062 does not follow the instruction at 0x00000090 (line 1)" err
'

test_done
