#!/bin/sh
# The heavy workload (firmware/heavy/: C++17 on newlib, libstdc++, libgcc):
# the builds, their libraries, the QEMU reference results against
# firmware/expected-heavy.txt, the virtual board agreeing with them in
# harness and free-run mode, the code per iteration (40+ KiB), and a relink.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
QREF=$CP_ROOT/firmware/qemu-ref.sh
EXPECTED=$CP_ROOT/firmware/expected-heavy.txt
export QEMU_TIMEOUT=60
# unicorn keeps part of its code cache until exit (RAM code is written)
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
HARNESS="--init codeplace_init --iter codeplace_iteration --result codeplace_result"

for b in rp2040 imxrt1062 mps2-an385 mps2-an500; do
    test_expect_success "heavy-$b: ELF and map are built" "
        test -s $FW/heavy-$b.elf && test -s $FW/heavy-$b.map &&
        grep -q '^Memory Configuration' $FW/heavy-$b.map
    "
done

test_expect_success 'heavy-rp2040: newlib, libstdc++ and libgcc code, no picolibc' '
    for lib in libc.a libm.a libstdc++.a libgcc.a; do
        grep -q "/thumb/v6-m/nofp/$lib(" $FW/heavy-rp2040.map || return 1
    done &&
    ! grep -q picolibc $FW/heavy-rp2040.map &&
    arm-none-eabi-nm $FW/heavy-rp2040.elf >syms &&
    for f in _svfprintf_r __ssvfscanf_r _strtod_r _dtoa_r mktime strftime gmtime_r qsort \
             _svfwprintf_r _ZSt18_Rb_tree_incrementPSt18_Rb_tree_node_base __aeabi_dmul; do
        grep -q " $f\$" syms || { echo "missing $f"; return 1; }
    done
'

test_expect_success 'heavy-imxrt1062: ARMv7E-M (v7E-M), soft float, v7e-m/nofp libraries' '
    readelf -A $FW/heavy-imxrt1062.elf >attr &&
    grep -q "Tag_CPU_arch: v7E-M" attr && ! grep -q "Tag_FP_arch" attr &&
    grep -q "/thumb/v7e-m/nofp/libstdc++.a(" $FW/heavy-imxrt1062.map
'

test_expect_success 'expected-heavy.txt: every line is BUILD ITERATIONS 0xRESULT' '
    grep -v -E "^(#|$)" $EXPECTED >lines &&
    test $(wc -l <lines) -eq 6 &&
    ! grep -v -E "^(mps2-an385|mps2-an500) (1|10|100) 0x[0-9a-f]{8}$" lines
'

test_expect_success 'QEMU mps2-an385 (the rp2040 object code): results equal expected-heavy.txt' "
    $QREF mps2-an385 >out &&
    grep '^mps2-an385 ' $EXPECTED >expect &&
    test_cmp expect out
"

test_expect_success 'QEMU mps2-an500 (the imxrt1062 object code): results equal expected-heavy.txt' "
    $QREF mps2-an500 $FW/heavy-mps2-an500.elf >out &&
    grep '^mps2-an500 ' $EXPECTED >expect &&
    test_cmp expect out
"

test_expect_success 'heavy-rp2040 and heavy-mps2-an385 run the same object code' '
    for f in codeplace_iteration _svfprintf_r _strtod_r mktime; do
        arm-none-eabi-nm -S $FW/heavy-rp2040.elf | awk -v f=$f "\$4 == f { print \$2 }" >a &&
        arm-none-eabi-nm -S $FW/heavy-mps2-an385.elf | awk -v f=$f "\$4 == f { print \$2 }" >b &&
        test -s a && test_cmp a b || return 1
    done
'

ref10=$(awk '$1 == "mps2-an385" && $2 == 10 { print $3 }' "$EXPECTED")
test_expect_success 'virtual board, harness mode: rp2040 and imxrt1062 give the QEMU result after 10' "
    test -n '$ref10' &&
    for t in rp2040 imxrt1062; do
        $CODEPLACE trace $FW/heavy-\$t.elf --target \$t $HARNESS -n 10 -q -o \$t.trace >out &&
        grep -q '^result: *codeplace_result = $ref10 ' out || { cat out; return 1; }
    done
"

test_expect_success 'virtual board, free run: the same result after 10 marks' "
    $CODEPLACE trace $FW/heavy-rp2040.elf --target rp2040 --mark codeplace_mark -n 10 \
        --result codeplace_result -q -o free.trace >out &&
    grep -q '^result: *codeplace_result = $ref10 ' out
"

test_expect_success 'heavy-rp2040: over 40 KiB of code per warm iteration (codeplace sim)' "
    $CODEPLACE trace $FW/heavy-rp2040.elf --target rp2040 $HARNESS -n 4 -q -o h.trace >/dev/null &&
    $CODEPLACE sim h.trace --elf $FW/heavy-rp2040.elf --map $FW/heavy-rp2040.map \
        --json -q -o sim.json &&
    python3 -c 'import json,sys
d = json.load(open(\"sim.json\"))
w = d[\"warm\"]
fp = w[\"sum\"][\"footprint_bytes\"] / w[\"iterations\"]
print(\"footprint\", fp)
sys.exit(0 if fp > 40 * 1024 else 1)'
"

# newlib's libc.a is built without -ffunction-sections: one .text per
# object, moved with an archive:member pattern.
test_expect_success 'relink WORKLOAD=heavy with a plan keeps the result' "
    mkdir -p plan &&
    printf '*libc.a:lib_a-strtod.o(.text)\n' >plan/codeplace_ram.ld &&
    make --no-print-directory -s -C $CP_ROOT -f mk/firmware.mk relink WORKLOAD=heavy \
        TARGET=rp2040 PLACE=\$PWD/plan OUT=\$PWD/placed >log 2>&1 &&
    arm-none-eabi-nm placed.elf | grep -q '^200[0-9a-f]* T _strtod_l\$' &&
    $CODEPLACE trace placed.elf --target rp2040 $HARNESS -n 10 -q -o p.trace >out &&
    grep -q '^result: *codeplace_result = $ref10 ' out
"

test_expect_success 'relink: an unknown WORKLOAD is a usage error' "
    mkdir -p plan &&
    test_must_fail make --no-print-directory -s -C $CP_ROOT -f mk/firmware.mk relink \
        WORKLOAD=nope TARGET=rp2040 PLACE=\$PWD/plan OUT=\$PWD/x 2>err &&
    grep -q \"unknown WORKLOAD 'nope'\" err
"

test_done
