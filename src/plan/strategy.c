/* The strategies, one table of {name, run}: stock, hot block, colouring
 * (temporal relationship graph, then annealing on exact evaluation), RAM
 * selection (select.c), their combination, the samples-per-byte and
 * misses-per-byte baselines, and auto (each of them, the best kept); the
 * time limit's parts.
 */
#include "plan/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What a strategy's run starts from and may keep (plan_run sets it up). */
typedef struct strat_run {
    plan_vstate vs;            /* the stubs fast memory holds */
    plan_snap start;           /* a placement to fall back to */
    double stock;              /* the stock cost on the planning iterations */
    const double *stock_umiss; /* each unit's stock misses there */
} strat_run;

/* A strategy's run: the placement goes to r (r->failed with r->err when an
 * evaluation fails). 0, or -1 with r->err set (out of memory, or a failure
 * of its own). */
typedef int strat_fn(plan_search *r, strat_run *x);

static int run_stock(plan_search *r, strat_run *x)
{
    (void)r;
    (void)x;
    return 0;
}

static int run_hotblock(plan_search *r, strat_run *x)
{
    (void)x;
    plan_place_hotblock(r);
    return 0;
}

static int run_colour(plan_search *r, strat_run *x)
{
    (void)x;
    do_colour(r, 0, 1.0);
    return 0;
}

static int oom(plan_search *r)
{
    return cp_seterr(r->err, "out of memory");
}

static int run_ram(plan_search *r, strat_run *x)
{
    if (plan_snap_take(r, &x->vs, &x->start) < 0)
        return oom(r);
    plan_select_fast(r, x->stock, &x->vs, 1.0);
    plan_keep_better(r, &x->vs, &x->start, "ram");
    return 0;
}

static int run_rank(plan_search *r, strat_run *x)
{
    plan_select_rank(r, &x->vs);
    return 0;
}

static int run_density(plan_search *r, strat_run *x)
{
    plan_select_density(r, &x->vs, x->stock_umiss);
    return 0;
}

/* Colour and anneal; choose fast memory by re-simulated misses saved per
 * byte on the annealed layout; anneal the rest again from where it is.
 * And, when colouring first leaves too little for fast memory to find,
 * fast memory chosen on the stock layout first, then coloured. The better
 * of the two, and never worse than the annealed flash-only layout both
 * start from. Under --time each phase gets its part of what is left (a
 * search one part, a selection SELECT_PART, counted SELECT_AHEAD in the
 * shares of the phases before it), so what one leaves goes to the rest.
 * The first search is the colour strategy's (colour_out). */
static int run_combined(plan_search *r, strat_run *x)
{
    const double S = SEARCH_PART, F = SELECT_PART, FA = SELECT_AHEAD;
    plan_vstate *vs = &x->vs;
    double c = do_colour(r, 0, phase_share(S, 2 * S + 2 * FA));
    if (r->o->colour_out && !r->failed &&
        !(*r->o->colour_out = plan_result_make(r, PLAN_COLOUR,
                                               x->stock_umiss, vs)))
        return -1; /* err says why */
    if (plan_snap_take(r, vs, &x->start) < 0)
        return oom(r);
    /* A phase that would start with the limit used is left out: the
     * placement so far is the plan. */
    if (time_up(r, "the first search"))
        return 0;
    plan_select_fast(r, c, vs, phase_share(F, 2 * S + FA));
    if (time_up(r, "the first RAM selection")) {
        plan_keep_better(r, vs, &x->start, "combined");
        return 0;
    }
    double a = do_colour(r, 1, phase_share(S, S + FA));
    if (time_up(r, "the second search")) {
        plan_keep_better(r, vs, &x->start, "combined");
        return 0;
    }
    plan_snap first = {0};
    if (plan_snap_take(r, vs, &first) < 0) {
        plan_snap_free(&first);
        return oom(r);
    }
    plan_reset_to_stock(r, vs);
    plan_select_fast(r, plan_cost(r, 0), vs, phase_share(F, S));
    double b = time_up(r, "the RAM selection on the stock layout")
                   ? HUGE_VAL : do_colour(r, 0, 1.0);
    plan_note(r, "combined: colour first %.1f, fast memory first %.1f", a, b);
    if (a <= b)
        plan_snap_put(r, vs, &first);
    plan_snap_free(&first);
    plan_keep_better(r, vs, &x->start, "combined");
    return 0;
}

/* The strategies. time_part: its parts of a time limit (0: it takes no
 * time to speak of); needs_budget: it fills fast memory and so runs only
 * with a budget; fills_fast: the density and rank plans replace its fast
 * memory where better on every iteration, and what the budget has left is
 * filled after it. */
typedef struct strategy {
    const char *name;
    strat_fn *run; /* NULL: auto, each that runs alone and the best kept */
    double time_part;
    int needs_budget, fills_fast;
} strategy;

static const strategy strategies[PLAN_NSTRATEGIES] = {
    [PLAN_STOCK] = {"stock", run_stock, 0, 0, 0},
    [PLAN_HOTBLOCK] = {"hotblock", run_hotblock, 0, 0, 0},
    [PLAN_COLOUR] = {"colour", run_colour, SEARCH_PART, 0, 0},
    [PLAN_RAM] = {"ram", run_ram, SELECT_PART, 1, 1},
    [PLAN_COMBINED] = {"combined", run_combined,
                       3 * SEARCH_PART + 2 * SELECT_PART, 1, 1},
    [PLAN_RANK] = {"rank", run_rank, 0, 1, 0},
    [PLAN_DENSITY] = {"density", run_density, 0, 1, 0},
    [PLAN_AUTO] = {"auto", NULL, 0, 0, 0},
};

