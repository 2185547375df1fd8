/* RAM selection: which hot units go to fast memory (SRAM, ITCM) under
 * the byte budget, by re-simulated misses saved per byte (greedy), by
 * instructions per byte (rank) or by the stock layout's misses per byte
 * (density), and the snapshots that keep the better of two placements.
 */
#include "plan/search.h"


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

/* Fills fast memory with c[0..n) in their order, each that still fits the
 * budget with its stubs; the units taken and their offsets before go to
 * took[] and old[] when given. Returns how many it took. */
static size_t take_in_order(plan_search *r, plan_vstate *vs, const cand *c,
                            size_t n, size_t *took, uint32_t *old)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t u = c[i].u;
        uint32_t left = r->o->budget - plan_fast_used(r, vs);
        if (r->fast[u] || fast_cost(r, u, vs) > left)
            continue;
        if (took) {
            took[k] = u;
            old[k] = r->off[u];
        }
        k++;
        take_fast(r, u, vs);
    }
    return k;
}

/* The hot units that may move to fast memory, have misses of their own
 * (umiss, one per unit) and fit what the budget has left, into c, by
 * those misses per byte. Returns how many. */
static size_t by_misses(plan_search *r, const plan_vstate *vs,
                        const double *umiss, cand *c)
{
    uint32_t left = r->o->budget - plan_fast_used(r, vs);
    size_t nc = 0;
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (!movable_fast(r, u) || umiss[u] <= 0)
            continue;
        uint32_t cost = fast_cost(r, u, vs);
        if (cost <= left)
            c[nc++] = (cand){u, umiss[u] / cost};
    }
    qsort(c, nc, sizeof *c, cmp_cand);
    return nc;
}

/* The cost with u in fast memory too (on every iteration or on the
 * planning ones), u put back. */
static double cost_if_fast(plan_search *r, size_t u, int all)
{
    uint32_t old = r->off[u];
    r->fast[u] = 1;
    double v = all ? plan_cost_all(r) : plan_cost(r, 0);
    r->fast[u] = 0;
    r->off[u] = old;
    return v;
}

/* The greedy selection's working state. */
typedef struct sel {
    plan_search *r;
    plan_vstate *vs;
    cand *c;           /* the candidates, room for every hot unit */
    size_t *hk, nk;    /* the screen's units: hot, not in fast memory */
    uint32_t *kof;     /* per unit: its index in hk (UINT32_MAX: none) */
    csim_setidx *x;    /* the screen (NULL: none) */
    size_t *took;      /* a group's units */
    uint32_t *old;     /* and their offsets before */
    double t0, t_end, last_note;
    unsigned long full, screened;
    unsigned groups, removed;
    int cut;           /* --time stopped it */
} sel;

enum { SCREEN = 48, CONFIRM = 6, MAX = 48 };

/* Whether to stop now: the time share is used (counted as cut) or a
 * signal asked to stop. */
static int sel_over(sel *s)
{
    if (s->r->o->stop && *s->r->o->stop)
        return 1;
    if (s->t_end > 0 && cp_now_s() >= s->t_end) {
        s->cut = 1;
        return 1;
    }
    return 0;
}

static void sel_progress(sel *s, const char *what, size_t i, size_t n,
                         double cur)
{
    if (cp_now_s() - s->last_note < 0.5)
        return;
    s->last_note = cp_now_s();
    plan_note(s->r, "fast memory: %s %zu of %zu (%u bytes used), %.1f "
              "misses/iteration", what, i + 1, n, plan_fast_used(s->r, s->vs),
              cur);
}

/* (Re)builds the screen on the hot units not in fast memory. */
static int sel_screen(sel *s)
{
    plan_search *r = s->r;
    csim_setidx_free(s->x);
    s->x = NULL;
    s->nk = 0;
    for (size_t i = 0; i < r->m->nunits; i++)
        s->kof[i] = UINT32_MAX;
    for (size_t k = 0; k < r->nhot; k++)
        if (!r->fast[r->hot[k]]) {
            s->kof[r->hot[k]] = (uint32_t)s->nk;
            s->hk[s->nk++] = r->hot[k];
        }
    plan_build(r);
    if (s->nk &&
        !(s->x = plan_setidx_new(r->m, &r->L, s->hk, s->nk, r->iters,
                                 r->err))) {
        r->failed = 1;
        return -1;
    }
    return 0;
}

/* The candidates with misses of their own that fit what is left, by
 * those misses per byte; the screen reorders the first SCREEN by the
 * misses their leaving saves. Returns how many. */
