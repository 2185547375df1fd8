#!/bin/sh
# Inputs that used to give a figure without a word: a trace without a
# complete iteration, a list header's sizes, sample counts that wrap, a
# clock fit that is not physical, layouts that do not fit the target.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
HARNESS="--init codeplace_init --iter codeplace_iteration"
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"

# One trace of 4 iterations and one plan of it, shared by the cases below.
cd "$TEST_TMP" &&
$CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 $HARNESS -n 4 -o r4.trace >/dev/null &&
$CODEPLACE plan -q $FX/tr-m0.elf --map $FX/tr-m0.map --trace r4.trace --target rp2040 \
    --budget 1K --list hot.list >/dev/null 2>&1 || echo "not ok - the shared trace and plan"
cd - >/dev/null
T=$TEST_TMP

# ---- a trace without a complete iteration ----

test_expect_success 'trace -n 0 is refused' '
    test_exit 2 $CODEPLACE trace $FX/tr-m0.elf --target rp2040 $HARNESS -n 0 \
        -o z.trace 2>err &&
    grep -q "^codeplace: error: -n 0: record at least one iteration$" err &&
    ! test -e z.trace
'

# A trace of 0 iterations as an older codeplace wrote it (or a run cut
# before its first mark): the same run as r4.trace, cut at its first mark.
test_expect_success 'sim, plan, report and samples refuse a trace without a complete iteration' '
    $CODEPLACE trace -q $FX/tr-m0.elf --target rp2040 --mark codeplace_iteration \
        -n 1 --max-insns 100 -o z.trace >/dev/null 2>&1;
    $CODEPLACE trace --info z.trace >info &&
    grep -q "^iterations:   0 complete" info &&
    test_exit 1 $CODEPLACE sim z.trace $FX/tr-m0.elf 2>err &&
    grep -q "^codeplace: error: z.trace: no complete iteration (no iteration marks" err &&
    test_exit 1 $CODEPLACE plan $FX/tr-m0.elf --trace z.trace --target rp2040 \
        --budget 1K 2>err &&
    grep -q "z.trace.: no complete iterations (no iteration marks)" err &&
    $CODEPLACE samples $T/r4.trace --every 50 -o s.txt &&
    test_exit 1 $CODEPLACE report s.txt $FX/tr-m0.elf --trace z.trace 2>err &&
    grep -q "^codeplace: error: z.trace: no complete iteration" err &&
    test_exit 1 $CODEPLACE samples z.trace --every 5 -o zs.txt 2>err &&
    grep -q "^codeplace: error: z.trace: no complete iteration (no iteration marks, and the recording ended: instruction limit)" err &&
    ! test -e zs.txt
'

# samples refuses what sim refuses for want of a complete iteration: the
# only one unfinished, or empty; a recording without marks that ran to its
# end is one complete run (as trace --info reads it) and is sampled.
MKTRACE=$CP_ROOT/build/san/tests/mktrace
test_expect_success 'samples refuses a trace whose only iteration is unfinished or empty' '
    printf "%s\n" "F 0x10000100 80 40" M "F 0x10000200 40 20" "E instruction limit" |
        $MKTRACE u.trace rp2040 &&
    test_exit 1 $CODEPLACE sim u.trace $FX/tr-m0.elf 2>err &&
    grep -q "^codeplace: error: u.trace: no complete iteration" err &&
    test_exit 1 $CODEPLACE samples u.trace --every 5 -o us.txt 2>err &&
    grep -q "^codeplace: error: u.trace: no complete iteration (the only one was unfinished)$" err &&
    ! test -e us.txt &&
    printf "%s\n" "F 0x10000100 80 40" M | $MKTRACE e.trace rp2040 &&
    test_exit 1 $CODEPLACE sim e.trace $FX/tr-m0.elf 2>err &&
    grep -q "^codeplace: error: e.trace: no complete iteration (the only one is empty)$" err &&
    test_exit 1 $CODEPLACE samples e.trace --every 5 -o es.txt 2>err &&
    grep -q "^codeplace: error: e.trace: no complete iteration (the only one is empty)$" err &&
    printf "%s\n" "F 0x10000100 80 40" M "F 0x10000200 40 20" | $MKTRACE c.trace rp2040 &&
    $CODEPLACE samples c.trace --every 5 -o cs.txt 2>err &&
    grep -q "^# total: 12$" cs.txt &&
    printf "%s\n" "F 0x10000100 80 40" | $MKTRACE w.trace rp2040 &&
    $CODEPLACE samples w.trace --every 5 -o ws.txt 2>err &&
    grep -q "^# total: 8$" ws.txt
