/* smp: a trace file into samples, through the sampler. */
#include "samples/samples.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "image/image.h"
#include "trace/trace.h"

/* Thumb-2: a halfword with bits [15:11] of 0b11101, 0b11110 or 0b11111
 * starts a 32-bit instruction (ARMv7-M ARM A5.1; ARMv6-M ARM A5.1). */
static unsigned thumb_width(void *ctx, uint32_t addr)
{
    const img *im = ctx;
    uint8_t b[2];
    if (img_read(im, addr, b, 2) < 0)
        return 0;
    unsigned hw = b[0] | (unsigned)b[1] << 8;
    return hw >= 0xe800 ? 4 : 2;
}

/* As sim and report read a trace: samples need a complete iteration (a
 * mark and the instructions up to the next one, or to the end of a
 * recording that ended "done"). A recording without marks that ended
 * "done" is one complete stretch, from the start to the end of the run. */
static int check_complete(const trc_reader *r, const char *path,
                          uint64_t iters, cp_err *err)
{
    const trc_totals *t = trc_get_totals(r);
    int done = !trc_truncated(r) && !strcmp(t->end, "done");
    if (!t->marks && !done)
        return cp_seterr(err, "%s: no complete iteration (no iteration marks, "
                         "and the recording ended: %s): record at least one, "
                         "e.g. trace -n 1", path,
                         trc_truncated(r) ? "cut short" : t->end);
    if (t->marks && !iters)
        return cp_seterr(err, "%s: no complete iteration (%s)", path,
                         trc_dropped(r, NULL) ? "the only one was unfinished"
                         : t->marks == 1      ? "the only one is empty"
                                              : "its iterations are empty");
    return 0;
}

smp *smp_from_trace(const char *path, const smp_trace_opts *o,
                    uint64_t *insns, cp_err *err)
{
    trc_reader *r = trc_open_ex(path, o->partial ? TRC_OPEN_PARTIAL : 0, err);
    if (!r)
        return NULL;
    smp *s = smp_new();
    smp_sampler *sp = NULL;
    if (!s) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    sp = smp_sampler_new(s, o->mode, o->period, o->seed,
                         o->im ? thumb_width : NULL, (void *)o->im, err);
    if (!sp)
        goto fail;
    const trc_header *h = trc_get_header(r);
    snprintf(s->source, sizeof s->source, "trace");
    snprintf(s->target, sizeof s->target, "%s", h->target);
    snprintf(s->cpu, sizeof s->cpu, "%s", h->cpu);
    snprintf(s->elf, sizeof s->elf, "%s", h->elf_hash);
    char method[96];
    if (o->mode == SMP_EVERY)
        snprintf(method, sizeof method, "every %" PRIu64, o->period);
    else
        snprintf(method, sizeof method, "poisson %" PRIu64 " seed %" PRIu64,
                 o->period, o->seed);
    if (smp_set_extra(s, "method", method, err) < 0)
        goto fail;
    trc_rec rec;
    int rc, in_iter = 0;
    uint64_t iters = 0, it_insns = 0;
    while ((rc = trc_next_complete(r, &rec, err)) == 1) {
        if (rec.kind == TRC_MARK) {
            in_iter = 1;
            it_insns = 0;
        } else if (rec.kind == TRC_FETCH) {
            if (in_iter && !it_insns && rec.ninsn)
                iters++;
            it_insns += rec.ninsn;
            if (smp_sampler_run(sp, rec.addr, rec.len, rec.ninsn, err) < 0)
                goto fail;
        }
    }
    if (rc < 0 || check_complete(r, path, iters, err) < 0)
        goto fail;
    if (trc_truncated(r) && smp_set_extra(s, "trace_cut_short", "yes", err) < 0)
        goto fail;
    if (trc_dropped(r, NULL) &&
        smp_set_extra(s, "unfinished_iterations_dropped", "1", err) < 0)
        goto fail;
    if (insns)
        *insns = smp_sampler_insns(sp);
    smp_sampler_free(sp);
    trc_close(r);
    smp_normalize(s);
    return s;
fail:
    smp_sampler_free(sp);
    smp_free(s);
    trc_close(r);
    return NULL;
}
