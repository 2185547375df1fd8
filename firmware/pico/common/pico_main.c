/*
 * The harness symbols for a pico-sdk build of a codeplace workload
 * (firmware/pico/demo, firmware/pico/lwip-echo). pico-sdk's own start-up
 * (boot2, crt0, runtime init) runs before main(): it copies .data, zeroes
 * .bss and sets up the C library, so codeplace_runtime_init() has nothing
 * left to do. main() then runs the workload's loop:
 *
 *   codeplace_init(); for (;;) { codeplace_mark(); codeplace_iteration(); }
 *
 * Free run: trace from reset with --mark codeplace_mark. Harness mode: the
 * start-up runs up to main (or to --init), then --init codeplace_init
 * --iter codeplace_iteration.
 */
#include "codeplace.h"

#include <stdint.h>

volatile uint32_t codeplace_mark_count;

void codeplace_runtime_init(void)
{
}

/* The iteration marker: a real call, never inlined, folded or removed. */
__attribute__((noinline, noclone, used))
void codeplace_mark(void)
{
    codeplace_mark_count = codeplace_mark_count + 1;
}

int main(void)
{
    codeplace_init();
    for (;;) {
        codeplace_mark();
        codeplace_iteration();
    }
}