'

# ---- apply: the list header's sizes, read as plan --budget reads them ----

test_expect_success 'apply reads "budget: 1K" as 1,024 bytes' '
    grep -q "^# strategy: .*  budget: 1024 bytes of sram$" $T/hot.list &&
    sed "s/budget: 1024 bytes/budget: 1K/" $T/hot.list >k.list &&
    $CODEPLACE apply k.list $FX/tr-m0.elf --map $FX/tr-m0.map >out 2>err &&
    grep -q "^placed:    .* bytes of 1,024, " out &&
    $CODEPLACE apply k.list $FX/tr-m0.elf --map $FX/tr-m0.map --json >j.json 2>err &&
    grep -q "\"budget\": 1024," j.json
'

test_expect_success 'apply refuses a header size it cannot read, with file:line' '
    sed "s/budget: 1024 bytes/budget: 16Q/" $T/hot.list >q.list &&
    test_exit 1 $CODEPLACE apply q.list $FX/tr-m0.elf --map $FX/tr-m0.map 2>err &&
    grep -q "^codeplace: error: q.list:3: budget: .16Q. is not a size in bytes" err &&
    { cat $T/hot.list; echo "# block end: lots"; } >b.list &&
    n=$(wc -l <b.list) &&
    test_exit 1 $CODEPLACE apply b.list $FX/tr-m0.elf --map $FX/tr-m0.map 2>err &&
    grep -q "^codeplace: error: b.list:$n: block end: .lots. is not a size" err
'

# A list without a budget line places without a limit: what apply writes
# says the budget is not given (not "0 bytes"), and reads that back as
# no budget.
test_expect_success 'apply of a list without a budget: the snippets say "not given", not 0' '
    sed "s/  budget: 1024 bytes of sram\$//" $T/hot.list >nb.list &&
    grep -q "^# strategy: [a-z]*\$" nb.list &&
    $CODEPLACE apply nb.list $FX/tr-m0.elf --map $FX/tr-m0.map --emit nb \
        --list nb2.list >out &&
    for f in nb/codeplace.list nb/codeplace_flash.ld nb/codeplace_ram.ld \
        nb/codeplace.cmake nb/codeplace_pico.cmake nb2.list; do
        grep -q "strategy: applied  budget: not given\$" $f &&
        ! grep -q "budget: 0" $f || return 1
    done &&
    $CODEPLACE apply nb2.list $FX/tr-m0.elf --map $FX/tr-m0.map --json >j.json &&
    grep -q "\"budget\": null," j.json &&
    $CODEPLACE apply nb.list $FX/tr-m0.elf --map $FX/tr-m0.map --budget 512 \
        --list b2.list >out &&
    grep -q "^# strategy: applied  budget: 512 bytes of sram\$" b2.list
'

# ---- samples: counts that add up past what a count can hold ----

test_expect_success 'counts that add up past 2^64 are refused with the line' '
    printf "# codeplace samples 1\n0x10000100 4611686018427387904\n0x10000104 4611686018427387904\n0x10000108 4611686018427387904\n0x1000010c 4611686018427387904\n" >w.txt &&
    test_exit 1 $CODEPLACE report w.txt $FX/tr-m0.elf 2>err &&
    grep -q "^codeplace: error: w.txt:3: the counts add up past 2^62 samples here" err
'

test_expect_success 'one address whose lines add up past 2^62 is refused, not clamped' '
    printf "# codeplace samples 1\n0x10000100 3000000000000000000\n0x10000104 1\n0x10000100 3000000000000000000\n" >w.txt &&
    test_exit 1 $CODEPLACE samples w.txt -o out.txt 2>err &&
    grep -q "^codeplace: error: w.txt:4: the counts add up past 2^62" err &&
    ! test -e out.txt
