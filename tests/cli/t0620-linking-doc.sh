#!/bin/sh
# docs/linking.md: the linker script and the start-up file on that page,
# taken out of it verbatim, linked with real GNU ld and two placement hooks.
. "$(dirname "$0")/lib.sh"
DOC=$CP_ROOT/docs/linking.md

# TAG: the fenced block of the page whose first line names TAG.
block() {
    awk -v tag="/* docs/linking.md: $1 */" '
        /^```/ { if (inb) { if (keep) exit; inb = 0; next } inb = 1; first = 1; next }
        inb && first { first = 0; keep = ($0 == tag) }
        inb && keep { print }' "$DOC"
}

if ! have arm-none-eabi-gcc; then
    test_skip 'the page links' 'arm-none-eabi-gcc missing'
    test_done
fi

test_expect_success 'the page holds both blocks' '
    block app.ld >app.ld && block startup.c >startup.c &&
    grep -q "INCLUDE codeplace_ram.ld" app.ld &&
    grep -q "INCLUDE codeplace_flash.ld" app.ld &&
    grep -q "copy_words(__ramfunc_start" startup.c
'

test_expect_success 'linked with two hooks: the RAM function runs from SRAM, loaded from RAMLOAD; the hot block starts .text' '
    block app.ld >app.ld && block startup.c >startup.c &&
    cat >main.c <<-\EOF &&
	int hot_ram(int x);
	int hot_flash(int x);
	int cold(int x);
	int __attribute__((noinline)) cold(int x) { return x * 3 + 1; }
	int __attribute__((noinline)) hot_ram(int x) { return cold(x) ^ 0x55; }
	int __attribute__((noinline)) hot_flash(int x) { return hot_ram(x) + 7; }
	volatile int sink;
	int main(void) { for (int i = 0; i < 10; i++) sink += hot_flash(i); return 0; }
	EOF
    mkdir place &&
    echo "    *(.text.hot_ram)" >place/codeplace_ram.ld &&
    printf "    *(.text.hot_flash)\n    . = __codeplace_hot_start + 0x40;\n" >place/codeplace_flash.ld &&
    arm-none-eabi-gcc -mcpu=cortex-m0plus -mthumb -Os -ffunction-sections \
        -fno-tree-loop-distribute-patterns -nostartfiles -nostdlib -T app.ld \
        -L place -Wl,-Map=app.map -o app.elf startup.c main.c -lgcc &&
    arm-none-eabi-nm app.elf >nm.txt &&
    addr() { sed -n "s/^\([0-9a-f]*\) . $1\$/\1/p" nm.txt; } &&
    test $((0x$(addr hot_ram) & ~1)) -eq $((0x$(addr __ramfunc_start))) &&
    test $((0x$(addr __ramfunc_start))) -eq $((0x20000000)) &&
    test $((0x$(addr __ramfunc_load))) -eq $((0x101C0000)) &&
    test $((0x$(addr hot_flash) & ~1)) -eq $((0x$(addr __codeplace_hot_start))) &&
    test $((0x$(addr cold) & ~1)) -ge $((0x$(addr __codeplace_hot_start) + 0x40)) &&
    test $((0x$(addr cold))) -lt $((0x20000000))
'

test_expect_success 'the same program on the virtual board: start-up copies, main returns' '
    block app.ld >app.ld && block startup.c >startup.c &&
    printf "int f(int x);\nint __attribute__((noinline)) f(int x) { return x + 1; }\nvolatile int r;\nvoid mark(void);\nvoid __attribute__((noinline)) mark(void) { __asm__ volatile(\"\"); }\nint main(void) { for (;;) { mark(); r = f(r); } }\n" >main.c &&
    mkdir place && echo "    *(.text.f)" >place/codeplace_ram.ld && : >place/codeplace_flash.ld &&
    arm-none-eabi-gcc -mcpu=cortex-m0plus -mthumb -Os -ffunction-sections \
        -fno-tree-loop-distribute-patterns -nostartfiles -nostdlib -T app.ld \
        -L place -o app.elf startup.c main.c -lgcc &&
    $CODEPLACE trace app.elf -t rp2040 --mark mark -n 5 -o run.trace -q >out &&
    $CODEPLACE sim run.trace app.elf --csv --by function -q >f.csv &&
    grep -q "^f,0x20000000," f.csv
'

test_done
