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

for t in rp2040 imxrt1062; do
    test_expect_success "$t: trace and plan ram 8K, relink" "
        $CODEPLACE trace $FW/demo-$t.elf --target $t $HARNESS -n 4 -q -o $W/$t.trace >/dev/null &&
        plan $t ram 8K $t-ram --json -q -o $W/$t-ram.json &&
        relink $t $t-ram
    "
done

test_expect_success 'the stock line shows the stock image (instructions as sim measures them)' "
    $CODEPLACE sim $W/rp2040.trace --elf $FW/demo-rp2040.elf --map $FW/demo-rp2040.map \
        --json -q -o sim.json &&
    stock=\$(json sim.json \"round(d['warm']['sum']['instructions'] / d['warm']['iterations'])\") &&
    plan rp2040 ram 8K text -q >out &&
    grep \"^stock: .*, \$stock instructions\$\" out &&
    test \"\$(json $W/rp2040-ram.json \"round(d['results'][0]['stock_instructions_per_iteration'])\")\" = \$stock &&
    planned=\$(json $W/rp2040-ram.json \"round(d['results'][0]['instructions_per_iteration'])\") &&
    test \$planned -gt \$stock
"

# nm NAME -> addresses of that symbol in ELF
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

test_done
