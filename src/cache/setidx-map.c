/* The set index of a stream under a map: every function of the stream is
 * a unit of the index (setidx.c), the walk is the stream's runs under the
 * index's own map (time: the run's index), and a move re-reads the moved
 * function's accesses (and the stubs', when the function crosses between
 * cached and uncached memory: which stub a call goes through follows its
 * caller). */
#include "cache/cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/setidx_int.h"

struct sx_front {
    const csim_stream *s;
    csim_map *m;
    uint32_t ls;
    unsigned char *fixed; /* per function: in a non-allocating alias when
                             the index was made (its accesses static) */
};

static int front_run(void *arg, size_t only, csim_emit_fn emit, void *ctx)
{
    const sx_front *f = arg;
    const csim_stream *s = f->s;
    uint32_t a, last;
    if (only != CSIM_STATIC) {
        for (size_t j = s->fn_start[only]; j < s->fn_start[only + 1]; j++) {
            uint32_t ri = s->fn_runs[j];
            if (run_lines(f->m, s->run[ri], f->ls, &a, &last) &&
                emit(ctx, ri, a, last, only) < 0)
                return -1;
        }
        return 0;
    }
    for (size_t i = 0; i < s->nruns; i++) {
        size_t fn = run_fn(s->run[i]);
        if (run_lines(f->m, s->run[i], f->ls, &a, &last) &&
            emit(ctx, (uint32_t)i, a, last, f->fixed[fn] ? CSIM_STATIC : fn) < 0)
            return -1;
    }
    return 0;
}

/* The lines fn's runs touch under the front's map: *first and *n (0 when
 * none). */
static void span(const sx_front *f, size_t fn, uint32_t *first, uint32_t *n)
{
    const csim_stream *s = f->s;
    uint32_t lo = UINT32_MAX, hi = 0, a, last;
    for (size_t j = s->fn_start[fn]; j < s->fn_start[fn + 1]; j++)
        if (run_lines(f->m, s->run[s->fn_runs[j]], f->ls, &a, &last)) {
            a &= CSIM_LINE_MASK;
            lo = a < lo ? a : lo;
            hi = last > hi ? last : hi;
        }
    *first = lo == UINT32_MAX ? 0 : lo;
    *n = lo == UINT32_MAX ? 0 : hi - lo + 1;
}

void csim_setidx_map_free(csim_setidx *x)
{
    if (!x->front)
        return;
    csim_map_free(x->front->m);
    free(x->front->fixed);
    free(x->front);
    x->front = NULL;
}

csim_setidx *csim_setidx_new(const csim_stream *s, const csim_map *m,
                             const tgt_cache *g, size_t from, cp_err *err)
{
    if (!s->finished)
        return cp_seterr(err, "stream: not finished"), NULL;
    sx_front *f = calloc(1, sizeof *f);
    uint32_t *first = malloc((s->nfns ? s->nfns : 1) * sizeof *first);
    uint32_t *n = malloc((s->nfns ? s->nfns : 1) * sizeof *n);
    if (!f || !first || !n || !(f->fixed = calloc(s->nfns ? s->nfns : 1, 1)) ||
        !(f->m = csim_map_copy(m))) {
        if (f)
            free(f->fixed);
        free(f);
        free(first);
        free(n);
        return cp_seterr(err, "out of memory (set index)"), NULL;
    }
    f->s = s;
    f->ls = log2u(g->line);
    int nofill = 0;
    for (size_t i = 0; i < s->nfns; i++) {
        f->fixed[i] = m->kind[i] == CSIM_NOFILL;
        nofill |= f->fixed[i];
        if (f->fixed[i])
            first[i] = n[i] = 0;
        else
            span(f, i, &first[i], &n[i]);
    }
    csim_walk w = {.run = front_run, .arg = f, .nwork = 1, .nofill = nofill};
    w.start[0] = 0;
    w.warm[0] = (uint32_t)(from < s->niter ? s->iter[from] : s->nruns);
    w.scale[0] = 1;
    csim_setidx *x = csim_setidx_build(g, 0, &w, s->nfns, first, n, err);
    free(first);
    free(n);
    if (!x) {
        csim_map_free(f->m);
        free(f->fixed);
        free(f);
        return NULL;
    }
    x->front = f;
    return x;
}

/* Reloads fn (and the stubs, when it crossed between cached and uncached
 * memory) after its place in the front's map changed. */
static int64_t reload(csim_setidx *x, size_t fn, int crossed, cp_err *err)
{
    const sx_front *f = x->front;
    const csim_stream *s = f->s;
    uint32_t first, n;
    span(f, fn, &first, &n);
    if (csim_setidx_reload(x, fn, first, n, err) < 0)
        return -1;
    if (crossed && s->nstubs)
        for (size_t g = s->stub_fn0; g < s->nfns; g++) {
            span(f, g, &first, &n);
            if (csim_setidx_reload(x, g, first, n, err) < 0)
                return -1;
        }
    return (int64_t)llround(csim_setidx_total(x));
}

static int64_t front_move(csim_setidx *x, size_t fn, int to_ram,
                          uint32_t addr, cp_err *err)
{
    sx_front *f = x->front;
    if (!f)
        return cp_seterr(err, "set index: made from a walk, not a stream");
    if (fn >= f->s->nfns)
        return cp_seterr(err, "set index: no function %zu", fn);
    csim_map *m = f->m;
    if (f->fixed[fn])
        return cp_seterr(err, "set index: %s is in a non-allocating alias "
                         "and stays there", f->s->fns[fn].name);
    uint32_t oa = m->addr[fn], ob = m->base[fn];
    uint8_t ok = m->kind[fn], om = m->moved[fn];
    if (to_ram)
        csim_map_uncache(m, fn);
    else
        csim_map_move(m, fn, addr);
    if (m->kind[fn] == CSIM_NOFILL) {
        m->addr[fn] = oa;
        m->base[fn] = ob;
        m->kind[fn] = ok;
        m->moved[fn] = om;
        return cp_seterr(err, "set index: 0x%08x is in a non-allocating "
                         "alias (use csim_eval)", addr);
    }
    int crossed = (ok == CSIM_UNCACHED) != (m->kind[fn] == CSIM_UNCACHED);
    return reload(x, fn, crossed, err);
}

int64_t csim_setidx_move(csim_setidx *x, size_t fn, uint32_t addr,
                         cp_err *err)
{
    return front_move(x, fn, 0, addr, err);
}

int64_t csim_setidx_uncache(csim_setidx *x, size_t fn, cp_err *err)
{
    return front_move(x, fn, 1, 0, err);
}

uint64_t csim_setidx_misses(const csim_setidx *x)
{
    return (uint64_t)llround(csim_setidx_total(x));
}

uint64_t csim_setidx_set_misses(const csim_setidx *x, uint32_t set)
{
    return (uint64_t)llround(csim_setidx_set_total(x, set));
}

const csim_map *csim_setidx_map(const csim_setidx *x)
{
    return x->front ? x->front->m : NULL;
}
