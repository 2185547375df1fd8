#!/bin/sh
# codeplace report: attribution per function, library and section on the m0
# fixture, every output format, filters, and bad input.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
SCHEMA="python3 $CP_ROOT/tests/cli/check-report.py"

# Hand-made samples over the m0 fixture (addresses from `codeplace image
# m0.elf --functions`): vfprintf 0x1000104c (3044 bytes), qsort 0x10000804,
# fx_sum 0x10000124, fx_scale 0x10000114, __aeabi_dmul 0x1000014c (libgcc),
# the halted marker, the stack in RAM, and a ROM address.
mk_samples() {
    cat >s.txt <<-\EOF
	# codeplace samples 1
	# source: probe-pcsr
	# rate_hz: 1000
	# duration_s: 1.5
	0x10000804 300
	0x10000810 200
	0x1000104c 500
	0x10001100 250
	0x10000124 100
	0x10000114 50
	0x1000014c 80
	0xffffffff 20
	0x20000100 5
	0x00001234 3
	EOF
    ln -s "$FX/m0.elf" m0.elf && ln -s "$FX/m0.map" m0.map
}

test_expect_success 'text report, golden' '
    mk_samples &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map >out 2>err &&
    cat >expect <<-\EOF &&
	samples:   s.txt (probe-pcsr)
	image:     m0.elf
	map:       m0.map
	total:     1,508 samples, 1 kHz, 1.500 s
	outside:   28 samples (1.9%) in no function, 20 of them halted
	misses:    not counted: no --trace given
	by library: 83 % libc.a, 10 % (objects), 5 % libgcc.a, 1 % (halted)

	functions (8 of 8, by samples):
	     samples  share   bytes  smp/byte  function                         library
	         750  49.7%   3,044     0.246  vfprintf                         libc.a
	         500  33.2%     692     0.723  qsort                            libc.a
	         100   6.6%      32     3.125  fx_sum                           (objects)
	          80   5.3%   1,416     0.056  __aeabi_dmul                     libgcc.a
	          50   3.3%       8     6.250  fx_scale                         (objects)
	          20   1.3%       -         -  (halted)
	           5   0.3%       -         -  (no function in .stack)
	           3   0.2%       -         -  (outside the image)

	libraries:
	     samples  share functions     bytes  library
	       1,250  82.9%        45    12,814  libc.a
	         150   9.9%         6       266  (objects)
	          80   5.3%        30     7,380  libgcc.a
	          20   1.3%         0         0  (halted)
	           5   0.3%         0         0  (no function in .stack)
	           3   0.2%         0         0  (outside the image)

	sections:
	     samples  share functions     bytes  section
	       1,480  98.1%        81    20,460  .text
	          20   1.3%         0         0  (halted)
	           5   0.3%         0         0  (no function in .stack)
	           3   0.2%         0         0  (outside the image)
	EOF
    test_cmp expect out &&
    grep -q "20 samples were taken while the core was halted" err
'

test_expect_success 'a target names memories outside the image' '
    mk_samples &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --target rp2040 -q >out &&
    grep -E -q "^ +3 +0\.2% +- +- +\(memory rom\)$" out
'

test_expect_success '--sort density, --top, --func and --lib' '
    mk_samples &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --sort density --top 2 -q >out &&
    sed -n "/^functions/,/^$/p" out >fn &&
    cat >expect <<-\EOF &&
	functions (2 of 8, by density):
	     samples  share   bytes  smp/byte  function                         library
	          50   3.3%       8     6.250  fx_scale                         (objects)
	         100   6.6%      32     3.125  fx_sum                           (objects)

	EOF
    test_cmp expect fn &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --func "fx_sum_al*" -q >out &&
    grep -q "^functions (1 of 1, by samples):" out &&
    grep -q " fx_sum " out &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --lib "libgcc*" --all -q >out &&
    grep -q "^functions (20 of 30, by samples):" out &&
    sed -n "/^functions/,/^$/p" out >fn &&
    ! grep -q "libc\.a" fn &&
    test $(grep -c " libgcc\.a$" fn) -eq 20
'

