/* RAM selection: which hot units go to fast memory (SRAM, ITCM) under
 * the byte budget, by re-simulated misses saved per byte (greedy), by
 * instructions per byte (rank) or by the stock layout's misses per byte
 * (density), and the snapshots that keep the better of two placements.
 */
#include "plan/search.h"

#include "plan/incr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes a move of u to fast memory costs: the code and a stub for each
 * new target in flash it branches to. */
static uint32_t fast_cost(plan_search *r, size_t u, const plan_vstate *vs)
{
    plan_model *m = r->m;
    uint32_t cost = align8(m->units[u].size);
    for (size_t i = 0; i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        uint32_t tu = m->targets[c->target].unit;
        if (c->caller != u || r->fast[tu] || tu == u || vs->target[c->target])
            continue;
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = m->calls[j].caller == u && m->calls[j].target == c->target;
        if (!dup)
            cost += r->o->veneer_bytes;
    }
    return cost;
}

/* Recounts the stubs in fast memory: targets in flash that fast code
 * branches to. */
static void count_targets(plan_search *r, plan_vstate *vs)
{
    plan_model *m = r->m;
    memset(vs->target, 0, m->ntargets ? m->ntargets : 1);
    for (size_t i = 0; i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        if (r->fast[c->caller] && !r->fast[m->targets[c->target].unit])
            vs->target[c->target] = 1;
    }
}

static void take_fast(plan_search *r, size_t u, plan_vstate *vs)
{
    r->fast[u] = 1;
    r->off[u] = NONE;
    count_targets(r, vs);
}

uint32_t plan_fast_used(plan_search *r, const plan_vstate *vs)
{
    uint32_t n = 0;
    for (size_t i = 0; i < r->m->nunits; i++)
        if (r->fast[i])
            n += align8(r->m->units[i].size);
    for (size_t i = 0; i < r->m->ntargets; i++)
        if (vs->target[i])
            n += r->o->veneer_bytes;
    return n;
}

static int movable_fast(const plan_search *r, size_t u)
{
    return !(r->m->units[u].flags & (PLAN_U_NORAM | PLAN_U_NOMOVE)) &&
           !r->fast[u];
}

typedef struct cand {
    size_t u;
    double score;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->u < y->u ? -1 : x->u > y->u;
}

/* Greedy: move the unit whose re-simulated saving per byte is largest,
 * until nothing fits the budget or saves anything. Each step ranks the
 * candidates by their own misses per byte; the first SCREEN (48) of them are
 * screened by the incremental evaluation (src/plan/incr.c: the misses
 * saved when only the candidate's own accesses leave the cache, a few
 * sets re-simulated each), and the CONFIRM (6) best of those by that saving
 * per byte are evaluated in full (what the move really does: stubs, code
 * and data it shifts); the one that saves most per byte, in full, is
 * taken. When none of them saves anything, the others follow in the
 * ranking's order, up to MAX. The screen only orders what is evaluated in
 * full: every figure compared and reported is a full evaluation.
 * share: the part of the time left to the deadline it may use; when that
 * is used it stops picking, keeping what it chose (r->fast_cut counts
 * it). */
