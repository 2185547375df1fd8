/* Host helper for tests/cli/t7110: runs the profiler core
 * (firmware/profiler/cpprof.c) on a made-up PC stream and prints what the
 * board's console would show for "codeplace dump", shell prompts around it.
 *   dumpgen CAP NSAMPLES [SEED]
 *       PCs 0x10000100 + 2*k, k drawn from a skewed distribution over 600
 *       halfwords, the Thumb bit set on odd draws (the core clears it)
 *   dumpgen CAP -
 *       "PC COUNT" lines (hex PC, decimal count) on stdin, each PC sampled
 *       COUNT times */
#include <stdio.h>
#include <stdlib.h>

#include "cpprof.h"

/* The Zephyr shell ends console lines with \r\n: so does this. */
static int out(void *ctx, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n' && fputc('\r', ctx) == EOF)
            return -1;
        if (fputc(s[i], ctx) == EOF)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: dumpgen CAP NSAMPLES [SEED]\n");
        return 2;
    }
    uint32_t cap = (uint32_t)strtoul(argv[1], NULL, 0);
    int from_stdin = argv[2][0] == '-' && argv[2][1] == 0;
    uint32_t n = from_stdin ? 0 : (uint32_t)strtoul(argv[2], NULL, 0);
    uint32_t x = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 1u;
    uint32_t *pc = calloc(cap ? cap : 1, sizeof *pc);
    uint32_t *cnt = calloc(cap ? cap : 1, sizeof *cnt);
    cpprof_buf b;
    if (!pc || !cnt || cpprof_init(&b, pc, cnt, cap) < 0) {
        fprintf(stderr, "dumpgen: bad bucket count %s\n", argv[1]);
        return 2;
    }
    unsigned long a, c;
    while (from_stdin && scanf("%lx %lu", &a, &c) == 2) {
        for (unsigned long i = 0; i < c; i++)
            cpprof_add(&b, (uint32_t)a);
        n += (uint32_t)c;
    }
    for (uint32_t i = 0; !from_stdin && i < n; i++) {
        x = x * 1664525u + 1013904223u; /* LCG */
        uint32_t r = x >> 8;
        uint32_t k = (r % 600u) * (r % 600u) / 600u; /* skewed to low k */
        cpprof_add(&b, 0x10000100u + 2u * k + (r & 1u));
    }
    cpprof_info info = {"cortex-m0plus", 10000, n / 10u};
    printf("uart:~$ codeplace dump\r\n");
    if (cpprof_dump(&b, &info, out, stdout) < 0)
        return 1;
    printf("uart:~$ \r\n");
    free(pc);
    free(cnt);
    return 0;
}
