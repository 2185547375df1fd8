/*
 * The host reference of a pico-sdk workload (firmware/pico/host): the same
 * workload sources compiled with the host's gcc. Prints codeplace_result
 * after 1, 10 and N iterations (N = argv[1], default 300), in the format
 * of firmware/qemu-ref.sh:
 *
 *   codeplace_result after N iterations: 0xXXXXXXXX
 *
 * and, for a workload that counts failed checks (the echo), a last line
 * "codeplace_errors: N"; the exit status is 1 when N is not 0.
 */
#include "codeplace.h"

#include <stdio.h>
#include <stdlib.h>

volatile uint32_t codeplace_mark_count;
extern volatile uint32_t codeplace_errors __attribute__((weak));

void codeplace_runtime_init(void)
{
}

void codeplace_mark(void)
{
    codeplace_mark_count = codeplace_mark_count + 1;
}

int main(int argc, char **argv)
{
    unsigned long n, last = argc > 1 ? strtoul(argv[1], NULL, 10) : 300;

    if (last == 0) {
        fprintf(stderr, "usage: %s [ITERATIONS > 0]\n", argv[0]);
        return 2;
    }
    codeplace_init();
    for (n = 1; n <= last; n++) {
        codeplace_mark();
        codeplace_iteration();
        if (n == 1 || n == 10 || n == last)
            printf("codeplace_result after %lu iterations: 0x%08lx\n", n,
                   (unsigned long)codeplace_result);
    }
    if (&codeplace_errors == NULL)
        return 0;
    printf("codeplace_errors: %lu\n", (unsigned long)codeplace_errors);
    return codeplace_errors != 0;
}
