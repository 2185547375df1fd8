/* The analysis of one stream under one map: all four models (set-
 * associative, fully associative LRU, infinite, Belady) over the same line
 * accesses, and the figures per iteration, function, library and set. */
#include "cache/cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/stream_int.h"

void csim_report_free(csim_report *r)
{
    if (!r)
        return;
    free(r->iter);
    free(r->fstat);
    free(r->lstat);
    free(r->sstat);
    memset(r, 0, sizeof *r);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_fstat(const void *a, const void *b)
{
    const csim_fstat *x = a, *y = b;
    if (x->misses != y->misses)
        return x->misses > y->misses ? -1 : 1;
    if (x->insns != y->insns)
        return x->insns > y->insns ? -1 : 1;
    return x->fn < y->fn ? -1 : x->fn > y->fn;
}

static int cmp_lstat(const void *a, const void *b)
{
    const csim_lstat *x = a, *y = b;
    if (x->misses != y->misses)
        return x->misses > y->misses ? -1 : 1;
    if (x->insns != y->insns)
        return x->insns > y->insns ? -1 : 1;
    return strcmp(x->name, y->name);
}

static const char *lib_name(const csim_stream *s, const csim_fn *f)
{
    if (!f->f)
        return "(unknown)";
    if (!s->im || !img_map_path(s->im))
        return "(no map)";
    if (f->f->archive)
        return f->f->archive;
    return f->f->object ? "(objects)" : "(unattributed)";
}

/* Set-associative pass: per iteration, per function, per set. */
static int pass_sa(const csim_seq *q, const tgt_cache *g, uint64_t seed,
                   csim_report *r, uint64_t *fmiss, uint64_t *facc,
                   cp_err *err)
{
    csim_cache *c = csim_cache_new(g, seed, err);
    if (!c)
        return -1;
    uint32_t mask = r->nsets - 1;
    for (size_t k = 0; k < q->niter; k++) {
        size_t end = k + 1 < q->niter ? q->iter[k + 1] : q->n;
        csim_iter *it = &r->iter[k];
        int warm = k >= r->from;
        for (size_t i = q->iter[k]; i < end; i++) {
            int hit = csim_cache_access(c, q->acc[i]);
            it->accesses++;
            if (warm)
                facc[q->fn[i]]++;
            if (hit)
                continue;
            it->misses++;
            if (warm) {
                fmiss[q->fn[i]]++;
                r->sstat[q->acc[i] & mask].misses++;
            }
        }
    }
    csim_cache_free(c);
    return 0;
}

/* Fully associative LRU and the infinite cache (compulsory misses), and
 * the footprint and hot lines from the dense ids. */
static int pass_fa(const csim_seq *q, const uint32_t *id,
                   const uint32_t *line_of, uint32_t nids, csim_report *r,
                   cp_err *err)
{
    csim_fa *fa = csim_fa_new(r->nsets * r->cache.ways, err);
    uint8_t *filled = calloc(nids ? nids : 1, 1);
    uint32_t *seen = calloc(nids ? nids : 1, sizeof *seen); /* iteration + 1 */
    uint32_t *touch = calloc(nids ? nids : 1, sizeof *touch);
    if (!fa || !filled || !seen || !touch) {
        csim_fa_free(fa);
        free(filled);
        free(seen);
        free(touch);
        return fa ? cp_seterr(err, "out of memory") : -1;
    }
    uint32_t mask = r->nsets - 1;
    for (size_t k = 0; k < q->niter; k++) {
        size_t end = k + 1 < q->niter ? q->iter[k + 1] : q->n;
        csim_iter *it = &r->iter[k];
        int warm = k >= r->from;
        for (size_t i = q->iter[k]; i < end; i++) {
            uint32_t d = id[i];
            if (!csim_fa_access(fa, q->acc[i]))
                it->fa_misses++;
            if (!filled[d]) {
                it->compulsory++;
                if (!(q->acc[i] & CSIM_NOALLOC))
                    filled[d] = 1;
            }
            if (seen[d] != k + 1) {
                seen[d] = (uint32_t)k + 1;
                it->footprint++;
                if (warm) {
                    touch[d]++;
                    r->sstat[line_of[d] & mask].lines += 1;
                }
            }
        }
    }
    size_t nwarm = q->niter - r->from;
    for (uint32_t d = 0; d < nids; d++)
        if (nwarm && touch[d] * 2 >= nwarm) {
            r->sstat[line_of[d] & mask].hot++;
            r->hot_lines++;
        }
    for (uint32_t st = 0; st < r->nsets; st++) {
        if (nwarm)
            r->sstat[st].lines /= (double)nwarm;
        if (r->sstat[st].hot > r->cache.ways)
            r->overfull_sets++;
    }
    r->distinct_lines = nids;
    csim_fa_free(fa);
    free(filled);
    free(seen);
    free(touch);
    return 0;
}

static void warm_summary(csim_report *r)
{
    size_t nw = r->niter - r->from;
    uint64_t *m = malloc((nw ? nw : 1) * sizeof *m);
    uint64_t *fp = malloc((nw ? nw : 1) * sizeof *fp);
    double sum = 0, sq = 0;
    memset(&r->warm_sum, 0, sizeof r->warm_sum);
    for (size_t k = r->from; k < r->niter; k++) {
        const csim_iter *it = &r->iter[k];
        csim_iter *w = &r->warm_sum;
        w->insns += it->insns;
        w->accesses += it->accesses;
        w->misses += it->misses;
        w->fa_misses += it->fa_misses;
        w->compulsory += it->compulsory;
        w->ideal += it->ideal;
        w->footprint += it->footprint;
        w->cycles += it->cycles;
        sum += (double)it->misses;
        if (m)
            m[k - r->from] = it->misses;
        if (fp)
            fp[k - r->from] = it->footprint;
    }
    if (!nw || !m || !fp) {
        free(m);
        free(fp);
        return;
    }
    r->warm_mean = sum / (double)nw;
    for (size_t k = r->from; k < r->niter; k++) {
        double d = (double)r->iter[k].misses - r->warm_mean;
        sq += d * d;
    }
    r->warm_sd = nw > 1 ? sqrt(sq / (double)(nw - 1)) : 0;
    qsort(m, nw, sizeof *m, cmp_u64);
    qsort(fp, nw, sizeof *fp, cmp_u64);
    r->warm_min = m[0];
    r->warm_max = m[nw - 1];
    r->warm_median = nw % 2 ? (double)m[nw / 2]
                            : ((double)m[nw / 2 - 1] + (double)m[nw / 2]) / 2;
    r->footprint_median = nw % 2 ? (double)fp[nw / 2]
                                 : ((double)fp[nw / 2 - 1] + (double)fp[nw / 2]) / 2;
    free(m);
    free(fp);
}

/* The instructions of the stubs the calls go through under m: added to
 * their iterations in r and, for the counted iterations, to fins[fn]. */
static void stub_insns(const csim_stream *s, const csim_map *m,
                       csim_report *r, uint64_t *fins)
{
    for (size_t k = 0; k < s->nstubs; k++) {
        size_t fn = s->stub_fn0 + k, it = 0;
        for (size_t j = s->fn_start[fn]; j < s->fn_start[fn + 1]; j++) {
            uint32_t ri = s->fn_runs[j];
            if (!stub_taken(m, s->run[ri]))
                continue;
            while (it + 1 < s->niter && s->iter[it + 1] <= ri)
                it++;
            r->iter[it].insns += s->stubs[k].insns;
            if (it >= r->from)
                fins[fn] += s->stubs[k].insns;
        }
    }
}

static int per_function(const csim_stream *s, const csim_map *m,
                        csim_report *r, const uint64_t *fmiss,
                        const uint64_t *facc, const uint64_t *fins,
                        cp_err *err)
{
    r->fstat = calloc(s->nfns ? s->nfns : 1, sizeof *r->fstat);
    r->lstat = calloc(s->nfns ? s->nfns : 1, sizeof *r->lstat);
    if (!r->fstat || !r->lstat)
        return cp_seterr(err, "out of memory");
    for (size_t fn = 0; fn < s->nfns; fn++) {
        uint64_t ins = csim_stream_fn_insns(s, fn, r->from) + fins[fn];
        if (m->kind[fn] == CSIM_UNCACHED)
            r->uncached_insns += ins;
        if (!ins && !facc[fn])
            continue;
        r->fstat[r->nfstat++] = (csim_fstat){fn, ins, facc[fn], fmiss[fn]};
        const char *ln = lib_name(s, &s->fns[fn]);
        size_t k;
        for (k = 0; k < r->nlstat && strcmp(r->lstat[k].name, ln); k++)
            ;
        if (k == r->nlstat)
            r->lstat[r->nlstat++].name = ln;
        r->lstat[k].funcs++;
        r->lstat[k].bytes += s->fns[fn].size;
        r->lstat[k].insns += ins;
        r->lstat[k].misses += fmiss[fn];
    }
    qsort(r->fstat, r->nfstat, sizeof *r->fstat, cmp_fstat);
    qsort(r->lstat, r->nlstat, sizeof *r->lstat, cmp_lstat);
    return 0;
}

int csim_analyze(const csim_stream *s, const csim_map *m, const tgt_cache *g,
                 uint64_t seed, csim_report *r, cp_err *err)
{
    memset(r, 0, sizeof *r);
    csim_seq q;
    if (csim_expand(s, m, g, &q, err) < 0)
        return -1;
    uint32_t *id = NULL, *line_of = NULL, nids = 0;
    uint64_t *fmiss = NULL, *facc = NULL, *fins = NULL;
    int64_t opt;
    r->cache = *g;
    r->nsets = tgt_cache_sets(g);
    r->line_shift = log2u(g->line);
    r->cpi = s->t->cpi;
    r->clock_hz = s->t->clock_hz;
    r->niter = q.niter;
    r->from = q.niter > 1 ? 1 : 0;
    r->iter = calloc(q.niter ? q.niter : 1, sizeof *r->iter);
    r->sstat = calloc(r->nsets, sizeof *r->sstat);
    fmiss = calloc(s->nfns ? s->nfns : 1, sizeof *fmiss);
    facc = calloc(s->nfns ? s->nfns : 1, sizeof *facc);
    fins = calloc(s->nfns ? s->nfns : 1, sizeof *fins);
    if (!r->iter || !r->sstat || !fmiss || !facc || !fins) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    if (csim_seq_ids(&q, &id, &line_of, &nids, err) < 0 ||
        pass_sa(&q, g, seed, r, fmiss, facc, err) < 0 ||
        pass_fa(&q, id, line_of, nids, r, err) < 0)
        goto fail;
    free(id);
    free(line_of);
    id = line_of = NULL;
    uint64_t *ideal = calloc(q.niter ? q.niter : 1, sizeof *ideal);
    if (!ideal) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    opt = csim_opt_run(&q, r->nsets * g->ways, ideal, err);
    if (opt < 0) {
        free(ideal);
        goto fail;
    }
    for (size_t k = 0; k < q.niter; k++)
        r->iter[k].insns = csim_stream_iter_insns(s, k);
    stub_insns(s, m, r, fins);
    for (size_t k = 0; k < q.niter; k++) {
        csim_iter *it = &r->iter[k];
        it->ideal = ideal[k];
        it->cycles = (double)it->insns * r->cpi +
                     (double)it->misses * g->miss_cycles;
    }
    free(ideal);
    csim_seq_free(&q);
    warm_summary(r);
    if (per_function(s, m, r, fmiss, facc, fins, err) < 0)
        goto fail;
    free(fmiss);
    free(facc);
    free(fins);
    return 0;
fail:
    free(id);
    free(line_of);
    free(fmiss);
    free(facc);
    free(fins);
    csim_seq_free(&q);
    csim_report_free(r);
    return -1;
}