test_expect_success 'CSV per function: schema, and the rows add up' '
    mk_samples &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --csv >f.csv &&
    $SCHEMA csv-func f.csv 1508 &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --csv --all >all.csv &&
    test $(wc -l <all.csv) -eq $((81 + 3 + 1)) &&
    $SCHEMA csv-func all.csv 1508
'

test_expect_success 'CSV per library and per section' '
    mk_samples &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --csv --by lib >l.csv &&
    head -2 l.csv >got &&
    cat >expect <<-\EOF &&
	library,samples,share,functions,bytes
	libc.a,1250,0.828912,45,12814
	EOF
    test_cmp expect got &&
    $SCHEMA csv-group l.csv 1508 &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --csv --by section >s.csv &&
    $SCHEMA csv-group s.csv 1508
'

test_expect_success 'JSON: schema, sums and attribution against the image' '
    mk_samples &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --json >r.json &&
    $CODEPLACE image m0.elf --map m0.map --functions --json >img.json &&
    $SCHEMA json r.json 1508 img.json s.txt
'

test_expect_success 'folded stacks and speedscope add up to the total' '
    mk_samples &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --folded >f.txt &&
    grep -q "^libc\.a;vfprintf 750$" f.txt &&
    grep -q "^(halted) 20$" f.txt &&
    $SCHEMA folded f.txt 1508 &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --speedscope >ss.json &&
    $SCHEMA speedscope ss.json 1508
'

test_expect_success 'SVG plot is well-formed XML with the expected bars' '
    mk_samples &&
    $CODEPLACE report s.txt --elf m0.elf --map m0.map --svg p.svg -q >/dev/null &&
    $SCHEMA svg p.svg 6 8
'

test_expect_success 'samples of another build: a warning, still a report' '
    mk_samples &&
    sed "s/^# source: probe-pcsr/# elf: fnv1a64:0000000000000000/" s.txt >o.txt &&
    $CODEPLACE report o.txt --elf m0.elf -q >out 2>err &&
    grep -q "warning: o.txt was sampled from image fnv1a64:0000000000000000" err &&
    grep -q "^total: *1,508 samples" out
'

test_expect_success 'bad samples files name the file and line' '
    printf "# codeplace samples 1\n0x10000804 3\n0x1000zz 1\n" >bad.txt &&
    test_exit 1 $CODEPLACE report bad.txt --elf $FX/m0.elf 2>err &&
    grep -q "^codeplace: error: bad.txt:3: address .0x1000zz. is not hex" err &&
    printf "# codeplace samples 1\n# total: 10\n0x10000804 3\n" >cut.txt &&
    test_exit 1 $CODEPLACE report cut.txt --elf $FX/m0.elf 2>err &&
    grep -q "cut.txt: header says total 10 but the counts add up to 3" err &&
    printf "hello\n" >junk.txt &&
    test_exit 1 $CODEPLACE report junk.txt --elf $FX/m0.elf 2>err &&
    grep -q "junk.txt: not a samples file, gmon.out or profiler dump" err &&
    test_exit 1 $CODEPLACE report nosuch.txt --elf $FX/m0.elf 2>err &&
    grep -q "cannot open .nosuch.txt." err &&
    printf "CPTRACE\000xxxxxxxx" >run.trace &&
    test_exit 1 $CODEPLACE report run.trace --elf $FX/m0.elf 2>err &&
    grep -q "run.trace: a trace, not samples: sample it with .codeplace samples run.trace" err
'

test_expect_success 'usage errors exit 2' '
    mk_samples &&
    test_exit 2 $CODEPLACE report s.txt 2>err &&
    grep -q "give the ELF the samples come from" err &&
    test_exit 2 $CODEPLACE report s.txt --elf m0.elf --sort speed 2>err &&
    test_exit 2 $CODEPLACE report s.txt --elf m0.elf --json --csv 2>err &&
    test_exit 2 $CODEPLACE report s.txt --elf m0.elf --by object 2>err &&
    test_exit 2 $CODEPLACE report s.txt --elf m0.elf --target nosuch 2>err
'

