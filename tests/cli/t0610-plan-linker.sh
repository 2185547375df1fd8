#!/bin/sh
# What the linker really does, against the planner's model: stub calls,
# the stock line, fast-memory addresses and stubs in the layout, checked
# against the demo firmware relinked by GNU ld (real arm-none-eabi ld).
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
HARNESS="--init codeplace_init --iter codeplace_iteration --result codeplace_result"
W=$TEST_TMP/work
mkdir -p "$W"

# The planner reads each section's alignment from the objects the map
# names, relative to the project root: plan from there.
plan() { # TARGET STRATEGY BUDGET TAG [args]
    t=$1 s=$2 b=$3 tag=$4
    shift 4
    (cd "$CP_ROOT" && $CODEPLACE plan $FW/demo-$t.elf --map $FW/demo-$t.map \
        --trace $W/$t.trace --target $t --strategy $s --budget $b \
        --emit $W/$tag.place --layout $W/$tag.layout "$@")
}
relink() { # TARGET TAG
    "$CP_ROOT/firmware/relink.sh" $1 $W/$2.place $W/$2
}
json() { # FILE EXPR
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(eval(sys.argv[2], {"d": d}))' "$@"
}

# --time 0: --refine-from needs the same plan again, which a selection cut
# short by the clock on a busy machine does not give.
for t in rp2040 imxrt1062; do
    test_expect_success "$t: trace and plan ram 8K, relink" "
        $CODEPLACE trace $FW/demo-$t.elf --target $t $HARNESS -n 4 -q -o $W/$t.trace >/dev/null &&
        plan $t ram 8K $t-ram --time 0 --json -q -o $W/$t-ram.json &&
        relink $t $t-ram
    "
done

