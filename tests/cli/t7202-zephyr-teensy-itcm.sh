#!/bin/sh
# teensy41 (i.MX RT1062): Zephyr 3.5.0's echo_server with USB CDC-ECM
# (overlay-netusb.conf) built with the codeplace module and a name list with
# an itcm group: every itcm name lands in ITCM (the zephyr,itcm chosen node,
# 0x00000000, 128 KiB), checked on the ELF (no emulator runs this board). The
# list has a toolchain archive member and an assembly section named by
# archive and object (Zephyr 3.5.0: no zephyr_code_relocate() FILTER).
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"

W=$TEST_TMP/w
mkdir -p "$W"
cat >"$W/itcm.list" <<\EOF
# codeplace name list 1
# region: itcm
z_impl_k_sem_give
z_impl_k_sem_take
z_impl_k_mutex_lock
__aeabi_uldivmod    *libgcc.a:_aeabi_uldivmod.o(.text)
z_arm_exc_exit      *libarch__arm__core__cortex_m.a:exc_exit.S.obj(.text._HandlerModeExit)
# region: flash
z_impl_zsock_sendto
EOF

test_expect_success 'teensy41: echo_server over USB builds with the module and an itcm group' '
    zephyr_build "$CP_ZEPHYR/zephyr/samples/net/sockets/echo_server" teensy41 "$W/b" \
        -DEXTRA_CONF_FILE=overlay-netusb.conf -DCONFIG_NET_TCP_ISN_RFC6528=n \
        -DCONFIG_ENTROPY_MCUX_TRNG=n -DZEPHYR_EXTRA_MODULES="$CP_ROOT" \
        -DCONFIG_CODEPLACE=y "-DCONFIG_CODEPLACE_LIST=\"$W/itcm.list\"" &&
    grep -q "codeplace: .*itcm.list: 0 functions to SRAM, 5 to ITCM, 1 first in flash" "$W/b.log" &&
    grep -q "codeplace: zephyr.elf: itcm: 5 of 5 listed functions placed, 0 not" "$W/b.log"
'

test_expect_success 'teensy41: every itcm name is in ITCM on the ELF' '
    arm-none-eabi-objdump -t "$W/b/zephyr/zephyr.elf" >syms &&
    for f in z_impl_k_sem_give z_impl_k_sem_take z_impl_k_mutex_lock __aeabi_uldivmod z_arm_exc_exit; do
        line=$(grep -E " F \.itcm_text_reloc	[0-9a-f]+ (\.hidden )?$f$" syms) || { echo "$f not in .itcm_text_reloc"; exit 1; }
        addr=$(echo "$line" | cut -d" " -f1) &&
        test $((0x$addr)) -lt $((0x20000)) || { echo "$f at 0x$addr, not in ITCM"; exit 1; }
    done &&
    arm-none-eabi-objdump -h "$W/b/zephyr/zephyr.elf" | grep -q " \.itcm_text_reloc .* 00000000  60"
'

test_expect_success 'teensy41: the flash group is first in rom_start (XIP flash)' '
    arm-none-eabi-objdump -t "$W/b/zephyr/zephyr.elf" | grep -qE "^60[0-9a-f]{6} .* F rom_start	[0-9a-f]+ z_impl_zsock_sendto$"
'

test_done
