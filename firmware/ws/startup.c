/*
 * Start-up of the whole-system echo firmware: the vector table (16 system
 * entries and the 32 external interrupts of the MPS2 NVIC, ARMv7-M ARM
 * B1.5.3 "The vector table"), the reset handler and the fault handlers.
 *
 * The reset handler copies .ramfunc (what a plan's codeplace_ram.ld moved
 * to RAM) and .data from flash, zeroes .bss and runs ws_main(). Threads use
 * the process stack; the main stack at the top of SSRAM 2&3 is left to
 * the exception handlers.
 */
#include "board.h"
#include "ws.h"
#include "kernel.h"
#include "lan9118.h"
#include "uart.h"

#include <stdint.h>

extern uint32_t __stack[];
extern uint32_t __ramfunc_start[], __ramfunc_end[], __ramfunc_load[];
extern uint32_t __data_start[], __data_end[], __data_load[];
extern uint32_t __bss_start[], __bss_end[];

void codeplace_reset_handler(void) __attribute__((noreturn, used));
void ws_fault_handler(void);

volatile uint32_t codeplace_mark_count;

/* Plain loops: memcpy/memset may be among the functions a plan moved to
 * RAM, which is not loaded yet. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void copy_words(uint32_t *dst, const uint32_t *end, const uint32_t *src)
{
    while (dst < end)
        *dst++ = *src++;
}

__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void zero_words(uint32_t *dst, const uint32_t *end)
{
    while (dst < end)
        *dst++ = 0;
}

void codeplace_reset_handler(void)
{
    /* no interrupt before k_start() has the kernel ready */
    __asm__ volatile ("cpsid i" ::: "memory");
    copy_words(__ramfunc_start, __ramfunc_end, __ramfunc_load);
    copy_words(__data_start, __data_end, __data_load);
    zero_words(__bss_start, __bss_end);
    __asm__ volatile ("dsb\n\tisb" ::: "memory");
    ws_main();
}

/* The iteration marker: called once per UDP echo request handled. Never
 * inlined or folded, in its own section, so that a recorder counts one
 * iteration per pass of its first instruction. */
__attribute__((noinline, noclone, used, section(".text.codeplace_mark")))
void codeplace_mark(void)
{
    codeplace_mark_count = codeplace_mark_count + 1u;
}

static uint32_t read_ipsr(void)
{
    uint32_t v;

    __asm__ volatile ("mrs %0, ipsr" : "=r"(v));
    return v;
}

void ws_fault_handler(void)
{
    uint32_t ipsr = read_ipsr() & 0x1ffu;

    __asm__ volatile ("cpsid i" ::: "memory");
    uart_puts("ws: fault, exception ");
    uart_put_dec(ipsr);
    uart_puts("\n");
    for (;;)
        __asm__ volatile ("" ::: "memory");
}

#define VEC(f) ((uintptr_t)(f))
#define FAULT  VEC(ws_fault_handler)
#define IRQ(n) ((n) == WS_ETH_IRQ ? VEC(lan9118_irq_handler) : FAULT)
#define IRQ4(n) IRQ(n), IRQ((n) + 1), IRQ((n) + 2), IRQ((n) + 3)

/* 16 system entries: SP, Reset, NMI, HardFault, MemManage, BusFault,
 * UsageFault, 4 reserved, SVCall, DebugMonitor, reserved, PendSV,
 * SysTick; then IRQ 0..31 (only the LAN9118's is used). */
__attribute__((section(".vectors"), used))
const uintptr_t codeplace_vectors[16 + WS_NUM_IRQ] = {
    VEC(__stack),
    VEC(codeplace_reset_handler),
    FAULT, FAULT, FAULT, FAULT, FAULT,
    0, 0, 0, 0,
    FAULT, FAULT,
    0,
    VEC(k_pendsv_handler),
    VEC(k_systick_handler),
    IRQ4(0), IRQ4(4), IRQ4(8), IRQ4(12),
    IRQ4(16), IRQ4(20), IRQ4(24), IRQ4(28),
};
