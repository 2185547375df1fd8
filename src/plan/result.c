/* A strategy run's result: the placement as items, and its figures on
 * every iteration the model holds (the stock layout's too). */
#include "plan/search.h"

#include <stdlib.h>
#include <string.h>

static int cmp_items(const void *a, const void *b)
{
    const plan_item *x = a, *y = b;
    if (x->region != y->region)
        return x->region == PLAN_FAST ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

plan_result *plan_result_make(plan_search *r, plan_strategy s,
                              const double *stock_umiss,
                              const plan_vstate *vs)
{
    plan_model *m = r->m;
    plan_result *res = calloc(1, sizeof *res);
    if (!res) {
        cp_seterr(r->err, "out of memory");
        return NULL;
    }
    res->strategy = s;
    res->hot_base = r->hot_base;
    size_t n = 0;
    for (size_t i = 0; i < m->nunits; i++)
        n += r->fast[i] || r->off[i] != NONE;
    res->items = calloc(n ? n : 1, sizeof *res->items);
    if (!res->items) {
        free(res);
        cp_seterr(r->err, "out of memory");
        return NULL;
    }
    uint32_t fast_off = 0, hot_end = 0, hot_sum = 0;
    for (size_t i = 0; i < m->nunits; i++) {
        if (!r->fast[i] && r->off[i] == NONE)
            continue;
        plan_item *it = &res->items[res->nitems++];
        it->unit = i;
        it->misses = stock_umiss ? stock_umiss[i] : 0;
        if (r->fast[i]) {
            it->region = PLAN_FAST;
            it->offset = fast_off;
            fast_off += align8(m->units[i].size);
        } else {
            it->region = PLAN_FLASH_HOT;
            it->offset = r->off[i];
            it->colour = colour_of(r, r->off[i]);
            if (r->off[i] + m->units[i].size > hot_end)
                hot_end = r->off[i] + m->units[i].size;
            hot_sum += align8(m->units[i].size);
        }
    }
    qsort(res->items, res->nitems, sizeof *res->items, cmp_items);
    if (r->block_end > hot_end)
        hot_end = r->block_end;
    res->block_end = r->block_end;
    res->hot_bytes = hot_end;
    /* What --pad-limit bounds: the block's bytes beyond its sections'
     * sizes rounded up to 8. */
    res->pad_bytes = hot_end > hot_sum ? hot_end - hot_sum : 0;
    res->fast_bytes = vs ? plan_fast_used(r, vs) : fast_off;
    res->veneers = 0;
    if (vs)
        for (size_t i = 0; i < m->ntargets; i++)
            res->veneers += vs->target[i];
    /* The prediction on every iteration the model holds. */
    plan_build(r);
    plan_eval_out out = {0}, so = {0};
    double fa = 0, sfa = 0;
    plan_layout stockL;
    if (plan_layout_alloc(m, &stockL) < 0) {
        cp_seterr(r->err, "out of memory");
        plan_result_free(res);
        return NULL;
    }
    plan_layout_stock(m, &stockL);
    int bad = plan_eval(m, &r->L, 0, &out, r->err) < 0 ||
              plan_eval_fa(m, &r->L, 0, &fa, r->err) < 0 ||
              plan_eval(m, &stockL, 0, &so, r->err) < 0 ||
              plan_eval_fa(m, &stockL, 0, &sfa, r->err) < 0;
    plan_layout_free(&stockL);
    if (bad) {
        plan_result_free(res);
        return NULL;
    }
    res->misses = out.misses;
    res->flash_stubs = r->L.nstubs;
    res->stub_order = r->L.stub_order;
    res->text_end = (uint32_t)((int64_t)((m->text_end + 7) & ~7u) + r->L.text_delta);
    plan_result_after(m, &r->L, res);
    res->conflict_after = out.misses - fa;
    res->stock_misses = so.misses;
    res->conflict_before = so.misses - sfa;
    res->nwork = m->nwork;
    for (unsigned k = 0; k < m->nwork; k++) {
        res->work_misses[k] = out.work_misses[k];
        res->work_stock[k] = so.work_misses[k];
    }
    res->insns = plan_model_insns(m) + out.stub_calls * m->veneer_insns -
                 plan_stock_fast_saved(m, res);
    res->moves = r->moves;
    res->time_cut = r->time_cut;
    res->fast_cut = r->fast_cut;
    res->nchains = r->nchains;
    memcpy(res->chains, r->chains, sizeof res->chains);
    return res;
}

double plan_result_cycles(const plan_model *m, const plan_result *r)
{
    return r->insns * m->t->cpi + r->misses * m->cache.miss_cycles;
}

void plan_result_free(plan_result *r)
{
    if (!r)
        return;
    free(r->items);
    free(r);
}

double plan_result_eval(plan_model *m, const plan_result *res)
{
    plan_layout L;
    if (plan_layout_alloc(m, &L) < 0)
        return -1;
    plan_eval_out out = {0};
    int rc = plan_layout_build(m, res->items, res->nitems, res->hot_base,
                               res->block_end, &L, NULL);
    if (rc == 0)
        rc = plan_eval(m, &L, 0, &out, NULL);
    plan_layout_free(&L);
    return rc < 0 ? -1 : out.misses;
}
