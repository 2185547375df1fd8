#!/bin/sh
# No confident wrong number: inputs checked against each other, interrupted
# runs counted exactly, outputs whole or absent, stop signals handled like
# Ctrl-C, progress and the disk a trace needs.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
FW=$CP_ROOT/build/fw
HARNESS="--init codeplace_init --iter codeplace_iteration"
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

# ---- stop signals (SIGTERM, SIGHUP) end a run like Ctrl-C ----

for sig in TERM HUP; do
test_expect_success "SIG$sig ends a trace with its trailer" '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 100000000 \
        --max-insns 0 -o run.trace >out 2>err &
    pid=$! &&
    sleep 2 && kill -'$sig' $pid && wait $pid &&
    grep -q "interrupted by SIG'$sig' after [0-9]* iterations; the trace so far is kept and valid" err &&
    grep -q "^ended:        interrupted$" out &&
    $CODEPLACE trace --info run.trace >info &&
    grep -q "^ended:        interrupted$" info &&
    n=$(sed -n "s/^iterations:   \([0-9]*\) (.*/\1/p" out) &&
    grep -q "^iterations:   $n complete" info
'
done

test_expect_success 'SIGTERM stops plan: nothing written, exit 1' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 8 -o run.trace >/dev/null &&
    $CODEPLACE plan $FX/tr-m0.elf --map $FX/tr-m0.map --trace run.trace --target rp2040 \
        --strategy colour --search-moves 2000000000 --list hot.list --layout hot.layout >out 2>err &
    pid=$! &&
    sleep 3 && kill -TERM $pid &&
    test_exit 1 wait $pid &&
    grep -q "interrupted by SIGTERM: the search did not finish; nothing written" err &&
    ! test -e hot.list && ! test -e hot.layout &&
    test -z "$(ls | grep "\.tmp\.")"
'

# ---- a run that fails does not read as complete; harness returns ----

test_expect_success 'harness mode: returns reported, --expect fails on a mismatch' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 5 -o run.trace >out &&
    grep -q "^returns:      codeplace_init 0x[0-9a-f]*; codeplace_iteration not 0 in [0-9]* of 5 iterations (first: iteration [0-9]*, 0x[0-9a-f]*)$" out &&
    test_exit 1 $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 5 \
        --expect 0 -o run.trace >out 2>err &&
    grep -q "codeplace_iteration returned 0x[0-9a-f]*, not 0 (--expect), in [0-9]* of 5 iterations (first: iteration" err &&
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 5 --json -o run.trace >j &&
    test "$(json j "d[\"returns\"][\"expected\"]")" = 0 &&
    test "$(json j "d[\"returns\"][\"mismatches\"] > 0")" = True &&
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 --mark codeplace_mark \
        --expect 0 -o x.trace 2>err &&
    grep -q "expect goes with --iter" err
'

test_expect_success 'a run that fails before its first iteration ends as a fault, not done' '
    test_exit 1 $CODEPLACE trace -q $FX/tr-m7.elf --target rp2350 $HARNESS -n 2 \
        --periph 0x60000000:0x100000 -o pf.trace >out 2>err &&
    grep -q "segment 0x6[0-9a-f]*+0x[0-9a-f]* is not in memory" err &&
    grep -q "^ended:        fault$" out &&
    $CODEPLACE trace --info pf.trace >info 2>err &&
    grep -q "^ended:        fault$" info &&
    grep -q "warning: pf.trace: no complete iteration (ended: fault)" err
'

test_expect_success 'free run: a --mark never reached says so' '
    test_exit 1 $CODEPLACE trace -q $FX/thumb2-m0.elf --target imxrt1062 --mark bad_load \
        --max-insns 1000 -n 3 -o m.trace >out 2>err &&
    grep -q "the PC never reached --mark bad_load in 1000 instructions" err &&
    $CODEPLACE trace --info m.trace >info 2>err &&
    grep -q "warning: m.trace: no complete iteration (ended: instruction limit)" err
'

