#!/bin/sh
# The profiler core cross-compiled for the targets (mk/zephyr.mk builds
# build/firmware/profiler/*.o with -Wall -Wextra -Werror): the sampling path
# lives in the fast section and calls nothing outside it, so that a sample
# never fetches from the flash cache it measures.
. "$(dirname "$0")/lib.sh"
OBJ=$CP_ROOT/build/firmware/profiler

# Every relocation inside SECTION must name a symbol defined in SECTION.
fast_only() { # obj section
    arm-none-eabi-objdump -r -j "$2" "$1" | awk '$2 ~ /^R_ARM/ {print $3}' | sort -u >refs &&
    arm-none-eabi-objdump -t "$1" | awk -v s="$2" 'index($0, " " s "\t") {print $NF}' | sort -u >insec &&
    test -s insec &&
    comm -23 refs insec >outside &&
    if test -s outside; then echo "calls out of $2:"; cat outside; return 1; fi
}

test_expect_success 'cortex-m0plus: sampling path in .ramfunc.cpprof' '
    arm-none-eabi-objdump -t "$OBJ/m0-ramfunc.o" >t &&
    grep -E "\.ramfunc\.cpprof.*cpprof_add$" t &&
    grep -E "\.ramfunc\.cpprof.*cpprof_frame_pc$" t &&
    fast_only "$OBJ/m0-ramfunc.o" .ramfunc.cpprof
'

test_expect_success 'cortex-m7: sampling path in .itcm.cpprof' '
    arm-none-eabi-objdump -t "$OBJ/m7-itcm.o" >t &&
    grep -E "\.itcm\.cpprof.*cpprof_add$" t &&
    grep -E "\.itcm\.cpprof.*cpprof_frame_pc$" t &&
    fast_only "$OBJ/m7-itcm.o" .itcm.cpprof
'

test_expect_success 'plain build keeps everything in .text' '
    arm-none-eabi-objdump -h "$OBJ/m0.o" "$OBJ/m7.o" >h &&
    ! grep -E "\.(itcm|ramfunc)\.cpprof" h &&
    arm-none-eabi-readelf -A "$OBJ/m0.o" | grep -q "Tag_CPU_arch: v6S-M" &&
    arm-none-eabi-readelf -A "$OBJ/m7.o" | grep -q "Tag_CPU_arch: v7E-M"
'

test_done
