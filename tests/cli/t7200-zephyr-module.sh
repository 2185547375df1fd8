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
    cmake -S "$Z/stub" -B "$S" -DAPP_DIR="$Z" -DCHOSEN= -DSTRICT= -DRELOCATE_LD= -UCODEPLACE_RELOCATE_FILTER "$@" >"$n.log" 2>&1
}

test_expect_success 'with FILTER: relocation directives for every Zephyr library' '
    stub b -DLIST=hot.list -DCODEPLACE_RELOCATE_FILTER=ON &&
    grep "codeplace: .*hot.list: 2 functions to SRAM, 0 to ITCM, 2 first in flash" b.log &&
    grep "^zephyr_code_relocate(" b/calls.txt >reloc &&
    for lib in app zephyr arch__arm__core kernel subsys__net; do
        grep -q "^zephyr_code_relocate(LIBRARY;$lib;LOCATION;RAM_TEXT;FILTER;^(\\\\.text\\\\.net_hot|\\\\.text\\\\.k_hot)\$;NOKEEP)$" reloc || { echo "no $lib"; exit 1; }
    done &&
    ! grep -q "LIBRARY;prebuilt" reloc &&
    test $(wc -l <reloc) = 5
'

test_expect_success 'with FILTER and a zephyr,itcm chosen node the itcm group goes to ITCM_TEXT' '
    stub b -DLIST=hot.list -DCHOSEN=zephyr,itcm -DCODEPLACE_RELOCATE_FILTER=ON &&
    grep "2 first in flash" b.log &&
    grep "1 functions to SRAM, 1 to ITCM" b.log &&
    grep -q "LIBRARY;kernel;LOCATION;RAM_TEXT;FILTER;^(\\\\.text\\\\.net_hot)\$;NOKEEP" b/calls.txt &&
    grep -q "LIBRARY;kernel;LOCATION;ITCM_TEXT;FILTER;^(\\\\.text\\\\.k_hot)\$;NOKEEP" b/calls.txt
'

test_expect_success 'the flash group becomes a ROM_START snippet after the vectors' '
    stub b -DLIST=hot.list -DCODEPLACE_RELOCATE_FILTER=ON &&
    grep "^zephyr_linker_sources(ROM_START;SORT_KEY;codeplace;.*/codeplace_rom_start.ld)$" b/calls.txt &&
    grep -v "^/\*" b/codeplace/codeplace_rom_start.ld >body &&
    printf "__codeplace_hot_start = .;\n*(.text.flash_hot)\n*(.text.not_in_image)\n" >want &&
    test_cmp want body
'

test_expect_success 'with FILTER an empty list still gives CODE_DATA_RELOCATION a directive' '
    printf "# codeplace name list 1\n" >empty.list &&
    stub b -DLIST=$PWD/empty.list -DCODEPLACE_RELOCATE_FILTER=ON &&
    grep -q "LIBRARY;kernel;LOCATION;RAM_TEXT;FILTER;^()\$;NOKEEP" b/calls.txt &&
    ! grep -q zephyr_linker_sources b/calls.txt
'

# Zephyr 3.5.0's gen_relocate_app.py output for the anchor (its templates:
# LINKER_SECTION_SEQ_MPU, PRINT_TEMPLATE), which the module's command edits.
cat >"$TEST_TMP/relocate-in.ld" <<\EOF
	SECTION_PROLOGUE(.ram_text_reloc,,)
        {
                __ram_text_reloc_start = .;

                KEEP(*codeplace_sram.c.obj(.text.codeplace_sram_anchor))

                MPU_ALIGN(__ram_text_reloc_size);
                __ram_text_reloc_end = .;
	} GROUP_DATA_LINK_IN(RAM, ROMABLE_REGION)
EOF