if have qemu-system-arm; then
    test_expect_success 'QEMU import: a log that ends before the first iteration fails, not done' '
        timeout 60 qemu-system-arm -M mps2-an500 -nographic -monitor none -serial none \
            -semihosting-config enable=on,target=native -kernel $FX/tr-mps2.elf \
            -d exec,nochain -singlestep -D q.log &&
        head -n 200 q.log >cut.log &&
        test_exit 1 $CODEPLACE trace --from-qemu cut.log --elf $FX/tr-mps2.elf \
            --target mps2-an500 --mark codeplace_mark -n 5 -o q.trace >out 2>err &&
        grep -q "cut.log: the log ends before the first complete iteration (--mark codeplace_mark)" err &&
        $CODEPLACE trace --info q.trace >info 2>err &&
        grep -q "^ended:        stopped$" info &&
        grep -q "no complete iteration" err
    '
else
    test_skip 'QEMU import of a cut log' 'qemu-system-arm missing'
fi

# ---- interrupted traces: complete iterations only ----

test_expect_success 'sim, report, plan and samples count complete iterations only' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 100000000 \
        --max-insns 0 --timeout 1 -o cut.trace >/dev/null 2>&1 &&
    $CODEPLACE trace --info cut.trace >info &&
    grep -q "^ended:        time limit$" info &&
    n=$(tr -d , <info | sed -n "s/^iterations:   \([0-9]*\) complete (\([0-9]*\) marks.*/\1 \2/p") &&
    set -- $n && test $2 = $(($1 + 1)) &&
    $CODEPLACE sim cut.trace --elf $FX/tr-m0.elf --json -o s.json 2>err &&
    test "$(json s.json "len(d[\"iterations\"])")" = $1 &&
    test "$(json s.json "d[\"dropped_iterations\"]")" = 1 &&
    grep -q "cut.trace: the recording ended (time limit) inside its last iteration: 1 unfinished iteration dropped" err &&
    $CODEPLACE sim cut.trace --elf $FX/tr-m0.elf >s.txt 2>/dev/null &&
    grep -q "^trace:      cut.trace ($1 complete iterations, 1 unfinished dropped;" s.txt &&
    $CODEPLACE plan $FX/tr-m0.elf --map $FX/tr-m0.map --trace cut.trace --target rp2040 \
        --strategy hotblock --iterations 0 >p.txt 2>err &&
    grep -q "cut.trace: the recording ended inside its last iteration: 1 unfinished iteration dropped" err &&
    grep -q ", $1 iterations, budget" p.txt &&
    $CODEPLACE samples cut.trace --every 97 --elf $FX/tr-m0.elf -o smp.txt 2>err &&
    grep -q "1 unfinished iteration dropped" err &&
    $CODEPLACE report smp.txt --elf $FX/tr-m0.elf --trace cut.trace >r.txt 2>err &&
    grep -q "cut.trace: the recording ended inside its last iteration: 1 unfinished" err
'

test_expect_success 'report warns of a trace with no warm iteration' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 1 -o one.trace >/dev/null &&
    $CODEPLACE samples one.trace --every 13 --elf $FX/tr-m0.elf -o smp.txt 2>/dev/null &&
    $CODEPLACE report smp.txt --elf $FX/tr-m0.elf --trace one.trace >r.txt 2>err &&
    grep -q "one.trace: 1 complete iteration: no warm iteration, the misses are those of a cold cache" err
'

test_expect_success 'plan warns of a trace with no warm iteration, and of a search on a cold one' '
    $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 $HARNESS -n 1 -o one.trace >/dev/null &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace one.trace \
        --strategy hotblock -q -o /dev/null 2>err &&
    grep -q "one.trace: 1 complete iteration: no warm iteration, the misses are those of a cold cache" err &&
    $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 $HARNESS -n 2 -o two.trace >/dev/null &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace two.trace \
        --strategy hotblock -q -o /dev/null 2>err &&
    ! grep -q "cold" err &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace two.trace \
        --strategy hotblock --plan-iterations 1 -q -o /dev/null 2>err &&
    grep -q "plan-iterations 1: the search counts the first iteration, a cold cache" err
'

# ---- the map must agree with the ELF before plan moves anything ----

test_expect_success 'plan: a cut map is refused, --unverified flags every output' '
    $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 $HARNESS -n 2 -o d.trace >/dev/null &&
    head -n 900 $FW/demo-rp2040.map >cut.map &&
    for m in other moved; do
        test_exit 1 $CODEPLACE plan $FX/m0.elf --map $FX/bad/$m.map --trace d.trace \
            --target rp2040 2>err && grep -q "does not match" err || return 1
    done &&
    test_exit 1 $CODEPLACE plan $FW/demo-rp2040.elf --map cut.map --trace d.trace \
        --target rp2040 --strategy hotblock >out 2>err &&
    grep -q "error: map file .cut.map. is cut short or of another build than .*; [0-9]* function(s) lie in no input section it lists .*--unverified to plan anyway" err &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map cut.map --trace d.trace --target rp2040 \
        --strategy hotblock --unverified --list l.txt --layout l.layout --emit place >out 2>err &&
    grep -q "^UNVERIFIED prediction: map file .cut.map. is cut short" out &&
    grep -q "^# UNVERIFIED prediction: map file .cut.map. is cut short" l.txt &&
    grep -q "^# UNVERIFIED prediction: map file .cut.map. is cut short" l.layout &&
    grep -q "^ \* UNVERIFIED prediction: map file .cut.map. is cut short" place/codeplace_flash.ld &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map cut.map --trace d.trace --target rp2040 \
        --strategy hotblock --unverified --json >j 2>/dev/null &&
    test "$(json j "d[\"verified\"]")" = False &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace d.trace \
        --target rp2040 --strategy hotblock --json >j 2>err &&
    test "$(json j "d[\"verified\"]")" = True &&
    ! grep -q warning err
'

# ---- outputs are whole or absent ----

test_expect_success 'a write that hits the file size limit leaves nothing partial' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 20 -o run.trace >/dev/null &&
    $CODEPLACE samples run.trace --every 7 --elf $FX/tr-m0.elf -o smp.txt 2>/dev/null &&
    echo old >keep.json &&
    (ulimit -f 2; test_must_fail $CODEPLACE report smp.txt --elf $FX/tr-m0.elf \
        --trace run.trace --html page.html 2>err1) &&
    grep -q "cannot write .page.html." err1 &&
    ! test -e page.html &&
    (ulimit -f 2; test_must_fail $CODEPLACE report smp.txt --elf $FX/tr-m0.elf \
        --trace run.trace --json --all -o keep.json 2>err2) &&
    grep -q "cannot write .keep.json.: File too large" err2 &&
    test "$(cat keep.json)" = old &&
    $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 $HARNESS -n 2 -o d.trace >/dev/null &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace d.trace \
        --target rp2040 --strategy hotblock -q --list full.list >/dev/null &&
    test $(wc -c <full.list) -gt 4096 &&
    (ulimit -f 2; test_must_fail $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace d.trace --target rp2040 --strategy hotblock -q --list hot.list \
        >/dev/null 2>err3) &&
    grep -q "hot.list.: File too large" err3 &&
    ! test -e hot.list &&
    test -z "$(ls | grep "\.tmp\.")" &&
    test_must_fail $CODEPLACE report smp.txt --elf $FX/tr-m0.elf -o /dev/full 2>err4 &&
    grep -q "No space left on device" err4
'

test_expect_success 'a full disk (a tiny tmpfs) leaves no snippet directory' '
    if unshare -rm true 2>/dev/null; then
        $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 20 -o run.trace >/dev/null &&
        mkdir mnt &&
        unshare -rm sh -c "mount -t tmpfs -o size=8k tmpfs mnt &&
            head -c 4096 /dev/zero >mnt/filler &&
            ! $CODEPLACE plan $FX/tr-m0.elf --map $FX/tr-m0.map --trace run.trace \
                --target rp2040 --strategy hotblock -q --emit mnt/place 2>err &&
            grep -q \"No space left on device\" err &&
            test ! -e mnt/place &&
            test -z \"\$(ls mnt | grep tmp)\""
    else
        echo "no user namespaces: skipped" >&2
    fi
'

# ---- smaller ones ----

test_expect_success 'option values and repeated options are checked' '
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 $HARNESS --timeout -1 -o x.trace 2>err &&
    grep -q "timeout: .-1. is not a positive number of seconds" err &&
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 $HARNESS --sp 0 -o x.trace 2>err &&
    grep -q "sp: .0. is not a stack pointer" err &&
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 $HARNESS --result a --result b -o x.trace 2>err &&
    grep -q "result: give one symbol" err &&
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 -n x -o x.trace 2>err &&
    grep -q "option .--iterations.: .x. is not a valid number" err &&
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 --sp x -o x.trace 2>err &&
    grep -q "option .--sp.: .x. is not a valid number" err &&
    ! grep -q -e "---" err &&
    mkdir d && test_exit 1 $CODEPLACE trace --info d 2>err &&
    grep -q "cannot read .d.: it is a directory, not a trace" err
'

test_expect_success 'report --sort misses without a trace is an error' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 3 -o run.trace >/dev/null &&
    $CODEPLACE samples run.trace --every 7 --elf $FX/tr-m0.elf -o smp.txt 2>/dev/null &&
    test_exit 2 $CODEPLACE report smp.txt --elf $FX/tr-m0.elf --sort misses 2>err &&
    grep -q "sort misses needs the misses: give --trace" err &&
    $CODEPLACE report smp.txt --elf $FX/tr-m0.elf --trace run.trace --sort misses >/dev/null
'

test_expect_success 'samples of another build warn' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 3 -o run.trace >/dev/null &&
    $CODEPLACE samples run.trace --every 7 --elf $FX/m0.elf -o smp.txt 2>err &&
    grep -q "run.trace was recorded from image .*, but .*m0.elf is .* (another build)" err
'

test_expect_success 'diff does not compare sizes inferred for symbols without st_size' '
    for v in 1 2; do
        { printf ".syntax unified\n.thumb\n.text\n.global f\n.type f, %%function\nf:\n" &&
          test $v = 1 && printf "nop\n" || printf "nop\nnop\nnop\n";
          printf ".global g\n.type g, %%function\n.size g, 2\ng:\nnop\n"; } >v$v.s &&
        arm-none-eabi-as -mcpu=cortex-m0plus v$v.s -o v$v.o &&
        arm-none-eabi-ld -Ttext=0x10000000 -e f -o v$v.elf v$v.o || return 1
    done &&
    $CODEPLACE diff v1.elf v2.elf >out &&
    grep -q "^functions: 0 changed size, 0 added, 0 removed, 2 the same (1 of them have no size in the symbol table and inferred sizes that differ: not compared)$" out
'

# ---- progress, and the disk a trace needs ----

test_expect_success 'trace and plan show progress on a terminal' '
    script -qec "$CODEPLACE trace $FX/tr-m0.elf --target rp2040 $HARNESS -n 100000000 --max-insns 0 --timeout 2 -o run.trace" /dev/null >tty.out 2>&1 &&
    grep -q "trace: [0-9.]* M instructions/s, [0-9,]* of 100,000,000 iterations, [0-9,]* bytes (projected [0-9,]*)" tty.out &&
    script -qec "$CODEPLACE plan $FX/tr-m0.elf --map $FX/tr-m0.map --trace run.trace --target rp2040 --strategy colour --search-moves 400000 --iterations 40" /dev/null >tty2.out 2>&1 &&
    grep -q "plan: anneal: [0-9]* of 400000 moves" tty2.out
'

test_expect_success 'trace refuses a run whose projected trace does not fit the disk' '
    if unshare -rm true 2>/dev/null; then
        mkdir mnt &&
        unshare -rm sh -c "mount -t tmpfs -o size=2m tmpfs mnt &&
            ! $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 100000000 \
                --max-insns 0 -o mnt/run.trace >out 2>err;
            cp mnt/run.trace kept.trace" &&
        grep -q "the projected trace ([0-9,]* bytes for 100000000 iterations) does not fit the [0-9,]* bytes free for .mnt/run.trace. after [0-9]* of 100000000 iterations; the trace so far is kept and valid" err &&
        $CODEPLACE trace --info kept.trace >info &&
        grep -q "^ended:        stopped$" info
    else
        echo "no user namespaces: skipped" >&2
    fi
'

test_done