'

test_expect_success 'a dump count past 2^32 (the profiler counts in 32 bits) is refused' '
    python3 - <<-\EOF &&
	import zlib
	body = "CPDUMP 1 cpu=cortex-m0plus samples=3 buckets=2\nS 10000100 100000001\nS 10000104 2\n"
	open("big.log", "w").write("noise\n" + body + "E 2 %08x\n" % zlib.crc32(body.encode()))
	EOF
    test_exit 1 $CODEPLACE samples big.log -o s.txt 2>err &&
    grep -q "^codeplace: error: big.log:3: count 0x100000001 at 10000100 is past 2^32" err
'

# ---- report --lib: a pattern that matches no library ----

test_expect_success 'report --lib matching no library is an error naming the libraries' '
    python3 "$CP_ROOT/tests/cli/mkgmon.py" gmon.out 1000 10000148x30 1000019cx10 &&
    test_exit 1 $CODEPLACE report gmon.out $FX/tr-m0.elf --map $FX/tr-m0.map \
        --lib "liblwip*" >out 2>err &&
    grep -q "^codeplace: error: --lib .liblwip\*. matches no library of the image (its libraries: (objects), libgcc.a, libc.a)$" err &&
    test_cmp /dev/null out &&
    $CODEPLACE report gmon.out $FX/tr-m0.elf --map $FX/tr-m0.map --lib "libgcc*" >out &&
    grep -q "__udivsi3 .*libgcc.a" out
'

# ---- calc clock: a fit that is not physical ----

test_expect_success 'calc clock warns on a negative constant part and a poor fit' '
    $CODEPLACE calc clock 125M:3.1ms 100M:2.0ms 50M:6.1ms >out 2>err &&
    grep -q "share that scales with the clock at f0: 103.7%" out &&
    grep -q "(r^2 = 0.8350)" out &&
    grep -q "^codeplace: warning: calc clock: the fit is not physical: a negative constant part -8.71e-05 s, share 103.7 %" err &&
    grep -q "^codeplace: warning: calc clock: r^2 = 0.835 is below 0.95" err &&
    $CODEPLACE calc clock 125M:3.1ms 100M:2.0ms 50M:6.1ms --json >j 2>/dev/null &&
    python3 -c "import json; w = json.load(open(\"j\"))[\"warnings\"]; assert len(w) == 2, w"
'

test_expect_success 'calc clock: an exact physical fit has no warning' '
    $CODEPLACE calc clock 125M:3.1ms 100M:3.6ms 50M:6.1ms >out 2>err &&
    test_cmp /dev/null err &&
    $CODEPLACE calc clock 125M:1ms 50M:3ms >out 2>err &&
    grep -q "share 133.3 %" err
'

# ---- layouts against the target's memories ----

test_expect_success 'sim refuses dtcm/itcm on rp2040 (it has neither), with file:line' '
    for r in dtcm itcm; do
        printf "# codeplace layout 2\n\ncrc32.constprop.0 $r - 48 hot\n" >$r.layout &&
        test_exit 1 $CODEPLACE sim $T/r4.trace $FX/tr-m0.elf --layout $r.layout \
            2>err &&
        grep -q "^codeplace: error: $r.layout:3: region $r, but rp2040 has no $r memory (its fast memories: xip_sram, sram)$" err ||
        return 1
    done &&
    printf "# codeplace layout 2\ncrc32.constprop.0 sram - 48 hot\n" >s.layout &&
    $CODEPLACE sim $T/r4.trace $FX/tr-m0.elf --layout s.layout >out
'

test_expect_success 'verify refuses a region the target does not have, with file:line' '
    printf "# codeplace layout 2\n# target: rp2040\n\ncrc32.constprop.0 dtcm - 48 hot\n" >d.layout &&
    test_exit 1 $CODEPLACE verify d.layout $FX/tr-m0.elf -t rp2040 2>err &&
    grep -q "^codeplace: error: d.layout:4: region dtcm, but rp2040 has no dtcm memory$" err
'

