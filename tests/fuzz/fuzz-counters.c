/* libFuzzer harness: the reader of `codeplace counters --json` documents
 * (src/bench/ctrfile.c, what `bench compare` reads next to sweep results).
 * A parsed document's label is NUL-terminated within its buffer and its
 * per-echo figure is a number. Input: JSON text. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ctrfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    nb_ctr_file f;
    cp_err err;
    if (nb_ctr_parse(text, "fuzz.json", &f, &err) == 0) {
        if (!memchr(f.label, 0, sizeof f.label) || isnan(f.misses_per_echo))
            abort();
    } else if (!memchr(err.msg, 0, sizeof err.msg)) {
        abort();
    }
    free(text);
    return 0;
}
