#!/bin/sh
# codeplace samples: OpenOCD gmon.out (checked against binutils' gprof),
# on-target dumps (CRC, truncation), samples files; and report reading them
# directly.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
MKGMON="python3 $CP_ROOT/tests/cli/mkgmon.py"

# PCs inside (not at the first halfword of) m0 functions: gprof takes the
# Thumb bit of a symbol's value as its start, so it files a sample at a
# function's first halfword under the previous function.
PCS="10000808x300 10000810x200 10001050x500 10001100x250 10000128x100 10000116x50 10000150x80"

test_expect_success 'gmon.out: per-function samples agree with gprof' '
    $MKGMON gmon.out 1000 $PCS &&
    $CODEPLACE samples gmon.out -o s.txt -q &&
    head -1 s.txt | grep -q "^# codeplace samples 1$" &&
    grep -q "^# source: gmon$" s.txt &&
    grep -q "^# rate_hz: 1000$" s.txt &&
    grep -q "^# total: 1480$" s.txt &&
    $CODEPLACE report s.txt --elf $FX/m0.elf --csv >r.csv &&
    arm-none-eabi-gprof -b -p $FX/m0.elf gmon.out >gprof.txt &&
    python3 - <<-\EOF
	import csv, re
	ours = {r["function"]: int(r["samples"]) for r in csv.DictReader(open("r.csv"))}
	theirs = {}
	for line in open("gprof.txt"):
	    m = re.match(r"\s*[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\S+)$", line)
	    if m:
	        theirs[m.group(2)] = round(float(m.group(1)) * 1000)
	assert theirs, open("gprof.txt").read()
	assert ours == theirs, (ours, theirs)
	EOF
'

test_expect_success 'report reads gmon.out directly' '
    $MKGMON gmon.out 1000 $PCS &&
    $CODEPLACE report gmon.out --elf $FX/m0.elf -q >out &&
    grep -q "^samples:   gmon.out (gmon)$" out &&
    grep -E -q "^ +750 +50\.7% .* vfprintf " out
'

test_expect_success 'gmon.out with an explicit range drops samples outside it (as OpenOCD does)' '
    $MKGMON gmon.out 100 10000808x10 10001050x5 --range 0x10000000 0x10001000 &&
    $CODEPLACE samples gmon.out -q >s.txt &&
    grep -q "^# total: 10$" s.txt
'

test_expect_success 'truncated and foreign gmon.out are refused' '
    $MKGMON gmon.out 1000 $PCS &&
    head -c 100 gmon.out >cut.out &&
    test_exit 1 $CODEPLACE samples cut.out 2>err &&
    grep -q "^codeplace: error: cut.out: truncated gmon.out" err &&
    printf "gmon\002\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000" >v2.out &&
    test_exit 1 $CODEPLACE samples v2.out 2>err &&
    grep -q "v2.out: gmon.out version 2 is not supported" err
'

# A dump as the on-target profiler prints it, CRC computed here with
# Python's zlib.crc32 (IEEE 802.3), surrounded by console noise.
mk_dump() {
    python3 - "$@" <<-\EOF
	import sys, zlib
	body = ("CPDUMP 1 cpu=cortex-m0plus rate_hz=1000 duration_ms=1500 samples=1508 dropped=4 buckets=6\n"
	        "S 10000808 12c\nS 10000810 c8\nS 1000104c 1f4\nS 10001100 fa\n"
	        "S ffffffff 14\nS 20000100 ee\n")
	crc = zlib.crc32(body.encode()) & 0xffffffff
	text = "boot ok\r\nuart:~$ codeplace dump\r\n" + body.replace("\n", "\r\n") + \
	       "E 6 %08x\r\nuart:~$ " % crc
	open("console.log", "w", newline="").write(text)
	EOF
}

test_expect_success 'dump: converted with halted and RAM samples kept' '
    mk_dump &&
    $CODEPLACE samples console.log -o s.txt -q &&
    cat >expect <<-\EOF &&
	# codeplace samples 1
	# source: dump
	# target: 
	# cpu: cortex-m0plus
	# elf: 
	# rate_hz: 1000
	# duration_s: 1.500
	# dropped: 4
	# total: 1508
	0x10000808 300
	0x10000810 200
	0x1000104c 500
	0x10001100 250
	0x20000100 238
	0xffffffff 20
	EOF
    test_cmp expect s.txt &&
    $CODEPLACE report console.log --elf $FX/m0.elf -q >out &&
    grep -q "4 dropped by the profiler" out &&
    grep -E -q "^ +20 +1\.3% +- +- +\(halted\)$" out
'

test_expect_success 'dump: cut short anywhere before its end line is refused' '
    mk_dump &&
    size=$(grep -b -o "^E 6" console.log | cut -d: -f1) &&
    for cut in 10 40 120 150 $size $((size + 5)); do
        head -c $cut console.log >cut.log &&
        test_exit 1 $CODEPLACE samples cut.log 2>err || return 1
    done &&
    head -c $size console.log >cut.log &&
    test_exit 1 $CODEPLACE samples cut.log 2>err &&
    grep -q "cut.log: dump cut short: no .E. line after 6 of 6 sample lines" err
'

test_expect_success 'dump: a corrupted digit or a lost line is refused' '
    mk_dump &&
    sed "s/^S 10000810 c8/S 10000810 c9/" console.log >bad.log &&
    test_exit 1 $CODEPLACE samples bad.log 2>err &&
    grep -q "bad.log:10: CRC mismatch" err &&
    grep -v "^S 10000810" console.log >lost.log &&
    test_exit 1 $CODEPLACE samples lost.log 2>err &&
    grep -q "lost.log:9: end line counts 6 sample lines but the dump has 5" err
'

test_expect_success 'samples: --elf stamps the image hash; trace options need a trace' '
    mk_dump &&
    $CODEPLACE samples console.log --elf $FX/m0.elf --target rp2040 -q >s.txt &&
    grep -q "^# target: rp2040$" s.txt &&
    hash=$($CODEPLACE image $FX/m0.elf --json | python3 -c "import json,sys; print(json.load(sys.stdin)[\"hash\"])") &&
    grep -q "^# elf: $hash$" s.txt &&
    test_exit 2 $CODEPLACE samples console.log --every 100 2>err &&
    grep -q "are for traces" err
'

test_done
