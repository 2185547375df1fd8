/* The annealing search over the hot units' start offsets. */
#include "plan/search.h"

#include "plan/pool.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t rnd(uint64_t *s)
{
    /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* The map of the block while annealing: unit u's bytes at off, set to
 * it (put) or freed. */
static void own_put(plan_search *r, size_t u, uint32_t off, int put)
{
    if (!r->own || off == NONE)
        return;
    uint32_t g0 = off >> 3, g1 = (off + align8(r->m->units[u].size) + 7) >> 3;
    if (g1 > r->nown)
        g1 = r->nown;
    for (uint32_t g = g0; g < g1; g++)
        if (put)
            r->own[g] = (uint32_t)u + 1;
        else if (r->own[g] == (uint32_t)u + 1)
            r->own[g] = 0;
}

/* Unit u from r->off[u] to off, in r->off and the map of the block. */
static void put_at(plan_search *r, size_t u, uint32_t off)
{
    own_put(r, u, r->off[u], 0);
    own_put(r, u, off, 1);
    r->off[u] = off;
}

/* Puts the set index and r->off where best_off[] has the units; *cur
 * follows. 0, or -1 (r->err says why). The map ends right whatever the
 * order: a unit frees only the bytes still marked its own. */
static int go_to(plan_search *r, csim_setidx *x, const size_t *hk, size_t n,
                 const uint32_t *best_off, double *cur)
{
    for (size_t k = 0; k < n; k++) {
        size_t u = hk[k];
        if (r->off[u] == best_off[k])
            continue;
        put_at(r, u, best_off[k]);
        if (csim_setidx_try(x, k, r->hot_base + best_off[k], SIZE_MAX, 0,
                            HUGE_VAL, cur, r->err) < 0) {
            r->err_set = 1;
            return -1;
        }
    }
    return 0;
}

/* Hot unit hk[k] to the start colour, of all of them, that lowers the
 * misses most (each tried exactly, a try given up once it cannot win),
 * if one does: 1 (moved; *cur follows), 0 (stays) or -1 (out of memory,
 * or with r->err_set what err says). With a pool its threads share the
 * tries (the choice is the same); without, they run in this thread.
 * Every try re-simulates only the sets it enters: the ones it leaves are
 * simulated once (csim_setidx_try's memo). */
static int best_colour(plan_search *r, csim_setidx *x, plan_pool *pool,
                       const size_t *hk, size_t k, uint32_t limit,
                       double *cur)
{
    plan_model *m = r->m;
    size_t u = hk[k];
    uint32_t old = r->off[u], nc = 0, bi;
    uint32_t *cand = malloc(m->sets * sizeof *cand);
    if (!cand)
        return -1;
    for (uint32_t c = 0; c < m->sets; c++) {
        uint32_t p = plan_find_slot(r, u, c, limit);
        if (p != NONE && p != old)
            cand[nc++] = p;
    }
    double bv;
    if (plan_pool_best(pool, x, k, r->hot_base, cand, nc, *cur, &bi, &bv,
                       r->err) < 0) {
        free(cand);
        return -1;
    }
    uint32_t bp = bi == UINT32_MAX ? NONE : cand[bi];
    free(cand);
    if (bp == NONE)
        return 0;
    put_at(r, u, bp);
    if (csim_setidx_try(x, k, r->hot_base + bp, SIZE_MAX, 0, HUGE_VAL, cur,
                        r->err) < 0) {
        r->err_set = 1;
        return -1;
    }
    if (pool && plan_pool_apply(pool, k, r->hot_base + bp, *cur, r->err) < 0) {
        r->err_set = 1;
        return -1;
    }
    return 1;
}

/* Threads for best_colour's tries (--jobs), each with its own copy of an
 * evaluation like x (built from the placement now: r->off must be where x
 * has the units); NULL when there is to be one thread, or a copy could not
 * be made (said with -v; the tries then run in this thread: the same
 * plan, slower). */
static plan_pool *make_pool(plan_search *r, const size_t *hk, size_t n,
                            unsigned iters, double total)
{
    unsigned jobs = r->o->jobs;
    if (jobs <= 1 || r->chain || n == 0)
        return NULL;
    if (jobs > PLAN_MAX_THREADS)
        jobs = PLAN_MAX_THREADS;
    plan_build(r);
    cp_err e = {{0}};
    plan_pool *p = plan_pool_new(r->m, &r->L, hk, n, iters, jobs - 1, total,
                                 &e);
    if (!p)
        plan_note(r, "the tries at every colour run in one thread: %s",
                  e.msg);
    return p;
}

/* The descent after the annealing: each hot unit in turn goes to its best
 * start colour (best_colour); passes repeat, up to max_passes, while one
 * gains at least 0.01 %. Deterministic. Returns the units moved, or -1
 * (out of memory); *cur follows. */
static long polish(plan_search *r, csim_setidx *x, const size_t *hk, size_t n,
                   uint32_t limit, unsigned max_passes, double *cur,
                   double t_end, unsigned *passes, int *stopped)
{
    long moved = 0;
    double t0 = cp_now_s();
    size_t every = n / 4 ? n / 4 : 1;
    plan_pool *pool = make_pool(r, hk, n, r->iters, *cur);
    for (*passes = 0; *passes < max_passes;) {
        double start = *cur;
        ++*passes;
        for (size_t k = 0; k < n; k++) {
            if ((r->o->stop && *r->o->stop) || (t_end > 0 && cp_now_s() > t_end)) {
                *stopped = 1;
                plan_pool_free(pool);
                return moved;
            }
            if (k && k % every == 0 && !r->chain)
                plan_say(r, "descent: pass %u, %zu of %zu sections, %.1f "
                         "misses/iteration, %.1f s", *passes, k, n, *cur,
                         cp_now_s() - t0);
            int rc = best_colour(r, x, pool, hk, k, limit, cur);
            if (rc < 0) {
                plan_pool_free(pool);
                return -1;
            }
            moved += rc;
        }
        if (*cur > start - 1e-4 * start)
            break;
    }
    plan_pool_free(pool);
    return moved;
}

/* Hot units with code that only the iterations past the planning ones run
 * (plan_model_late_units): the search's figure does not see where that
 * code goes, so its moves may have left it in sets the other iterations
 * need. From the best placement (best_off, which follows), each goes to
 * its best start colour on every iteration, through an incremental state
 * of its own over all of them (the figure the result reports). *nlate:
 * how many there are, *moved: how many moved, *all0 and *all1: the misses
 * on every iteration before and after. Stops at t_end (> 0) like the
 * descent. 0, or -1 (out of memory; *cur follows x). */
static int place_late(plan_search *r, csim_setidx *x, const size_t *hk,
                      size_t n, uint32_t *best_off, uint32_t limit,
                      double t_end, double *cur, size_t *nlate, size_t *moved,
                      double *all0, double *all1)
{
    plan_model *m = r->m;
    *nlate = *moved = 0;
    if (!r->iters)
        return 0;
    unsigned char *late = malloc(m->nunits ? m->nunits : 1);
    size_t *lk = malloc(n * sizeof *lk), nl = 0;
    int rc = 0;
    if (!late || !lk) {
        rc = -1;
        goto out;
    }
    if (plan_model_late_units(m, r->iters, late) < 0) {
        rc = -1;
        goto out;
    }
    for (size_t k = 0; k < n; k++)
        if (late[hk[k]])
            lk[nl++] = hk[k];
    if (!nl)
        goto out;
    *nlate = nl;
    if (go_to(r, x, hk, n, best_off, cur) < 0) {
        rc = -1;
        goto out;
    }
    plan_build(r);
    csim_setidx *y = plan_setidx_new(m, &r->L, lk, nl, 0, r->err);
    if (!y) {
        rc = -1;
        goto out;
    }
    double all = *all0 = csim_setidx_total(y), t0 = cp_now_s();
    plan_pool *pool = make_pool(r, lk, nl, 0, all);
    size_t every = nl / 4 ? nl / 4 : 1;
    for (size_t j = 0; j < nl; j++) {
        if (r->o->stop && *r->o->stop)
            break;
        if (j && j % every == 0 && !r->chain)
            plan_say(r, "late sections: %zu of %zu, %.1f misses/iteration "
                     "on every iteration, %.1f s", j, nl, all,
                     cp_now_s() - t0);
        if (t_end > 0 && cp_now_s() > t_end) {
            r->time_cut = 1;
            break;
        }
        int b = best_colour(r, y, pool, lk, j, limit, &all);
        if (b < 0) {
            rc = -1;
            break;
        }
        *moved += (size_t)b;
    }
    *all1 = all;
    plan_pool_free(pool);
    csim_setidx_free(y);
    for (size_t k = 0; k < n; k++)
        best_off[k] = r->off[hk[k]];
out:
    free(late);
    free(lk);
    return rc;
}

/* One annealing run: the hot units it moves, where the best placement seen
 * had them, and its figures, from the set-up to the summary line. */
typedef struct {
    plan_search *r;
    csim_setidx *x;       /* the incremental evaluation of the hot units */
    size_t *hk;           /* the hot units that move (not fast, placed) */
    size_t n;
    uint32_t *best_off;   /* best_off[k]: hk[k]'s offset in the best seen */
    uint32_t limit;       /* the block's end */
    uint64_t rs;          /* the random state */
    double cur, best;     /* the misses now and the fewest seen */
    double start;         /* the misses before the first move */
    unsigned long moves;  /* the moves to make */
    /* The temperature schedule (anneal_clock, anneal_cool). */
    double t0;            /* the clock when the annealing started */
    double a_end;         /* the annealing's deadline (0: none) */
    double t_calib;       /* the clock at the end of the calibration */
    double time_frac;     /* the part of the time limit used */
    double up_sum, t_first, t_last, temp;
    unsigned long up_n, calib;
    int clocked;          /* the clock, not the moves, set the temperature */
    /* The figures of the summary line. */
    unsigned long tries, accepted, simulated;
    int stopped;          /* the deadline ended the search */
    int failed;
    long moved;           /* the descent's units moved */
    unsigned passes;      /* the descent's passes */
    double before;        /* the best before the descent */
    double t_desc, t_end_desc, t_late_end;
    size_t nlate, late_moved;
    double late0, late1;
} anneal_run;

/* One move: hot unit hk[k] (u) from old, and in a swap hk[k2] (w) from
 * ow; v the total it gives, dice its draw for the acceptance. */
typedef struct {
    size_t k, u, k2, w;
    uint32_t old, ow;
    int swap;
    double v, dice;
} anneal_move;

/* The hot units that move, the set index over them, the block's map and
 * the best placement so far (the one now). 1, 0 when no unit can move, or
 * -1 (r->failed and r->err set). */
static int anneal_setup(anneal_run *a)
{
    plan_search *r = a->r;
    uint32_t limit = plan_block_limit(r), pe = plan_placed_end(r);
    if (pe > limit)
        limit = pe;
    r->block_end = a->limit = limit;
    plan_build(r);
    size_t *hk = malloc((r->nhot ? r->nhot : 1) * sizeof *hk), n = 0;
    uint32_t *best_off = malloc((r->nhot ? r->nhot : 1) * sizeof *best_off);
    if (!hk || !best_off) {
        free(hk);
        free(best_off);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return -1;
    }
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (!r->fast[u] && r->off[u] != NONE)
            hk[n++] = u;
    }
    if (!n) {
        free(hk);
        free(best_off);
        return 0;
    }
    a->x = plan_setidx_new(r->m, &r->L, hk, n, r->iters, r->err);
    if (!a->x) {
        free(hk);
        free(best_off);
        r->failed = 1;
        return -1;
    }
    a->hk = hk;
    a->best_off = best_off;
    a->n = n;
    /* The block's map, for is_free (8-byte granules of the block, so only
     * when the block starts 8-aligned). */
    if (r->hot_base % 8 == 0) {
        r->nown = (limit >> 3) + 2;
        r->own = calloc(r->nown, sizeof *r->own);
        for (size_t q = 0; r->own && q < n; q++)
            own_put(r, hk[q], r->off[hk[q]], 1);
    }
    a->cur = a->start = a->best = csim_setidx_total(a->x);
    for (size_t k = 0; k < n; k++)
        best_off[k] = r->off[hk[k]];
    return 1;
}

