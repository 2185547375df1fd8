/* libFuzzer harness: the samples file reader, the gmon.out reader and the
 * name-list reader on the same bytes; a parsed samples file is written back
 * and must read again to the same histogram. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/diff.h"
#include "samples/samples.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_err err;
    smp *s = smp_parse((const char *)data, size, "fuzz.txt", &err);
    if (s) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (f && smp_write(s, f, &err) == 0) {
            fclose(f);
            smp *t = smp_parse(buf, len, "rewritten", &err);
            if (!t || t->n != s->n || smp_total(t) != smp_total(s))
                abort(); /* what we write must read back the same */
            for (size_t i = 0; i < s->n; i++)
                if (t->e[i].addr != s->e[i].addr || t->e[i].count != s->e[i].count)
                    abort();
            smp_free(t);
        } else if (f) {
            fclose(f);
        }
        free(buf);
        smp_free(s);
    }
    double bw;
    s = smp_from_gmon(data, size, "fuzz.gmon", &bw, &err);
    smp_free(s);
    rep_names *l = rep_names_parse((const char *)data, size, "fuzz.names", &err);
    rep_names_free(l);
    return 0;
}
