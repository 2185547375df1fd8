/* Where functions live (the map) and re-simulation of a stream under a map:
 * whole, per set, or only some sets. */
#include "cache/cache.h"

#include <stdlib.h>
#include <string.h>

#include "cache/stream_int.h"

static const tgt_mem *first_flash(const tgt *t)
{
    for (unsigned i = 0; i < t->nmems; i++)
        if (t->mems[i].kind == TGT_MEM_FLASH)
            return &t->mems[i];
    return NULL;
}

static void place(csim_map *m, size_t fn, uint32_t addr)
{
    const tgt *t = m->s->t;
    const tgt_mem *mem = tgt_mem_at(t, addr);
    m->addr[fn] = addr;
    m->base[fn] = addr;
    if (mem && mem->kind == TGT_MEM_FLASH) {
        m->kind[fn] = CSIM_CACHED;
    } else if (mem && mem->kind == TGT_MEM_FLASH_NOALLOC) {
        /* The alias looks up the same lines as the cached window. */
        const tgt_mem *fl = first_flash(t);
        m->kind[fn] = CSIM_NOFILL;
        if (fl)
            m->base[fn] = addr - mem->base + fl->base;
    } else {
        m->kind[fn] = CSIM_UNCACHED;
    }
}

csim_map *csim_map_new(const csim_stream *s)
{
    csim_map *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->s = s;
    m->n = s->nfns;
    size_t n = m->n ? m->n : 1;
    m->addr = malloc(n * sizeof *m->addr);
    m->base = malloc(n * sizeof *m->base);
    m->kind = malloc(n);
    m->moved = calloc(n, 1);
    if (!m->addr || !m->base || !m->kind || !m->moved) {
        csim_map_free(m);
        return NULL;
    }
    for (size_t i = 0; i < m->n; i++)
        place(m, i, s->fns[i].addr);
    return m;
}

csim_map *csim_map_copy(const csim_map *o)
{
    csim_map *m = csim_map_new(o->s);
    if (!m)
        return NULL;
    memcpy(m->addr, o->addr, m->n * sizeof *m->addr);
    memcpy(m->base, o->base, m->n * sizeof *m->base);
    memcpy(m->kind, o->kind, m->n);
    memcpy(m->moved, o->moved, m->n);
    return m;
}

void csim_map_free(csim_map *m)
{
    if (!m)
        return;
    free(m->addr);
    free(m->base);
    free(m->kind);
    free(m->moved);
    free(m);
}

void csim_map_move(csim_map *m, size_t fn, uint32_t addr)
{
    if (fn >= m->n)
        return;
    place(m, fn, addr);
    m->moved[fn] = addr != m->s->fns[fn].addr;
}

void csim_map_uncache(csim_map *m, size_t fn)
{
    if (fn >= m->n)
        return;
    m->kind[fn] = CSIM_UNCACHED;
    m->moved[fn] = 1;
}

uint32_t csim_map_addr(const csim_map *m, size_t fn)
{
    return fn < m->n ? m->addr[fn] : 0;
}

csim_kind csim_map_kind(const csim_map *m, size_t fn)
{
    return fn < m->n ? (csim_kind)m->kind[fn] : CSIM_UNCACHED;
}

static int check(const csim_stream *s, const csim_map *m, cp_err *err)
{
    if (!s->finished)
        return cp_seterr(err, "stream: not finished");
    if (m->s != s || m->n != s->nfns)
        return cp_seterr(err, "map was made for another stream");
    return 0;
}

static size_t first_run(const csim_stream *s, size_t from)
{
    return from < s->niter ? s->iter[from] : s->nruns;
}

int csim_eval(const csim_stream *s, const csim_map *m, const tgt_cache *g,
              size_t from, csim_eval_result *out, cp_err *err)
{
    if (check(s, m, err) < 0)
        return -1;
    csim_cache *c = csim_cache_new(g, 0, err);
    if (!c)
        return -1;
    unsigned ls = log2u(g->line);
    size_t fr = first_run(s, from);
    memset(out, 0, sizeof *out);
    uint64_t miss = 0, acc = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        uint32_t a, b;
        if (!run_lines(m, s->run[i], ls, &a, &b))
            continue;
        uint64_t x = csim_cache_span(c, a, b);
        if (i >= fr) {
            miss += x;
            acc += b - (a & CSIM_LINE_MASK) + 1;
        }
    }
    out->misses = miss;
    out->accesses = acc;
    out->iters = from < s->niter ? s->niter - from : 0;
    csim_cache_free(c);
    return 0;
}

int csim_eval_per_set(const csim_stream *s, const csim_map *m,
                      const tgt_cache *g, size_t from, uint64_t *per_set,
                      cp_err *err)
{
    if (check(s, m, err) < 0)
        return -1;
    csim_cache *c = csim_cache_new(g, 0, err);
    if (!c)
        return -1;
    unsigned ls = log2u(g->line);
    uint32_t mask = csim_cache_nsets(c) - 1;
    size_t fr = first_run(s, from);
    for (size_t i = 0; i < s->nruns; i++) {
        uint32_t a, b;
        if (!run_lines(m, s->run[i], ls, &a, &b))
            continue;
        uint32_t fl = a & CSIM_NOALLOC;
        for (uint32_t l = a & CSIM_LINE_MASK; l <= b; l++)
            if (!csim_cache_access(c, l | fl) && i >= fr)
                per_set[l & mask]++;
    }
    csim_cache_free(c);
    return 0;
}

