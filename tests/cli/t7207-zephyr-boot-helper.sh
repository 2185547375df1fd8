#!/bin/sh
# Start-up code found in the trace, not by name, and the hot block's own
# stubs in the layout (docs/zephyr.md, docs/plan.md "Start-up code").
# tests/zephyr/boothelper is a Zephyr 3.5.0 app for mps2_an385 whose loop
# of five mixing stages calls mix32(), which the start-up also runs:
# z_arm_platform_init() (CONFIG_PLATFORM_SPECIFIC_INIT, called first thing
# by z_arm_reset) seeds the loop with it before z_data_copy() has copied
# the relocated code to SRAM. mix32 is on no list of start-up names. Built
# with the module and an empty list, recorded with trace --qemu (50 passes
# of the loop, loop_mark), planned through a 1 KiB 2-way cache so that the
# loop's 1.6 KiB miss:
# - from PC samples (no order, so no trace rule: the name list) the plan
#   puts mix32 in SRAM, and an image with mix32 in SRAM never reaches its
#   first iteration;
# - with --for zephyr the functions the trace fetched before the first
#   entry into z_cstart stay in flash, mix32 among them; relinked, the
#   image runs, as planned;
# - at 600 bytes the hot block calls into SRAM through stubs of its own:
#   sim --layout on the plan's layout gives the plan's figure, and the
#   relinked image is as planned and measured so.
# Under 2 minutes on a loaded 2-core machine (the build is most of it).
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
. "$CP_ROOT/tests/cli/zephyr-loop-lib.sh"

W=$ZL_W
ZL_CACHE="--target mps2-an385 --cache 1K,2,8"
ZL_N=50

# zl_record NAME ELF TRACE: 50 passes of the loop.
zl_record() {
    $CODEPLACE trace --qemu mps2-an385 "$2" --mark loop_mark -n 50 --timeout 60 -o "$3"
}

# sram_of LIST: the names of a list's sram group.
sram_of() { sed -n "/^# region: sram/,/^# region: flash/p" "$1" | grep -v "^#" | awk "{ print \$1 }"; }

test_expect_success 'the app builds with the module and an empty list; mix32 runs before z_cstart' '
    printf "# codeplace name list 1\n" >"$W/codeplace.list" &&
    zephyr_build "$CP_ROOT/tests/zephyr/boothelper" mps2_an385 "$W/b" \
        -DZEPHYR_EXTRA_MODULES="$CP_ROOT" \
        -DCONFIG_CODEPLACE=y "-DCONFIG_CODEPLACE_LIST=\"$W/codeplace.list\"" &&
    grep -q "codeplace: .*codeplace.list: 0 functions to SRAM, 0 to ITCM, 0 first in flash" "$W/b.log" &&
    grep -q "^CONFIG_PLATFORM_SPECIFIC_INIT=y$" "$W/b/zephyr/.config" &&
    base=$(zl_rec base) && echo "base $base" &&
    $CODEPLACE trace --info "$W/base.trace" --records >recs &&
    arm-none-eabi-nm "$W/base/zephyr/zephyr.elf" >nm &&
    mix=$(awk "\$3 == \"mix32\" { print \$1 }" nm | sed "s/^0*//") &&
    cst=$(awk "\$3 == \"z_cstart\" { print \$1 }" nm | sed "s/^0*//") &&
    m=$(grep -n "^fetch 0x0*$mix " recs | head -1 | cut -d: -f1) &&
    c=$(grep -n "^fetch 0x0*$cst " recs | head -1 | cut -d: -f1) &&
    echo "mix32 first fetched at record $m, z_cstart at $c" &&
    test -n "$m" && test -n "$c" && test "$m" -lt "$c"
'

# PC samples hold no order: a plan from samples alone has the name list
# only, which does not know mix32 (nor code relocation's own helpers).
test_expect_success 'from PC samples alone, the name list keeps 7 functions out of SRAM and mix32 goes there' '
    $CODEPLACE samples "$W/base.trace" "$W/base/zephyr/zephyr.elf" --every 7 -o "$W/s.txt" &&
    (cd "$W/b" && $CODEPLACE plan "$W/base/zephyr/zephyr.elf" --map "$W/base/zephyr/zephyr.map" \
        --samples "$W/s.txt" $ZL_CACHE --budget 8192 --for zephyr --list "$W/samples.list") 2>err &&
    grep "start-up code" err &&
    grep -q "plan: start-up code stays out of sram: 7 functions of Zephyr.s start-up name list (no trace)" err &&
    sram_of "$W/samples.list" >names &&
    grep -x -e mix32 -e bss_zeroing_relocation names
'

test_expect_success 'an image with mix32 in SRAM stops in its start-up' '
    printf "# codeplace name list 1\n# region: sram\nmix32 # the boot helper\n" >"$W/bad.list" &&
    zl_relink_sram "$W/bad.list" &&
    { $CODEPLACE trace --qemu mps2-an385 "$W/b/zephyr/zephyr.elf" --mark loop_mark \
        -n 50 --timeout 10 -o bad.trace >bad.out 2>&1; cat bad.out; } &&
    grep -q "stopped by --timeout after 0 of 50 iterations" bad.out
'

test_expect_success 'with --for zephyr, the trace keeps mix32 and the rest of the start-up out of SRAM; relinked, it runs as planned' '
    p8=$(zl_plan 8192) && echo "predicted $p8" &&
    grep "start-up code stays out of sram" "$W/plan8192.out" >said && cat said &&
    grep -q "start-up code stays out of sram: [0-9]* functions fetched before the first entry into z_cstart (in 1 of 1 trace); [0-9]* of them not on the start-up name list: .*mix32" said &&
    grep -q "\"rule\": \"trace\"" "$W/plan8192.json" &&
    grep -q "\"boot_done\": \"z_cstart\"" "$W/plan8192.json" &&
    sram_of "$W/p8192.list" >names && cat names && test -s names &&
    ! grep -x -e mix32 -e z_arm_platform_init -e memset -e memcpy -e z_bss_zero -e z_data_copy \
        -e data_copy_xip_relocation -e bss_zeroing_relocation names &&
    zl_relink_sram "$W/p8192.list" &&
    zl_verify "$W/p8192.layout" &&
    zl_rec m8192 && zl_within2 "$p8" m8192
'

test_expect_success 'budget 600: the hot block'"'"'s own stubs are in the layout; sim --layout gives the plan'"'"'s figure; relinked as planned' '
    p6=$(zl_plan 600) && echo "plan $p6" &&
    grep "^# hot block stubs: [1-9]" "$W/p600.layout" &&
    grep "^@stub 0x[0-9a-f]\{8\} 8 1 [^ ]* from:0x" "$W/p600.layout" &&
    s6=$(zl_sim_layout "$W/p600.layout") && echo "sim --layout $s6" &&
    test "$s6" = "$p6" &&
    zl_relink_sram "$W/p600.list" &&
    zl_verify "$W/p600.layout" &&
    zl_rec m600 && zl_within2 "$p6" m600
'

test_done
