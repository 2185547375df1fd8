/* The strategies: hot block, colouring (temporal relationship graph, then a
 * local search with exact evaluation), RAM selection (select.c), their
 * combination, samples-per-byte and misses-per-byte baselines, and auto;
 * the time limit's parts and the result.
 */
#include "plan/search.h"

#include "plan/incr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const names[PLAN_NSTRATEGIES] = {
    "stock", "hotblock", "colour", "ram", "combined", "rank", "density",
    "auto"};

const char *plan_strategy_name(plan_strategy s)
{
    return (unsigned)s < PLAN_NSTRATEGIES ? names[s] : "?";
}

int plan_strategy_parse(const char *s, plan_strategy *out)
{
    for (int i = 0; i < PLAN_NSTRATEGIES; i++)
        if (!strcmp(s, names[i])) {
            *out = (plan_strategy)i;
            return 0;
        }
    if (!strcmp(s, "color")) {
        *out = PLAN_COLOUR;
        return 0;
    }
    return -1;
}

plan_opts plan_opts_default(const tgt *t)
{
    plan_opts o;
    memset(&o, 0, sizeof o);
    o.budget = 0;
    o.pad_limit = PLAN_PAD_LIMIT;
    /* See plan_model_new and tgt_stub_bytes. */
    o.veneer_bytes = tgt_stub_bytes(t);
    o.search_moves = PLAN_SEARCH_MOVES;
    o.descent_passes = PLAN_DESCENT_PASSES;
    o.seed = 1;
    o.time_limit = 60;
    o.threads = 1;
    o.jobs = PLAN_JOBS;
    return o;
}

static void vnote(const plan_search *r, int level, const char *fmt, va_list ap)
{
    if (!r->o->progress)
        return;
    char buf[256];
    vsnprintf(buf, sizeof buf, fmt, ap);
    r->o->progress(r->o->progress_ctx, level, buf);
}

