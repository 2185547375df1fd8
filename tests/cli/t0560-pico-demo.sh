#!/bin/sh
# The demo workload as a pico-sdk 2.2.0 pico_stdlib application
# (firmware/pico/demo, built from the vendored tree with PICO_BOARD=pico)
# and its host reference (firmware/pico/host: the same sources, host gcc).
# The builds are shared by the whole file.
. "$(dirname "$0")/lib.sh"
. "$CP_ROOT/tests/cli/vendor-lib.sh"
PB=$TEST_TMP/pico-demo
HB=$TEST_TMP/host
ELF=$PB/demo.elf

nm_addr() { arm-none-eabi-nm "$1" | awk -v s="$2" '$3 == s {print $1}'; }

test_expect_success 'the host build of the demo gives the QEMU reference results' '
    cmake -S "$CP_ROOT/firmware/pico/host" -B "$HB" -DPICO_SDK_PATH="$CP_PICO_SDK" >cfg 2>&1 &&
    make -C "$HB" demo-host >build 2>&1 &&
    "$HB/demo-host" 300 >out &&
    sed -n "s/^microbit \([0-9]*\) \(0x[0-9a-f]*\)$/codeplace_result after \1 iterations: \2/p" \
        "$CP_ROOT/firmware/expected.txt" >expect &&
    test $(wc -l <expect) = 3 &&
    test_cmp expect out
'

test_expect_success 'the demo builds as a pico-sdk app with its start-up and the demo sources' '
    pico_build "$CP_ROOT/firmware/pico/demo" "$PB" &&
    test -f "$PB/demo.elf.map" &&
    test "$(nm_addr "$ELF" __boot2_start__)" = 10000000 &&
    for s in main runtime_init codeplace_init codeplace_iteration codeplace_mark \
             demo_filter demo_report demo_parse_line; do
        case $(nm_addr "$ELF" $s) in 10??????) ;; *) echo "$s not in flash"; exit 1 ;; esac
    done &&
    case $(nm_addr "$ELF" codeplace_result) in 200?????) ;; *) exit 1 ;; esac &&
    grep -q "firmware/demo/filter.c.o" "$PB/demo.elf.map" &&
    arm-none-eabi-nm "$ELF" | grep -q " __wrap___aeabi_idiv$" &&
    ! arm-none-eabi-nm "$ELF" | grep -q " __wrap___aeabi_dadd$" &&
    ! arm-none-eabi-nm "$ELF" | grep -q " __wrap_snprintf$"
'

test_done
