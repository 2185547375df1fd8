#!/bin/sh
# A dump written by the profiler core's encoder (through
# build/firmware/profiler/dumpgen, with the console's \r\n and prompts)
# round-trips through `codeplace samples`, the host-side importer (same
# addresses, same counts, same total), and through `codeplace report` onto
# the functions of an ELF. Skipped while those commands are not in this
# build.
. "$(dirname "$0")/lib.sh"
GEN=$CP_ROOT/build/firmware/profiler/dumpgen

if ! $CODEPLACE samples --help >/dev/null 2>&1; then
    test_skip 'dump round trip through codeplace samples' 'no samples command in this build'
    if $CODEPLACE report --help >/dev/null 2>&1 && test -f "$CP_FIXTURES/m0.elf"; then
    test_expect_success 'encoder dump -> codeplace report: samples per function' '
        nm=$(arm-none-eabi-nm "$CP_FIXTURES/m0.elf") &&
        at() { echo "$nm" | awk -v f="$1" "\$3 == f {print \$1; exit}"; } &&
        printf "%x 700\n%x 200\n%x 100\n" \
            $((0x$(at main) + 2)) $((0x$(at fx_scale) + 3)) $((0x$(at fx_special) + 2)) |
            "$GEN" 64 - >console.log &&
        $CODEPLACE report console.log --elf "$CP_FIXTURES/m0.elf" --csv >r.csv &&
        grep -q "^main,0x$(at main),[0-9]*,700," r.csv &&
        grep -q "^fx_scale,0x$(at fx_scale),[0-9]*,200," r.csv &&
        grep -q "^fx_special,0x$(at fx_special),[0-9]*,100," r.csv
    '
else
    test_skip 'dump through codeplace report' 'no report command or no m0.elf fixture'
fi

test_done
    exit 0
fi

# dump S lines and samples data lines, as "address count" in decimal
norm_dump() { /usr/bin/python3 -c '
import sys, collections
c = collections.Counter()
for l in open(sys.argv[1], newline=""):
    l = l.rstrip("\r\n").split()
    if l[:1] == ["S"]:
        c[int(l[1], 16)] += int(l[2], 16)
for a in sorted(c): print(a, c[a])' "$1"; }
norm_samples() { /usr/bin/python3 -c '
import sys, collections
c = collections.Counter()
for l in open(sys.argv[1]):
    if l.startswith("#") or not l.strip(): continue
    a, n = l.split()[:2]
    c[int(a, 16)] += int(n)
for a in sorted(c): print(a, c[a])' "$1"; }

test_expect_success 'encoder dump -> codeplace samples: same addresses and counts' '
    "$GEN" 1024 50000 7 >console.log &&
    grep -q "^CPDUMP 1 cpu=cortex-m0plus rate_hz=10000 duration_ms=5000 samples=50000 dropped=0 " console.log &&
    $CODEPLACE samples console.log -o s.txt &&
    grep -q "^# source: dump" s.txt &&
    grep -q "^# total: 50000$" s.txt &&
    norm_dump console.log >want &&
    norm_samples s.txt >got &&
    test -s want &&
    test_cmp want got
'

test_expect_success 'a full table: the dump says dropped, the counts still agree' '
    "$GEN" 64 20000 3 >console.log &&
    grep -E "^CPDUMP .* samples=20000 dropped=[1-9][0-9]* buckets=64" console.log &&
    $CODEPLACE samples console.log -o s.txt &&
    norm_dump console.log >want &&
    norm_samples s.txt >got &&
    test_cmp want got
'

test_expect_success 'a corrupted or cut dump is refused' '
    "$GEN" 256 1000 5 >console.log &&
    sed "0,/^S \(........\) 1/s//S \1 2/" console.log >bad.log &&
    ! cmp -s console.log bad.log &&
    test_must_fail $CODEPLACE samples bad.log -o s.txt &&
    grep -v "^E " console.log >cut.log &&
    test_must_fail $CODEPLACE samples cut.log -o s.txt
'

if $CODEPLACE report --help >/dev/null 2>&1 && test -f "$CP_FIXTURES/m0.elf"; then
    test_expect_success 'encoder dump -> codeplace report: samples per function' '
        nm=$(arm-none-eabi-nm "$CP_FIXTURES/m0.elf") &&
        at() { echo "$nm" | awk -v f="$1" "\$3 == f {print \$1; exit}"; } &&
        printf "%x 700\n%x 200\n%x 100\n" \
            $((0x$(at main) + 2)) $((0x$(at fx_scale) + 3)) $((0x$(at fx_special) + 2)) |
            "$GEN" 64 - >console.log &&
        $CODEPLACE report console.log --elf "$CP_FIXTURES/m0.elf" --csv >r.csv &&
        grep -q "^main,0x$(at main),[0-9]*,700," r.csv &&
        grep -q "^fx_scale,0x$(at fx_scale),[0-9]*,200," r.csv &&
        grep -q "^fx_special,0x$(at fx_special),[0-9]*,100," r.csv
    '
else
    test_skip 'dump through codeplace report' 'no report command or no m0.elf fixture'
fi

test_done
