/*
 * Startup for every codeplace firmware build, in C.
 *
 * The vector table sits at the start of the flash image (section .vectors,
 * placed first by the linker scripts): initial stack pointer, reset handler,
 * then the ARMv6-M / ARMv7-M system exceptions (ARMv7-M Architecture
 * Reference Manual B1.5.3, ARMv6-M B1.5.3 "The vector table"). No interrupt
 * is enabled: the workload is pure compute.
 *
 * The reset handler enables the FPU (hard-float builds), copies .data (with
 * picolibc's TLS template) and .ramfunc (the code that the placement hook
 * codeplace_ram.ld moved to SRAM or ITCM) from their load addresses in
 * flash, zeroes .bss, calls codeplace_init() (which first calls
 * codeplace_runtime_init(): FPU access, picolibc's TLS pointer) and then
 * codeplace_main().
 */
#include "codeplace.h"

#include <stddef.h>
#include <stdint.h>

/* Defined by the linker scripts (firmware/ld/sections.ld). */
extern uint32_t __stack[];
extern uint32_t __ramfunc_start[], __ramfunc_end[], __ramfunc_load[];
extern uint32_t __data_start[], __data_end[], __data_load[];
extern uint32_t __bss_start[], __bss_end[];
extern char __tls_base[];

#if !defined(CODEPLACE_NEWLIB)
/* picolibc: sets the thread pointer that __aeabi_read_tp returns (errno
 * is thread-local in picolibc). newlib builds (the heavy workload, built
 * with -DCODEPLACE_NEWLIB) keep errno in their reentrancy structure. */
void _set_tls(void *tls);
#endif

void codeplace_reset_handler(void) __attribute__((noreturn, used));
void codeplace_nmi_handler(void);
void codeplace_hardfault_handler(void);
void codeplace_default_handler(void);

volatile uint32_t codeplace_mark_count;

/* Plain loops, never turned into memcpy/memset calls: those may be among
 * the functions that a plan moved to RAM, which is not loaded yet. */
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

#if defined(__ARM_FP)
/* Hard-float builds: grant full access to CP10/CP11 (the FPU) in CPACR
 * before the first floating-point instruction (ARMv7-M Architecture
 * Reference Manual B3.2.20, CPACR at 0xE000ED88). */
static void enable_fpu(void)
{
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;

    *cpacr |= 0xFu << 20;
    __asm__ volatile ("dsb\n\tisb" ::: "memory");
}
#endif

void codeplace_runtime_init(void)
{
#if defined(__ARM_FP)
    enable_fpu();
#endif
#if !defined(CODEPLACE_NEWLIB)
    _set_tls(__tls_base);
#endif
}

void codeplace_reset_handler(void)
{
#if defined(__ARM_FP)
    enable_fpu();
#endif
    copy_words(__ramfunc_start, __ramfunc_end, __ramfunc_load);
    copy_words(__data_start, __data_end, __data_load);
    zero_words(__bss_start, __bss_end);
    /* Code was written to RAM through the data side: make sure it is seen
     * by the instruction side before anything runs from there. */
    __asm__ volatile ("dsb\n\tisb" ::: "memory");
    /* codeplace_init() starts with codeplace_runtime_init(): TLS, FPU */
    codeplace_init();
    codeplace_main();
}

/* The iteration marker: a real call, never inlined, folded or removed, so a
 * free-running trace finds one pass per iteration at its address. */
__attribute__((noinline, noclone, used))
void codeplace_mark(void)
{
    codeplace_mark_count = codeplace_mark_count + 1;
}

__attribute__((weak, noreturn))
void codeplace_main(void)
{
    for (;;) {
        codeplace_mark();
        codeplace_iteration();
    }
}

__attribute__((weak))
void codeplace_on_fault(uint32_t ipsr)
{
    (void)ipsr;
    for (;;)
        __asm__ volatile ("" ::: "memory");
}

static uint32_t read_ipsr(void)
{
    uint32_t v;
    __asm__ volatile ("mrs %0, ipsr" : "=r"(v));
    return v;
}

void codeplace_nmi_handler(void)
{
    codeplace_on_fault(read_ipsr());
}

void codeplace_hardfault_handler(void)
{
    codeplace_on_fault(read_ipsr());
}

void codeplace_default_handler(void)
{
    codeplace_on_fault(read_ipsr());
}

#define VEC(f) ((uintptr_t)(f))

/* 16 system entries (ARMv7-M B1.5.3): SP, Reset, NMI, HardFault,
 * MemManage, BusFault, UsageFault, 4 reserved, SVCall, DebugMonitor,
 * reserved, PendSV, SysTick. ARMv6-M leaves 4-6 and 12 reserved. */
__attribute__((section(".vectors"), used))
const uintptr_t codeplace_vectors[16] = {
    VEC(__stack),
    VEC(codeplace_reset_handler),
    VEC(codeplace_nmi_handler),
    VEC(codeplace_hardfault_handler),
    VEC(codeplace_default_handler),
    VEC(codeplace_default_handler),
    VEC(codeplace_default_handler),
    0, 0, 0, 0,
    VEC(codeplace_default_handler),
    VEC(codeplace_default_handler),
    0,
    VEC(codeplace_default_handler),
    VEC(codeplace_default_handler),
};