static size_t sel_candidates(sel *s)
{
    plan_search *r = s->r;
    size_t nc = by_misses(r, s->vs, r->umiss, s->c);
    size_t ns = nc < SCREEN ? nc : SCREEN;
    double base = s->x ? csim_setidx_total(s->x) : 0;
    for (size_t i = 0; s->x && i < ns; i++) {
        double v;
        if (csim_setidx_remove(s->x, s->kof[s->c[i].u], &v, r->err) < 0) {
            r->failed = r->err_set = 1;
            return 0;
        }
        csim_setidx_undo(s->x);
        s->screened++;
        s->c[i].score = (base - v) / fast_cost(r, s->c[i].u, s->vs);
    }
    if (s->x)
        qsort(s->c, ns, sizeof *s->c, cmp_cand);
    return nc;
}

/* One move: of the first CONFIRM candidates (more, up to MAX, while none
 * saves anything), each evaluated in full, the one that saves most per
 * byte. Returns it (NONE: none saves anything), its cost in *val. */
static size_t sel_single(sel *s, size_t nc, double cur, double *val)
{
    plan_search *r = s->r;
    size_t pick = NONE;
    double pick_score = 0;
    for (size_t i = 0; i < nc && i < MAX; i++) {
        if ((i >= CONFIRM && pick != NONE) || sel_over(s))
            break;
        sel_progress(s, "trying candidate", i, nc < MAX ? nc : (size_t)MAX,
                     cur);
        size_t u = s->c[i].u;
        double v = cost_if_fast(r, u, 0);
        s->full++;
        double sc = (cur - v) / fast_cost(r, u, s->vs);
        if (cur - v > 0 && sc > pick_score) {
            pick = u;
            pick_score = sc;
            *val = v;
        }
    }
    return pick;
}

/* Takes those of the first k candidates of c[0..nc) that still fit, in
 * their order (as the density ranking fills fast memory), into took[] and
 * old[]. Returns how many. */
static size_t take_prefix(sel *s, size_t nc, size_t k)
{
    return take_in_order(s->r, s->vs, s->c, k < nc ? k : nc, s->took, s->old);
}

static void undo_prefix(sel *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        s->r->fast[s->took[i]] = 0;
        s->r->off[s->took[i]] = s->old[i];
    }
    count_targets(s->r, s->vs);
}

/* When no single move saves anything: each move shifts the code after it,
 * and a selection can stand where every move alone adds misses while many
 * together save them (on the i.MX RT demo at 32 KiB the greedy stood at
 * 21.7 with 4,320 bytes; the rank plan's 96 sections give 3.8). After the
 * nc candidates with misses of their own come the other hot sections by
 * instructions per byte (of their size rounded up to 8, as fast memory
 * holds them: code that hits still takes lines from the rest); the first 2, 4, 8, ... of them together, up
 * to all that fit, are each evaluated in full, and the group that saves
 * most per byte is left in place (none if none saves anything). Returns
 * its size (its units in took[]), its cost in *val. */
static size_t sel_group(sel *s, size_t nc, double cur, double *val)
{
    plan_search *r = s->r;
    plan_model *m = r->m;
    size_t ng = nc;
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (movable_fast(r, u) && r->umiss[u] <= 0)
            s->c[ng++] = (cand){u, (double)m->units[u].insns /
                                       align8(m->units[u].size)};
    }
    qsort(s->c + nc, ng - nc, sizeof *s->c, cmp_cand);
    size_t best_k = 0, last_n = 1;
    double best_sc = 0;
    uint32_t used = plan_fast_used(r, s->vs);
    for (size_t k = 2; k / 2 < ng; k *= 2) {
        if (sel_over(s))
            break;
        size_t n = take_prefix(s, ng, k);
        if (n > last_n) {
            double v = plan_cost(r, 0);
            s->full++;
            double sc = (cur - v) / (plan_fast_used(r, s->vs) - used);
            if (cur - v > 0 && sc > best_sc) {
                best_sc = sc;
                best_k = k;
                *val = v;
            }
            last_n = n;
        }
        undo_prefix(s, n);
        if (r->failed)
            break;
    }
    return best_k && !r->failed && !s->cut ? take_prefix(s, ng, best_k) : 0;
}

/* A section back out of fast memory, where the linker put it: the one
 * whose leaving lowers the cost most (a move alone was scored while the
 * code after it shifted, and a group took sections together; their stubs
 * and budget may serve others better). Returns it (NONE: none lowers the
 * cost, or the time is up), its cost in *val. */