typedef struct ev {
    uint32_t slot; /* index into the caller's sets[] */
    uint32_t run;
    uint32_t k;    /* line index within the run */
    uint32_t line; /* with CSIM_NOALLOC */
} ev;

static int cmp_ev(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* 1 when function fn (under m) may touch a set marked in mark[]. */
static int fn_may_touch(const csim_stream *s, const csim_map *m, size_t fn,
                        unsigned ls, uint32_t nsets, const uint32_t *mark)
{
    if (m->kind[fn] == CSIM_UNCACHED || s->fn_start[fn] == s->fn_start[fn + 1])
        return 0;
    uint32_t fl = m->base[fn] >> ls;
    uint32_t ll = (m->base[fn] + s->fns[fn].size - 1) >> ls;
    if (ll - fl + 1 >= nsets)
        return 1;
    for (uint32_t l = fl; l <= ll; l++)
        if (mark[l & (nsets - 1)])
            return 1;
    return 0;
}

int csim_eval_sets(const csim_stream *s, const csim_map *m,
                   const tgt_cache *g, size_t from, const uint32_t *sets,
                   size_t n, uint64_t *miss, cp_err *err)
{
    if (check(s, m, err) < 0)
        return -1;
    memset(miss, 0, n * sizeof *miss);
    if (!n)
        return 0;
    csim_cache *c = csim_cache_new(g, 0, err);
    if (!c)
        return -1;
    uint32_t nsets = csim_cache_nsets(c);
    unsigned ls = log2u(g->line);
    uint32_t *mark = calloc(nsets, sizeof *mark); /* slot + 1 */
    uint8_t *rel = NULL; /* functions that may touch a marked set */
    ev *e = NULL;
    size_t ne = 0, cap = 0;
    if (!mark)
        goto oom;
    for (size_t i = 0; i < n; i++)
        if (sets[i] < nsets)
            mark[sets[i]] = (uint32_t)i + 1;
    size_t fr = first_run(s, from), nrel = 0;
    rel = calloc(s->nfns ? s->nfns : 1, 1);
    if (!rel)
        goto oom;
    for (size_t fn = 0; fn < s->nfns; fn++)
        if (fn_may_touch(s, m, fn, ls, nsets, mark)) {
            rel[fn] = 1;
            nrel += s->fn_start[fn + 1] - s->fn_start[fn];
        }
    if (nrel * 4 > s->nruns) {
        /* Most of the stream is relevant: one pass in time order beats
         * gathering and sorting. */
        for (size_t i = 0; i < s->nruns; i++) {
            uint32_t a, b;
            if (!rel[run_fn(s->run[i])] || !run_lines(m, s->run[i], ls, &a, &b))
                continue;
            uint32_t fl = a & CSIM_NOALLOC;
            for (uint32_t l = a & CSIM_LINE_MASK; l <= b; l++) {
                uint32_t slot = mark[l & (nsets - 1)];
                if (slot && !csim_cache_access(c, l | fl) && i >= fr)
                    miss[slot - 1]++;
            }
        }
        goto done;
    }
    for (size_t fn = 0; fn < s->nfns; fn++) {
        if (!rel[fn])
            continue;
        for (size_t j = s->fn_start[fn]; j < s->fn_start[fn + 1]; j++) {
            uint32_t ri = s->fn_runs[j], a, b;
            if (!run_lines(m, s->run[ri], ls, &a, &b))
                continue;
            uint32_t fl = a & CSIM_NOALLOC;
            a &= CSIM_LINE_MASK;
            for (uint32_t l = a; l <= b; l++) {
                uint32_t slot = mark[l & (nsets - 1)];
                if (!slot)
                    continue;
                if (cp_grow((void **)&e, &cap, ne + 1, sizeof *e) < 0)
                    goto oom;
                e[ne++] = (ev){slot - 1, ri, l - a, l | fl};
            }
        }
    }
    qsort(e, ne, sizeof *e, cmp_ev);
    for (size_t i = 0; i < ne; i++)
        if (!csim_cache_access(c, e[i].line) && e[i].run >= fr)
            miss[e[i].slot]++;
done:
    free(e);
    free(rel);
    free(mark);
    csim_cache_free(c);
    return 0;
oom:
    free(e);
    free(rel);
    free(mark);
    csim_cache_free(c);
    return cp_seterr(err, "out of memory");
}

size_t csim_func_sets(const csim_stream *s, const csim_map *m,
                      const tgt_cache *g, size_t fn, uint32_t *sets, size_t n)
{
    if (fn >= s->nfns || !s->finished || m->kind[fn] == CSIM_UNCACHED)
        return n;
    uint32_t nsets = tgt_cache_sets(g);
    unsigned ls = log2u(g->line);
    uint8_t *have = calloc(nsets, 1);
    if (!have)
        return n;
    for (size_t i = 0; i < n; i++)
        if (sets[i] < nsets)
            have[sets[i]] = 1;
    for (size_t j = s->fn_start[fn]; j < s->fn_start[fn + 1]; j++) {
        uint32_t a, b;
        if (!run_lines(m, s->run[s->fn_runs[j]], ls, &a, &b))
            continue;
        for (uint32_t l = a & CSIM_LINE_MASK; l <= b && n < nsets; l++) {
            uint32_t set = l & (nsets - 1);
            if (!have[set]) {
                have[set] = 1;
                sets[n++] = set;
            }
        }
    }
    free(have);
    return n;
}

int csim_expand(const csim_stream *s, const csim_map *m, const tgt_cache *g,
                csim_seq *q, cp_err *err)
{
    memset(q, 0, sizeof *q);
    if (check(s, m, err) < 0)
        return -1;
    unsigned ls = log2u(g->line);
    size_t total = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        uint32_t a, b;
        if (run_lines(m, s->run[i], ls, &a, &b))
            total += b - (a & CSIM_LINE_MASK) + 1;
    }
    q->acc = malloc((total ? total : 1) * sizeof *q->acc);
    q->fn = malloc((total ? total : 1) * sizeof *q->fn);
    q->iter = malloc((s->niter ? s->niter : 1) * sizeof *q->iter);
    if (!q->acc || !q->fn || !q->iter) {
        csim_seq_free(q);
        return cp_seterr(err, "out of memory (%zu line accesses)", total);
    }
    q->niter = s->niter;
    size_t k = 0, it = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        while (it < s->niter && s->iter[it] <= i)
            q->iter[it++] = k;
        uint32_t a, b;
        if (!run_lines(m, s->run[i], ls, &a, &b))
            continue;
        uint32_t fl = a & CSIM_NOALLOC, fn = (uint32_t)run_fn(s->run[i]);
        for (uint32_t l = a & CSIM_LINE_MASK; l <= b; l++) {
            q->acc[k] = l | fl;
            q->fn[k++] = fn;
        }
    }
    while (it < s->niter)
        q->iter[it++] = k;
    q->n = k;
    return 0;
}

