/*
 * codeplace firmware harness: the symbols the virtual board and the
 * reference runs rely on. C99, freestanding startup, picolibc.
 *
 *   codeplace_init()       set-up, called once by the reset handler
 *   codeplace_iteration()  one unit of the workload
 *   codeplace_mark()       called before every iteration: the marker that a
 *                          free-running trace splits iterations on
 *   codeplace_result       checksum accumulated over all iterations
 */
#ifndef CODEPLACE_H
#define CODEPLACE_H

#include <stdint.h>

extern volatile uint32_t codeplace_result;
extern volatile uint32_t codeplace_mark_count;

void codeplace_init(void);
void codeplace_iteration(void);
/* The demo's second, lighter request (parse only): a second workload. */
void codeplace_iteration_parse(void);
void codeplace_mark(void);

/* The run-time set-up codeplace_init() does first, so that a harness that
 * only copies .data, zeroes .bss and calls codeplace_init() gets it too:
 * FPU access on hard-float builds (CPACR), picolibc's thread pointer (errno
 * is thread-local) at __tls_base. */
void codeplace_runtime_init(void);

/* What the reset handler runs after codeplace_init(). The startup's weak
 * definition loops forever: codeplace_mark(), codeplace_iteration(). The
 * QEMU reference builds replace it (firmware/ref/semihost.c). */
void codeplace_main(void) __attribute__((noreturn));

/* Called by every fault handler. The weak default spins; the reference
 * builds report the fault and exit. */
void codeplace_on_fault(uint32_t ipsr);

#endif