static size_t sel_remove(sel *s, double cur, double *val)
{
    plan_search *r = s->r;
    size_t pick = NONE, n = 0;
    for (size_t k = 0; k < r->nhot; k++)
        n += r->fast[r->hot[k]];
    for (size_t k = 0, i = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (!r->fast[u])
            continue;
        if (sel_over(s))
            return NONE;
        sel_progress(s, "trying to take back section", i++, n, cur);
        r->fast[u] = 0;
        r->off[u] = NONE;
        /* Fast code that calls it now needs a stub: over the budget, no. */
        count_targets(r, s->vs);
        int fits = plan_fast_used(r, s->vs) <= r->o->budget;
        double v = fits ? plan_cost(r, 0) : HUGE_VAL;
        s->full += fits;
        r->fast[u] = 1;
        count_targets(r, s->vs);
        if (v < cur && (pick == NONE || v < *val)) {
            pick = u;
            *val = v;
        }
    }
    return pick;
}

static void sel_free(sel *s)
{
    csim_setidx_free(s->x);
    free(s->c);
    free(s->hk);
    free(s->kof);
    free(s->took);
    free(s->old);
}

/* Greedy: move the unit whose re-simulated saving per byte is largest,
 * until nothing fits the budget or saves anything. Each step ranks the
 * candidates by their own misses per byte; the first SCREEN (48) of them are
 * screened by the set index (cache/'s csim_setidx: the misses
 * saved when only the candidate's own accesses leave the cache, a few
 * sets re-simulated each), and the CONFIRM (6) best of those by that saving
 * per byte are evaluated in full (what the move really does: stubs, code
 * and data it shifts); the one that saves most per byte, in full, is
 * taken. When none of them saves anything, the others follow in the
 * ranking's order, up to MAX. When no single move saves anything, a group
 * of them together (sel_group), and when no group does, a section taken
 * back out (sel_remove); every step lowers the cost, so it ends. The
 * screen only orders what is evaluated in full: every figure compared and
 * reported is a full evaluation.
 * share: the part of the time left to the deadline it may use; when that
 * is used it stops picking, keeping what it chose (r->fast_cut counts
 * it). */
double plan_select_fast(plan_search *r, double cur, plan_vstate *vs,
                        double share)
{
    plan_model *m = r->m;
    size_t nh = r->nhot ? r->nhot : 1;
    sel s = {.r = r, .vs = vs};
    s.c = malloc(nh * sizeof *s.c);
    s.hk = malloc(nh * sizeof *s.hk);
    s.took = malloc(nh * sizeof *s.took);
    s.old = malloc(nh * sizeof *s.old);
    s.kof = malloc((m->nunits ? m->nunits : 1) * sizeof *s.kof);
    s.t0 = s.last_note = cp_now_s();
    if (!s.c || !s.hk || !s.kof || !s.took || !s.old) {
        sel_free(&s);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return HUGE_VAL;
    }
    if (r->deadline > 0) {
        double left = r->deadline - s.t0;
        s.t_end = s.t0 + (left > 0 ? left : 0) * share;
    }
    sel_screen(&s);
    while (!r->failed && !sel_over(&s)) {
        cur = plan_cost(r, 1);
        s.full++;
        size_t nc = sel_candidates(&s), n = 0, u;
        double v = cur;
        if (r->failed)
            break;
        if (nc && (u = sel_single(&s, nc, cur, &v)) != NONE) {
            take_fast(r, u, vs);
            s.took[n++] = u;
            plan_note(r, "fast memory: %s (%u bytes), %.1f misses/iteration",
                      m->units[u].name, m->units[u].size, v);
        } else if (!s.cut && (n = sel_group(&s, nc, cur, &v)) > 0) {
            s.groups++;
            plan_note(r, "fast memory: %zu sections together, from %s (%u "
                      "bytes used), %.1f misses/iteration", n,
                      m->units[s.took[0]].name, plan_fast_used(r, vs), v);
        } else if (!s.cut && (u = sel_remove(&s, cur, &v)) != NONE) {
            r->fast[u] = 0;
            r->off[u] = NONE;
            count_targets(r, vs);
            s.removed++;
            plan_note(r, "fast memory: %s taken back out (%u bytes used), "
                      "%.1f misses/iteration", m->units[u].name,
                      plan_fast_used(r, vs), v);
            sel_screen(&s); /* its accesses back in the screen's stream */
            continue;
        } else {
            break;
        }
        /* Their accesses leave the screen's stream too (what else the move
         * shifted stays as it was there: the screen only orders). */
        for (size_t i = 0; s.x && i < n && !r->failed; i++)
            if (csim_setidx_remove(s.x, s.kof[s.took[i]], &(double){0},
                                   r->err) < 0)
                r->failed = r->err_set = 1;
    }
    if (r->failed) {
        sel_free(&s);
        return HUGE_VAL;
    }
    unsigned nf = 0; /* sections in fast memory now */
    for (size_t i = 0; i < m->nunits; i++)
        nf += r->fast[i];
    if (s.cut) {
        r->fast_cut++;
        plan_say(r, "fast memory: stopped by --time with %u sections (%u "
                 "bytes) in %.1f s", nf, plan_fast_used(r, vs),
                 cp_now_s() - s.t0);
    } else {
        plan_note(r, "fast memory: %u sections (%u bytes) in %.1f s: %lu full "
                  "evaluations, %lu screened, %u groups, %u taken back",
                  nf, plan_fast_used(r, vs), cp_now_s() - s.t0, s.full,
                  s.screened, s.groups, s.removed);
    }
    sel_free(&s);
    return plan_cost(r, 0);
}