/* csim_eval_walk's state: the workload the walk is in and its counts. */
typedef struct walk_sim {
    const csim_walk *w;
    csim_cache *c;
    csim_fa *fa;
    unsigned wk;
    uint64_t acc[CSIM_MAX_WORK];
    double *unit_misses;
    size_t nunits;
    csim_walk_eval *out;
} walk_sim;

static int walk_access(void *arg, uint32_t t, uint32_t first, uint32_t last,
                       size_t unit)
{
    walk_sim *e = arg;
    const csim_walk *w = e->w;
    while (e->wk + 1 < w->nwork && t >= w->start[e->wk + 1]) {
        e->wk++;
        if (e->fa)
            csim_fa_flush(e->fa);
        else
            csim_cache_flush(e->c);
    }
    int count = t >= w->warm[e->wk];
    if (e->fa) {
        uint32_t nf = first & CSIM_NOALLOC;
        for (uint32_t l = first & CSIM_LINE_MASK; l <= last; l++)
            if (!csim_fa_access(e->fa, l | nf))
                e->out->work_misses[e->wk] += count;
        return 0;
    }
    uint64_t miss = csim_cache_span(e->c, first, last);
    if (!count)
        return 0;
    e->acc[e->wk] += last - (first & CSIM_LINE_MASK) + 1;
    e->out->work_misses[e->wk] += miss;
    if (miss && e->unit_misses && unit < e->nunits)
        e->unit_misses[unit] += (double)miss * w->scale[e->wk];
    return 0;
}

int csim_eval_walk(const tgt_cache *g, uint64_t seed, int fa,
                   const csim_walk *w, double *unit_misses, size_t nunits,
                   csim_walk_eval *out, cp_err *err)
{
    memset(out, 0, sizeof *out);
    if (w->nwork < 1 || w->nwork > CSIM_MAX_WORK)
        return cp_seterr(err, "walk: %u workloads (1 to %d)", w->nwork,
                         CSIM_MAX_WORK);
    walk_sim e = {.w = w, .out = out, .unit_misses = fa ? NULL : unit_misses,
                  .nunits = nunits};
    if (fa)
        e.fa = csim_fa_new(g->size / g->line, err);
    else
        e.c = csim_cache_new(g, seed, err);
    if (!e.fa && !e.c)
        return -1;
    int rc = w->run(w->arg, CSIM_STATIC, walk_access, &e);
    csim_fa_free(e.fa);
    csim_cache_free(e.c);
    if (rc < 0)
        return cp_seterr(err, "out of memory (walk)");
    for (unsigned k = 0; k < w->nwork; k++) {
        out->misses += (double)out->work_misses[k] * w->scale[k];
        out->accesses += (double)e.acc[k] * w->scale[k];
    }
    return 0;
}
