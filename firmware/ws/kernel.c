/*
 * The kernel (kernel.h). Scheduling: the highest-priority ready thread
 * runs; a thread that blocks or sleeps gives the CPU to the next one; the
 * idle thread (priority 0) is always ready and waits with WFI. Any change
 * that may make another thread the one to run calls reschedule(), which
 * pends PendSV; PendSV has the lowest exception priority, so the switch
 * happens once no other handler is active (ARMv7-M ARM B1.5.4, "Exception
 * priorities and preemption").
 *
 * Time is counted in ticks of 1/K_TICK_HZ s, tickless: SysTick is not
 * programmed to interrupt every tick but for the earliest wake-up of a
 * sleeping thread (at most K_MAX_TICKS ahead, the 24-bit counter's range),
 * as Zephyr and FreeRTOS's tickless idle do. Each time it is reprogrammed
 * the cycles elapsed since it was last loaded are added to the tick count
 * and its remainder, so no time is lost but the few cycles between reading
 * and rewriting the counter. A thread that only waits on semaphores (the
 * network thread) therefore runs no timer code at all.
 */
#include "kernel.h"

#include "board.h"
#include "cortexm.h"

#include <stddef.h>

struct k_thread *volatile k_current;
struct k_thread *volatile k_next;
volatile uint32_t k_switch_count;

static struct k_thread *threads;     /* sorted, highest priority first */
static volatile uint32_t tick_count;
static uint32_t rem_cycles;          /* cycles past tick_count, < K_TICK_CYCLES */
static uint32_t period_cycles;       /* SYST_RVR + 1 */

#define K_TICK_CYCLES (WS_SYSCLK_HZ / K_TICK_HZ)
#define K_MAX_TICKS   64u            /* 64 * 250000 < 2^24 */
#define K_MIN_CYCLES  256u
#define CM_ICSR_PENDSTSET (1u << 26)
#define CM_ICSR_PENDSTCLR (1u << 25)

static struct k_thread idle_thread;
static uint32_t idle_stack[64] __attribute__((aligned(8)));

/* Initial xPSR of a thread: only the Thumb bit (ARMv7-M B1.4.2, EPSR.T). */
#define K_XPSR_THUMB 0x01000000u

static void reschedule(void);
static void clock_program(void);

/* PendSV's offsets into struct k_thread */
typedef char k_sp_at_0[offsetof(struct k_thread, sp) == 0 ? 1 : -1];
typedef char k_switches_at_4[offsetof(struct k_thread, switches) == 4 ? 1 : -1];

static void thread_exit(void)
{
    /* entries never return; a thread that does stops here for good */
    uint32_t pm = cm_irq_save();

    k_current->state = K_BLOCKED;
    reschedule();
    cm_irq_restore(pm);
    for (;;)
        __asm__ volatile ("wfi" ::: "memory");
}

static void idle_entry(void *arg)
{
    (void)arg;
    for (;;)
        __asm__ volatile ("wfi" ::: "memory");
}

static struct k_thread *pick(void)
{
    struct k_thread *t;

    for (t = threads; t != NULL; t = t->next)
        if (t->state == K_READY)
            return t;
    return &idle_thread;
}

/* Interrupts masked by the caller. k_next is always set: a switch may
 * already be pending for a thread that is no longer the one to run (the
 * network thread blocked, then its interrupt made it ready again before
 * PendSV ran); PendSV then switches to the current thread, i.e. back. */
static void reschedule(void)
{
    struct k_thread *t = pick();

    k_next = t;
    if (t != k_current)
        CM_ICSR = CM_ICSR_PENDSVSET;
}

