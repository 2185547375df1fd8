#!/bin/sh
# codeplace_apply() (cmake/codeplace.cmake) in a real pico-sdk 2.2.0 build
# of a pico_stdlib app (tests/pico): the stock app is traced on the virtual
# board from reset (boot ROM, boot2, crt0, runtime init, main) and planned
# at 0 and 8 KiB; each plan's pico-sdk fragment is built with both groups
# (sram through .time_critical, the flash hot block through the linker
# script derived from the SDK's memmap_default.ld); the ELF and map have
# every sram name in .data, the hot block at the planned addresses right
# after the SDK's start-up sections, boot2 and the vector table as in the
# stock image; `codeplace verify` passes; the relinked app computes the
# same result, from reset and in harness mode, and its trace from reset
# has the misses the plan predicted. What codeplace_apply() cannot move
# (libc's strlen, a name two static functions have) is never planned for
# SRAM, hot as it is. One stock build, one applied build relinked per plan.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vendor-lib.sh"
# unicorn's own allocation when code in SRAM is written (its translation
# cache), not codeplace's
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
P=$CP_ROOT/tests/pico
S=$TEST_TMP/stock
A=$TEST_TMP/applied

trace() { # ELF OUT: from reset
    $CODEPLACE trace "$1" -t rp2040 --rom "$CP_BOOTROM" --mark codeplace_mark \
        -n 6 --result codeplace_result -o "$2" -q
}
htrace() { # ELF OUT: harness mode, after the real start-up
    $CODEPLACE trace "$1" -t rp2040 --rom "$CP_BOOTROM" --init codeplace_init \
        --iter codeplace_iteration -n 6 --result codeplace_result -o "$2" -q
}
warm() { # TRACE ELF MAP: warm misses per iteration
    $CODEPLACE sim "$1" "$2" --map "$3" | sed -n 's/^  misses  *[0-9,]*  *\([0-9.,]*\)$/\1/p' | tr -d ,
}
applies() { # DIR: the pico-sdk fragment's prediction
    sed -n 's/^# pico-sdk applies: \([0-9.]*\) misses per iteration.*/\1/p' "$1/codeplace_pico.cmake"
}
addr() { # ELF NAME
    arm-none-eabi-nm "$1" | awk -v s="$2" '$3 == s {print $1}'
}
# apply PLANDIR: relink the app with the plan's name list and flash hook
apply() {
    pico_build "$P" "$A" -DHOT_LIST="$1/codeplace.list" -DHOT_FLASH="$1/codeplace_flash.ld"
}
# checks the applied image against PLANDIR and the stock image
check_applied() {
    d=$1
    # every sram name of the list in .data, in SRAM
    sed -n '/^# region: sram/,/^# region: flash/p' "$d/codeplace.list" |
        grep -v "^#" | awk '{print $1}' >sram.names &&
    for n in $(cat sram.names); do
        arm-none-eabi-objdump -t "$A/app.elf" | grep -E "^2000[0-9a-f]{4} .* F \.data	[0-9a-f]+ $n$" >/dev/null ||
            { echo "$n is not in .data"; return 1; }
    done &&
    # the hot block: each section at __codeplace_hot_start + its offset, in order
    hot=$(addr "$A/app.elf" __codeplace_hot_start) &&
    test "$hot" = "$(sed -n 's/^# The hot block starts at 0x\([0-9a-f]*\),.*/\1/p' "$d/codeplace_pico.cmake")" &&
    awk '/^    \. = __codeplace_hot_start \+ 0x/ { off = $5; sub(";", "", off) }
         /^    \*.*\/\* .*, [0-9]+ bytes, set / { split($0, c, "/\\* "); split(c[2], w, ","); print off, w[1] }' \
        "$d/codeplace_flash.ld" >hot.planned &&
    prev=0 &&
    while read off name; do
        want=$(printf "%08x" $((0x$hot + off))) &&
        { addr "$A/app.elf" "$name" | grep -qx "$want" ||
            { echo "$name at $(addr "$A/app.elf" "$name"), planned $want"; return 1; }; } &&
        { test $((0x$want)) -gt $prev || { echo "$name out of order"; return 1; }; } &&
        prev=$((0x$want)) || return 1
    done <hot.planned &&
    end=$(sed -n 's/^    \. = __codeplace_hot_start + \(0x[0-9a-f]*\); \/\* the block.s end \*\//\1/p' "$d/codeplace_flash.ld") &&
    { test -z "$end" || test "$(addr "$A/app.elf" __codeplace_hot_end)" = "$(printf "%08x" $((0x$hot + end)))"; } &&
    # the start-up sections before it: boot2 and the vector table as linked stock
    for sec in boot2 vectors; do
        if [ $sec = boot2 ]; then o="-j .boot2"; else o="-j .text"; fi
        arm-none-eabi-objcopy -O binary $o "$S/app.elf" s.bin &&
        arm-none-eabi-objcopy -O binary $o "$A/app.elf" a.bin &&
        head -c 192 s.bin >s.head && head -c 192 a.bin >a.head &&
        { cmp s.head a.head || return 1; }
    done &&
    test "$(addr "$A/app.elf" __vectors)" = 10000100 &&
    test "$(addr "$A/app.elf" _entry_point)" = "$(addr "$S/app.elf" _entry_point)" &&
    # verify against the plan's layout
    $CODEPLACE verify "$d.layout" "$A/app.elf" --map "$A/app.map" >verify.out &&
    grep "^result:    as planned" verify.out
}

