/*
 * The QEMU reference runs: the same workload, with a codeplace_main() that
 * prints codeplace_result after 1, 10 and 300 iterations through
 * semihosting (picolibc's libsemihost: stdout and exit) and exits.
 * codeplace_mark() still runs before every iteration, so an exec log of
 * these builds splits into iterations the same way a free-run trace does.
 *
 * Output, one line per checkpoint:
 *   codeplace_result after N iterations: 0xXXXXXXXX
 */
#include "codeplace.h"

#include <stdio.h>
#include <stdlib.h>

#define REF_LAST 300u

void codeplace_main(void)
{
    uint32_t n;

    for (n = 1; n <= REF_LAST; n++) {
        codeplace_mark();
        codeplace_iteration();
        if (n == 1 || n == 10 || n == REF_LAST) {
            printf("codeplace_result after %lu iterations: 0x%08lx\n",
                   (unsigned long)n, (unsigned long)codeplace_result);
            fflush(stdout);
        }
    }
    exit(0);
}

void codeplace_on_fault(uint32_t ipsr)
{
    printf("codeplace: fault, exception %lu\n", (unsigned long)(ipsr & 0x1ffu));
    exit(3);
}