/* The schedule's start: the deadline of the annealing and the length of
 * the calibration. With a descent to follow, the annealing gets the first
 * part of the time (PLAN_ANNEAL_PART) and the descent what is left. */
static void anneal_sched_init(anneal_run *a, double t_end)
{
    a->t0 = a->t_calib = cp_now_s();
    a->a_end = t_end;
    if (t_end > 0 && a->r->o->descent_passes)
        a->a_end = a->t0 + (t_end > a->t0 ? t_end - a->t0 : 0) *
                   PLAN_ANNEAL_PART;
    a->calib = a->moves / 50 + 20;
}

/* The clock before a move (every 16th): 1 when the annealing's deadline
 * has passed, else 0 (time_frac follows). */
static int anneal_clock(anneal_run *a)
{
    if (a->a_end <= 0 || (a->tries & 15) != 0)
        return 0;
    double now = cp_now_s();
    if (now > a->a_end)
        return 1;
    a->time_frac = a->a_end > a->t_calib
                   ? (now - a->t_calib) / (a->a_end - a->t_calib) : 1;
    return 0;
}

/* The temperature for move a->tries (counted from 1). It follows the size
 * of the uphill steps seen: it starts at a tenth of their mean (measured
 * over the first moves, accepted only downhill; a third kept long runs
 * hot: their best placement came late and was worse, docs/BENCHMARKS.md)
 * and ends a hundred times lower, falling geometrically with the part of
 * the moves made, or of the time limit used when that is clearly larger:
 * a search the clock will stop still cools down (then the plan depends on
 * the machine's speed, and the result says --time paced it). Both parts
 * count from the end of the calibration, and the clock takes over only
 * when it runs 5 % of the schedule ahead of the moves: a search that
 * makes all its moves in time gets the same plan whatever the clock
 * says. */