void k_thread_create(struct k_thread *t, const char *name, uint8_t prio,
                     uint32_t *stack, uint32_t words,
                     void (*entry)(void *), void *arg)
{
    uint32_t *sp = stack + (words & ~1u);   /* 8-byte aligned top */
    struct k_thread **pp;
    int i;

    /* the frame an exception return pops (ARMv7-M B1.5.6): r0-r3, r12,
     * lr, pc, xpsr; below it r4-r11 as PendSV saves them */
    *--sp = K_XPSR_THUMB;
    /* a return address with bit 0 set is UNPREDICTABLE (B1.5.8): the
     * Thumb state is in xPSR.T */
    *--sp = (uint32_t)(uintptr_t)entry & ~1u;
    *--sp = (uint32_t)(uintptr_t)thread_exit;
    *--sp = 0;                               /* r12 */
    *--sp = 0;                               /* r3 */
    *--sp = 0;                               /* r2 */
    *--sp = 0;                               /* r1 */
    *--sp = (uint32_t)(uintptr_t)arg;        /* r0 */
    for (i = 0; i < 8; i++)
        *--sp = 0;                           /* r11..r4 */
    t->sp = sp;
    t->name = name;
    t->prio = prio;
    t->state = K_READY;
    t->wake_tick = 0;
    t->switches = 0;
    if (t == &idle_thread) {
        t->next = NULL;
        return;
    }
    for (pp = &threads; *pp != NULL && (*pp)->prio >= prio; pp = &(*pp)->next)
        ;
    t->next = *pp;
    *pp = t;
}

void k_init(void)
{
    threads = NULL;
    k_current = NULL;
    k_next = NULL;
    tick_count = 0;
    k_thread_create(&idle_thread, "idle", 0, idle_stack,
                    sizeof idle_stack / sizeof idle_stack[0], idle_entry, NULL);
}

void k_start(void)
{
    (void)cm_irq_save();
    /* PendSV lowest (0xFF), SysTick above it (0x80) */
    CM_SHPR3 = (0x80u << 24) | (0xFFu << 16);
    /* SysTick from the processor clock (SYSCLK) */
    period_cycles = K_MAX_TICKS * K_TICK_CYCLES;
    CM_SYST_RVR = period_cycles - 1u;
    CM_SYST_CVR = 0;
    CM_SYST_CSR = CM_SYST_ENABLE | CM_SYST_TICKINT | CM_SYST_CLKSRC;
    clock_program();
    k_next = pick();
    CM_ICSR = CM_ICSR_PENDSVSET;
    cm_irq_restore(0);
    /* PendSV runs here and never comes back to this stack */
    for (;;)
        __asm__ volatile ("wfi" ::: "memory");
}

/* Cycles since SysTick was last loaded, a period that ended while the
 * interrupt was masked included (wrapped: the caller is the SysTick
 * handler, whose period ended on entry). Interrupts masked. */
static uint32_t clock_elapsed(int wrapped, int *pending)
{
    uint32_t pend, cvr, cycles;

    do {
        pend = CM_ICSR & CM_ICSR_PENDSTSET;
        cvr = CM_SYST_CVR;
    } while ((CM_ICSR & CM_ICSR_PENDSTSET) != pend);
    /* the counter runs from RVR down to 0, reloads on the next clock */
    cycles = cvr == 0 ? 0 : period_cycles - 1u - cvr;
    if (wrapped)
        cycles += period_cycles;
    if (pend)
        cycles += period_cycles;
    *pending = pend != 0;
    return cycles;
}

/* Reloads SysTick for the earliest wake-up, right after clock_advance()
 * brought tick_count and rem_cycles up to now. A period is never shorter
 * than K_MIN_CYCLES: SYST_RVR 0 would stop the counter (ARMv7-M B3.3.1),
 * and a wake-up a few microseconds late is harmless. Interrupts masked. */
static void clock_program(void)
{
    struct k_thread *t;
    uint32_t delta = K_MAX_TICKS, d, cycles;

    for (t = threads; t != NULL; t = t->next) {
        if (t->state != K_SLEEPING)
            continue;
        d = (int32_t)(t->wake_tick - tick_count) > 0 ? t->wake_tick - tick_count : 1u;
        if (d < delta)
            delta = d;
    }
    cycles = delta * K_TICK_CYCLES - rem_cycles;
    if (cycles < K_MIN_CYCLES)
        cycles = K_MIN_CYCLES;
    period_cycles = cycles;
    CM_SYST_RVR = cycles - 1u;
    CM_SYST_CVR = 0;             /* reload from RVR on the next clock */
}

