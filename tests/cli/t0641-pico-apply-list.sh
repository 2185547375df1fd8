#!/bin/sh
# codeplace_apply() (cmake/codeplace.cmake) in a real pico-sdk 2.2.0 build
# with hand-written name lists: the flash group without a plan's hook is a
# hot block in list order; names that cannot be placed are reported (STRICT
# fails the link and leaves no ELF); a changed list relinks; a malformed
# list or a linker script without memmap_default.ld's shape fails the
# configure step, naming the file; forced response files give the same
# placement. One build tree, reconfigured per test.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vendor-lib.sh"
P=$CP_ROOT/tests/pico
B=$TEST_TMP/b

addr() { arm-none-eabi-nm "$B/app.elf" | awk -v s="$1" '$3 == s {print $1}'; }
in_sram() { case $(addr "$1") in 200?????) return 0 ;; esac; echo "$1 not in SRAM: $(addr "$1")"; return 1; }
in_flash() { case $(addr "$1") in 10??????) return 0 ;; esac; echo "$1 not in flash: $(addr "$1")"; return 1; }
configure() { cmake -S "$P" -B "$B" "$@" >cfg 2>&1; }
build() { ninja -C "$B" >out 2>&1; }

cat >"$TEST_TMP/hot.list" <<'LIST'
# codeplace name list 1
# region: sram
work_crc
lib_mix
fill_keys
not_a_function
strlen
twice
# region: flash
work_div
work_hist
work_sort
LIST

test_expect_success 'sram names to SRAM, flash names first in .text in list order, the rest reported' '
    pico_build "$P" "$B" -DHOT_LIST="$TEST_TMP/hot.list" &&
    grep "codeplace: app: 6 functions for SRAM, 3 for the flash hot block" "$B.log" &&
    in_sram work_crc && in_sram lib_mix && in_sram fill_keys &&
    grep "hot.list:6: .not_a_function. (sram) is in no object or archive on the link line" "$B.log" &&
    grep "hot.list:7: .strlen. (sram) is in no object or archive on the link line (from a library the linker finds with -l" "$B.log" &&
    grep "hot.list:8: .twice. (sram) is defined in 2 link inputs" "$B.log" &&
    grep "sram: 3 of 6 listed functions placed, 3 not" "$B.log" &&
    grep "flash: 3 of 3 listed functions placed, 0 not" "$B.log" &&
    test "$(addr __codeplace_hot_start)" = "$(addr work_div)" &&
    test $((0x$(addr work_div))) -lt $((0x$(addr work_hist))) &&
    test $((0x$(addr work_hist))) -lt $((0x$(addr work_sort))) &&
    test $((0x$(addr work_sort))) -lt $((0x$(addr __codeplace_hot_end))) &&
    in_flash work_rarely && in_flash main &&
    test $((0x$(addr work_rarely))) -gt $((0x$(addr __codeplace_hot_end))) &&
    test "$(addr __vectors)" = 10000100 &&
    grep "INCLUDE \"$B/codeplace-app/codeplace_hot.ld\"" "$B/codeplace-app/memmap_codeplace.ld"
'

test_expect_success 'STRICT fails the link and leaves no ELF' '
    configure -DHOT_STRICT=1 &&
    test_must_fail build &&
    grep "3 listed functions were not placed" out &&
    ! test -f "$B/app.elf" &&
    configure -DHOT_STRICT=
'

test_expect_success 'changing the list relinks with the new placement' '
    printf "# region: sram\nwork_hist\n# region: flash\nlib_mix\n" >"$TEST_TMP/l2" &&
    configure -DHOT_LIST="$TEST_TMP/l2" &&
    build &&
    in_sram work_hist && in_flash work_crc &&
    test "$(addr __codeplace_hot_start)" = "$(addr lib_mix)" &&
    printf "# region: sram\nwork_sort\n" >"$TEST_TMP/l2" &&
    build &&
    in_sram work_sort && in_flash work_hist &&
    grep -q "sram: 1 of 1 listed functions placed, 0 not" out
'

test_expect_success 'a malformed list fails the configure step naming file and line' '
    printf "# region: sram\nwork_crc\nthis is not a name\n" >bad.list &&
    test_must_fail configure -DHOT_LIST="$PWD/bad.list" &&
    grep "bad.list:3: not a function name" cfg &&
    printf "# region: dtcm\n" >reg.list &&
    test_must_fail configure -DHOT_LIST="$PWD/reg.list" &&
    grep "reg.list:1: unknown region .dtcm." cfg
'

test_expect_success 'a linker script without memmap_default.ld.s shape fails the configure step' '
    grep -v "KEEP (\*(.reset))" "$CP_PICO_SDK/src/rp2_common/pico_crt0/rp2040/memmap_default.ld" >own.ld &&
    test_must_fail configure -DHOT_LIST="$TEST_TMP/hot.list" -DHOT_SCRIPT="$PWD/own.ld" &&
    tr "\n" " " <cfg | tr -s " " >cfg1 &&
    grep "own.ld. does not have the shape of pico-sdk 2.2.0.s memmap_default.ld: not one .KEEP (\*(.reset)). line (0)" cfg1
'

test_expect_success 'forced response files give the same placement' '
    configure -DHOT_LIST="$TEST_TMP/hot.list" -DHOT_SCRIPT= -DCMAKE_NINJA_FORCE_RESPONSE_FILE=ON &&
    ninja -C "$B" -v >out 2>&1 &&
    grep -q "@CMakeFiles/app.rsp" out &&
    in_sram work_crc && in_sram lib_mix &&
    test "$(addr __codeplace_hot_start)" = "$(addr work_div)"
'

test_done
