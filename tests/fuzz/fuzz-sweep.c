/* libFuzzer harness: the sweep CSV reader of bench compare, and the figure
 * extraction from a command's output. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sweepfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_err err;
    nb_sweep_file f;
    if (nb_sweep_parse((const char *)data, size, "fuzz", &f, &err) == 0) {
        nb_udp_pass ps[1000];
        nb_udp_summarize(f.steps, f.n, ps, 1000);
        nb_sweep_free(&f);
    }
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = 0;
        double v;
        nb_extract_figure(s, NULL, &v);
        nb_extract_figure(s, "peak", &v);
        free(s);
    }
    return 0;
}
