#!/bin/sh
# zephyr/samples/udp_echo for rpi_pico on the vendored Zephyr 3.5.0, with
# codeplace as a module and its profiler snippet (-DSNIPPET=
# codeplace-profiler: CONFIG_SHELL, CONFIG_CODEPLACE_PROFILER): the sample
# on 3.5.0's USB device stack (CDC-ECM), and the profiler glue compiled and
# linked against the real Zephyr and HAL headers with its NMI back end.
# One build, checked on the ELF: no emulator runs this board's USB.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
. "$CP_ROOT/tests/cli/zephyr-elf.sh"
B=$TEST_TMP/pico
ELF=$B/zephyr/zephyr.elf
zephyr_build "$CP_ROOT/zephyr/samples/udp_echo" rpi_pico "$B" \
    -DZEPHYR_EXTRA_MODULES="$CP_ROOT" -DSNIPPET=codeplace-profiler
built=$?

test_expect_success 'udp_echo builds for rpi_pico: CDC-ECM on the USB device stack' '
    test $built = 0 &&
    C=$B/zephyr/.config &&
    grep -qx "CONFIG_UDP_ECHO_USB_LEGACY_ECM=y" $C &&
    grep -qx "CONFIG_USB_DEVICE_NETWORK_ECM=y" $C &&
    ! grep -q "^CONFIG_USB_DEVICE_STACK_NEXT=y" $C &&
    test "$(sym_sect usb_enable)" = text &&
    test "$(sym_sect udp_echo_netif_start)" = text &&
    test -s $B/zephyr/zephyr.uf2
'

test_expect_success 'the profiler snippet: module, Kconfig and shell command in the image' '
    test $built = 0 &&
    grep -q "Snippet(s): codeplace-profiler" $B.log &&
    grep -qx "CONFIG_CODEPLACE_PROFILER=y" $B/zephyr/.config &&
    grep -qx "CONFIG_CODEPLACE_PROFILER_RP2040_ALARM=3" $B/zephyr/.config &&
    test -n "$(sym_addr shell_cmd_codeplace)" &&
    test -n "$(sym_addr __init_prof_init)"
'

test_expect_success 'NMI back end: the sampling path and the vector table copy in SRAM' '
    test $built = 0 &&
    set -- $(sect_range .ramfunc) && echo ".ramfunc $*" &&
    in_range "$1" 20000000 20042000 &&
    for f in codeplace_prof_isr codeplace_prof_sample timer_ack cpprof_add cpprof_frame_pc cpprof_frame; do
        a=$(sym_addr $f) && echo "$f $a" && in_range "$a" "$1" "$2" || exit 1
    done &&
    calls_stay_in .ramfunc &&
    v=$(sym_addr ram_vectors) && in_range "$v" 20000000 20042000 &&
    test $((0x$v % 256)) = 0 &&
    disasm .ramfunc | sed -n "/<codeplace_prof_isr>:/,/^$/p" >isr && cat isr &&
    grep -q "mov	r0, lr" isr && grep -q "mrs	r1, MSP" isr && grep -q "mrs	r2, PSP" isr &&
    grep -q "bx	r3" isr && ! grep -q "push" isr &&
    s=$(sym_addr codeplace_prof_sample) &&
    grep -q "\.word	0x$(printf %08x $((0x$s | 1)))" isr
'

test_done