double plan_select_fast(plan_search *r, double cur, plan_vstate *vs,
                        double share)
{
    plan_model *m = r->m;
    enum { SCREEN = 48, CONFIRM = 6, MAX = 48 };
    size_t nh = r->nhot ? r->nhot : 1;
    cand *c = malloc(nh * sizeof *c);
    size_t *hk = malloc(nh * sizeof *hk), nk = 0;
    uint32_t *kof = malloc((m->nunits ? m->nunits : 1) * sizeof *kof);
    double t0 = cp_now_s(), last_note = t0, t_end = 0;
    unsigned picks = 0;
    unsigned long full = 0, screened = 0;
    int cut = 0;
    plan_incr *x = NULL;
    if (!c || !hk || !kof) {
        free(c);
        free(hk);
        free(kof);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return HUGE_VAL;
    }
    if (r->deadline > 0) {
        double left = r->deadline - t0;
        t_end = t0 + (left > 0 ? left : 0) * share;
    }
    for (size_t i = 0; i < m->nunits; i++)
        kof[i] = UINT32_MAX;
    for (size_t k = 0; k < r->nhot; k++)
        if (!r->fast[r->hot[k]]) {
            kof[r->hot[k]] = (uint32_t)nk;
            hk[nk++] = r->hot[k];
        }
    plan_build(r);
    if (nk && !(x = plan_incr_new(m, &r->L, hk, nk, r->iters, r->err)))
        r->failed = 1;
    while (!r->failed) {
        if (t_end > 0 && cp_now_s() >= t_end) {
            cut = 1;
            break;
        }
        cur = plan_cost(r, 1);
        full++;
        uint32_t left = r->o->budget - plan_fast_used(r, vs);
        size_t nc = 0;
        for (size_t k = 0; k < r->nhot; k++) {
            size_t u = r->hot[k];
            if (!movable_fast(r, u) || r->umiss[u] <= 0)
                continue;
            uint32_t cost = fast_cost(r, u, vs);
            if (cost <= left)
                c[nc++] = (cand){u, r->umiss[u] / cost};
        }
        if (nc == 0)
            break;
        qsort(c, nc, sizeof *c, cmp_cand);
        /* The screen reorders the first SCREEN. */
        size_t ns = nc < SCREEN ? nc : SCREEN;
        double base = x ? plan_incr_total(x) : 0;
        for (size_t i = 0; x && i < ns; i++) {
            double v = plan_incr_remove(x, kof[c[i].u]);
            if (v < 0) {
                r->failed = 1;
                cp_seterr(r->err, "out of memory (incremental evaluation)");
                break;
            }
            plan_incr_undo(x);
            screened++;
            c[i].score = (base - v) / fast_cost(r, c[i].u, vs);
        }
        if (r->failed)
            break;
        if (x)
            qsort(c, ns, sizeof *c, cmp_cand);
        size_t pick = NONE;
        double pick_score = 0, pick_val = cur;
        for (size_t i = 0; i < nc && i < MAX; i++) {
            if ((i >= CONFIRM && pick != NONE) || (r->o->stop && *r->o->stop))
                break;
            if (t_end > 0 && cp_now_s() >= t_end) {
                cut = 1; /* this round unfinished: its pick is not taken */
                break;
            }
            if (cp_now_s() - last_note >= 0.5) {
                last_note = cp_now_s();
                plan_note(r, "fast memory: trying candidate %zu of %zu (%u bytes "
                     "used), %.1f misses/iteration", i + 1,
                     nc < MAX ? nc : (size_t)MAX, plan_fast_used(r, vs), cur);
            }
            size_t u = c[i].u;
            uint32_t old = r->off[u];
            r->fast[u] = 1;
            double v = plan_cost(r, 0);
            full++;
            r->fast[u] = 0;
            r->off[u] = old;
            double sc = (cur - v) / fast_cost(r, u, vs);
            if (cur - v > 0 && sc > pick_score) {
                pick = u;
                pick_score = sc;
                pick_val = v;
            }
        }
        if (cut || pick == NONE)
            break;
        take_fast(r, pick, vs);
        /* Its accesses leave the screen's stream too (what else the move
         * shifted stays as it was there: the screen only orders). */
        if (x && plan_incr_remove(x, kof[pick]) < 0) {
            r->failed = 1;
            cp_seterr(r->err, "out of memory (incremental evaluation)");
            break;
        }
        picks++;
        plan_note(r, "fast memory: %s (%u bytes), %.1f misses/iteration",
             m->units[pick].name, m->units[pick].size, pick_val);
    }
    plan_incr_free(x);
    free(hk);
    free(kof);
    if (r->failed) {
        free(c);
        return HUGE_VAL;
    }
    if (cut) {
        r->fast_cut++;
        plan_say(r, "fast memory: stopped by --time after %u sections (%u "
                 "bytes) in %.1f s", picks, plan_fast_used(r, vs), cp_now_s() - t0);
    } else {
        plan_note(r, "fast memory: %u sections (%u bytes) in %.1f s: %lu full "
                  "evaluations, %lu screened", picks, plan_fast_used(r, vs),
                  cp_now_s() - t0, full, screened);
    }
    free(c);
    return plan_cost(r, 0);
}

/* Baseline: fill fast memory by instructions executed per byte (what a PC
 * sample histogram ranks), leaving flash as linked. */
double plan_select_rank(plan_search *r, plan_vstate *vs)
{
    plan_model *m = r->m;
    size_t *ord = malloc((r->nhot ? r->nhot : 1) * sizeof *ord), n = 0;
    if (!ord)
        return -1;
    for (size_t k = 0; k < r->nhot; k++)
        if (movable_fast(r, r->hot[k]))
            ord[n++] = r->hot[k];
    for (size_t i = 1; i < n; i++) {
        size_t v = ord[i], j = i;
        double dv = (double)m->units[v].insns / m->units[v].size;
        while (j > 0 && (double)m->units[ord[j - 1]].insns /
                                m->units[ord[j - 1]].size < dv) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = v;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t left = r->o->budget - plan_fast_used(r, vs);
        if (fast_cost(r, ord[i], vs) <= left)
            take_fast(r, ord[i], vs);
    }
    free(ord);
    return plan_cost(r, 0);
}

/* Baseline: fill fast memory by the stock layout's misses per byte, without
 * re-simulating (a density ranking), leaving flash as linked. */
