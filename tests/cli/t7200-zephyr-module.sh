#!/bin/sh
# The Zephyr module (zephyr/, snippets/): what can be checked without
# Zephyr. module.yml, snippet.yml and Kconfig as Zephyr's scripts read them;
# zephyr/CMakeLists.txt driven by a stub project that records the Zephyr
# calls it makes; and the linker-script order those calls rely on, with GNU
# ld, the generated ROM_START snippet and the post-build check it registers.
. "$(dirname "$0")/lib.sh"
Z=$CP_ROOT/tests/zephyr
PY=/usr/bin/python3

test_expect_success 'module.yml, snippets and Kconfig (pykwalify, kconfiglib)' '
    $PY "$Z/check_module.py" "$CP_ROOT" >out 2>&1; rc=$?
    cat out; test $rc = 0 && ! grep -q "^FAIL" out
'

# One stub build tree for all tests (reconfigured; the compiler check is
# done once). Every call names LIST, CHOSEN and STRICT so that nothing
# sticks from the test before.
S=$TEST_TMP/stub
test_expect_success 'udp_echo board overlays compile with dtc (stub base with zephyr_udc0)' '
    for b in rpi_pico teensy41 stm32f3_disco; do
        { printf "/dts-v1/;\n/ { soc { zephyr_udc0: usb@50100000 { reg = <0x50100000 0x1000>; status = \"disabled\"; }; }; };\n" &&
          cpp -P -nostdinc -undef -x assembler-with-cpp "$CP_ROOT/zephyr/samples/udp_echo/boards/$b.overlay"; } >$b.dts &&
        dtc -q -I dts -O dts -o $b.out $b.dts &&
        grep -q "compatible = \"zephyr,cdc-ncm-ethernet\"" $b.out &&
        grep -q "compatible = \"zephyr,cdc-ecm-ethernet\"" $b.out &&
        grep -A3 "zephyr_udc0: usb@50100000" $b.out | grep -q "status = \"okay\"" || exit 1
    done
'

stub() { # name [args]: configure into $S, log in ./name.log, link ./name -> $S
    n=$1; shift
    ln -sfn "$S" "$n"
    cmake -S "$Z/stub" -B "$S" -DAPP_DIR="$Z" -DCHOSEN= -DSTRICT= "$@" >"$n.log" 2>&1
}

test_expect_success 'CONFIG_CODEPLACE: relocation directives for every Zephyr library' '
    stub b -DLIST=hot.list &&
    grep "codeplace: .*hot.list: 2 functions to SRAM, 0 to ITCM, 2 first in flash" b.log &&
    grep "^zephyr_code_relocate(" b/calls.txt >reloc &&
    for lib in app zephyr arch__arm__core kernel subsys__net; do
        grep -q "^zephyr_code_relocate(LIBRARY;$lib;LOCATION;RAM_TEXT;FILTER;^\\\\.text\\\\.(net_hot|k_hot)\$;NOKEEP)$" reloc || { echo "no $lib"; exit 1; }
    done &&
    ! grep -q "LIBRARY;prebuilt" reloc &&
    test $(wc -l <reloc) = 5
'

test_expect_success 'with a zephyr,itcm chosen node the itcm group goes to ITCM_TEXT' '
    stub b -DLIST=hot.list -DCHOSEN=zephyr,itcm &&
    grep "2 first in flash" b.log &&
    grep "1 functions to SRAM, 1 to ITCM" b.log &&
    grep -q "LIBRARY;kernel;LOCATION;RAM_TEXT;FILTER;^\\\\.text\\\\.(net_hot)\$;NOKEEP" b/calls.txt &&
    grep -q "LIBRARY;kernel;LOCATION;ITCM_TEXT;FILTER;^\\\\.text\\\\.(k_hot)\$;NOKEEP" b/calls.txt
'