test_expect_success 'two functions at one SRAM address are refused with file:line' '
    printf "# codeplace layout 2\ncrc32.constprop.0 sram 0x20000100 48 hot\n__udivsi3 sram 0x20000100 266 hot\n" >o.layout &&
    test_exit 1 $CODEPLACE sim $T/r4.trace $FX/tr-m0.elf --layout o.layout 2>err &&
    grep -q "^codeplace: error: o.layout:3: __udivsi3 at 0x20000100 (266 bytes) overlaps crc32.constprop.0 at 0x20000100 (48 bytes, line 2) in fast memory$" err &&
    printf "# codeplace layout 2\n__udivsi3 sram 0x20000100 266 hot\ncrc32.constprop.0 sram 0x20000200 48 hot\n" >p.layout &&
    test_exit 1 $CODEPLACE sim $T/r4.trace $FX/tr-m0.elf --layout p.layout 2>err &&
    grep -q "^codeplace: error: p.layout:3: crc32.constprop.0 at 0x20000200 (48 bytes) overlaps __udivsi3 at 0x20000100 (266 bytes, line 2)" err &&
    printf "# codeplace layout 2\n__udivsi3 sram 0x20000100 266 hot\ncrc32.constprop.0 sram 0x2000020c 48 hot\n" >q.layout &&
    $CODEPLACE sim $T/r4.trace $FX/tr-m0.elf --layout q.layout >out
'

# ---- apply --emit: the old set of snippets or the new one, never a mix ----

# The old set is the small one of tr-m0 (a page per file); the new one, of
# the demo firmware, has a 16 KB codeplace_flash.ld and a 23 KB
# codeplace.list: with 20 KB free the first two files fit and the list
# does not, which left the new .ld files beside the old list.
test_expect_success 'apply --emit on a full disk leaves the old set whole' '
    FW=$CP_ROOT/build/fw &&
    $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 $HARNESS -n 2 -o d.trace >/dev/null &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace d.trace \
        --target rp2040 --strategy hotblock -q --list big.list >/dev/null 2>&1 &&
    test $(wc -c <big.list) -gt 16384 &&
    unshare -rm true &&
    mkdir mnt &&
    unshare -rm sh -c "mount -t tmpfs -o size=256k tmpfs mnt &&
        $CODEPLACE apply $T/hot.list $FX/tr-m0.elf --map $FX/tr-m0.map \
            --emit mnt/place >/dev/null 2>&1 &&
        cp -r mnt/place old &&
        python3 -c \"import os; s = os.statvfs(\\\"mnt\\\"); open(\\\"mnt/filler\\\", \\\"wb\\\").write(bytes(s.f_bavail * s.f_frsize - 20480))\" &&
        ! $CODEPLACE apply big.list $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
            --emit mnt/place >/dev/null 2>err &&
        diff -r old mnt/place &&
        grep -q \"No space left on device; .mnt/place. is left as it was\" err &&
        test -z \"\$(ls mnt | grep tmp)\" &&
        rm mnt/filler &&
        $CODEPLACE apply big.list $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
            --emit mnt/place >/dev/null 2>&1 &&
        ! diff -r old mnt/place >/dev/null &&
        test \$(wc -c <mnt/place/codeplace.list) -gt 16384 &&
        test -z \"\$(ls mnt | grep tmp)\"" &&
    cat err
'

test_expect_success 'apply --emit keeps the other files of its directory, refuses a subdirectory' '
    $CODEPLACE apply $T/hot.list $FX/tr-m0.elf --map $FX/tr-m0.map --emit place/ >/dev/null &&
    echo mine >place/NOTES &&
    ln -s place link &&
    $CODEPLACE apply $T/hot.list $FX/tr-m0.elf --map $FX/tr-m0.map --emit link >/dev/null &&
    test -L link && test "$(cat place/NOTES)" = mine &&
    test $(ls place | wc -l) = 6 &&
    mkdir place/sub &&
    test_exit 1 $CODEPLACE apply $T/hot.list $FX/tr-m0.elf --map $FX/tr-m0.map \
        --emit place 2>err &&
    grep -q "^codeplace: error: .place. holds .sub., which is not a file" err &&
    test -z "$(ls | grep tmp)"
'

test_done