static void anneal_cool(anneal_run *a)
{
    if (a->tries == a->calib) {
        a->t_first = a->up_n ? a->up_sum / a->up_n / 10 : 0;
        a->t_last = a->t_first / 100;
        if (a->a_end > 0) {
            a->t_calib = cp_now_s();
            a->time_frac = 0;
        }
    }
    if (a->tries > a->calib && a->t_first > 0) {
        double f = (double)(a->tries - a->calib) /
                   (double)(a->moves - a->calib);
        if (a->clocked || a->time_frac > f + 0.05) {
            a->clocked = 1;
            if (a->time_frac > f)
                f = a->time_frac > 1 ? 1 : a->time_frac;
        }
        a->temp = a->t_first * pow(a->t_last / a->t_first, f);
    }
}

/* A swap of mv's unit with another hot unit when each fits the other's
 * place: 1 (simulated: mv->v), 0 (no room) or -1 (r->err says why). */
static int try_swap(anneal_run *a, anneal_move *mv, double lim)
{
    plan_search *r = a->r;
    size_t u = mv->u;
    uint32_t old = mv->old, limit = a->limit;
    mv->k2 = rnd(&a->rs) % a->n;
    size_t w = mv->w = a->hk[mv->k2];
    uint32_t ow = mv->ow = r->off[w];
    if (mv->k2 == mv->k)
        return 0;
    r->off[u] = r->off[w] = NONE;
    uint32_t su = align8(r->m->units[u].size), sw = align8(r->m->units[w].size);
    int ok = ow + su <= limit && old + sw <= limit &&
             (ow + su <= old || old + sw <= ow) &&
             align_at(r, ow, unit_align(r, u)) == ow &&
             align_at(r, old, unit_align(r, w)) == old &&
             plan_is_free(r, ow, su, u) && plan_is_free(r, old, sw, w);
    r->off[u] = old;
    r->off[w] = ow;
    if (!ok)
        return 0;
    if (csim_setidx_try(a->x, mv->k, r->hot_base + ow, mv->k2,
                        r->hot_base + old, lim, &mv->v, r->err) < 0)
        return -1;
    /* The places do not overlap: one after the other, each unit frees
     * only the bytes still its own. */
    put_at(r, u, ow);
    put_at(r, w, old);
    return 1;
}

