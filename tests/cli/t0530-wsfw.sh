#!/bin/sh
# The whole-system echo firmware (firmware/ws/): both builds, their vector
# tables (the LAN9118 interrupt, PendSV, SysTick), the marker in a section
# of its own, its SHA-256 against Python's, UDP echo through QEMU user
# networking on mps2-an385 and mps2-an500 (every datagram comes back
# unchanged, QEMU stopped by PID), frame-level checks of ARP, ICMP and the
# checksums on a socket netdev, and the independent count per echo from
# QEMU's exec log against firmware/ws/reference.txt.
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

if have gcc; then
test_expect_success 'SHA-256 of the audit chain agrees with hashlib' '
    cat >sha.c <<-\EOC &&
	#include "sha256.h"
	#include <stdio.h>
	#include <stdlib.h>
	int main(int argc, char **argv)
	{
	    static uint8_t buf[4096];
	    size_t n = fread(buf, 1, sizeof buf, stdin), off = 0, k;
	    size_t step = (size_t)atoi(argv[argc - 1]);
	    struct sha256 s;
	    uint8_t d[32];
	    int i;
	    sha256_init(&s);
	    for (; off < n; off += k) {
	        k = n - off < step ? n - off : step;
	        sha256_update(&s, buf + off, (uint32_t)k);
	    }
	    sha256_final(&s, d);
	    for (i = 0; i < 32; i++)
	        printf("%02x", d[i]);
	    printf("\n");
	    return 0;
	}
	EOC
    gcc -std=c99 -Wall -Wextra -Werror -I$CP_ROOT/firmware/ws -o sha sha.c \
        $CP_ROOT/firmware/ws/sha256.c &&
    cat >check.py <<-\EOC &&
	import hashlib, subprocess, sys
	bad = 0
	for n in (0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 4096):
	    data = bytes((i * 31 + n) & 255 for i in range(n))
	    want = hashlib.sha256(data).hexdigest()
	    for step in (1, 7, 64, 5000):
	        got = subprocess.run(["./sha", str(step)], input=data,
	                             capture_output=True, check=True).stdout
	        if got.decode().strip() != want:
	            print("length %d in pieces of %d: %s, want %s"
	                  % (n, step, got.decode().strip(), want))
	            bad += 1
	sys.exit(1 if bad else 0)
	EOC
    python3 check.py
'
fi

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

for b in mps2-an385 mps2-an500; do
    test_expect_success "$b: bursts of 32 datagrams queued behind each other, all answered" "
        timeout 120 $ECHO $b $FW/ws-$b.elf -n 320 --size 64 --burst 32 --timeout 90 >out &&
        cat out &&
        test \"\$(cat out)\" = '$b: 320 sent, 320 answered, 320 identical, 0 timeouts, qemu stopped'
    "
done

for b in mps2-an385 mps2-an500; do
    test_expect_success "$b: ARP, ICMP echo, UDP echo and the drops, frame by frame" "
        timeout 90 python3 $CP_ROOT/tests/cli/wsfw-frames.py $b $FW/ws-$b.elf >out; rc=\$?
        cat out && test \$rc = 0 &&
        test \$(grep -c '^ok ' out) = 14 && ! grep -q FAIL out
    "
done

test_expect_success 'mps2-an385 relinked with a plan (net_input, compress in SSRAM 2&3) still echoes' '
    mkdir plan &&
    printf "*(.text.net_input)\n*(.text.compress)\n" >plan/codeplace_ram.ld &&
    printf "*(.text.lan9118_rx)\n" >plan/codeplace_flash.ld &&
    $CP_ROOT/firmware/relink.sh ws-mps2-an385 plan placed/ws &&
    arm-none-eabi-nm placed/ws.elf >syms &&
    grep -q "^20000000 T net_input\$" syms &&
    grep -q "^2000[0-9a-f]* t compress\$" syms &&
    test "$(sym placed/ws.elf lan9118_rx)" = "$(sym placed/ws.elf __codeplace_hot_start)" &&
    grep -q "^00380000 A __ramfunc_load\$" syms &&
    timeout 120 $ECHO mps2-an385 placed/ws.elf -n 20 --timeout 90 >out &&
    cat out &&
    test "$(cat out)" = "mps2-an385: 20 sent, 20 answered, 20 identical, 0 timeouts, qemu stopped"
'

test_expect_success 'relink: an unknown ws- target is a usage error' '
    mkdir plan &&
    test_exit 2 $CP_ROOT/firmware/relink.sh ws-mps2-an999 plan placed/x 2>err &&
    grep -q "unknown TARGET .ws-mps2-an999. (one of: .* ws-mps2-an385 ws-mps2-an500)" err
'

# The figures per echo that a recorder must reproduce: every idle
# iteration agrees exactly, and with firmware/ws/reference.txt.
for b in mps2-an385 mps2-an500; do
    test_expect_success "$b: independent count per echo matches the reference" "
        timeout 300 python3 $CP_ROOT/tests/cli/wsfw-count.py $b $FW/ws-$b.elf \
            -n 40 --size 64 --timeout 240 >out; rc=\$?
        cat out && test \$rc = 0 &&
        awk '\$1 == \"$b\" && \$2 == 64 { print \$3, \$4 }' \
            $CP_ROOT/firmware/ws/reference.txt >want &&
        sed -n 's/^per echo: *\\([0-9]*\\) instructions, \\([0-9]*\\) lines of 8 bytes.*/\\1 \\2/p' out >got &&
        test -s want && test_cmp want got &&
        grep -q '0 dropped (rewound), 0 unmatched' out
    "
done
else
    test_skip 'echo firmware in QEMU' 'no qemu-system-arm'
fi

test_done
