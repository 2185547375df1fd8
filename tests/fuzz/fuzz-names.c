/* libFuzzer harness: the name list parser (rep_names_parse), the portable
 * form of a plan that `diff --list` reads. Besides the sanitizers it checks
 * what the parser promises: every name is a non-empty word without blanks,
 * '#' or NUL, and line numbers grow. Input: name list text. */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_err err;
    rep_names *l = rep_names_parse((const char *)data, size, "fuzz.list", &err);
    if (!l)
        return 0;
    size_t last = 0;
    for (size_t i = 0; i < l->n; i++) {
        const char *s = l->name[i];
        if (!*s || strchr(s, '#') || l->line[i] <= last)
            abort();
        for (; *s; s++)
            if (isspace((unsigned char)*s))
                abort();
        last = l->line[i];
    }
    rep_names_free(l);
    return 0;
}
