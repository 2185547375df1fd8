#!/bin/sh
# The whole-system echo firmware (firmware/ws/): both builds, their vector
# tables (the LAN9118 interrupt, PendSV, SysTick), the marker in a section
# of its own, and UDP echo through QEMU user networking on mps2-an385 and
# mps2-an500: every datagram comes back unchanged, QEMU stopped by PID.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
ECHO="python3 $CP_ROOT/tests/cli/wsfw-echo.py"

# nm value of a symbol, as 0x%08x; empty when absent.
sym() {
    arm-none-eabi-nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1; exit }'
}

# word N of the vector table (at address 0), as 0x%08x
vector() {
    arm-none-eabi-objcopy -O binary -j .vectors "$1" vec.bin &&
    od -An -tx4 -j $(($2 * 4)) -N 4 vec.bin | awk '{ print "0x" $1 }'
}

for b in mps2-an385 mps2-an500; do
    elf=$FW/ws-$b.elf
    test_expect_success "$b: ELF and map are built" "
        test -s $elf && test -s $FW/ws-$b.map &&
        grep -q '^Memory Configuration' $FW/ws-$b.map &&
        grep -q '^ \.text\.codeplace_mark' $FW/ws-$b.map
    "
    test_expect_success "$b: vector table: stack, reset, PendSV, SysTick, IRQ 13" "
        test \$(vector $elf 0) = 0x20400000 &&
        test \$((\$(vector $elf 1))) = \$((\$(sym $elf codeplace_reset_handler) | 1)) &&
        test \$((\$(vector $elf 14))) = \$((\$(sym $elf k_pendsv_handler) | 1)) &&
        test \$((\$(vector $elf 15))) = \$((\$(sym $elf k_systick_handler) | 1)) &&
        test \$((\$(vector $elf 29))) = \$((\$(sym $elf lan9118_irq_handler) | 1)) &&
        test \$((\$(vector $elf 28))) = \$((\$(sym $elf ws_fault_handler) | 1))
    "
done

test_expect_success 'mps2-an385 is ARMv7-M (Cortex-M3), mps2-an500 ARMv7E-M soft float' '
    readelf -A $FW/ws-mps2-an385.elf >a && grep -q "Tag_CPU_arch: v7$" a &&
    readelf -A $FW/ws-mps2-an500.elf >b && grep -q "Tag_CPU_arch: v7E-M" b &&
    ! grep -q Tag_FP_arch b
'

test_expect_success 'the LAN9118 base differs per board (QEMU hw/arm/mps2.c)' '
    grep -q "0x40200000u" $CP_ROOT/firmware/ws/board.h &&
    grep -q "0xA0000000u" $CP_ROOT/firmware/ws/board.h &&
    test $(arm-none-eabi-objdump -d $FW/ws-mps2-an500.elf | grep -c "a0000000") -gt 0
'

if have qemu-system-arm; then
for b in mps2-an385 mps2-an500; do
    test_expect_success "$b: 50 UDP echoes come back unchanged, QEMU stopped" "
        timeout 120 $ECHO $b $FW/ws-$b.elf -n 50 --timeout 90 --log serial >out &&
        cat out serial &&
        test \"\$(cat out)\" = '$b: 50 sent, 50 answered, 50 identical, 0 timeouts, qemu stopped' &&
        grep -q '^ws: codeplace echo firmware on $b' serial &&
        grep -q 'link up, ip 10.0.2.15, udp echo on port 7' serial
    "
done
else
    test_skip 'UDP echo in QEMU' 'no qemu-system-arm'
fi

test_done