test_expect_success 'the stock line shows the stock image (instructions as sim measures them)' "
    $CODEPLACE sim $W/rp2040.trace --elf $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --json -q -o sim.json &&
    stock=\$(json sim.json \"round(d['warm']['sum']['instructions'] / d['warm']['iterations'])\") &&
    plan rp2040 rank 8K text -q >out &&
    grep \"^stock: .*, \$stock instructions\$\" out &&
    plan rp2040 rank 8K rank8 --json -q -o $W/rank8.json &&
    test \"\$(json $W/rank8.json \"round(d['results'][0]['stock_instructions_per_iteration'])\")\" = \$stock &&
    test \"\$(json $W/rp2040-ram.json \"round(d['results'][0]['stock_instructions_per_iteration'])\")\" = \$stock &&
    planned=\$(json $W/rank8.json \"round(d['results'][0]['instructions_per_iteration'])\") &&
    test \$planned -gt \$stock
"

# nm NAME -> addresses of that symbol in ELF
# --time 0: --refine-from needs the same plan again, which a selection cut
# short by the clock on a busy machine does not give.
for t in rp2040 imxrt1062; do
    test_expect_success "$t: every fast-memory address in the layout is where ld put it" "
        arm-none-eabi-nm $W/$t-ram.elf >nm &&
        grep -E ' (sram|itcm) ' $W/$t-ram.layout >fast &&
        test \$(wc -l <fast) -gt 5 &&
        while read name region addr rest; do
            a=\$(printf '%08x' \$((addr))) &&
            grep -q \"^\$a [Tt] \${name%@*}\$\" nm ||
            { echo \"\$name: layout \$addr, ld:\"; grep \" \${name%@*}\$\" nm; return 1; }
        done <fast
    "
done

test_expect_success 'rp2040: the layout lists the stubs ld made (flash and fast memory)' "
    grep '^@stub 0x1' $W/rp2040-ram.layout >flash &&
    grep '^@stub 0x2' $W/rp2040-ram.layout >ram &&
    test -s flash && test -s ram &&
    arm-none-eabi-nm $W/rp2040-ram.elf >nm &&
    test \$(python3 $CP_ROOT/tests/cli/veneers.py nm count 1) -eq \$(wc -l <flash) &&
    test \$(python3 $CP_ROOT/tests/cli/veneers.py nm count 2) -eq \$(wc -l <ram)
"

test_expect_success 'sim --layout fetches the stubs: the plan prediction and the relinked instructions' "
    $CODEPLACE trace $W/rp2040-ram.elf --target rp2040 $HARNESS -n 4 -q -o placed.trace >/dev/null &&
    $CODEPLACE sim placed.trace --elf $W/rp2040-ram.elf --map $W/rp2040-ram.map --json -q -o real.json &&
    $CODEPLACE sim $W/rp2040.trace --elf $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --layout $W/rp2040-ram.layout --json -q -o lay.json &&
    test \"\$(json lay.json \"round(d['warm']['sum']['instructions'] / d['warm']['iterations'], 1)\")\" = \
         \"\$(json real.json \"round(d['warm']['sum']['instructions'] / d['warm']['iterations'], 1)\")\" &&
    test \"\$(json lay.json \"round(d['warm']['misses_mean'], 3)\")\" = \
         \"\$(json $W/rp2040-ram.json \"round(d['results'][0]['misses_per_iteration'], 3)\")\"
"

test_expect_success 'sim --layout: a bad @stub line names the file and line' "
    printf '# codeplace layout 2\n@stub 0x10000000 16 5 no_such_function\n' >bad.layout &&
    test_must_fail $CODEPLACE sim $W/rp2040.trace --elf $FW/demo-rp2040.elf \
        --layout bad.layout 2>err &&
    grep -q 'bad.layout:2: stub target .no_such_function. is not a function' err &&
    printf '# codeplace layout 2\n@stub 0x10000000 sixteen 5 vfprintf\n' >bad.layout &&
    test_must_fail $CODEPLACE sim $W/rp2040.trace --elf $FW/demo-rp2040.elf \
        --layout bad.layout 2>err &&
    grep -q 'bad.layout:2: expected .@stub 0xADDR SIZE INSNS TARGET' err &&
    printf '# codeplace layout 1\n@stub 0x10000000 16 5 vfprintf\n' >old.layout &&
    test_must_fail $CODEPLACE sim $W/rp2040.trace --elf $FW/demo-rp2040.elf \
        --layout old.layout 2>err &&
    grep -q 'old.layout:2: @stub lines need layout version 2' err
"

test_expect_success 'plan --refine-from: the flash stubs where ld put them, predicted again' "
    plan rp2040 ram 8K refined --time 0 --refine-from $W/rp2040-ram.elf \
        --refine-map $W/rp2040-ram.map --json -q -o $W/refined.json &&
    arm-none-eabi-nm $W/rp2040-ram.elf >nm &&
    python3 $CP_ROOT/tests/cli/veneers.py nm addrs 10 >ld &&
    sed -n 's/^@stub 0x\(1[0-9a-f]*\) .*/\1/p' $W/refined.layout | sort >ours &&
    test -s ld && test_cmp ld ours &&
    json $W/refined.json \"d['results'][0]['misses_before_refine']\" >/dev/null &&
    $CODEPLACE sim $W/rp2040.trace --elf $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --layout $W/refined.layout --json -q -o lay2.json &&
    test \"\$(json lay2.json \"round(d['warm']['misses_mean'], 3)\")\" = \
         \"\$(json $W/refined.json \"round(d['results'][0]['misses_per_iteration'], 3)\")\"
"

test_expect_success 'plan --refine-from: usage and bad input' "
    test_exit 2 $CODEPLACE plan $FW/demo-rp2040.elf --trace $W/rp2040.trace --target rp2040 \
        --refine-map x.map 2>err &&
    grep -q 'refine-map goes with --refine-from' err &&
    echo nope >not.elf &&
    test_must_fail $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace $W/rp2040.trace --target rp2040 --strategy ram --budget 1K \
        --refine-from not.elf 2>err &&
    grep -q 'not.elf' err
"

# An image that is not this plan relinked (the stock one, or another plan's)
# would give stubs and a text end of nothing that exists: an error, no figure.
test_expect_success 'plan --refine-from an image that is not this plan relinked: an error naming it' "
    test_exit 1 $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace $W/rp2040.trace --target rp2040 --strategy ram --budget 8K \
        --refine-from $FW/demo-rp2040.elf --refine-map $FW/demo-rp2040.map \
        -q -o out 2>err &&
    grep -q \"^codeplace: error: $FW/demo-rp2040.elf is not this plan relinked: [1-9][0-9]* of the [1-9][0-9]* functions it places are elsewhere (first: \" err &&
    ! test -s out &&
    test_exit 1 $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace $W/rp2040.trace --target rp2040 --strategy colour --time 0 \
        --search-moves 200 --descent-passes 0 \
        --refine-from $W/rp2040-ram.elf --refine-map $W/rp2040-ram.map -q -o out 2>err &&
    grep -q 'rp2040-ram.elf is not this plan relinked' err
"

test_expect_success 'a map whose objects cannot be found warns that alignments are guessed; the map'"'"'s directory and its parents are searched' "
    cp $FW/demo-rp2040.map far.map &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map far.map --trace $W/rp2040.trace \
        --target rp2040 --strategy hotblock -q >/dev/null 2>err &&
    grep -q 'sections: their object files .* alignment is guessed' err &&
    $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map --trace $W/rp2040.trace \
        --target rp2040 --strategy hotblock -q >/dev/null 2>err1 &&
    ! grep -q 'alignment is guessed' err1 &&
    (cd $CP_ROOT && $CODEPLACE plan $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --trace $W/rp2040.trace --target rp2040 --strategy hotblock -q >/dev/null) 2>err2 &&
    ! grep -q 'alignment is guessed' err2
"

test_done