static void clock_advance(int wrapped)
{
    int pending;
    uint32_t total = rem_cycles + clock_elapsed(wrapped, &pending);

    if (pending)
        CM_ICSR = CM_ICSR_PENDSTCLR;
    tick_count = tick_count + total / K_TICK_CYCLES;
    rem_cycles = total % K_TICK_CYCLES;
}

uint32_t k_ticks(void)
{
    uint32_t pm = cm_irq_save();
    int pending;
    uint32_t now = tick_count +
                   (rem_cycles + clock_elapsed(0, &pending)) / K_TICK_CYCLES;

    cm_irq_restore(pm);
    return now;
}

void k_sleep_until(uint32_t tick)
{
    uint32_t pm = cm_irq_save();

    clock_advance(0);
    if ((int32_t)(tick - tick_count) > 0) {
        k_current->state = K_SLEEPING;
        k_current->wake_tick = tick;
        reschedule();
    }
    clock_program();
    cm_irq_restore(pm);
}

void k_sem_wait(struct k_sem *s)
{
    uint32_t pm = cm_irq_save();

    while (s->count == 0) {
        s->waiter = k_current;
        k_current->state = K_BLOCKED;
        reschedule();
        /* PendSV switches away as soon as interrupts are unmasked; this
         * thread resumes here once k_sem_give() has made it ready */
        cm_irq_restore(pm);
        pm = cm_irq_save();
    }
    s->count = 0;
    cm_irq_restore(pm);
}

void k_sem_give(struct k_sem *s)
{
    uint32_t pm = cm_irq_save();

    s->count = 1;
    if (s->waiter != NULL) {
        s->waiter->state = K_READY;
        s->waiter = NULL;
        reschedule();
    }
    cm_irq_restore(pm);
}

/* SysTick: the earliest wake-up is due. */
void k_systick_handler(void)
{
    uint32_t pm = cm_irq_save();
    struct k_thread *t;
    int woke = 0;

    clock_advance(1);
    for (t = threads; t != NULL; t = t->next) {
        if (t->state == K_SLEEPING &&
            (int32_t)(tick_count - t->wake_tick) >= 0) {
            t->state = K_READY;
            woke = 1;
        }
    }
    if (woke)
        reschedule();
    clock_program();
    cm_irq_restore(pm);
}

/*
 * The context switch. On entry the hardware has stacked r0-r3, r12, lr,
 * pc, xpsr on the interrupted thread's PSP. Save r4-r11 below them and
 * the PSP in k_current->sp (none before the first switch), load the next
 * thread's, and return to thread mode on the PSP (EXC_RETURN 0xFFFFFFFD,
 * ARMv7-M B1.5.8).
 */
__attribute__((naked))
void k_pendsv_handler(void)
{
    __asm__ volatile (
        "cpsid  i\n\t"
        "ldr    r1, =k_current\n\t"
        "ldr    r2, [r1]\n\t"
        "cbz    r2, 1f\n\t"
        "mrs    r0, psp\n\t"
        "stmdb  r0!, {r4-r11}\n\t"
        "str    r0, [r2]\n\t"
        "1:\n\t"
        "ldr    r3, =k_next\n\t"
        "ldr    r2, [r3]\n\t"
        "str    r2, [r1]\n\t"
        "ldr    r0, [r2, #4]\n\t"        /* switches++ */
        "adds   r0, r0, #1\n\t"
        "str    r0, [r2, #4]\n\t"
        "ldr    r3, =k_switch_count\n\t"
        "ldr    r0, [r3]\n\t"
        "adds   r0, r0, #1\n\t"
        "str    r0, [r3]\n\t"
        "ldr    r0, [r2]\n\t"
        "ldmia  r0!, {r4-r11}\n\t"
        "msr    psp, r0\n\t"
        "ldr    lr, =0xFFFFFFFD\n\t"
        "cpsie  i\n\t"
        "bx     lr\n\t"
        ".ltorg\n\t");
}
