/* libFuzzer harness: the layout file parser (docs/formats/layout.md),
 * applied to a stream of the fixture image (CP_FUZZ_ELF, default
 * build/fixtures/m0.elf) so that names, colours and the overlap check run,
 * then a re-simulation under the resulting map; the @stub lines
 * (csim_layout_stubs_text); and the header's image hash
 * (csim_layout_image_text). Input: layout text. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static img *im;
static csim_stream *s;
static const tgt *t;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("CP_FUZZ_ELF");
    cp_err err;
    if (!path)
        path = "build/fixtures/m0.elf";
    t = tgt_find("rp2040");
    im = img_open(path, NULL, &err);
    if (!im || !(s = csim_stream_new(im, t, &err))) {
        fprintf(stderr, "fuzz-layout: %s\n", err.msg);
        exit(1);
    }
    for (uint32_t k = 0; k < 3; k++) {
        trc_rec mk = {TRC_MARK, k, 0, 0, 0};
        csim_stream_add(s, &mk, &err);
        for (size_t i = 0; i < img_nfuncs(im); i += 3) {
            const img_func *f = img_func_at(im, i);
            trc_rec r = {TRC_FETCH, f->addr, f->size ? f->size : 2,
                         f->size / 2, 0};
            csim_stream_add(s, &r, &err);
        }
    }
    csim_stream_finish(s, &err);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char h[96];
    if (csim_layout_image_text((const char *)data, size, h, sizeof h) == 1 &&
        (!h[0] || strlen(h) >= sizeof h))
        abort();
    csim_map *m = csim_map_new(s);
    csim_layout_stats st;
    cp_err err;
    if (m && csim_layout_apply_text("fuzz.layout", (const char *)data, size, s,
                                    m, &t->cache, &st, &err) == 0) {
        csim_eval_result e;
        csim_eval(s, m, &t->cache, 1, &e, &err);
    }
    csim_map_free(m);
    csim_stub *stubs;
    size_t n;
    if (csim_layout_stubs_text("fuzz.layout", (const char *)data, size, s,
                               &stubs, &n, &err) == 0) {
        if (!stubs != !n)
            abort();
        csim_stubs_free(stubs, n);
    } else if (stubs || n || !err.msg[0]) {
        abort();
    }
    return 0;
}