# A list as codeplace plan --for zephyr writes it: the hot block's start and
# size, where the rest of the text starts, offsets, and input sections by
# archive and object (two static functions of one name, an assembly
# section, a libgcc member).
cat >"$TEST_TMP/plan.list" <<\EOF
# codeplace name list 1
# hot block: start 0x10000108 size 0x00120
# text start: 0x10000400
# region: sram
dup                 *libnet.a:a.c.obj(.text.dup)   # one of two static dup
dup                 *libnet.a:b.c.obj(.text.dup)
__aeabi_uldivmod    *libgcc.a:_aeabi_uldivmod.o(.text)
# region: flash
z_arm_exc_exit      +0x00000 *libarch.a:exc_exit.S.obj(.text._HandlerModeExit)
z_arm_int_exit      *libarch.a:exc_exit.S.obj(.text._HandlerModeExit)   # shares
flash_hot           +0x00040 *libapp.a:main.c.obj(.text.flash_hot)
EOF

test_expect_success 'without FILTER (Zephyr 3.5.0): an anchor file per location is relocated' '
    stub b -DLIST=$TEST_TMP/plan.list -DRELOCATE_LD=$TEST_TMP/relocate-in.ld &&
    grep "3 functions to SRAM, 0 to ITCM, 3 first in flash" b.log &&
    grep "^zephyr_code_relocate(" b/calls.txt >reloc &&
    grep -q "^zephyr_code_relocate(FILES;.*/codeplace_anchor/codeplace_sram.c;LOCATION;RAM_TEXT)$" reloc &&
    test $(wc -l <reloc) = 1 &&
    grep -q "^zephyr_library_named(codeplace_anchor)$" b/calls.txt &&
    grep -q -F "codeplace_sram_anchor:" b/codeplace/codeplace_anchor/codeplace_sram.c && ! grep -q "void codeplace_sram_anchor" b/codeplace/codeplace_anchor/codeplace_sram.c
'

test_expect_success 'without FILTER: the flash group keeps its offsets and the block its start and size' '
    stub b -DLIST=$TEST_TMP/plan.list -DRELOCATE_LD=$TEST_TMP/relocate-in.ld &&
    grep -v "^/\*" b/codeplace/codeplace_rom_start.ld >body &&
    cat >want <<-\EOF &&
	. = ALIGN(8);
	__codeplace_hot_start = .;
	ASSERT(ABSOLUTE(__codeplace_hot_start) == 0x10000108, "codeplace: the hot block starts after the vector table at another address than 0x10000108, where the plan put it (another board or configuration): plan again from this build");
	. = __codeplace_hot_start + 0x00000;
	*libarch.a:exc_exit.S.obj(.text._HandlerModeExit)
	. = __codeplace_hot_start + 0x00040;
	*libapp.a:main.c.obj(.text.flash_hot)
	. = __codeplace_hot_start + 0x00120;
	EOF
    test_cmp want body
'

test_expect_success 'without FILTER: linker_relocate.ld gets the sram group and the padding to the text start' '
    stub b -DLIST=$TEST_TMP/plan.list -DRELOCATE_LD=$TEST_TMP/relocate-in.ld &&
    cmake --build b --target relocate >>b.log 2>&1 &&
    sed -n "/codeplace_sram_anchor/,/MPU_ALIGN/p" b/linker_relocate.ld >got &&
    cat >want <<-\EOF &&
	                KEEP(*codeplace_sram.c.obj(.text.codeplace_sram_anchor))
	/* codeplace: the sram group */
	*libnet.a:a.c.obj(.text.dup)
	*libnet.a:b.c.obj(.text.dup)
	*libgcc.a:_aeabi_uldivmod.o(.text)

	                MPU_ALIGN(__ram_text_reloc_size);
	EOF
    test_cmp want got &&
    grep -q "^__codeplace_copy_end = LOADADDR(.ram_text_reloc) + SIZEOF(.ram_text_reloc);$" b/linker_relocate.ld &&
    grep -q "^ *\. = \. + (0x10000400 > __codeplace_copy_end ? 0x10000400 - __codeplace_copy_end : 0);$" b/linker_relocate.ld