#define COLOUR_TRIES 4

/* mv's unit a few lines either way (shift) or to the least crowded of a
 * few random colours, the one whose sets have the fewest misses now: 1
 * (simulated: mv->v), 0 (no room) or -1 (r->err says why). */
static int try_place(anneal_run *a, anneal_move *mv, int shift, double lim)
{
    plan_search *r = a->r;
    plan_model *m = r->m;
    size_t u = mv->u;
    uint32_t old = mv->old, p = NONE;
    if (shift) {
        int32_t d = (int32_t)(rnd(&a->rs) % 16) + 1;
        if (rnd(&a->rs) & 1)
            d = -d;
        uint32_t c = (uint32_t)((int32_t)colour_of(r, old) + d) &
                     (m->sets - 1);
        p = plan_find_slot(r, u, c, a->limit);
    } else {
        double pc = HUGE_VAL;
        for (unsigned tr = 0; tr < COLOUR_TRIES; tr++) {
            uint32_t q = plan_find_slot(r, u,
                                        (uint32_t)(rnd(&a->rs) % m->sets),
                                        a->limit);
            if (q == NONE || q == old)
                continue;
            double mc = csim_setidx_misses_at(a->x, mv->k, r->hot_base + q);
            if (mc < pc) {
                pc = mc;
                p = q;
            }
        }
    }
    if (p == NONE || p == old)
        return 0;
    put_at(r, u, p);
    if (csim_setidx_try(a->x, mv->k, r->hot_base + p, SIZE_MAX, 0, lim,
                        &mv->v, r->err) < 0)
        return -1;
    return 1;
}