test_expect_success 'the stock app: built, traced from reset, planned at 0 and 8 KiB' '
    pico_build "$P" "$S" &&
    (cd "$S" && trace app.elf s.trace >trace.out && htrace app.elf h.trace >htrace.out) &&
    grep "^result:" "$S/trace.out" &&
    test "$(grep "^result:" "$S/trace.out")" = "$(grep "^result:" "$S/htrace.out")" &&
    cd "$S" &&
    $CODEPLACE plan app.elf --map app.map --trace s.trace -t rp2040 --strategy colour \
        --time 0 -q --layout p0.layout --emit p0 >/dev/null &&
    $CODEPLACE plan app.elf --map app.map --trace s.trace -t rp2040 --strategy combined \
        --budget 8K --time 0 -q --layout p8.layout --emit p8 >/dev/null &&
    $CODEPLACE plan app.elf --map app.map --trace s.trace -t rp2040 --strategy rank \
        --budget 32K --time 0 -q --layout pr.layout --emit pr >/dev/null &&
    grep "all of the plan" pr/codeplace_pico.cmake &&
    grep "all of the plan" p0/codeplace_pico.cmake &&
    grep "all of the plan" p8/codeplace_pico.cmake
'

test_expect_success 'the hot block starts after .reset, at the next 8 bytes' '
    end=$(awk "/^ \.reset / {print \$2, \$3}" "$S/app.map") &&
    want=$(printf "%08x" $(( ($(echo $end | cut -d" " -f1) + $(echo $end | cut -d" " -f2) + 7) / 8 * 8 ))) &&
    grep "The hot block starts at 0x$want," "$S/p8/codeplace_pico.cmake" &&
    grep "__codeplace_hot_start is 0x$want;" "$S/p8/codeplace_flash.ld"
'

for plan in p0 p8; do
    test_expect_success "plan $plan built with codeplace_apply(): placed as planned, verified" "
        apply $S/$plan &&
        ! grep 'codeplace: warning' $A.log &&
        grep -E 'codeplace: app.elf: flash: ([0-9]+) of \\1 listed functions placed, 0 not' $A.log &&
        if [ $plan = p8 ]; then
            grep -E 'codeplace: app.elf: sram: ([0-9]+) of \\1 listed functions placed, 0 not' $A.log
        fi &&
        check_applied $S/$plan
    "
    test_expect_success "plan $plan: the same result, and the misses predicted" "
        trace $A/app.elf a.trace >trace.out &&
        test \"\$(grep '^result:' trace.out)\" = \"\$(grep '^result:' $S/trace.out)\" &&
        htrace $A/app.elf h.trace >htrace.out &&
        test \"\$(grep '^result:' htrace.out)\" = \"\$(grep '^result:' $S/trace.out)\" &&
        m=\$(warm a.trace $A/app.elf $A/app.map) &&
        p=\$(applies $S/$plan) &&
        echo \"$plan: predicted \$p, measured \$m\" &&
        test -n \"\$m\" && test \"\$m\" = \"\$p\"
    "
done

test_expect_success 'what codeplace_apply() cannot move is not planned for SRAM' '
    $CODEPLACE sim $S/s.trace $S/app.elf --map $S/app.map --by function --csv >prof.csv &&
    grep "^strlen," prof.csv && grep "^twice," prof.csv &&
    sed -n "/^# region: sram/,/^# region: flash/p" $S/pr/codeplace.list >sram &&
    test $(grep -c "^[a-z]" sram) -gt 10 &&
    ! grep -E "^(strlen|twice) " sram &&
    apply $S/pr &&
    ! grep "codeplace: warning" $A.log &&
    $CODEPLACE verify $S/pr.layout $A/app.elf --map $A/app.map >verify.out &&
    grep "^result:    as planned" verify.out
'

test_done