double plan_select_density(plan_search *r, plan_vstate *vs,
                           const double *stock_umiss)
{
    plan_model *m = r->m;
    cand *c = malloc((r->nhot ? r->nhot : 1) * sizeof *c);
    size_t n = 0;
    if (!c) {
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return HUGE_VAL;
    }
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (movable_fast(r, u) && stock_umiss[u] > 0)
            c[n++] = (cand){u, stock_umiss[u] / align8(m->units[u].size)};
    }
    qsort(c, n, sizeof *c, cmp_cand);
    for (size_t i = 0; i < n; i++) {
        uint32_t left = r->o->budget - plan_fast_used(r, vs);
        if (fast_cost(r, c[i].u, vs) <= left)
            take_fast(r, c[i].u, vs);
    }
    free(c);
    return plan_cost(r, 0);
}


int plan_snap_take(const plan_search *r, const plan_vstate *vs, plan_snap *sn)
{
    size_t n = r->m->nunits ? r->m->nunits : 1;
    sn->off = malloc(n * sizeof *sn->off);
    sn->fast = malloc(n);
    sn->target = malloc(r->m->ntargets + 1);
    if (!sn->off || !sn->fast || !sn->target)
        return -1;
    memcpy(sn->off, r->off, n * sizeof *sn->off);
    memcpy(sn->fast, r->fast, n);
    memcpy(sn->target, vs->target, r->m->ntargets + 1);
    sn->block_end = r->block_end;
    return 0;
}

void plan_snap_put(plan_search *r, plan_vstate *vs, const plan_snap *sn)
{
    size_t n = r->m->nunits ? r->m->nunits : 1;
    memcpy(r->off, sn->off, n * sizeof *sn->off);
    memcpy(r->fast, sn->fast, n);
    memcpy(vs->target, sn->target, r->m->ntargets + 1);
    r->block_end = sn->block_end;
}

void plan_snap_free(plan_snap *sn)
{
    free(sn->off);
    free(sn->fast);
    free(sn->target);
    memset(sn, 0, sizeof *sn);
}

/* Keeps the current placement if it is no worse on every iteration than
 * the snapshot (the flash-only layout it started from), else the
 * snapshot. */
void plan_keep_better(plan_search *r, plan_vstate *vs, const plan_snap *start,
                      const char *what)
{
    double now = plan_cost_all(r);
    plan_snap cur = {0};
    if (plan_snap_take(r, vs, &cur) < 0) {
        plan_snap_free(&cur);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return;
    }
    plan_snap_put(r, vs, start);
    double then = plan_cost_all(r);
    if (now <= then)
        plan_snap_put(r, vs, &cur);
    else
        plan_note(r, "%s: the flash-only layout it started from is better (%.1f "
             "against %.1f misses per iteration, counting the stubs' "
             "instructions as misses)", what, then, now);
    plan_snap_free(&cur);
}

/* Every unit back where the linker put it, no stub counted. */
void plan_reset_to_stock(plan_search *r, plan_vstate *vs)
{
    for (size_t i = 0; i < r->m->nunits; i++) {
        r->off[i] = NONE;
        r->fast[i] = 0;
    }
    r->block_end = 0;
    count_targets(r, vs);
}

/* The baselines' net under ram and combined: the density ranking's plan
 * (fast memory by the stock layout's misses per byte) and the rank plan
 * (by instructions per byte), each with the rest as linked and one
 * evaluation, are the result if better on every iteration. A greedy
 * selection can end where every move left makes things worse (each move
 * shifts the code after it), and one cut short by --time stops early;
 * neither then leaves a plan worse than these. */
void plan_baseline_net(plan_search *r, plan_vstate *vs,
                       const double *stock_umiss)
{
    static const char *const name[] = {"density ranking's", "rank"};
    double own = plan_cost_all(r), best = own;
    int won = -1;
    plan_snap keep = {0};
    if (plan_snap_take(r, vs, &keep) < 0) {
        plan_snap_free(&keep);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return;
    }
    for (int b = 0; b < 2 && !r->failed; b++) {
        plan_reset_to_stock(r, vs);
        if (b == 0)
            plan_select_density(r, vs, stock_umiss);
        else
            plan_select_rank(r, vs);
        double d = plan_cost_all(r);
        if (d < best) {
            best = d;
            won = b;
        }
    }
    if (won < 0) {
        plan_snap_put(r, vs, &keep);
    } else {
        if (won == 0) { /* the rank plan is in place: the density one again */
            plan_reset_to_stock(r, vs);
            plan_select_density(r, vs, stock_umiss);
        }
        plan_say(r, "fast memory: the %s plan is better and is the plan "
                 "(%.1f against %.1f misses per iteration, counting the "
                 "stubs' instructions as misses)%s", name[won], best, own,
                 r->fast_cut ? "; --time stopped the selection" : "");
    }
    plan_snap_free(&keep);
}