/* Baseline: fill fast memory by instructions executed per byte (what a PC
 * sample histogram ranks), leaving flash as linked. */
double plan_select_rank(plan_search *r, plan_vstate *vs)
{
    plan_model *m = r->m;
    cand *c = malloc((r->nhot ? r->nhot : 1) * sizeof *c);
    size_t n = 0;
    if (!c)
        return -1;
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (movable_fast(r, u))
            c[n++] = (cand){u, (double)m->units[u].insns / m->units[u].size};
    }
    qsort(c, n, sizeof *c, cmp_cand);
    take_in_order(r, vs, c, n, NULL, NULL);
    free(c);
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
    take_in_order(r, vs, c, n, NULL, NULL);
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
/* The selection's steps (moves, groups, sections taken back) from a
 * baseline's plan, while the time allows; the result if better on every
 * iteration. */
static void polish(plan_search *r, plan_vstate *vs, const char *what,
                   double before)
{
    if (r->failed || (r->deadline > 0 && cp_now_s() >= r->deadline))
        return;
    plan_snap base = {0};
    if (plan_snap_take(r, vs, &base) < 0) {
        plan_snap_free(&base);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return;
    }
    plan_select_fast(r, plan_cost(r, 0), vs, 1.0);
    double after = r->failed ? HUGE_VAL : plan_cost_all(r);
    if (!r->failed && after < before)
        plan_say(r, "fast memory: the selection's steps from the %s plan: "
                 "%.1f misses per iteration (stubs' instructions counted)",
                 what, after);
    else if (!r->failed)
        plan_snap_put(r, vs, &base);
    plan_snap_free(&base);
}

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
        polish(r, vs, name[won], best);
    }
    plan_snap_free(&keep);
}

/* The searches and selections compare layouts on the planning iterations
 * (--plan-iterations): code only later iterations run (a task that runs
 * every fourth request, a timer) has no misses there, so no selection
 * takes it, while the plan's figure, on every iteration, counts them. What
 * the budget has left goes, one section at a time, to the section that
 * saves most per byte on every iteration: of the CONFIRM with the most
 * misses there per byte that fit, each evaluated in full on every
 * iteration; while one lowers that cost, and the time allows. */
void plan_fill_late(plan_search *r, plan_vstate *vs)
{
    plan_model *m = r->m;
    if (r->failed || !r->o->budget)
        return;
    cand *c = malloc((r->nhot ? r->nhot : 1) * sizeof *c);
    double *umiss = malloc((m->nunits ? m->nunits : 1) * sizeof *umiss);
    if (!c || !umiss) {
        free(c);
        free(umiss);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return;
    }
    double start = plan_cost_all_units(r, umiss), cur = start;
    uint32_t used0 = plan_fast_used(r, vs);
    unsigned taken = 0;
    while (!r->failed && !(r->o->stop && *r->o->stop) &&
           !(r->deadline > 0 && cp_now_s() >= r->deadline)) {
        size_t nc = by_misses(r, vs, umiss, c);
        size_t pick = NONE;
        double pick_score = 0;
        for (size_t i = 0; i < nc && i < CONFIRM && !r->failed; i++) {
            size_t u = c[i].u;
            uint32_t cost = fast_cost(r, u, vs);
            double v = cost_if_fast(r, u, 1);
            if (cur - v > 0 && (cur - v) / cost > pick_score) {
                pick = u;
                pick_score = (cur - v) / cost;
            }
        }
        if (pick == NONE)
            break;
        take_fast(r, pick, vs);
        taken++;
        cur = plan_cost_all_units(r, umiss);
        plan_note(r, "fast memory, by every iteration's misses: %s (%u "
                  "bytes), %.1f misses/iteration", m->units[pick].name,
                  m->units[pick].size, cur);
    }
    free(c);
    free(umiss);
    if (taken && !r->failed)
        plan_say(r, "fast memory: %u more sections (%u bytes) by their misses "
                 "on every iteration, code the planning iterations do not run "
                 "included: %.1f -> %.1f misses per iteration (stubs' "
                 "instructions counted)", taken,
                 plan_fast_used(r, vs) - used0, start, cur);
}
