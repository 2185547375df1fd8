/* libFuzzer harness: the on-target profiler's CPDUMP reader. Inputs whose
 * first line is "FIXCRC" get a correct E line appended (CRC of the rest),
 * so the fuzzer also explores dumps that pass the CRC check. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples/samples.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_err err;
    smp *s = smp_from_dump((const char *)data, size, "fuzz.log", &err);
    smp_free(s);
    if (size > 7 && !memcmp(data, "FIXCRC\n", 7)) {
        const char *body = (const char *)data + 7;
        size_t blen = size - 7;
        const char *c = memmem(body, blen, "CPDUMP ", 7);
        if (!c)
            return 0;
        size_t nlines = 0;
        for (size_t i = 0; i < blen; i++)
            nlines += body[i] == '\n' && i + 1 < blen && body[i + 1] == 'S';
        char *buf = malloc(blen + 64);
        if (!buf)
            return 0;
        memcpy(buf, body, blen);
        uint32_t crc = smp_crc32(0, c, (size_t)(body + blen - c));
        int n = snprintf(buf + blen, 64, "E %zu %08x\n", nlines, crc);
        s = smp_from_dump(buf, blen + (size_t)n, "fuzz.log", &err);
        smp_free(s);
        free(buf);
    }
    return 0;
}