# The demo firmware on the virtual board: a trace of 2 iterations, samples
# taken from it at 4 kHz, then the report with the trace's cache misses.
FW=$CP_ROOT/build/fw
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
test_expect_success 'trace: samples from it, misses per function agree with sim' '
    $CODEPLACE trace -q $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --target rp2040 --init codeplace_init --iter codeplace_iteration \
        -n 2 -o run.trace >/dev/null &&
    $CODEPLACE samples run.trace --elf $FW/demo-rp2040.elf --rate 4000 \
        -o s.txt 2>err &&
    grep -q "one sample per 24038 instructions" err &&
    grep -q "^# source: trace$" s.txt &&
    grep -q "^# method: poisson 24038 seed 1$" s.txt &&
    $CODEPLACE report s.txt --elf $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace run.trace -q >out &&
    grep -E -q "^misses: +[0-9.]+ per iteration \([0-9,]+ over 1 warm iteration\) in the rp2040 cache \(16,384 bytes, 2-way, 8-byte lines, lru\), warm iterations 1..1 of run.trace$" out &&
    grep -q "  samples  share   bytes  smp/byte    misses  mis/byte  function" out &&
    $CODEPLACE report s.txt --elf $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace run.trace --json --all -q >r.json &&
    $CODEPLACE sim run.trace --elf $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --json -q >sim.json &&
    python3 - <<-\EOF
	import json
	r = json.load(open("r.json")); s = json.load(open("sim.json"))
	assert r["misses"] == s["warm"]["sum"]["misses"] > 0, (r["misses"], s["warm"])
	ours = {f["name"]: f["misses"] for f in r["functions"] if f["function"] and f["misses"]}
	theirs = {f["name"]: f["misses"] for f in s["functions"] if f["misses"] and not f["name"].startswith("?")}
	assert ours == theirs, set(ours.items()) ^ set(theirs.items())
	libs = {l["name"]: l["misses"] for l in r["libraries"]}
	for l in s["libraries"]:
	    if l["name"] in libs:
	        assert libs[l["name"]] == l["misses"], l
	assert sum(f["misses"] for f in r["functions"]) == r["misses"]
	EOF
'

test_expect_success 'trace: misses and misses/byte per warm iteration, as sim prints them' '
    $CODEPLACE trace -q $FW/demo-rp2040.elf --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 4 -o run.trace >/dev/null &&
    $CODEPLACE samples run.trace $FW/demo-rp2040.elf --every 5000 -o s.txt -q &&
    $CODEPLACE report s.txt $FW/demo-rp2040.elf --trace run.trace --csv -q >r.csv &&
    $CODEPLACE sim run.trace $FW/demo-rp2040.elf --csv --by function -q >f.csv &&
    $CODEPLACE report s.txt $FW/demo-rp2040.elf --trace run.trace -q >out &&
    grep -E -q "^misses: +[0-9.]+ per iteration \([0-9,]+ over 3 warm iterations\)" out &&
    grep -q "^functions (.*; misses per iteration):" out &&
    python3 - <<-\EOF
	import csv
	r = {x["function"]: x for x in csv.DictReader(open("r.csv"))}
	s = {x["function"]: x for x in csv.DictReader(open("f.csv"))}
	n = 0
	for name, x in s.items():
	    if name in r and float(x["misses_per_iteration"]) > 0:
	        assert abs(float(r[name]["misses_per_iteration"]) - float(x["misses_per_iteration"])) < 0.002, (name, r[name], x)
	        if r[name]["misses_per_byte_per_iteration"]:
	            assert abs(float(r[name]["misses_per_byte_per_iteration"]) - float(x["misses_per_byte_per_iteration"])) < 1e-5, name
	        n += 1
	assert n > 10, n
	EOF
'

test_expect_success 'trace: a bad trace file is an error' '
    mk_samples &&
    printf "not a trace" >bad.trace &&
    test_exit 1 $CODEPLACE report s.txt --elf m0.elf --trace bad.trace 2>err &&
    grep -q "bad.trace" err
'

test_expect_success 'the plot in docs/ is what the documented command makes' '
    cd "$CP_ROOT" &&
    $CODEPLACE report docs/img/report-m0-samples.txt --elf build/fixtures/m0.elf \
        --map build/fixtures/m0.map --top 12 --svg "$TEST_TMP/doc.svg" -q >/dev/null &&
    cmp docs/img/report-m0.svg "$TEST_TMP/doc.svg"
'

test_done
