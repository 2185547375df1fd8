#!/bin/sh
# The whole loop on Zephyr 3.5.0's echo_server for mps2_an385 with the
# codeplace module (docs/zephyr.md): one build with CONFIG_CODEPLACE and an
# empty list (3.5.0's zephyr_code_relocate() has no FILTER: the module's
# own path), recorded with trace --qemu's own traffic, planned at 0 and
# 8 KiB with --for zephyr, relinked with each list (the list file changes,
# nothing else: a relink), recorded again the same way: the prediction
# within 2 %, every sram name in RAM, verify as planned.
# The guest gets QEMU's user-network address (10.0.2.15, gateway 10.0.2.2).
# CONFIG_LOG_MODE_IMMEDIATE: the sample logs on every request; deferred, the
# log thread prints in some iterations only, as many as the host's speed
# lets pass (29 to 50 of 200 here): the mean per iteration would follow the
# host's load, not the layout (docs/zephyr.md).
# Under 4 minutes on a loaded 2-core machine (the build is most of it).
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
. "$CP_ROOT/tests/cli/zephyr-loop-lib.sh"

W=$ZL_W
ES=$CP_ZEPHYR/zephyr/samples/net/sockets/echo_server

test_expect_success 'Zephyr 3.5.0 without FILTER: echo_server builds with the module and an empty list' '
    printf "# codeplace name list 1\n" >"$W/codeplace.list" &&
    zephyr_build "$ES" mps2_an385 "$W/b" -DEXTRA_CONF_FILE=overlay-smsc911x.conf \
        -DCONFIG_NET_TCP_ISN_RFC6528=n -DZEPHYR_EXTRA_MODULES="$CP_ROOT" \
        "-DCONFIG_NET_CONFIG_MY_IPV4_ADDR=\"10.0.2.15\"" "-DCONFIG_NET_CONFIG_MY_IPV4_GW=\"10.0.2.2\"" \
        "-DCONFIG_NET_CONFIG_PEER_IPV4_ADDR=\"10.0.2.2\"" -DCONFIG_LOG_MODE_IMMEDIATE=y \
        -DCONFIG_CODEPLACE=y "-DCONFIG_CODEPLACE_LIST=\"$W/codeplace.list\"" &&
    grep -q "codeplace: .*codeplace.list: 0 functions to SRAM, 0 to ITCM, 0 first in flash" "$W/b.log" &&
    arm-none-eabi-objdump -t "$W/b/zephyr/zephyr.elf" | grep -q "\.ram_text_reloc.* codeplace_sram_anchor$"
'

test_expect_success 'record the base image with the tool'"'"'s own traffic' '
    base=$(zl_rec base) && test -n "$base" && echo "base $base"
'

test_expect_success 'budget 0: relinked from the list, verify finds every function where the plan put it' '
    p0=$(zl_plan 0) && test -n "$p0" && echo "$p0" >"$W/p0.pred" &&
    grep -q "^# hot block: start 0x000000c0 " "$W/p0.list" &&
    zl_relink "$W/p0.list" &&
    zl_verify "$W/p0.layout"
'

test_expect_success 'budget 0: measured within 2 % of the prediction' '
    zl_rec m0 && zl_within2 "$(cat "$W/p0.pred")" m0
'

# Zephyr's start-up clears .bss and copies the relocated code with memset
# and memcpy: a plan that put them in RAM stopped the image in its
# start-up (docs/zephyr.md). They are hot here (every packet), so the
# plan must leave them out by itself: the functions the trace fetched
# before the first entry into z_cstart, code relocation's
# data_copy_xip_relocation and bss_zeroing_relocation among them.
test_expect_success 'budget 8K: every sram name in RAM, no start-up code among them, verify as planned' '
    p8=$(zl_plan 8192) && test -n "$p8" && echo "$p8" >"$W/p8192.pred" &&
    ! grep "gap its alignment does not explain" "$W/plan8192.out" &&
    grep "plan: start-up code stays out of sram: [1-9][0-9]* functions fetched before the first entry into z_cstart (in 1 of 1 trace)" "$W/plan8192.out" &&
    zl_relink_sram "$W/p8192.list" &&
    ! grep -x -e memset -e memcpy -e z_early_memset -e z_early_memcpy -e z_bss_zero -e z_data_copy \
        -e data_copy_xip_relocation -e bss_zeroing_relocation -e z_arm_prep_c "$W/sram" &&
    zl_verify "$W/p8192.layout"
'

# The hot block is an output section of its own (rom_start): ld gives it
# stubs of its own for its calls into SRAM, which the layout lists with
# the call sites that use them (from:), so sim --layout on the base
# recording gives the plan's figure (docs/formats/layout.md).
test_expect_success 'budget 8K: sim --layout gives the plan'"'"'s figure, the hot block'"'"'s stubs and all' '
    grep "^# hot block stubs: [1-9]" "$W/p8192.layout" &&
    grep -q "^@stub 0x[0-9a-f]\{8\} 8 1 [^ ]* from:0x" "$W/p8192.layout" &&
    s8=$(zl_sim_layout "$W/p8192.layout") &&
    echo "plan $(cat "$W/p8192.pred"), sim --layout $s8" &&
    test "$s8" = "$(cat "$W/p8192.pred")"
'

test_expect_success 'budget 8K: measured within 2 % of the prediction' '
    zl_rec m8192 && zl_within2 "$(cat "$W/p8192.pred")" m8192
'

# The module's image read back: the same plan predicted again with the
# linker's stubs where ld put them (for the module's build, not for the
# GNU ld snippets' one: before, every function was "elsewhere" by the
# relocated code's flash copy).
test_expect_success 'budget 8K: plan --refine-from the module'"'"'s image predicts it' '
    cp "$W/b/zephyr/zephyr.elf" "$W/r8.elf" && cp "$W/b/zephyr/zephyr.map" "$W/r8.map" &&
    r8=$(ZL_SUFFIX=r zl_plan 8192 --refine-from "$W/r8.elf" --refine-map "$W/r8.map") &&
    grep "linker stubs read back from" "$W/plan8192r.out" &&
    grep -q "\"stub_order\": \"relinked\"" "$W/plan8192r.json" &&
    grep -v "^#" "$W/p8192.list" >l1 && grep -v "^#" "$W/p8192r.list" >l2 && test_cmp l1 l2 &&
    zl_within2 "$r8" m8192
'

test_done