'

test_expect_success 'without FILTER: a linker_relocate.ld without the anchor stops the build' '
    printf "/* nothing */\n" >other.ld &&
    stub b -DLIST=$TEST_TMP/plan.list -DRELOCATE_LD=$PWD/other.ld &&
    test_must_fail cmake --build b --target relocate >out 2>&1 &&
    tr -s " \n" " " <out | grep "has no statement for .text.codeplace_sram_anchor"
'

test_expect_success 'without FILTER: the itcm group gets its own anchor on a board with ITCM' '
    sed "s/^# region: sram/# region: itcm/" "$TEST_TMP/plan.list" >itcm.list &&
    stub b -DLIST=$PWD/itcm.list -DCHOSEN=zephyr,itcm -DRELOCATE_LD=$TEST_TMP/relocate-in.ld &&
    grep "0 functions to SRAM, 3 to ITCM" b.log &&
    grep "^zephyr_code_relocate(" b/calls.txt >reloc &&
    grep -q "codeplace_itcm.c;LOCATION;ITCM_TEXT)$" reloc &&
    test $(wc -l <reloc) = 1
'

test_expect_success 'without FILTER or the linker_relocate.ld rule: sram refused, flash applied' '
    stub b -DLIST=$TEST_TMP/plan.list &&
    grep -A3 "CMake Warning" b.log | tr -s " \n" " " >w &&
    grep -q "the sram and itcm groups of the list are not placed (the flash group is)" w &&
    grep -q "^zephyr_linker_sources(ROM_START;SORT_KEY;codeplace;" b/calls.txt &&
    test_must_fail stub b -DLIST=$TEST_TMP/plan.list -DSTRICT=y
'

test_expect_success 'a list entry with an offset outside the flash group is refused' '
    printf "# region: sram\nnet_hot +0x10\n" >bad.list &&
    test_must_fail stub b -DLIST=$PWD/bad.list &&
    tr -s " \n" " " <b.log | grep "bad.list:2: an offset (+0x10) is only meaningful in the flash group"
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
    stub b -DLIST=hot.list -DCODEPLACE_RELOCATE_FILTER=ON && link b &&
    test "$(sec net_hot)" = .ram_text_reloc &&
    test "$(sec k_hot)" = .ram_text_reloc &&
    test "$(sec flash_hot)" = rom_start &&
    test "$(sec via_ramfunc_snippet)" = text &&
    test "$(sec cold)" = text
'

test_expect_success 'the post-build check reports what was not placed' '
    stub b -DLIST=hot.list -DCODEPLACE_RELOCATE_FILTER=ON && link b &&
    sed "s|^-DCP_ELF=.*|-DCP_ELF=$PWD/z/zephyr.elf|" b/post-build.txt >cmd &&
    xargs -d "\n" -a cmd env >out 2>&1 &&
    grep "hot.list:8: .not_in_image. (flash) is not a function in zephyr.elf: not placed" out &&
    grep "zephyr.elf: sram: 1 of 1 listed functions placed, 0 not" out &&
    grep "zephyr.elf: itcm: 1 of 1 listed functions placed, 0 not" out &&
    grep "zephyr.elf: flash: 1 of 2 listed functions placed, 1 not" out
'

test_expect_success 'CONFIG_CODEPLACE_STRICT makes it a build error' '
    stub b -DLIST=hot.list -DSTRICT=y -DCODEPLACE_RELOCATE_FILTER=ON && link b &&
    sed "s|^-DCP_ELF=.*|-DCP_ELF=$PWD/z/zephyr.elf|" b/post-build.txt >cmd &&
    grep -q "^-DCP_STRICT=y$" cmd &&
    { xargs -d "\n" -a cmd env >out 2>&1; test $? = 123; } &&
    grep "1 listed functions were not placed" out
'

test_done