const char *plan_strategy_name(plan_strategy s)
{
    return (unsigned)s < PLAN_NSTRATEGIES ? strategies[s].name : "?";
}

int plan_strategy_parse(const char *s, plan_strategy *out)
{
    for (int i = 0; i < PLAN_NSTRATEGIES; i++)
        if (!strcmp(s, strategies[i].name)) {
            *out = (plan_strategy)i;
            return 0;
        }
    if (!strcmp(s, "color")) {
        *out = PLAN_COLOUR;
        return 0;
    }
    return -1;
}

int plan_runs_alone(plan_strategy s, uint32_t budget)
{
    if ((unsigned)s >= PLAN_AUTO || (strategies[s].needs_budget && !budget))
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
            rest += strategies[k].time_part;
    return rest > 0 ? strategies[s].time_part / rest : 0;
}

double plan_time_for(plan_strategy s, uint32_t budget, double left)
{
    double share = plan_time_share(s, budget);
    double v = (left > 0 ? left : 0) * (share > 0 ? share : 1);
    return v > 1e-3 ? v : 1e-3;
}

/* Auto: each strategy that runs alone, each with its part of the time
 * limit; the one with the fewest cycles (the earlier on a tie). */
static plan_result *run_auto(plan_model *m, const plan_opts *o, cp_err *err)
{
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

/* The search state of one strategy's run: every unit where the linker put
 * it, the deadline of o's time limit. 0, or -1 out of memory. */
static int search_init(plan_search *r, plan_model *m, const plan_opts *o,
                       cp_err *err)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->o = o;
    r->err = err;
    r->iters = m->plan_iters;
    r->hot_base = plan_hot_base(m);
    r->rng = o->seed ? o->seed : 1;
    if (o->time_limit > 0)
        r->deadline = (o->t_start > 0 ? o->t_start : cp_now_s()) +
                      o->time_limit;
    r->umiss = calloc(m->nunits ? m->nunits : 1, sizeof *r->umiss);
    r->off = malloc((m->nunits ? m->nunits : 1) * sizeof *r->off);
    r->fast = calloc(m->nunits ? m->nunits : 1, 1);
    if (!r->umiss || !r->off || !r->fast || plan_layout_alloc(m, &r->L) < 0 ||
        plan_find_hot(r) < 0)
        return -1;
    for (size_t i = 0; i < m->nunits; i++)
        r->off[i] = NONE;
    return 0;
}

static void search_free(plan_search *r)
{
    free(r->umiss);
    free(r->off);
    free(r->fast);
    free(r->hot);
    plan_layout_free(&r->L);
}

/* What follows the last search (the checks on every iteration and the
 * result's figures, about eight evaluations of every iteration) comes out
 * of the limit too: the searches and selections end that much earlier (at
 * most half of what is left). t_eval: when the evaluation of the stock
 * layout started. */
static void reserve_tail(plan_search *r, double t_eval)
{
    const plan_model *m = r->m;
    unsigned planned = 0;
    for (unsigned k = 0; k < m->nwork; k++)
        planned += plan_work_iters(m, k, r->iters);
    double all = (double)m->niters / (planned ? planned : 1);
    double tail = 8 * (cp_now_s() - t_eval) * all,
           left = r->deadline - cp_now_s();
    r->deadline -= tail < left / 2 ? tail : left > 0 ? left / 2 : 0;
}

plan_result *plan_run(plan_model *m, plan_strategy s, const plan_opts *o,
                      cp_err *err)
{
    if (m->niters == 0 || m->nwork == 0) {
        cp_seterr(err, "no evidence: the model has no iterations");
        return NULL;
    }
    if ((unsigned)s >= PLAN_NSTRATEGIES) {
        cp_seterr(err, "strategy %d is not a single strategy", (int)s);
        return NULL;
    }
    const strategy *st = &strategies[s];
    if (!st->run)
        return run_auto(m, o, err);
    plan_search r;
    double *stock_umiss = calloc(m->nunits ? m->nunits : 1, sizeof *stock_umiss);
    strat_run x = {.vs = {calloc(m->ntargets + 1, 1)},
                   .stock_umiss = stock_umiss};
    plan_result *res = NULL;
    if (search_init(&r, m, o, err) < 0 || !stock_umiss || !x.vs.target) {
        cp_seterr(err, "out of memory");
        goto out;
    }
    if (plan_model_compress(m) < 0) { /* before the evaluation timed below */
        cp_seterr(err, "out of memory");
        goto out;
    }
    double t_eval = cp_now_s();
    x.stock = plan_cost(&r, 1);
    if (r.deadline > 0)
        reserve_tail(&r, t_eval);
    memcpy(stock_umiss, r.umiss, m->nunits * sizeof *stock_umiss);
    plan_note(&r, "%s: stock %.1f misses/iteration, %zu hot sections",
              st->name, x.stock, r.nhot);
    if (st->run(&r, &x) < 0)
        goto out; /* err says why */
    if (!r.failed && st->fills_fast) {
        plan_baseline_net(&r, &x.vs, stock_umiss);
        plan_fill_late(&r, &x.vs);
    }
    if (r.failed)
        goto out; /* err says why */
    res = plan_result_make(&r, s, stock_umiss, &x.vs);
    if (res)
        plan_note(&r, "%s: %.1f misses/iteration (%.0f evaluations, %lu moves)",
                  st->name, res->misses, r.evals, r.moves);
out:
    plan_snap_free(&x.start);
    search_free(&r);
    free(stock_umiss);
    free(x.vs.target);
    return res;
}
