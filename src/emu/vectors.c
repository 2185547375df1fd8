/* emu: where the vector table is (the reset handler and initial stack
 * pointer a run starts from). */
#include "emu/emu.h"

#include <string.h>

static const char *const vec_secs[] = {".vectors", ".isr_vector",
                                       ".vector_table", ".vectors_table"};
static const char *const vec_syms[] = {
    "__interrupt_vector", "__vectors", "__isr_vector", "__Vectors",
    "g_pfnVectors", "_vectors", "vector_table", "__VECTOR_TABLE",
    "__vector_table", "_VectorTable",
};

/* A plausible table: an even stack pointer and an odd (Thumb) reset
 * handler inside the image. */
static int plausible(const img *im, uint32_t at)
{
    uint32_t w[2];
    if (img_read(im, at, w, 8))
        return 0;
    uint8_t probe;
    return !(w[0] & 3) && w[0] && (w[1] & 1) &&
           img_read(im, w[1] & ~1u, &probe, 1) == 0;
}

int emu_find_vectors(const img *im, uint32_t *addr, cp_err *err)
{
    for (size_t i = 0; i < sizeof vec_secs / sizeof vec_secs[0]; i++) {
        const img_section *s = img_section_by_name(im, vec_secs[i]);
        if (s && plausible(im, s->addr)) {
            *addr = s->addr;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof vec_syms / sizeof vec_syms[0]; i++) {
        uint32_t v;
        if (!img_symbol(im, vec_syms[i], &v, NULL, NULL) &&
            plausible(im, v)) {
            *addr = v;
            return 0;
        }
    }
    uint32_t lo = UINT32_MAX;
    for (size_t i = 0; i < img_nsegments(im); i++) {
        const img_segment *s = img_segment_at(im, i);
        if (s->filesz && s->paddr < lo)
            lo = s->paddr;
    }
    if (lo != UINT32_MAX) {
        if (plausible(im, lo)) {
            *addr = lo;
            return 0;
        }
        if (plausible(im, lo + 0x100)) { /* after RP2040's 256-byte boot2 */
            *addr = lo + 0x100;
            return 0;
        }
    }
    return cp_seterr(err, "'%s': no vector table found (give --entry and "
                          "--sp)", img_path(im));
}

size_t emu_vector_handlers(const img *im, uint32_t vt, uint32_t first,
                           uint32_t last, emu_vec *out, size_t cap)
{
    size_t n = 0;
    for (uint32_t i = first; i < last && n < cap; i++) {
        uint32_t v;
        if (img_read(im, vt + 4 * i, &v, 4))
            break;
        const img_func *f = (v & 1) ? img_lookup(im, v & ~1u) : NULL;
        if (!f || f->addr != (v & ~1u))
            continue;
        out[n++] = (emu_vec){i, v & ~1u};
    }
    return n;
}