/* One move, drawn and simulated: a unit (the set index's pick, weighted
 * by its misses), a kind (swap, shift or colour) and the draw for its
 * acceptance. 1 (simulated), 0 (no room) or -1 (r->err says why). */
static int anneal_move_try(anneal_run *a, anneal_move *mv)
{
    double r01 = (double)(rnd(&a->rs) >> 11) / 9007199254740992.0;
    size_t k = csim_setidx_pick(a->x, r01, rnd(&a->rs));
    if (k == SIZE_MAX)
        k = rnd(&a->rs) % a->n;
    mv->k = k;
    mv->u = a->hk[k];
    mv->old = a->r->off[mv->u];
    unsigned kind = (unsigned)(rnd(&a->rs) % 8);
    mv->dice = (double)(rnd(&a->rs) >> 11) / 9007199254740992.0;
    mv->swap = a->n > 1 && kind < 2;
    /* The total above which this move is refused whatever it is exactly:
     * the evaluation may stop there (csim_setidx_try). Not while
     * calibrating, which measures the uphill steps; a margin keeps
     * rounding from refusing a move the test below takes. */
    double lim = HUGE_VAL;
    if (a->tries >= a->calib) {
        double thr = a->temp > 0 ? -a->temp * log(mv->dice) : 0;
        lim = a->cur + thr + 1e-9 * (fabs(a->cur) + thr) + 1e-9;
    }
    if (mv->swap)
        return try_swap(a, mv, lim);
    return try_place(a, mv, kind < 4, lim);
}

/* A simulated move kept or undone: kept when it does not raise the misses,
 * or raises them by d with probability exp(-d / T); the best placement
 * follows. While calibrating, its uphill step is measured. */
static void anneal_accept(anneal_run *a, const anneal_move *mv)
{
    plan_search *r = a->r;
    a->simulated++;
    double d = mv->v - a->cur;
    if (d > 0 && a->tries < a->calib) {
        a->up_sum += d;
        a->up_n++;
    }
    if (d <= 0 || (a->temp > 0 && mv->dice < exp(-d / a->temp))) {
        a->accepted++;
        a->cur = mv->v;
        if (a->cur < a->best - 1e-9) {
            a->best = a->cur;
            for (size_t q = 0; q < a->n; q++)
                a->best_off[q] = r->off[a->hk[q]];
        }
        return;
    }
    csim_setidx_undo(a->x);
    put_at(r, mv->u, mv->old);
    if (mv->swap)
        put_at(r, mv->w, mv->ow);
}

/* The annealing proper: a->moves moves, or fewer when stopped or its
 * deadline passes. */
static void anneal_moves(anneal_run *a, double t_end)
{
    plan_search *r = a->r;
    anneal_sched_init(a, t_end);
    unsigned long report = a->moves / 10 ? a->moves / 10 : 1;
    while (a->tries < a->moves) {
        if (r->o->stop && *r->o->stop)
            break;
        if (anneal_clock(a)) {
            r->time_cut = a->stopped = 1;
            break;
        }
        a->tries++;
        anneal_cool(a);
        if (a->tries % report == 0 && r->chain_progress)
            r->chain_progress(r, a->tries, a->moves, a->best, a->t0);
        else if (a->tries % report == 0)
            plan_say(r, "anneal: %lu of %lu moves, %.1f misses/iteration "
                     "(best %.1f), %.1f s", a->tries, a->moves, a->cur,
                     a->best, cp_now_s() - a->t0);
        anneal_move mv = {0};
        int rc = anneal_move_try(a, &mv);
        if (rc < 0) {
            a->failed = r->err_set = 1;
            break;
        }
        if (rc > 0)
            anneal_accept(a, &mv);
    }
}

/* The descent (polish), from the best placement seen (also after an
 * annealing its part of the time stopped: the descent has its own), when
 * --descent-passes asks for it; the best follows. */
