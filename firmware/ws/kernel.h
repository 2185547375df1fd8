/*
 * A small preemptive kernel: fixed-priority threads, a tickless SysTick
 * tick (10 ms ticks, the timer set for the next wake-up),
 * context switches in PendSV, binary semaphores that an interrupt handler
 * may give, sleeps in ticks, an idle thread that waits with WFI.
 *
 * Threads run in thread mode on the process stack (PSP); handlers run on
 * the main stack. Soft-float builds only: a context is r4-r11 saved by
 * PendSV above the eight words the exception entry stacks.
 */
#ifndef WS_KERNEL_H
#define WS_KERNEL_H

#include <stdint.h>

#define K_TICK_HZ 100u

struct k_thread {
    uint32_t *sp;              /* saved process stack pointer: offset 0 */
    uint32_t switches;         /* times switched in: offset 4 (PendSV) */
    const char *name;
    uint8_t prio;              /* larger runs first; idle is 0 */
    uint8_t state;             /* K_READY, K_BLOCKED, K_SLEEPING */
    uint32_t wake_tick;        /* K_SLEEPING: tick to wake at */
    struct k_thread *next;     /* all threads, highest priority first */
};

struct k_sem {
    volatile uint32_t count;   /* 0 or 1 */
    struct k_thread *waiter;   /* one waiting thread at most */
};

enum { K_READY = 0, K_BLOCKED = 1, K_SLEEPING = 2 };

void k_init(void);
void k_thread_create(struct k_thread *t, const char *name, uint8_t prio,
                     uint32_t *stack, uint32_t words,
                     void (*entry)(void *), void *arg);
/* Starts the highest-priority thread; never returns. */
void k_start(void) __attribute__((noreturn));

void k_sleep_until(uint32_t tick);
uint32_t k_ticks(void);
void k_sem_wait(struct k_sem *s);
/* From a thread or an interrupt handler. */
void k_sem_give(struct k_sem *s);

extern struct k_thread *volatile k_current;
extern volatile uint32_t k_switch_count;

void k_systick_handler(void);
void k_pendsv_handler(void);

#endif