/* A detail (shown with -v). */
void plan_note(const plan_search *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void plan_note(const plan_search *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(r, 1, fmt, ap);
    va_end(ap);
}

/* Progress (shown on the terminal unless -q). */
void plan_say(const plan_search *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void plan_say(const plan_search *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(r, 0, fmt, ap);
    va_end(ap);
}
/* Builds r->L from r->off and r->fast. */
void plan_build(plan_search *r)
{
    plan_layout_make(r->m, r->off, r->fast, r->hot_base, r->block_end, &r->L);
}

/* The cost a strategy minimises, in misses: the misses plus the
 * instructions that calls through linker stubs add, weighed by what a miss
 * costs (the estimated cycles per iteration, divided by the miss cost). */
static double cost_on(plan_search *r, double *umiss, unsigned iters)
{
    if (r->failed)
        return HUGE_VAL;
    plan_build(r);
    plan_eval_out out = {0};
    out.unit_misses = umiss;
    if (plan_eval(r->m, &r->L, iters, &out, r->err) < 0) {
        r->failed = 1;
        return HUGE_VAL;
    }
    r->evals++;
    r->last_misses = out.misses;
    const plan_model *m = r->m;
    double per_call = m->t->cpi * m->veneer_insns /
                      (m->cache.miss_cycles ? m->cache.miss_cycles : 1);
    return out.misses + out.stub_calls * per_call;
}

/* On the planning iterations (what searches compare). */
double plan_cost(plan_search *r, int per_unit)
{
    return cost_on(r, per_unit ? r->umiss : NULL, r->iters);
}

/* On every iteration (what the result reports). */
double plan_cost_all(plan_search *r)
{
    return cost_on(r, NULL, 0);
}

double plan_cost_all_units(plan_search *r, double *umiss)
{
    return cost_on(r, umiss, 0);
}
/* Colouring: the better start of the hot block and the relationship graph's
 * greedy colouring (and, with keep, the placement the units have now),
 * annealed; never worse than the hot block on every iteration. */
static double do_colour(plan_search *r, int keep, double share)
{
    size_t nu = r->m->nunits ? r->m->nunits : 1;
    uint32_t *cur = malloc(nu * sizeof *cur), *hb = malloc(nu * sizeof *hb);
    if (!cur || !hb) {
        free(cur);
        free(hb);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return HUGE_VAL;
    }
    memcpy(cur, r->off, nu * sizeof *cur);
    uint32_t cur_end = r->block_end;
    double c = keep ? plan_cost(r, 0) : HUGE_VAL;
    for (size_t k = 0; k < r->nhot; k++)
        r->off[r->hot[k]] = NONE;
    r->block_end = 0;
    plan_place_hotblock(r);
    double h = plan_cost(r, 0);
    memcpy(hb, r->off, nu * sizeof *hb);
    if (plan_place_colour(r) < 0) {
        free(cur);
        free(hb);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return HUGE_VAL;
    }
    double g = plan_cost(r, 0);
    plan_note(r, "colouring: relationship graph %.1f, hot block %.1f%s "
         "misses/iteration", g, h, keep ? "" : "");
    if (keep && c <= g && c <= h) {
        memcpy(r->off, cur, nu * sizeof *cur);
        r->block_end = cur_end;
    } else if (h < g) {
        memcpy(r->off, hb, nu * sizeof *hb);
    }
    /* share: the part of the time left this search may use; each search
     * of a run gets the next seed of the sequence --seed starts. */
    double t_end = 0;
    if (r->deadline > 0) {
        double now = cp_now_s(), left = r->deadline - now;
        t_end = now + (left > 0 ? left : 0) * share;
    }
    plan_chains(r, r->rng, r->o->search_moves, t_end);
    r->rng = r->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    /* Never worse than the hot block, on every iteration. */
    double a_all = plan_cost_all(r);
    uint32_t *res = cur; /* reuse */
    memcpy(res, r->off, nu * sizeof *res);
    uint32_t end = r->block_end;
    memcpy(r->off, hb, nu * sizeof *hb);
    r->block_end = 0;
    double h_all = plan_cost_all(r);
    if (a_all <= h_all) {
        memcpy(r->off, res, nu * sizeof *res);
        r->block_end = end;
    } else {
        plan_note(r, "colouring: the hot block is better on every iteration "
             "(%.1f against %.1f)", h_all, a_all);
    }
    /* The padding the search left in whole cache ways goes: the same sets,
     * a shorter block, and no gap the name list cannot carry. Code that
     * stays at its stock address (or bytes outside every section) could
     * share lines with the moved code differently: the evaluation on
     * every iteration says whether it does, and then the gaps stay. */
    double before = plan_cost_all(r);
    memcpy(hb, r->off, nu * sizeof *hb);
    end = r->block_end;
    uint32_t removed = 0;
    if (plan_close_way_gaps(r->m, r->off, r->fast, &r->block_end, &removed) < 0) {
        free(cur);
        free(hb);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return HUGE_VAL;
    }
    if (removed) {
        double after = plan_cost_all(r);
        if (after != before) {
            plan_note(r, "colouring: closing %u bytes of whole-way gaps would "
                      "change the misses (%.4f against %.4f): kept", removed,
                      after, before);
            memcpy(r->off, hb, nu * sizeof *hb);
            r->block_end = end;
        } else {
            plan_note(r, "colouring: %u bytes of whole-way gaps closed", removed);
        }
    }
    free(cur);
    free(hb);
    return plan_cost(r, 0);
}

/* ---- results ----------------------------------------------------------- */

static int cmp_items(const void *a, const void *b)
{
    const plan_item *x = a, *y = b;
    if (x->region != y->region)
        return x->region == PLAN_FAST ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static plan_result *make_result(plan_search *r, plan_strategy s, double stock,
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
    res->stock_misses = stock;
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

/* The parts of a time limit (docs/plan.md): a search one part, a RAM
 * selection two (a selection stopped early loses more than a search
 * paced harder: on the demo at --time 60 on a machine at load 8, combined
 * 16K with a selection part of one kept 8 KiB of fast memory and 2,437.7
 * misses, with two 10-16 KiB and 1,140.7-2,084.5; what a selection does
 * not use goes to what follows). Colour runs one search, ram one
 * selection, combined three searches and two selections. */
#define SEARCH_PART 1.0
#define SELECT_PART 2.0
/* A selection still to come counts this much in the share of a phase
 * before it: it most often takes less than a search (the demo at 16 KiB:
 * 3 s against 7 s), and what it does not use goes on to what follows it;
 * counted at its whole part, the first search of combined got a seventh of
 * the time and --time 60 paced it on an idle 2-core machine. */
#define SELECT_AHEAD 1.0

static double time_part(plan_strategy s)
{
    return s == PLAN_COLOUR ? SEARCH_PART
         : s == PLAN_RAM ? SELECT_PART
         : s == PLAN_COMBINED ? 3 * SEARCH_PART + 2 * SELECT_PART : 0;
}

static int needs_budget(int k)
{
    return k == PLAN_RAM || k == PLAN_COMBINED || k == PLAN_RANK ||
           k == PLAN_DENSITY;
}

int plan_runs_alone(plan_strategy s, uint32_t budget)
{
    if ((unsigned)s >= PLAN_AUTO || (needs_budget(s) && !budget))
        return 0;
    return !(s == PLAN_COLOUR && budget);
}

int plan_best_of(const plan_model *m, plan_result *const all[PLAN_AUTO])
{
    int best = -1;
    for (int k = 0; k < PLAN_AUTO; k++)
        if (all[k] && (best < 0 || plan_result_cycles(m, all[k]) <
                                       plan_result_cycles(m, all[best]) - 1e-6))
            best = k;
    return best;
}

double plan_time_share(plan_strategy s, uint32_t budget)
{
    if (!plan_runs_alone(s, budget))
        return 0;
    double rest = 0;
    for (int k = s; k < PLAN_AUTO; k++)
        if (plan_runs_alone((plan_strategy)k, budget))
            rest += time_part((plan_strategy)k);
    return rest > 0 ? time_part(s) / rest : 0;
}

double plan_time_for(plan_strategy s, uint32_t budget, double left)
{
    double share = plan_time_share(s, budget);
    double v = (left > 0 ? left : 0) * (share > 0 ? share : 1);
    return v > 1e-3 ? v : 1e-3;
}

/* Whether the deadline has passed after the phase `after` (said so, and
 * counted as a search the limit stopped). */
static int time_up(plan_search *r, const char *after)
{
    if (r->failed || !(r->deadline > 0) || cp_now_s() < r->deadline)
        return 0;
    r->time_cut = 1;
    plan_say(r, "--time used up after %s: the phases after it are left out",
             after);
    return 1;
}

/* The part of what is left a phase gets, with `rest` parts after it. */
static double phase_share(double part, double rest)
{
    return part / (part + rest);
}

plan_result *plan_run(plan_model *m, plan_strategy s, const plan_opts *o,
                      cp_err *err)
{
    if (m->niters == 0 || m->nwork == 0) {
        cp_seterr(err, "no evidence: the model has no iterations");
        return NULL;
    }
    if (s == PLAN_AUTO) {
        plan_result *all[PLAN_AUTO] = {NULL}, *best = NULL;
        double t0 = o->t_start > 0 ? o->t_start : cp_now_s();
        for (int k = 0; k < PLAN_AUTO; k++) {
            if (!plan_runs_alone((plan_strategy)k, o->budget))
                continue;
            plan_opts ok = *o;
            if (k == PLAN_COMBINED)
                ok.colour_out = &all[PLAN_COLOUR];
            if (o->time_limit > 0) {
                double now = cp_now_s();
                ok.t_start = now;
                ok.time_limit = plan_time_for((plan_strategy)k, o->budget,
                                              t0 + o->time_limit - now);
            }
            if (!(all[k] = plan_run(m, (plan_strategy)k, &ok, err)))
                break;
        }
        int failed = 0;
        for (int k = 0; k < PLAN_AUTO; k++)
            if (plan_runs_alone((plan_strategy)k, o->budget) && !all[k])
                failed = 1;
        int bk = plan_best_of(m, all);
        best = bk < 0 ? NULL : all[bk];
        for (int k = 0; k < PLAN_AUTO; k++)
            if (all[k] != best || failed)
                plan_result_free(all[k]);
        return failed ? NULL : best;
    }
    plan_search r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.o = o;
    r.err = err;
    r.iters = m->plan_iters;
    r.hot_base = plan_hot_base(m);
    r.rng = o->seed ? o->seed : 1;
    if (o->time_limit > 0)
        r.deadline = (o->t_start > 0 ? o->t_start : cp_now_s()) + o->time_limit;
    r.umiss = calloc(m->nunits ? m->nunits : 1, sizeof *r.umiss);
    r.off = malloc((m->nunits ? m->nunits : 1) * sizeof *r.off);
    r.fast = calloc(m->nunits ? m->nunits : 1, 1);
    double *stock_umiss = calloc(m->nunits ? m->nunits : 1, sizeof *stock_umiss);
    plan_vstate vs = {calloc(m->ntargets + 1, 1)};
    plan_snap start = {0};
    plan_result *res = NULL;
    if (!r.umiss || !r.off || !r.fast || !stock_umiss || !vs.target ||
        plan_layout_alloc(m, &r.L) < 0 || plan_find_hot(&r) < 0) {
        cp_seterr(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < m->nunits; i++)
        r.off[i] = NONE;
    if (plan_model_compress(m) < 0) /* before the evaluation timed below */
        goto oom;
    double t_eval = cp_now_s();
    double stock = plan_cost(&r, 1);
    if (r.deadline > 0) {
        /* What follows the last search (the checks on every iteration and
         * the result's figures, about eight evaluations of every
         * iteration) comes out of the limit too: the searches and
         * selections end that much earlier (at most half of what is
         * left). */
        unsigned planned = 0;
        for (unsigned k = 0; k < m->nwork; k++)
            planned += plan_work_iters(m, k, r.iters);
        double all = (double)m->niters / (planned ? planned : 1);
        double tail = 8 * (cp_now_s() - t_eval) * all,
               left = r.deadline - cp_now_s();
        r.deadline -= tail < left / 2 ? tail : left > 0 ? left / 2 : 0;
    }
    memcpy(stock_umiss, r.umiss, m->nunits * sizeof *stock_umiss);
    plan_note(&r, "%s: stock %.1f misses/iteration, %zu hot sections",
         plan_strategy_name(s), stock, r.nhot);
    switch (s) {
    case PLAN_STOCK:
        break;
    case PLAN_HOTBLOCK:
        plan_place_hotblock(&r);
        break;
    case PLAN_COLOUR:
        do_colour(&r, 0, 1.0);
        break;
    case PLAN_RAM:
        if (plan_snap_take(&r, &vs, &start) < 0)
            goto oom;
        plan_select_fast(&r, stock, &vs, 1.0);
        plan_keep_better(&r, &vs, &start, "ram");
        break;
    case PLAN_RANK:
        plan_select_rank(&r, &vs);
        break;
    case PLAN_DENSITY:
        plan_select_density(&r, &vs, stock_umiss);
        break;
    case PLAN_COMBINED: {
        /* Colour and anneal; choose fast memory by re-simulated misses
         * saved per byte on the annealed layout; anneal the rest again from
         * where it is. And, when colouring first leaves too little for fast
         * memory to find, fast memory chosen on the stock layout first,
         * then coloured. The better of the two, and never worse than the
         * annealed flash-only layout both start from. Under --time each
         * phase gets its part of what is left (a search one part, a
         * selection SELECT_PART, counted SELECT_AHEAD in the shares of the
         * phases before it), so what one leaves goes to the rest. The
         * first search is the colour strategy's (colour_out). */
        const double S = SEARCH_PART, F = SELECT_PART, FA = SELECT_AHEAD;
        double c = do_colour(&r, 0, phase_share(S, 2 * S + 2 * FA));
        if (o->colour_out && !r.failed &&
            !(*o->colour_out = make_result(&r, PLAN_COLOUR, stock,
                                           stock_umiss, &vs)))
            goto out; /* err says why */
        if (plan_snap_take(&r, &vs, &start) < 0)
            goto oom;
        /* A phase that would start with the limit used is left out: the
         * placement so far is the plan. */
        if (time_up(&r, "the first search"))
            break;
        plan_select_fast(&r, c, &vs, phase_share(F, 2 * S + FA));
        if (time_up(&r, "the first RAM selection")) {
            plan_keep_better(&r, &vs, &start, "combined");
            break;
        }
        double a = do_colour(&r, 1, phase_share(S, S + FA));
        if (time_up(&r, "the second search")) {
            plan_keep_better(&r, &vs, &start, "combined");
            break;
        }
        plan_snap first = {0};
        if (plan_snap_take(&r, &vs, &first) < 0) {
            plan_snap_free(&first);
            goto oom;
        }
        plan_reset_to_stock(&r, &vs);
        plan_select_fast(&r, plan_cost(&r, 0), &vs, phase_share(F, S));
        double b = time_up(&r, "the RAM selection on the stock layout")
                       ? HUGE_VAL : do_colour(&r, 0, 1.0);
        plan_note(&r, "combined: colour first %.1f, fast memory first %.1f", a, b);
        if (a <= b)
            plan_snap_put(&r, &vs, &first);
        plan_snap_free(&first);
        plan_keep_better(&r, &vs, &start, "combined");
        break;
    }
    default:
        cp_seterr(err, "strategy %d is not a single strategy", (int)s);
        goto out;
    }
    if (!r.failed && (s == PLAN_RAM || s == PLAN_COMBINED)) {
        plan_baseline_net(&r, &vs, stock_umiss);
        plan_fill_late(&r, &vs);
    }
    if (r.failed)
        goto out; /* err says why */
    res = make_result(&r, s, stock, stock_umiss, &vs);
    if (res)
        plan_note(&r, "%s: %.1f misses/iteration (%.0f evaluations, %lu moves)",
             plan_strategy_name(s), res->misses, r.evals, r.moves);
    goto out;
oom:
    cp_seterr(err, "out of memory");
out:
    plan_snap_free(&start);
    free(r.umiss);
    free(r.off);
    free(r.fast);
    free(r.hot);
    free(stock_umiss);
    free(vs.target);
    plan_layout_free(&r.L);
    return res;
}