static void anneal_descend(anneal_run *a, double t_end)
{
    plan_search *r = a->r;
    a->before = a->best;
    a->t_desc = cp_now_s();
    if (a->failed || !r->o->descent_passes || (r->o->stop && *r->o->stop))
        return;
    int gone = go_to(r, a->x, a->hk, a->n, a->best_off, &a->cur);
    if (gone == 0)
        a->moved = polish(r, a->x, a->hk, a->n, a->limit,
                          r->o->descent_passes, &a->cur, t_end, &a->passes,
                          &a->stopped);
    if (gone < 0 || a->moved < 0) {
        a->failed = 1;
        return;
    }
    if (a->stopped)
        r->time_cut = 1;
    if (a->cur < a->best) {
        a->best = a->cur;
        for (size_t q = 0; q < a->n; q++)
            a->best_off[q] = r->off[a->hk[q]];
    }
}

/* The hot units back at the best placement, the run's state freed and its
 * figures in r. */
static void anneal_end(anneal_run *a)
{
    plan_search *r = a->r;
    free(r->own);
    r->own = NULL;
    r->nown = 0;
    csim_setidx_free(a->x);
    for (size_t q = 0; q < a->n; q++)
        r->off[a->hk[q]] = a->best_off[q];
    free(a->hk);
    free(a->best_off);
    r->moves += a->tries;
    r->search_best = a->best;
    if (a->clocked)
        r->time_cut = 1;
}

/* The run's summary (-v), full the misses on all planning iterations. */
static void anneal_summary(const anneal_run *a, double full)
{
    plan_search *r = a->r;
    plan_say(r, "anneal: %lu moves (%lu simulated, the others found no room; "
         "%lu accepted) in %.1f s%s: %.1f -> %.1f; descent: %u pass%s, %ld "
         "sections moved in %.1f s: %.1f misses/iteration (%.1f on all "
         "planning iterations)", a->tries, a->simulated, a->accepted,
         a->t_desc - a->t0,
         a->stopped ? ", stopped by --time" : a->clocked ? ", paced by --time"
                                                         : "",
         a->start, a->before, a->passes, a->passes == 1 ? "" : "es", a->moved,
         a->passes ? a->t_end_desc - a->t_desc : 0.0, a->best, full);
    if (a->nlate)
        plan_note(r, "anneal: %zu sections run code only in the iterations "
                  "past the planning ones; %zu moved to their best colour on "
                  "every iteration: %.1f -> %.1f misses/iteration, %.1f s",
                  a->nlate, a->late_moved, a->late0, a->late1,
                  a->t_late_end - a->t_end_desc);
}

/* Simulated annealing on the hot units' start offsets, on the exact
 * incremental re-simulation (cache/'s set index): a move puts one unit at
 * another colour, shifts it by a few lines, or swaps two units; a move
 * that does not raise the misses is kept, one that raises them by d with
 * probability exp(-d / T), T falling geometrically over the moves. The best
 * placement seen is the result, after the descent (polish) when
 * --descent-passes asks for it. The block is padded to its limit first, so
 * that a move changes nothing outside it and only the sets a unit leaves
 * and enters need simulating again.
 *
 * The search counts moves (--search-moves), so that the same inputs and
 * seed give the same plan; a deadline (--time) it would not meet stops it
 * early and cools it on the way, and the result says so. */
double plan_anneal(plan_search *r, uint64_t seed, unsigned long moves,
                   double t_end)
{
    if (r->failed)
        return HUGE_VAL;
    if (!moves)
        return plan_cost(r, 0);
    anneal_run a = {0};
    a.r = r;
    a.rs = seed ? seed : 1;
    a.moves = moves;
    int set = anneal_setup(&a);
    if (set <= 0)
        return set < 0 ? HUGE_VAL : plan_cost(r, 0);
    anneal_moves(&a, t_end);
    anneal_descend(&a, t_end);
    a.t_end_desc = cp_now_s();
    if (!a.failed && !(r->o->stop && *r->o->stop) &&
        place_late(r, a.x, a.hk, a.n, a.best_off, a.limit, t_end, &a.cur,
                   &a.nlate, &a.late_moved, &a.late0, &a.late1) < 0)
        a.failed = 1;
    a.t_late_end = cp_now_s();
    anneal_end(&a);
    if (a.failed) {
        r->failed = 1;
        if (!r->err_set)
            cp_seterr(r->err, "out of memory (set index)");
        return HUGE_VAL;
    }
    double full = plan_cost(r, 0);
    anneal_summary(&a, full);
    return full;
}
