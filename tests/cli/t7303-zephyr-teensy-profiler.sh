#!/bin/sh
# zephyr/samples/udp_echo for teensy41 (i.MX RT1062) on the vendored Zephyr
# 3.5.0 with the NXP HAL subset, codeplace as a module and its profiler
# snippet: the sample on 3.5.0's USB device stack (CDC-ECM), and the
# profiler glue compiled and linked against the real Zephyr and MCUX
# headers with its zero-latency PIT back end. One build, checked on the
# ELF: no emulator runs this board here. CONFIG_ENTROPY_MCUX_TRNG=n: the
# TRNG driver needs mbedtls, which the vendored tree does not have.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
. "$CP_ROOT/tests/cli/zephyr-elf.sh"
B=$TEST_TMP/teensy
ELF=$B/zephyr/zephyr.elf
zephyr_build "$CP_ROOT/zephyr/samples/udp_echo" teensy41 "$B" -DCONFIG_ENTROPY_MCUX_TRNG=n \
    -DZEPHYR_EXTRA_MODULES="$CP_ROOT" -DSNIPPET=codeplace-profiler
built=$?

test_expect_success 'udp_echo builds for teensy41: CDC-ECM on the USB device stack, code in FlexSPI flash' '
    test $built = 0 &&
    C=$B/zephyr/.config &&
    grep -qx "CONFIG_UDP_ECHO_USB_LEGACY_ECM=y" $C &&
    grep -qx "CONFIG_USB_DEVICE_NETWORK_ECM=y" $C &&
    ! grep -q "^CONFIG_USB_DEVICE_STACK_NEXT=y" $C &&
    test "$(sym_sect usb_enable)" = text &&
    in_range "$(sym_addr udp_echo_netif_start)" 60000000 70000000 &&
    in_range "$(sym_addr main)" 60000000 70000000
'

test_expect_success 'the profiler snippet: module, Kconfig and shell command in the image' '
    test $built = 0 &&
    grep -q "Snippet(s): codeplace-profiler" $B.log &&
    C=$B/zephyr/.config &&
    grep -qx "CONFIG_CODEPLACE_PROFILER=y" $C &&
    grep -qx "CONFIG_CODEPLACE_PROFILER_PIT_CHANNEL=3" $C &&
    grep -qx "CONFIG_ZERO_LATENCY_IRQS=y" $C &&
    test -n "$(sym_addr shell_cmd_codeplace)" &&
    test -n "$(sym_addr __init_prof_init)"
'

test_expect_success 'zero-latency back end: sampling path in ITCM, buffer in DTCM, PIT vector direct' '
    test $built = 0 &&
    set -- $(sect_range .itcm) && echo ".itcm $*" &&
    in_range "$1" 0 20000 &&
    for f in codeplace_prof_isr codeplace_prof_sample cpprof_add cpprof_frame_pc cpprof_frame; do
        a=$(sym_addr $f) && echo "$f $a" && in_range "$a" "$1" "$2" || exit 1
    done &&
    calls_stay_in .itcm &&
    set -- $(sect_range .dtcm_bss) && echo ".dtcm_bss $*" &&
    for d in bucket_pc bucket_count running; do
        a=$(sym_addr $d) && echo "$d $a" && in_range "$a" "$1" "$2" || exit 1
    done &&
    # PIT_IRQn is 122 (MIMXRT1062.h): vector 16 + 122 of _vector_table
    # holds the handler itself (IRQ_DIRECT_CONNECT), Thumb bit set.
    v=$(sym_addr _vector_table) &&
    at=$(printf %x $((0x$v + (16 + 122) * 4))) &&
    word=$(arm-none-eabi-objdump -s --start-address=0x$at --stop-address=$(printf 0x%x $((0x$at + 4))) "$ELF" |
           awk "/^ $at/ {print \$2}") &&
    le=$(echo $word | sed "s/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/") && echo "vector 138: $le" &&
    test $((0x$le)) = $((0x$(sym_addr codeplace_prof_isr) | 1))
'

test_done
