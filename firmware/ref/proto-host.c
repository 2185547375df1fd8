/*
 * The protocol workload on the host: the same sources as the board builds
 * (firmware/proto/), compiled by the host's C compiler against its own C
 * library. Runs N iterations (default 10) and prints
 *   codeplace_result after N iterations: 0xXXXXXXXX
 * as the board's QEMU reference builds do; with -l, also the log ring.
 */
#include "codeplace.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void codeplace_runtime_init(void)
{
}

int main(int argc, char **argv)
{
    unsigned long n = 10, i;
    int log = 0, a;
    char *end;

    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-l")) {
            log = 1;
            continue;
        }
        n = strtoul(argv[a], &end, 10);
        if (*end || end == argv[a]) {
            fprintf(stderr, "usage: %s [-l] [ITERATIONS]\n", argv[0]);
            return 2;
        }
    }
    codeplace_init();
    for (i = 0; i < n; i++)
        codeplace_iteration();
    printf("codeplace_result after %lu iterations: 0x%08lx\n", n,
           (unsigned long)codeplace_result);
    if (log) {
        size_t head;
        const char *ring = plog_ring(&head);
        fwrite(ring + head, 1, PLOG_RING - head, stdout);
        fwrite(ring, 1, head, stdout);
    }
    return 0;
}
