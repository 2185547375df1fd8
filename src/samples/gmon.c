/* smp: OpenOCD's `profile` output (a BSD/GNU gmon.out) into samples.
 *
 * The layout OpenOCD writes (src/target/target.c, write_gmon):
 *   "gmon", version (u32, target byte order, = 1), three u32 of padding;
 *   tag byte 0 (GMON_TAG_TIME_HIST);
 *   low_pc, high_pc, number of buckets, rate (samples/s) as u32 in target
 *   byte order; "seconds" padded with NULs to 15 bytes; 's';
 *   the buckets: u16 little-endian counts, saturated at 65535.
 * A sample at PC lands in bucket (PC - low) * nbuckets / (high - low);
 * samples outside [low, high) are not in the file. gprof's format allows
 * more records (call-graph arcs, basic-block counts); arcs are skipped,
 * further histograms are added, basic-block records are refused. */
#include "samples/samples.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct gm {
    const unsigned char *p;
    size_t len, off;
    int be;               /* header words are big-endian */
    const char *name;
    cp_err *err;
} gm;

static int need(gm *g, size_t n, const char *what)
{
    if (g->len - g->off < n)
        return cp_seterr(g->err, "%s: truncated gmon.out: %s needs %zu bytes "
                         "at offset %zu, the file has %zu", g->name, what, n,
                         g->off, g->len - g->off);
    return 0;
}

static uint32_t word(gm *g)
{
    const unsigned char *q = g->p + g->off;
    g->off += 4;
    if (g->be)
        return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
               (uint32_t)q[2] << 8 | q[3];
    return (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 |
           (uint32_t)q[1] << 8 | q[0];
}

static int hist_record(gm *g, smp *s, double *bucket_bytes, int first)
{
    if (need(g, 16 + 16, "the histogram header") < 0)
        return -1;
    uint32_t low = word(g), high = word(g), nb = word(g), rate = word(g);
    char dimen[16];
    memcpy(dimen, g->p + g->off, 15);
    dimen[15] = 0;
    g->off += 16; /* dimen[15] and the abbreviation */
    if (high <= low)
        return cp_seterr(g->err, "%s: gmon.out histogram range 0x%08" PRIx32
                         "..0x%08" PRIx32 " is empty", g->name, low, high);
    if (nb == 0)
        return cp_seterr(g->err, "%s: gmon.out histogram has no buckets",
                         g->name);
    if (nb > (g->len - g->off) / 2)
        return cp_seterr(g->err, "%s: truncated gmon.out: %" PRIu32 " buckets "
                         "need %" PRIu64 " bytes at offset %zu, the file has "
                         "%zu", g->name, nb, (uint64_t)nb * 2, g->off,
                         g->len - g->off);
    uint64_t space = (uint64_t)high - low;
    double bw = (double)space / nb;
    if (bucket_bytes && (first || bw > *bucket_bytes))
        *bucket_bytes = bw;
    if (first && rate) {
        s->rate_hz = rate;
        if (smp_set_extra(s, "gmon_dimension", dimen, g->err) < 0)
            return -1;
    }
    for (uint32_t i = 0; i < nb; i++) {
        const unsigned char *q = g->p + g->off + 2 * (size_t)i;
        unsigned c = q[0] | (unsigned)q[1] << 8;
        if (!c)
            continue;
        /* The first halfword address whose bucket index is i:
         * ceil(i*space/nb), rounded up to even (Thumb code). */
        uint64_t a = low + ((uint64_t)i * space + nb - 1) / nb;
        a = (a + 1) & ~(uint64_t)1;
        if (a > 0xffffffffu)
            a = 0xfffffffeu;
        if (smp_add(s, (uint32_t)a, c, g->err) < 0)
            return -1;
    }
    g->off += 2 * (size_t)nb;
    return 0;
}

smp *smp_from_gmon(const void *data, size_t len, const char *name,
                   double *bucket_bytes, cp_err *err)
{
    gm g = {.p = data, .len = len, .name = name ? name : "(gmon)", .err = err};
    if (len < 20 || memcmp(g.p, "gmon", 4)) {
        cp_seterr(err, "%s: not a gmon.out file (no 'gmon' magic)", g.name);
        return NULL;
    }
    g.off = 4;
    uint32_t v = word(&g);
    if (v != 1) {
        g.off = 4;
        g.be = 1;
        if (word(&g) != 1) {
            cp_seterr(err, "%s: gmon.out version %" PRIu32 " is not supported "
                      "(want 1)", g.name, v);
            return NULL;
        }
    }
    g.off = 20;
    smp *s = smp_new();
    if (!s) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    snprintf(s->source, sizeof s->source, "gmon");
    int nhist = 0;
    while (g.off < g.len) {
        unsigned tag = g.p[g.off++];
        if (tag == 0) {
            if (hist_record(&g, s, bucket_bytes, nhist == 0) < 0)
                goto fail;
            nhist++;
        } else if (tag == 1) {
            if (need(&g, 12, "a call-graph arc") < 0)
                goto fail;
            g.off += 12;
        } else if (tag == 2) {
            cp_seterr(err, "%s: gmon.out basic-block records (tag 2 at offset "
                      "%zu) are not supported", g.name, g.off - 1);
            goto fail;
        } else {
            cp_seterr(err, "%s: corrupt gmon.out: unknown record tag %u at "
                      "offset %zu", g.name, tag, g.off - 1);
            goto fail;
        }
    }
    if (!nhist) {
        cp_seterr(err, "%s: gmon.out has no histogram record", g.name);
        goto fail;
    }
    smp_normalize(s);
    if (s->rate_hz > 0)
        s->duration_s = (double)smp_total(s) / s->rate_hz;
    return s;
fail:
    smp_free(s);
    return NULL;
}

smp *smp_read_gmon(const char *path, double *bucket_bytes, cp_err *err)
{
    char *data;
    size_t len;
    if (cp_read_file(path, &data, &len, err) < 0)
        return NULL;
    smp *s = smp_from_gmon(data, len, path, bucket_bytes, err);
    free(data);
    return s;
}
