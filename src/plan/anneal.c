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
#define COLOUR_TRIES 4

double plan_anneal(plan_search *r, uint64_t seed, unsigned long moves,
                   double t_end)
{
    plan_model *m = r->m;
    uint64_t rs = seed ? seed : 1;
    if (r->failed)
        return HUGE_VAL;
    if (!moves)
        return plan_cost(r, 0);
    uint32_t limit = plan_block_limit(r), pe = plan_placed_end(r);
    if (pe > limit)
        limit = pe;
    r->block_end = limit;
    plan_build(r);
    size_t *hk = malloc((r->nhot ? r->nhot : 1) * sizeof *hk), n = 0;
    uint32_t *best_off = malloc((r->nhot ? r->nhot : 1) * sizeof *best_off);
    if (!hk || !best_off) {
        free(hk);
        free(best_off);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return HUGE_VAL;
    }
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (!r->fast[u] && r->off[u] != NONE)
            hk[n++] = u;
    }
    if (!n) {
        free(hk);
        free(best_off);
        return plan_cost(r, 0);
    }
    csim_setidx *x = plan_setidx_new(m, &r->L, hk, n, r->iters, r->err);
    if (!x) {
        free(hk);
        free(best_off);
        r->failed = 1;
        return HUGE_VAL;
    }
    /* The block's map, for is_free (8-byte granules of the block, so only
     * when the block starts 8-aligned). */
    if (r->hot_base % 8 == 0) {
        r->nown = (limit >> 3) + 2;
        r->own = calloc(r->nown, sizeof *r->own);
        for (size_t q = 0; r->own && q < n; q++)
            own_put(r, hk[q], r->off[hk[q]], 1);
    }
    double t0 = cp_now_s();
    /* With a descent to follow, the annealing gets the first part of the
     * time (PLAN_ANNEAL_PART) and the descent what is left. */
    double a_end = t_end;
    if (t_end > 0 && r->o->descent_passes)
        a_end = t0 + (t_end > t0 ? t_end - t0 : 0) * PLAN_ANNEAL_PART;
    double cur = csim_setidx_total(x), start = cur, best = cur;
    for (size_t k = 0; k < n; k++)
        best_off[k] = r->off[hk[k]];
    /* The temperature follows the size of the uphill steps seen: it starts
     * at a tenth of their mean (measured over the first moves, accepted
     * only downhill; a third kept long runs hot: their best placement came
     * late and was worse, docs/BENCHMARKS.md) and ends a hundred times
     * lower, falling geometrically with the part of the moves made, or of
     * the time limit used when that is clearly larger: a search the clock
     * will stop still cools down (then the plan depends on the machine's
     * speed, and the result says --time paced it). Both parts count from
     * the end of the calibration, and the clock takes over only when it
     * runs 5 % of the schedule ahead of the moves: a search that makes
     * all its moves in time gets the same plan whatever the clock says. */
    double up_sum = 0, temp = 0, t_first = 0, t_last = 0, t_calib = t0;
    unsigned long up_n = 0, tries = 0, accepted = 0, simulated = 0;
    unsigned long calib = moves / 50 + 20;
    unsigned long report = moves / 10 ? moves / 10 : 1;
    double time_frac = 0; /* the part of the time limit used */
    int clocked = 0;      /* the clock, not the moves, set the temperature */
    int stopped = 0;      /* the deadline ended the search */
    int failed = 0;
    while (tries < moves) {
        if (r->o->stop && *r->o->stop)
            break;
        if (a_end > 0 && (tries & 15) == 0) {
            double now = cp_now_s();
            if (now > a_end) {
                r->time_cut = stopped = 1;
                break;
            }
            time_frac = a_end > t_calib ? (now - t_calib) / (a_end - t_calib)
                                        : 1;
        }
        tries++;
        if (tries == calib) {
            t_first = up_n ? up_sum / up_n / 10 : 0;
            t_last = t_first / 100;
            if (a_end > 0) {
                t_calib = cp_now_s();
                time_frac = 0;
            }
        }
        if (tries > calib && t_first > 0) {
            double f = (double)(tries - calib) / (double)(moves - calib);
            if (clocked || time_frac > f + 0.05) {
                clocked = 1;
                if (time_frac > f)
                    f = time_frac > 1 ? 1 : time_frac;
            }
            temp = t_first * pow(t_last / t_first, f);
        }
        if (tries % report == 0 && r->chain_progress)
            r->chain_progress(r, tries, moves, best, t0);
        else if (tries % report == 0)
            plan_say(r, "anneal: %lu of %lu moves, %.1f misses/iteration "
                     "(best %.1f), %.1f s", tries, moves, cur, best,
                     cp_now_s() - t0);
        double r01 = (double)(rnd(&rs) >> 11) / 9007199254740992.0;
        size_t k = csim_setidx_pick(x, r01, rnd(&rs));
        if (k == SIZE_MAX)
            k = rnd(&rs) % n;
        size_t u = hk[k];
        uint32_t old = r->off[u];
        unsigned kind = (unsigned)(rnd(&rs) % 8);
        double v, dice = (double)(rnd(&rs) >> 11) / 9007199254740992.0;
        /* The total above which this move is refused whatever it is
         * exactly: the evaluation may stop there (csim_setidx_try). Not
         * while calibrating, which measures the uphill steps; a margin
         * keeps rounding from refusing a move the test below takes. */
        double lim = HUGE_VAL;
        if (tries >= calib) {
            double thr = temp > 0 ? -temp * log(dice) : 0;
            lim = cur + thr + 1e-9 * (fabs(cur) + thr) + 1e-9;
        }
        size_t k2 = 0, w = 0;
        uint32_t ow = 0;
        if (n > 1 && kind < 2) {
            /* Swap with another hot unit when each fits the other's place. */
            k2 = rnd(&rs) % n;
            w = hk[k2];
            ow = r->off[w];
            if (k2 == k)
                continue;
            r->off[u] = r->off[w] = NONE;
            uint32_t su = align8(m->units[u].size), sw = align8(m->units[w].size);
            int ok = ow + su <= limit && old + sw <= limit &&
                     (ow + su <= old || old + sw <= ow) &&
                     align_at(r, ow, unit_align(r, u)) == ow &&
                     align_at(r, old, unit_align(r, w)) == old &&
                     plan_is_free(r, ow, su, u) && plan_is_free(r, old, sw, w);
            r->off[u] = old;
            r->off[w] = ow;
            if (!ok)
                continue;
            if (csim_setidx_try(x, k, r->hot_base + ow, k2, r->hot_base + old,
                                lim, &v, r->err) < 0) {
                failed = r->err_set = 1;
                break;
            }
            /* The places do not overlap: one after the other, each unit
             * frees only the bytes still its own. */
            put_at(r, u, ow);
            put_at(r, w, old);
        } else {
            uint32_t c;
            if (kind < 4) {
                /* A few lines either way. */
                int32_t d = (int32_t)(rnd(&rs) % 16) + 1;
                if (rnd(&rs) & 1)
                    d = -d;
                c = (uint32_t)((int32_t)colour_of(r, old) + d) & (m->sets - 1);
            } else {
                c = NONE;
            }
            uint32_t p = NONE;
            if (c != NONE) {
                p = plan_find_slot(r, u, c, limit);
            } else {
                /* The least crowded of a few random colours: the one whose
                 * sets have the fewest misses now. */
                double pc = HUGE_VAL;
                for (unsigned tr = 0; tr < COLOUR_TRIES; tr++) {
                    uint32_t q = plan_find_slot(r, u, (uint32_t)(rnd(&rs) % m->sets), limit);
                    if (q == NONE || q == old)
                        continue;
                    double mc = csim_setidx_misses_at(x, k, r->hot_base + q);
                    if (mc < pc) {
                        pc = mc;
                        p = q;
                    }
                }
            }
            if (p == NONE || p == old)
                continue;
            put_at(r, u, p);
            if (csim_setidx_try(x, k, r->hot_base + p, SIZE_MAX, 0, lim, &v,
                                r->err) < 0) {
                failed = r->err_set = 1;
                break;
            }
        }
        simulated++;
        double d = v - cur;
        if (d > 0 && tries < calib) {
            up_sum += d;
            up_n++;
        }
        if (d <= 0 || (temp > 0 && dice < exp(-d / temp))) {
            accepted++;
            cur = v;
            if (cur < best - 1e-9) {
                best = cur;
                for (size_t q = 0; q < n; q++)
                    best_off[q] = r->off[hk[q]];
            }
        } else if (n > 1 && kind < 2) {
            csim_setidx_undo(x);
            put_at(r, u, old);
            put_at(r, w, ow);
        } else {
            csim_setidx_undo(x);
            put_at(r, u, old);
        }
    }
    /* Then the descent, from the best placement seen (also after an
     * annealing its part of the time stopped: the descent has its own). */
    long moved = 0;
    unsigned passes = 0;
    double before = best, t_desc = cp_now_s();
    if (!failed && r->o->descent_passes &&
        !(r->o->stop && *r->o->stop)) {
        int gone = go_to(r, x, hk, n, best_off, &cur);
        if (gone == 0)
            moved = polish(r, x, hk, n, limit, r->o->descent_passes, &cur,
                           t_end, &passes, &stopped);
        if (gone < 0 || moved < 0) {
            failed = 1;
        } else {
            if (stopped)
                r->time_cut = 1;
            if (cur < best) {
                best = cur;
                for (size_t q = 0; q < n; q++)
                    best_off[q] = r->off[hk[q]];
            }
        }
    }
    double t_end_desc = cp_now_s();
    size_t nlate = 0, late_moved = 0;
    double late0 = 0, late1 = 0;
    if (!failed && !(r->o->stop && *r->o->stop) &&
        place_late(r, x, hk, n, best_off, limit, t_end, &cur, &nlate,
                   &late_moved, &late0, &late1) < 0)
        failed = 1;
    double t_late_end = cp_now_s();
    free(r->own);
    r->own = NULL;
    r->nown = 0;
    csim_setidx_free(x);
    for (size_t q = 0; q < n; q++)
        r->off[hk[q]] = best_off[q];
    free(hk);
    free(best_off);
    r->moves += tries;
    r->search_best = best;
    if (clocked)
        r->time_cut = 1;
    if (failed) {
        r->failed = 1;
        if (!r->err_set)
            cp_seterr(r->err, "out of memory (set index)");
        return HUGE_VAL;
    }
    double full = plan_cost(r, 0);
    plan_say(r, "anneal: %lu moves (%lu simulated, the others found no room; "
         "%lu accepted) in %.1f s%s: %.1f -> %.1f; descent: %u pass%s, %ld "
         "sections moved in %.1f s: %.1f misses/iteration (%.1f on all "
         "planning iterations)", tries, simulated, accepted, t_desc - t0,
         stopped ? ", stopped by --time" : clocked ? ", paced by --time" : "",
         start, before, passes, passes == 1 ? "" : "es", moved,
         passes ? t_end_desc - t_desc : 0.0, best, full);
    if (nlate)
        plan_note(r, "anneal: %zu sections run code only in the iterations "
                  "past the planning ones; %zu moved to their best colour on "
                  "every iteration: %.1f -> %.1f misses/iteration, %.1f s",
                  nlate, late_moved, late0, late1, t_late_end - t_end_desc);
    return full;
}
