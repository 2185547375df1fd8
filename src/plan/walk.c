/* The planner's stream seen through a layout, handed to src/cache/ as a
 * walk: the full evaluation (csim_eval_walk) and the set index
 * (csim_setidx) of a layout are cache/'s, the same code `codeplace sim`
 * runs; what is the planner's is how an access maps to lines under a
 * layout (plan_acc_lines: units, stubs, what moves after the text) and
 * which workloads and iterations count. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(PLAN_MAX_WORK <= CSIM_MAX_WORK,
               "a plan's workloads fit a walk's");

typedef struct plan_walk {
    const plan_model *m;
    const plan_layout *L;
    unsigned iters;
    int raw;             /* acc / iter_start: every access as traced
                            (else the compressed zacc / ziter_start) */
    uint32_t *kof;       /* unit -> index unit, UINT32_MAX: static; NULL:
                            the model's unit numbers */
} plan_walk;

static int walk_run(void *arg, size_t only, csim_emit_fn emit, void *ctx)
{
    const plan_walk *p = arg;
    const plan_model *m = p->m;
    const plan_acc *acc = p->raw ? m->acc : m->zacc;
    const size_t *is = p->raw ? m->iter_start : m->ziter_start;
    for (unsigned k = 0; k < m->nwork; k++) {
        const plan_work *w = &m->work[k];
        size_t end = is[w->first + plan_work_iters(m, k, p->iters)];
        for (size_t t = is[w->first]; t < end; t++) {
            const plan_acc *a = &acc[t];
            size_t id = CSIM_STATIC;
            if (a->unit < m->nunits)
                id = !p->kof ? a->unit
                     : p->kof[a->unit] == UINT32_MAX ? CSIM_STATIC
                                                     : p->kof[a->unit];
            if (only != CSIM_STATIC && id != only)
                continue;
            uint32_t l0, l1;
            if (plan_acc_lines(m, p->L, a, &l0, &l1) &&
                emit(ctx, (uint32_t)t, l0, l1, id) < 0)
                return -1;
        }
    }
    return 0;
}

static void walk_drop(void *arg)
{
    plan_walk *p = arg;
    free(p->kof);
    free(p);
}

/* The walk of p (its workloads: the first p->iters iterations of each). */
static csim_walk walk_of(plan_walk *p)
{
    const plan_model *m = p->m;
    const size_t *is = p->raw ? m->iter_start : m->ziter_start;
    csim_walk w = {.run = walk_run, .arg = p, .nwork = m->nwork,
                   .nofill = m->nnofill > 0};
    for (unsigned k = 0; k < m->nwork; k++) {
        w.start[k] = (uint32_t)is[m->work[k].first];
        w.warm[k] = (uint32_t)is[plan_work_warm(m, k, p->iters)];
        w.scale[k] = plan_work_scale(m, k, p->iters);
    }
    return w;
}

/* Counts an evaluation; fails it when the model's test limit is reached. */
static int eval_begin(const plan_model *m, cp_err *err)
{
    plan_model *mm = (plan_model *)m;
    mm->nevals++;
    if (m->fail_after && m->nevals > m->fail_after)
        return cp_seterr(err, "out of memory (evaluating layout %lu)",
                         m->nevals);
    if (plan_model_compress(mm) < 0)
        return cp_seterr(err, "out of memory (the planner's access stream)");
    return 0;
}

/* Calls through a linker stub per warm iteration: a direct call whose
 * caller and target are on different sides of the cache. */
static double stub_calls(const plan_model *m, const plan_layout *L,
                         unsigned iters)
{
    double total = 0;
    for (unsigned k = 0; k < m->nwork; k++) {
        const plan_work *w = &m->work[k];
        unsigned n = plan_work_iters(m, k, iters);
        unsigned warm = plan_work_warm(m, k, iters);
        uint64_t stubs = 0;
        for (unsigned it = warm; it < w->first + n; it++)
            for (size_t q = m->ziter_start[it]; q < m->ziter_start[it + 1];
                 q++) {
                const plan_acc *a = &m->zacc[q];
                if (a->unit == PLAN_CALL && a->len < m->nunits &&
                    (L->addr[m->targets[a->off].unit] == PLAN_ADDR_FAST) !=
                        (L->addr[a->len] == PLAN_ADDR_FAST))
                    stubs++;
            }
        total += (double)stubs * plan_work_scale(m, k, iters);
    }
    return total;
}

int plan_eval(const plan_model *m, const plan_layout *L, unsigned iters,
              plan_eval_out *out, cp_err *err)
{
    out->misses = out->accesses = out->stub_calls = 0;
    if (out->unit_misses)
        memset(out->unit_misses, 0, m->nunits * sizeof *out->unit_misses);
    if (eval_begin(m, err) < 0)
        return -1;
    plan_walk p = {m, L, iters, 0, NULL};
    csim_walk w = walk_of(&p);
    csim_walk_eval r;
    if (csim_eval_walk(&m->cache, m->cache_seed, 0, &w, out->unit_misses,
                       m->nunits, &r, err) < 0)
        return -1;
    for (unsigned k = 0; k < m->nwork; k++) {
        unsigned n = plan_work_iters(m, k, iters);
        out->work_misses[k] = (double)r.work_misses[k] / (n > 1 ? n - 1 : 1);
    }
    out->misses = r.misses;
    out->accesses = r.accesses;
    out->stub_calls = stub_calls(m, L, iters);
    return 0;
}

int plan_eval_fa(const plan_model *m, const plan_layout *L, unsigned iters,
                 double *misses_out, cp_err *err)
{
    *misses_out = 0;
    if (eval_begin(m, err) < 0)
        return -1;
    plan_walk p = {m, L, iters, 1, NULL};
    csim_walk w = walk_of(&p);
    csim_walk_eval r;
    if (csim_eval_walk(&m->cache, 0, 1, &w, NULL, 0, &r, err) < 0)
        return -1;
    *misses_out = r.misses;
    return 0;
}

csim_setidx *plan_setidx_new(const plan_model *m, const plan_layout *L,
                             const size_t *hot, size_t nhot, unsigned iters,
                             cp_err *err)
{
    if (plan_model_compress((plan_model *)m) < 0)
        return cp_seterr(err, "out of memory"), NULL;
    plan_walk *p = calloc(1, sizeof *p);
    uint32_t *first = malloc((nhot ? nhot : 1) * sizeof *first);
    uint32_t *n = malloc((nhot ? nhot : 1) * sizeof *n);
    if (p)
        p->kof = malloc((m->nunits ? m->nunits : 1) * sizeof *p->kof);
    if (!p || !p->kof || !first || !n) {
        if (p)
            walk_drop(p);
        free(first);
        free(n);
        return cp_seterr(err, "out of memory (set index)"), NULL;
    }
    *p = (plan_walk){m, L, iters, 0, p->kof};
    for (size_t i = 0; i < m->nunits; i++)
        p->kof[i] = UINT32_MAX;
    for (size_t k = 0; k < nhot; k++) {
        size_t u = hot[k];
        uint32_t end = (L->addr[u] + m->units[u].size +
                        (1u << m->line_shift) - 1) >> m->line_shift;
        p->kof[u] = (uint32_t)k;
        first[k] = L->addr[u] >> m->line_shift;
        n[k] = end - first[k];
    }
    csim_walk w = walk_of(p);
    w.drop = walk_drop;
    csim_setidx *x = csim_setidx_build(&m->cache, m->cache_seed, &w, nhot,
                                       first, n, err);
    free(first);
    free(n);
    /* The walk reads L while the index is built, not after: the planner
     * never reloads a unit. */
    return x;
}
