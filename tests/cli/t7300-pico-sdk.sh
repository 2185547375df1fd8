#!/bin/sh
# codeplace_apply() (cmake/codeplace.cmake) on a bare-metal stand-in for a
# pico-sdk project (tests/pico/: Debian's cmake and arm-none-eabi-gcc, a
# linker script with memmap_default.ld's .text/.data/.time_critical
# structure): listed functions end up in SRAM, the rest in flash, and names
# that do not resolve are reported. One build tree, reconfigured per test.
. "$(dirname "$0")/lib.sh"
P=$CP_ROOT/tests/pico
B=$TEST_TMP/pico

configure() { # [cmake args...]
    cmake -S "$P" -B "$B" -DCMAKE_TOOLCHAIN_FILE="$P/arm-none-eabi.cmake" "$@" >cfg 2>&1
}
build() { cmake --build "$B" >out 2>&1; }

# nm address of a symbol
addr() { arm-none-eabi-nm "$B/app.elf" | awk -v s="$1" '$3 == s {print $1}'; }
in_sram() { case $(addr "$1") in 200?????) return 0 ;; esac; echo "$1 not in SRAM: $(addr "$1")"; return 1; }
in_flash() { case $(addr "$1") in 10??????) return 0 ;; esac; echo "$1 not in flash: $(addr "$1")"; return 1; }

test_expect_success 'without codeplace_apply everything runs from flash' '
    configure -DHOT_LIST= &&
    build &&
    for f in hot_a hot_static lib_hot cold_c unlisted main; do in_flash $f || exit 1; done
'

test_expect_success 'listed functions go to SRAM, the others stay in flash' '
    configure -DHOT_LIST="$P/hot.list" &&
    grep -q "codeplace: app.elf: 4 functions for SRAM" cfg &&
    build &&
    in_sram hot_a &&
    in_sram hot_static &&
    in_sram lib_hot &&
    in_flash cold_c &&
    in_flash lib_cold &&
    in_flash unlisted &&
    in_flash main &&
    test "$(addr vectors)" = 10000100 &&
    test "$(addr boot2)" = 10000000 &&
    arm-none-eabi-objdump -t "$B/app.elf" | grep -E "^20000[0-9a-f]{3} .* F \.data" >placed &&
    test $(wc -l <placed) = 3 &&
    grep -q "sram: 3 of 4 listed functions placed, 1 not" out &&
    grep "hot.list:7: .not_a_function. (sram) is not a function in app.elf: not placed" out &&
    grep "hot.list:9: .cold_c. (flash): pico-sdk.s linker scripts have no flash group" out
'

test_expect_success 'STRICT fails the link and leaves no ELF' '
    configure -DHOT_LIST="$P/hot.list" -DHOT_STRICT=1 &&
    test_must_fail build &&
    grep "1 listed functions were not placed" out &&
    ! test -f "$B/app.elf" &&
    configure -DHOT_STRICT=
'

test_expect_success 'changing the list relinks with the new placement' '
    printf "# region: sram\nhot_a\nlib_hot\nclone_me\n" >l &&
    configure -DHOT_LIST="$PWD/l" &&
    build &&
    in_sram lib_hot &&
    if arm-none-eabi-nm "$B/app.elf" | grep -q " clone_me\.constprop\.0$"; then
        grep "l:4: .clone_me. (sram) is not a function in app.elf: not placed .*did you mean .clone_me.constprop.0.?" out
    else
        in_sram clone_me
    fi &&
    printf "# region: sram\nhot_a\n# region: flash\nlib_hot\n" >l &&
    build &&
    in_flash lib_hot &&
    in_sram hot_a &&
    grep -q "sram: 1 of 1 listed functions placed, 0 not" out
'

test_expect_success 'a malformed list fails the configure step naming file and line' '
    printf "# region: sram\nhot_a\nthis is not a name\n" >bad.list &&
    test_must_fail configure -DHOT_LIST="$PWD/bad.list" &&
    grep "bad.list:3: not a function name" cfg &&
    printf "hot_a\n" >nohdr.list &&
    test_must_fail configure -DHOT_LIST="$PWD/nohdr.list" &&
    grep "nohdr.list:1: .hot_a. comes" cfg &&
    printf "# region: dtcm\n" >reg.list &&
    test_must_fail configure -DHOT_LIST="$PWD/reg.list" &&
    grep "reg.list:1: unknown region .dtcm." cfg
'

if have ninja; then
    test_expect_success 'Ninja with response files gives the same placement' '
        B=$PWD/nb &&
        configure -G Ninja -DHOT_LIST="$P/hot.list" -DCMAKE_NINJA_FORCE_RESPONSE_FILE=ON &&
        cmake --build "$B" -v >out 2>&1 &&
        grep -q "@CMakeFiles/app.elf.rsp" out &&
        in_sram hot_a &&
        in_sram lib_hot &&
        in_flash cold_c
    '
else
    test_skip 'Ninja with response files' 'ninja not installed'
fi

test_done