test_expect_success 'the flash group becomes a ROM_START snippet after the vectors' '
    stub b -DLIST=hot.list &&
    grep "^zephyr_linker_sources(ROM_START;SORT_KEY;codeplace;.*/codeplace_rom_start.ld)$" b/calls.txt &&
    grep -v "^/\*" b/codeplace/codeplace_rom_start.ld >body &&
    printf "*(.text.flash_hot)\n*(.text.not_in_image)\n" >want &&
    test_cmp want body
'

test_expect_success 'an empty list still gives CODE_DATA_RELOCATION a directive' '
    printf "# codeplace name list 1\n" >empty.list &&
    stub b -DLIST=$PWD/empty.list &&
    grep -q "LIBRARY;kernel;LOCATION;RAM_TEXT;FILTER;^\\\\.text\\\\.()\$;NOKEEP" b/calls.txt &&
    ! grep -q zephyr_linker_sources b/calls.txt
'

test_expect_success 'a malformed list stops the configure step with file:line' '
    printf "# region: sram\nnet_hot extra words\n" >bad.list &&
    test_must_fail stub b -DLIST=$PWD/bad.list &&
    grep "bad.list:2: not a function name" b.log
'

# Link fw.c with the Zephyr-ordered script: the generated ROM_START snippet,
# relocation sections as gen_relocate_app.py would write them for the
# directives above, and a RAMFUNC_SECTION-style snippet.
link() { # builddir
    mkdir -p z && cp "$Z/zlink.ld" z/ &&
    cp "$1/codeplace/codeplace_rom_start.ld" z/ &&
    printf ".ram_text_reloc : {\n  *fw.o(\".text.net_hot\")\n  *fw.o(\".text.k_hot\")\n} > RAM AT > FLASH\n" >z/relocate.ld &&
    printf "*(.text.via_ramfunc_snippet)\n" >z/ramfunc-snippet.ld &&
    arm-none-eabi-gcc -mcpu=cortex-m0plus -mthumb -Os -ffunction-sections -c -o z/fw.o "$Z/fw.c" &&
    (cd z && arm-none-eabi-gcc -mcpu=cortex-m0plus -mthumb -nostdlib -nostartfiles -T zlink.ld -o zephyr.elf fw.o)
}
sec() { arm-none-eabi-objdump -t z/zephyr.elf | awk -v s="$1" '$NF == s {print $(NF-2)}'; }

test_expect_success 'GNU ld: relocation and rom_start win, a RAMFUNC snippet does not' '
    stub b -DLIST=hot.list && link b &&
    test "$(sec net_hot)" = .ram_text_reloc &&
    test "$(sec k_hot)" = .ram_text_reloc &&
    test "$(sec flash_hot)" = rom_start &&
    test "$(sec via_ramfunc_snippet)" = text &&
    test "$(sec cold)" = text
'

test_expect_success 'the post-build check reports what was not placed' '
    stub b -DLIST=hot.list && link b &&
    sed "s|^-DCP_ELF=.*|-DCP_ELF=$PWD/z/zephyr.elf|" b/post-build.txt >cmd &&
    xargs -d "\n" -a cmd env >out 2>&1 &&
    grep "hot.list:8: .not_in_image. (flash) is not a function in zephyr.elf: not placed" out &&
    grep "zephyr.elf: sram: 1 of 1 listed functions placed, 0 not" out &&
    grep "zephyr.elf: itcm: 1 of 1 listed functions placed, 0 not" out &&
    grep "zephyr.elf: flash: 1 of 2 listed functions placed, 1 not" out
'

test_expect_success 'CONFIG_CODEPLACE_STRICT makes it a build error' '
    stub b -DLIST=hot.list -DSTRICT=y && link b &&
    sed "s|^-DCP_ELF=.*|-DCP_ELF=$PWD/z/zephyr.elf|" b/post-build.txt >cmd &&
    grep -q "^-DCP_STRICT=y$" cmd &&
    { xargs -d "\n" -a cmd env >out 2>&1; test $? = 123; } &&
    grep "1 listed functions were not placed" out
'

test_done
