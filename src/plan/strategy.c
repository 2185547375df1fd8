/* The strategies: hot block, colouring (temporal relationship graph, then a
 * local search with exact evaluation), RAM selection by re-simulated misses
 * saved per byte, their combination, a samples-per-byte baseline, and auto.
 */
#include "plan/incr.h"
#include "plan/plan_int.h"

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
    o.pad_limit = 8192;
    /* See plan_model_new: 16 bytes on ARMv6-M, 8 on v7-M/v8-M. */
    o.veneer_bytes = tgt_is_armv6m(t) ? 16 : 8;
    o.search_moves = 200000;
    o.seed = 1;
    o.time_limit = 60;
    return o;
}

/* ---- shared state of one run ------------------------------------------- */

typedef struct run {
    plan_model *m;
    const plan_opts *o;
    unsigned iters;       /* planning iterations */
    uint32_t hot_base;
    plan_layout L;
    double *umiss;
    uint64_t rng;
    /* Flash placement of hot units: offset in the block or NONE. */
    uint32_t *off;        /* per unit */
    unsigned char *fast;  /* per unit: 1 in fast memory */
    uint32_t block_end;   /* hot block padded to this size (0: none) */
    /* While annealing: per 8 bytes of the block, the unit placed there
     * plus one (0: free), kept with off[]; NULL otherwise. */
    uint32_t *own;
    uint32_t nown;
    size_t *hot;          /* hot unit indices */
    size_t nhot;
    double evals;
    cp_err *err;
    int failed;           /* an evaluation failed: err says why */
    double deadline;      /* monotonic seconds the search stops at (0: none) */
    unsigned long moves;  /* annealing moves made */
    int time_cut;         /* the deadline stopped a search */
} run;

#define NONE PLAN_NONE

static void vnote(const run *r, int level, const char *fmt, va_list ap)
{
    if (!r->o->progress)
        return;
    char buf[256];
    vsnprintf(buf, sizeof buf, fmt, ap);
    r->o->progress(r->o->progress_ctx, level, buf);
}

/* A detail (shown with -v). */
static void note(const run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(const run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(r, 1, fmt, ap);
    va_end(ap);
}

/* Progress (shown on the terminal unless -q). */
static void say(const run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(r, 0, fmt, ap);
    va_end(ap);
}

static uint64_t rnd(run *r)
{
    /* xorshift64* */
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return r->rng * 2685821657736338717ULL;
}

static uint32_t align8(uint32_t v)
{
    return (v + 7) & ~7u;
}

/* Builds r->L from r->off and r->fast. */
static void build(run *r)
{
    plan_layout_make(r->m, r->off, r->fast, r->hot_base, r->block_end, &r->L);
}

/* The cost a strategy minimises, in misses: the misses plus the
 * instructions that calls through linker stubs add, weighed by what a miss
 * costs (the estimated cycles per iteration, divided by the miss cost). */
static double eval_on(run *r, int per_unit, unsigned iters)
{
    if (r->failed)
        return HUGE_VAL;
    build(r);
    plan_eval_out out = {0};
    out.unit_misses = per_unit ? r->umiss : NULL;
    if (plan_eval(r->m, &r->L, iters, &out, r->err) < 0) {
        r->failed = 1;
        return HUGE_VAL;
    }
    r->evals++;
    const plan_model *m = r->m;
    double per_call = m->t->cpi * m->veneer_insns /
                      (m->cache.miss_cycles ? m->cache.miss_cycles : 1);
    return out.misses + out.stub_calls * per_call;
}

/* On the planning iterations (what searches compare). */
static double eval(run *r, int per_unit)
{
    return eval_on(r, per_unit, r->iters);
}

/* On every iteration (what the result reports). */
static double eval_all(run *r)
{
    return eval_on(r, 0, 0);
}

/* ---- hot units and their order ----------------------------------------- */

static int find_hot(run *r)
{
    plan_model *m = r->m;
    r->hot = malloc((m->nunits ? m->nunits : 1) * sizeof *r->hot);
    if (!r->hot)
        return -1;
    r->nhot = 0;
    for (size_t i = 0; i < m->nunits; i++)
        if (m->units[i].runs && !(m->units[i].flags & PLAN_U_NOMOVE))
            r->hot[r->nhot++] = i;
    return 0;
}

/* Hot units in the order the first warm iteration first touches them. */
static size_t *temporal_order(run *r)
{
    plan_model *m = r->m;
    size_t *ord = malloc((r->nhot ? r->nhot : 1) * sizeof *ord), n = 0;
    unsigned char *seen = calloc(m->nunits ? m->nunits : 1, 1);
    if (!ord || !seen) {
        free(ord);
        free(seen);
        return NULL;
    }
    unsigned it0 = m->niters > 1 ? 1 : 0;
    for (unsigned pass = 0; pass < 2; pass++) {
        size_t a = pass ? m->iter_start[0] : m->iter_start[it0];
        size_t b = pass ? m->iter_start[m->niters] : m->iter_start[it0 + 1];
        for (size_t k = a; k < b; k++) {
            uint32_t u = m->acc[k].unit;
            if (u >= m->nunits || seen[u] || (m->units[u].flags & PLAN_U_NOMOVE))
                continue;
            seen[u] = 1;
            ord[n++] = u;
        }
    }
    free(seen);
    return ord;
}

/* Hot units start on a cache line (and at least their own alignment), so
 * that their lines are the same whatever set they start at. */
static uint32_t unit_align(const run *r, size_t u)
{
    uint32_t al = r->m->cache.line > 8 ? r->m->cache.line : 8;
    return r->m->units[u].align > al ? r->m->units[u].align : al;
}

/* The first offset at or after p where hot_base + offset is al-aligned. */
static uint32_t align_at(const run *r, uint32_t p, uint32_t al)
{
    uint32_t a = r->hot_base + p;
    return ((a + al - 1) & ~(al - 1)) - r->hot_base;
}

/* ---- the hot block as intervals ---------------------------------------- */

/* Is [p, p + size) free of every other placed unit (except skip)? */
static int is_free(const run *r, uint32_t p, uint32_t size, size_t skip)
{
    if (r->own) {
        /* The same answer from the map: a unit whose off[] is NONE for the
         * moment (a swap's check) does not count. */
        uint32_t g0 = p >> 3, g1 = (p + size + 7) >> 3;
        if (g1 > r->nown)
            g1 = r->nown;
        for (uint32_t g = g0; g < g1; g++) {
            uint32_t o = r->own[g];
            if (o && o - 1 != skip && r->off[o - 1] != NONE)
                return 0;
        }
        return 1;
    }
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (u == skip || r->off[u] == NONE || r->fast[u])
            continue;
        uint32_t a = r->off[u], e = a + align8(r->m->units[u].size);
        if (p < e && a < p + size)
            return 0;
    }
    return 1;
}

/* Lowest offset below limit where unit u starts at colour c (or at any
 * colour when c == NONE); NONE if none. */
static uint32_t find_slot(const run *r, size_t u, uint32_t c, uint32_t limit)
{
    const plan_model *m = r->m;
    uint32_t size = align8(m->units[u].size);
    uint32_t al = unit_align(r, u);
    if (c == NONE) {
        for (uint32_t p = align_at(r, 0, al); p + size <= limit; p += al)
            if (is_free(r, p, size, u))
                return p;
        return NONE;
    }
    uint32_t way = m->sets * m->cache.line;
    uint32_t want = (c * m->cache.line) % way;
    uint32_t p = (want + way - (r->hot_base % way)) % way;
    p = align_at(r, p, al);
    for (; p + size <= limit; p += way)
        if (is_free(r, p, size, u))
            return p;
    return NONE;
}

static uint32_t block_limit(const run *r)
{
    uint64_t total = 0;
    for (size_t k = 0; k < r->nhot; k++)
        if (!r->fast[r->hot[k]])
            total += align8(r->m->units[r->hot[k]].size);
    return (uint32_t)(total + r->o->pad_limit);
}

static uint32_t colour_of(const run *r, uint32_t off)
{
    return ((r->hot_base + off) >> r->m->line_shift) & (r->m->sets - 1);
}

/* ---- strategies -------------------------------------------------------- */

static void place_hotblock(run *r)
{
    size_t *ord = temporal_order(r);
    if (!ord)
        return;
    size_t n = 0;
    for (size_t k = 0; k < r->nhot; k++)
        n += !r->fast[r->hot[k]];
    uint32_t p = 0;
    /* ord holds hot units only (same set as r->hot). */
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = ord[k];
        if (r->fast[u])
            continue;
        p = align_at(r, p, unit_align(r, u));
        r->off[u] = p;
        p += align8(r->m->units[u].size);
    }
    (void)n;
    free(ord);
}

/* Temporal relationship graph over hot units: w[a * n + b] counts how
 * often b ran between two runs of a within a window of twice the cache. */
static float *build_trg(run *r, const size_t *idx_of, size_t n)
{
    plan_model *m = r->m;
    float *w = calloc(n ? n * n : 1, sizeof *w);
    size_t *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!w || !stack) {
        free(w);
        free(stack);
        return NULL;
    }
    uint64_t window = 2ull * m->cache.size;
    for (unsigned wk = 0; wk < m->nwork; wk++) {
      /* Each workload's edges weigh its share of the weighted mean. */
      const plan_work *wo = &m->work[wk];
      float sc = (float)(plan_work_scale(m, wk, r->iters) * m->work_wsum);
      size_t depth = 0;
      uint32_t last = PLAN_FIXED;
      size_t k0 = m->iter_start[wo->first];
      size_t k1 = m->iter_start[wo->first + plan_work_iters(m, wk, r->iters)];
      for (size_t k = k0; k < k1; k++) {
        uint32_t u = m->acc[k].unit;
        if (u >= m->nunits || u == last || idx_of[u] == NONE)
            continue;
        last = u;
        size_t a = idx_of[u];
        uint64_t bytes = 0;
        size_t j = 0;
        for (; j < depth && stack[j] != a; j++) {
            if (bytes <= window)
                w[a * n + stack[j]] += sc;
            bytes += m->units[r->hot[stack[j]]].size;
        }
        if (j == depth)
            depth++;
        memmove(stack + 1, stack, j * sizeof *stack);
        stack[0] = a;
      }
    }
    free(stack);
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++) {
            float s = w[a * n + b] + w[b * n + a];
            w[a * n + b] = w[b * n + a] = s;
        }
    return w;
}

#define MAXOCC 24

typedef struct costsort {
    uint32_t c;
    double cost;
} costsort;

static int cmp_costsort(const void *a, const void *b)
{
    const costsort *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? -1 : 1;
    return x->c < y->c ? -1 : x->c > y->c;
}

/* Greedy colouring: hottest first, each at the start set where its lines
 * meet the least TRG weight beyond what the ways hold for free. */
static int place_colour_greedy(run *r)
{
    plan_model *m = r->m;
    size_t n = r->nhot;
    size_t *idx_of = malloc((m->nunits ? m->nunits : 1) * sizeof *idx_of);
    size_t *occ = calloc((size_t)m->sets * MAXOCC, sizeof *occ);
    unsigned *nocc = calloc(m->sets, sizeof *nocc);
    double *sc = malloc(m->sets * sizeof *sc);
    costsort *cs = malloc(m->sets * sizeof *cs);
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    float *w = NULL;
    int rc = -1;
    if (!idx_of || !occ || !nocc || !sc || !cs || !ord)
        goto out;
    for (size_t i = 0; i < m->nunits; i++)
        idx_of[i] = NONE;
    for (size_t k = 0; k < n; k++)
        idx_of[r->hot[k]] = k;
    w = build_trg(r, idx_of, n);
    if (!w)
        goto out;
    /* Hottest first: by fetched bytes. */
    size_t no = 0;
    for (size_t k = 0; k < n; k++)
        if (!r->fast[r->hot[k]])
            ord[no++] = k;
    for (size_t i = 1; i < no; i++) {
        size_t v = ord[i], j = i;
        while (j > 0 && m->units[r->hot[ord[j - 1]]].bytes_fetched <
                            m->units[r->hot[v]].bytes_fetched) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = v;
    }
    for (size_t k = 0; k < n; k++)
        r->off[r->hot[k]] = NONE;
    uint32_t limit = block_limit(r), mask = m->sets - 1, ways = m->cache.ways;
    for (size_t q = 0; q < no; q++) {
        size_t a = ord[q], u = r->hot[a];
        uint32_t nl = (align8(m->units[u].size) + m->cache.line - 1) >> m->line_shift;
        if (nl > m->sets)
            nl = m->sets;
        for (uint32_t s = 0; s < m->sets; s++) {
            /* Sum of weights to the units already in s, minus the ways-1
             * strongest (they share the set for free). */
            double sum = 0, top[4] = {0, 0, 0, 0};
            unsigned keep = ways - 1 < 4 ? ways - 1 : 4;
            for (unsigned k = 0; k < nocc[s]; k++) {
                double x = w[a * n + occ[(size_t)s * MAXOCC + k]];
                sum += x;
                for (unsigned t = 0; t < keep; t++)
                    if (x > top[t]) {
                        double tmp = top[t];
                        top[t] = x;
                        x = tmp;
                    }
            }
            for (unsigned t = 0; t < keep; t++)
                sum -= top[t];
            sc[s] = sum;
        }
        /* Sliding sum over nl consecutive sets for each start colour. */
        double win = 0;
        for (uint32_t i = 0; i < nl; i++)
            win += sc[i & mask];
        for (uint32_t c = 0; c < m->sets; c++) {
            cs[c].c = c;
            cs[c].cost = win;
            win += sc[(c + nl) & mask] - sc[c];
        }
        qsort(cs, m->sets, sizeof *cs, cmp_costsort);
        uint32_t p = NONE;
        for (uint32_t k = 0; k < m->sets && p == NONE; k++)
            p = find_slot(r, u, cs[k].c, limit);
        if (p == NONE)
            p = find_slot(r, u, NONE, limit);
        if (p == NONE) {
            /* Past the limit: append. */
            uint32_t end = 0;
            for (size_t k = 0; k < n; k++) {
                size_t v = r->hot[k];
                if (r->off[v] != NONE && r->off[v] + align8(m->units[v].size) > end)
                    end = r->off[v] + align8(m->units[v].size);
            }
            p = end;
        }
        r->off[u] = p;
        uint32_t c0 = colour_of(r, p);
        for (uint32_t i = 0; i < nl; i++) {
            uint32_t s = (c0 + i) & mask;
            if (nocc[s] < MAXOCC)
                occ[(size_t)s * MAXOCC + nocc[s]++] = a;
        }
    }
    rc = 0;
out:
    free(idx_of);
    free(occ);
    free(nocc);
    free(sc);
    free(cs);
    free(ord);
    free(w);
    return rc;
}

/* The end of the placed hot units (offset in the block). */
static uint32_t placed_end(const run *r)
{
    uint32_t end = 0;
    for (size_t k = 0; k < r->nhot; k++) {
        size_t u = r->hot[k];
        if (!r->fast[u] && r->off[u] != NONE &&
            r->off[u] + align8(r->m->units[u].size) > end)
            end = r->off[u] + align8(r->m->units[u].size);
    }
    return end;
}

/* The map of the block while annealing: unit u's bytes at off, set to
 * it (put) or freed. */
static void own_put(run *r, size_t u, uint32_t off, int put)
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

/* Simulated annealing on the hot units' start offsets, on the exact
 * incremental re-simulation (src/plan/incr.c): a move puts one unit at
 * another colour, shifts it by a few lines, or swaps two units; a move
 * that does not raise the misses is kept, one that raises them by d with
 * probability exp(-d / T), T falling geometrically over the moves. The best
 * placement seen is the result. The block is padded to its limit first, so
 * that a move changes nothing outside it and only the sets a unit leaves
 * and enters need simulating again.
 *
 * The search counts moves (--search-moves), so that the same inputs and
 * seed give the same plan; a deadline (--time) can only stop it early, and
 * the result says so. share: the part of the time left this search may
 * use. */
#define COLOUR_TRIES 4

static double anneal(run *r, double share)
{
    plan_model *m = r->m;
    unsigned long moves = r->o->search_moves;
    if (r->failed)
        return HUGE_VAL;
    if (!moves)
        return eval(r, 0);
    uint32_t limit = block_limit(r), pe = placed_end(r);
    if (pe > limit)
        limit = pe;
    r->block_end = limit;
    build(r);
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
        return eval(r, 0);
    }
    plan_incr *x = plan_incr_new(m, &r->L, hk, n, r->iters, r->err);
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
    double t_end = 0, t0 = cp_now_s();
    if (r->deadline > 0) {
        double left = r->deadline - t0;
        t_end = t0 + (left > 0 ? left : 0) * share;
    }
    double cur = plan_incr_total(x), start = cur, best = cur;
    for (size_t k = 0; k < n; k++)
        best_off[k] = r->off[hk[k]];
    /* The temperature follows the size of the uphill steps seen: it starts
     * at a third of their mean (measured over the first moves, accepted
     * only downhill) and ends a hundred times lower. */
    double up_sum = 0, temp = 0, t_first = 0, t_last = 0;
    unsigned long up_n = 0, tries = 0, accepted = 0, simulated = 0;
    unsigned long calib = moves / 50 + 20;
    unsigned long report = moves / 10 ? moves / 10 : 1;
    int failed = 0;
    while (tries < moves) {
        if (r->o->stop && *r->o->stop)
            break;
        if (r->deadline > 0 && (tries & 127) == 0 && tries && cp_now_s() > t_end) {
            r->time_cut = 1;
            break;
        }
        tries++;
        if (tries == calib) {
            t_first = up_n ? up_sum / up_n / 3 : 0;
            t_last = t_first / 100;
        }
        if (tries > calib && t_first > 0)
            temp = t_first * pow(t_last / t_first,
                                 (double)(tries - calib) / (double)(moves - calib));
        if (tries % report == 0)
            say(r, "anneal: %lu of %lu moves, %.1f misses/iteration (best "
                 "%.1f), %.1f s", tries, moves, cur, best, cp_now_s() - t0);
        double r01 = (double)(rnd(r) >> 11) / 9007199254740992.0;
        size_t k = plan_incr_pick(x, r01, rnd(r));
        if (k == SIZE_MAX)
            k = rnd(r) % n;
        size_t u = hk[k];
        uint32_t old = r->off[u];
        unsigned kind = (unsigned)(rnd(r) % 8);
        double v, dice = (double)(rnd(r) >> 11) / 9007199254740992.0;
        size_t k2 = 0, w = 0;
        uint32_t ow = 0;
        if (n > 1 && kind < 2) {
            /* Swap with another hot unit when each fits the other's place. */
            k2 = rnd(r) % n;
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
                     is_free(r, ow, su, u) && is_free(r, old, sw, w);
            r->off[u] = old;
            r->off[w] = ow;
            if (!ok)
                continue;
            if ((v = plan_incr_move2(x, k, r->hot_base + ow, k2,
                                     r->hot_base + old)) < 0) {
                failed = 1;
                break;
            }
            r->off[u] = ow;
            r->off[w] = old;
            own_put(r, u, old, 0);
            own_put(r, w, ow, 0);
            own_put(r, u, ow, 1);
            own_put(r, w, old, 1);
        } else {
            uint32_t c;
            if (kind < 4) {
                /* A few lines either way. */
                int32_t d = (int32_t)(rnd(r) % 16) + 1;
                if (rnd(r) & 1)
                    d = -d;
                c = (uint32_t)((int32_t)colour_of(r, old) + d) & (m->sets - 1);
            } else {
                c = NONE;
            }
            uint32_t p = NONE;
            if (c != NONE) {
                p = find_slot(r, u, c, limit);
            } else {
                /* The least crowded of a few random colours: the one whose
                 * sets have the fewest misses now. */
                double pc = HUGE_VAL;
                for (unsigned tr = 0; tr < COLOUR_TRIES; tr++) {
                    uint32_t q = find_slot(r, u, (uint32_t)(rnd(r) % m->sets), limit);
                    if (q == NONE || q == old)
                        continue;
                    double mc = plan_incr_misses_at(x, k, r->hot_base + q);
                    if (mc < pc) {
                        pc = mc;
                        p = q;
                    }
                }
            }
            if (p == NONE || p == old)
                continue;
            r->off[u] = p;
            own_put(r, u, old, 0);
            own_put(r, u, p, 1);
            if ((v = plan_incr_move(x, k, r->hot_base + p)) < 0) {
                failed = 1;
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
            plan_incr_undo(x);
            own_put(r, u, ow, 0);
            own_put(r, w, old, 0);
            own_put(r, u, old, 1);
            own_put(r, w, ow, 1);
            r->off[u] = old;
            r->off[w] = ow;
        } else {
            plan_incr_undo(x);
            own_put(r, u, r->off[u], 0);
            own_put(r, u, old, 1);
            r->off[u] = old;
        }
    }
    free(r->own);
    r->own = NULL;
    r->nown = 0;
    plan_incr_free(x);
    for (size_t q = 0; q < n; q++)
        r->off[hk[q]] = best_off[q];
    free(hk);
    free(best_off);
    r->moves += tries;
    if (failed) {
        r->failed = 1;
        cp_seterr(r->err, "out of memory (incremental evaluation)");
        return HUGE_VAL;
    }
    double full = eval(r, 0);
    say(r, "anneal: %lu moves (%lu simulated, the others found no room; "
         "%lu accepted) in %.1f s%s: %.1f -> %.1f "
         "misses/iteration (%.1f on all planning iterations)", tries,
         simulated, accepted, cp_now_s() - t0, r->time_cut ? ", stopped by --time" : "",
         start, best, full);
    return full;
}

/* Colouring: the better start of the hot block and the relationship graph's
 * greedy colouring (and, with keep, the placement the units have now),
 * annealed; never worse than the hot block on every iteration. */
static double do_colour(run *r, int keep, double share)
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
    double c = keep ? eval(r, 0) : HUGE_VAL;
    for (size_t k = 0; k < r->nhot; k++)
        r->off[r->hot[k]] = NONE;
    r->block_end = 0;
    place_hotblock(r);
    double h = eval(r, 0);
    memcpy(hb, r->off, nu * sizeof *hb);
    if (place_colour_greedy(r) < 0) {
        free(cur);
        free(hb);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return HUGE_VAL;
    }
    double g = eval(r, 0);
    note(r, "colouring: relationship graph %.1f, hot block %.1f%s "
         "misses/iteration", g, h, keep ? "" : "");
    if (keep && c <= g && c <= h) {
        memcpy(r->off, cur, nu * sizeof *cur);
        r->block_end = cur_end;
    } else if (h < g) {
        memcpy(r->off, hb, nu * sizeof *hb);
    }
    anneal(r, share);
    /* Never worse than the hot block, on every iteration. */
    double a_all = eval_all(r);
    uint32_t *res = cur; /* reuse */
    memcpy(res, r->off, nu * sizeof *res);
    uint32_t end = r->block_end;
    memcpy(r->off, hb, nu * sizeof *hb);
    r->block_end = 0;
    double h_all = eval_all(r);
    if (a_all <= h_all) {
        memcpy(r->off, res, nu * sizeof *res);
        r->block_end = end;
    } else {
        note(r, "colouring: the hot block is better on every iteration "
             "(%.1f against %.1f)", h_all, a_all);
    }
    free(cur);
    free(hb);
    return eval(r, 0);
}

typedef struct vstate {
    unsigned char *target; /* per target: a stub in fast memory */
} vstate;

/* Bytes a move of u to fast memory costs: the code and a stub for each
 * new target in flash it branches to. */
static uint32_t fast_cost(run *r, size_t u, const vstate *vs)
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
static void count_targets(run *r, vstate *vs)
{
    plan_model *m = r->m;
    memset(vs->target, 0, m->ntargets ? m->ntargets : 1);
    for (size_t i = 0; i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        if (r->fast[c->caller] && !r->fast[m->targets[c->target].unit])
            vs->target[c->target] = 1;
    }
}

static void take_fast(run *r, size_t u, vstate *vs)
{
    r->fast[u] = 1;
    r->off[u] = NONE;
    count_targets(r, vs);
}

static uint32_t fast_used(run *r, const vstate *vs)
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

static int movable_fast(const run *r, size_t u)
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
 * until nothing fits the budget or saves anything. Candidates are tried in
 * the order of their own misses per byte: the first dozen, and more when
 * none of those saves anything (a move also shifts code and adds stubs). */
static double select_fast(run *r, double cur, vstate *vs)
{
    plan_model *m = r->m;
    enum { FIRST = 12, MAX = 48 };
    cand *c = malloc((r->nhot ? r->nhot : 1) * sizeof *c);
    double last_note = cp_now_s();
    if (!c)
        return cur;
    for (;;) {
        cur = eval(r, 1);
        uint32_t left = r->o->budget - fast_used(r, vs);
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
        size_t pick = NONE;
        double pick_score = 0, pick_val = cur;
        for (size_t i = 0; i < nc && i < MAX; i++) {
            if ((i >= FIRST && pick != NONE) || (r->o->stop && *r->o->stop))
                break;
            if (cp_now_s() - last_note >= 0.5) {
                last_note = cp_now_s();
                note(r, "fast memory: trying candidate %zu of %zu (%u bytes "
                     "used), %.1f misses/iteration", i + 1,
                     nc < MAX ? nc : (size_t)MAX, fast_used(r, vs), cur);
            }
            size_t u = c[i].u;
            uint32_t old = r->off[u];
            r->fast[u] = 1;
            double v = eval(r, 0);
            r->fast[u] = 0;
            r->off[u] = old;
            double sc = (cur - v) / fast_cost(r, u, vs);
            if (cur - v > 0 && sc > pick_score) {
                pick = u;
                pick_score = sc;
                pick_val = v;
            }
        }
        if (pick == NONE)
            break;
        take_fast(r, pick, vs);
        note(r, "fast memory: %s (%u bytes), %.1f misses/iteration",
             m->units[pick].name, m->units[pick].size, pick_val);
    }
    free(c);
    return eval(r, 0);
}

/* Baseline: fill fast memory by instructions executed per byte (what a PC
 * sample histogram ranks), leaving flash as linked. */
static double select_rank(run *r, vstate *vs)
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
        uint32_t left = r->o->budget - fast_used(r, vs);
        if (fast_cost(r, ord[i], vs) <= left)
            take_fast(r, ord[i], vs);
    }
    free(ord);
    return eval(r, 0);
}

/* Baseline: fill fast memory by the stock layout's misses per byte, without
 * re-simulating (a density ranking), leaving flash as linked. */
static double select_density(run *r, vstate *vs, const double *stock_umiss)
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
        uint32_t left = r->o->budget - fast_used(r, vs);
        if (fast_cost(r, c[i].u, vs) <= left)
            take_fast(r, c[i].u, vs);
    }
    free(c);
    return eval(r, 0);
}

/* Placement state, to keep the better of two. */
typedef struct snap {
    uint32_t *off;
    unsigned char *fast, *target;
    uint32_t block_end;
} snap;

static int snap_take(const run *r, const vstate *vs, snap *sn)
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

static void snap_put(run *r, vstate *vs, const snap *sn)
{
    size_t n = r->m->nunits ? r->m->nunits : 1;
    memcpy(r->off, sn->off, n * sizeof *sn->off);
    memcpy(r->fast, sn->fast, n);
    memcpy(vs->target, sn->target, r->m->ntargets + 1);
    r->block_end = sn->block_end;
}

static void snap_free(snap *sn)
{
    free(sn->off);
    free(sn->fast);
    free(sn->target);
    memset(sn, 0, sizeof *sn);
}

/* Keeps the current placement if it is no worse on every iteration than
 * the snapshot (the flash-only layout it started from), else the
 * snapshot. */
static void keep_better(run *r, vstate *vs, const snap *start, const char *what)
{
    double now = eval_all(r);
    snap cur = {0};
    if (snap_take(r, vs, &cur) < 0) {
        snap_free(&cur);
        r->failed = 1;
        cp_seterr(r->err, "out of memory");
        return;
    }
    snap_put(r, vs, start);
    double then = eval_all(r);
    if (now <= then)
        snap_put(r, vs, &cur);
    else
        note(r, "%s: the flash-only layout it started from is better (%.1f "
             "against %.1f misses/iteration)", what, then, now);
    snap_free(&cur);
}

/* ---- results ----------------------------------------------------------- */

static int cmp_items(const void *a, const void *b)
{
    const plan_item *x = a, *y = b;
    if (x->region != y->region)
        return x->region == PLAN_FAST ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static plan_result *make_result(run *r, plan_strategy s, double stock,
                                const double *stock_umiss, const vstate *vs)
{
    plan_model *m = r->m;
    plan_result *res = calloc(1, sizeof *res);
    if (!res)
        return NULL;
    res->strategy = s;
    res->hot_base = r->hot_base;
    size_t n = 0;
    for (size_t i = 0; i < m->nunits; i++)
        n += r->fast[i] || r->off[i] != NONE;
    res->items = calloc(n ? n : 1, sizeof *res->items);
    if (!res->items) {
        free(res);
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
            hot_sum += m->units[i].size;
        }
    }
    qsort(res->items, res->nitems, sizeof *res->items, cmp_items);
    if (r->block_end > hot_end)
        hot_end = r->block_end;
    res->block_end = r->block_end;
    res->hot_bytes = hot_end;
    res->pad_bytes = hot_end - hot_sum;
    res->fast_bytes = vs ? fast_used(r, vs) : fast_off;
    res->veneers = 0;
    if (vs)
        for (size_t i = 0; i < m->ntargets; i++)
            res->veneers += vs->target[i];
    res->stock_misses = stock;
    /* The prediction on every iteration the model holds. */
    build(r);
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
    res->conflict_after = out.misses - fa;
    res->stock_misses = so.misses;
    res->conflict_before = so.misses - sfa;
    res->nwork = m->nwork;
    for (unsigned k = 0; k < m->nwork; k++) {
        res->work_misses[k] = out.work_misses[k];
        res->work_stock[k] = so.work_misses[k];
    }
    res->insns = plan_model_insns(m) + out.stub_calls * m->veneer_insns;
    res->moves = r->moves;
    res->time_cut = r->time_cut;
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

/* The part of a time limit each strategy's search gets when several run
 * (auto, --compare): colour one part, combined (three searches) three. */
static double time_part(plan_strategy s)
{
    return s == PLAN_COLOUR ? 1 : s == PLAN_COMBINED ? 3 : 0;
}

double plan_time_share(plan_strategy s, uint32_t budget)
{
    double total = time_part(PLAN_COLOUR) + (budget ? time_part(PLAN_COMBINED) : 0);
    return total > 0 ? time_part(s) / total : 0;
}

plan_result *plan_run(plan_model *m, plan_strategy s, const plan_opts *o,
                      cp_err *err)
{
    if (m->niters == 0 || m->nwork == 0) {
        cp_seterr(err, "no evidence: the model has no iterations");
        return NULL;
    }
    if (s == PLAN_AUTO) {
        plan_result *best = NULL;
        for (int k = 0; k < PLAN_AUTO; k++) {
            if ((k == PLAN_RAM || k == PLAN_COMBINED || k == PLAN_RANK ||
                 k == PLAN_DENSITY) && o->budget == 0)
                continue;
            plan_opts ok = *o;
            ok.time_limit = o->time_limit * plan_time_share((plan_strategy)k,
                                                            o->budget);
            plan_result *c = plan_run(m, (plan_strategy)k, &ok, err);
            if (!c) {
                plan_result_free(best);
                return NULL;
            }
            if (!best || plan_result_cycles(m, c) < plan_result_cycles(m, best) - 1e-6) {
                plan_result_free(best);
                best = c;
            } else {
                plan_result_free(c);
            }
        }
        return best;
    }
    run r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.o = o;
    r.err = err;
    r.iters = m->plan_iters;
    r.hot_base = plan_hot_base(m);
    r.rng = o->seed ? o->seed : 1;
    if (o->time_limit > 0)
        r.deadline = cp_now_s() + o->time_limit;
    r.umiss = calloc(m->nunits ? m->nunits : 1, sizeof *r.umiss);
    r.off = malloc((m->nunits ? m->nunits : 1) * sizeof *r.off);
    r.fast = calloc(m->nunits ? m->nunits : 1, 1);
    double *stock_umiss = calloc(m->nunits ? m->nunits : 1, sizeof *stock_umiss);
    vstate vs = {calloc(m->ntargets + 1, 1)};
    snap start = {0};
    plan_result *res = NULL;
    if (!r.umiss || !r.off || !r.fast || !stock_umiss || !vs.target ||
        plan_layout_alloc(m, &r.L) < 0 || find_hot(&r) < 0) {
        cp_seterr(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < m->nunits; i++)
        r.off[i] = NONE;
    double stock = eval(&r, 1);
    memcpy(stock_umiss, r.umiss, m->nunits * sizeof *stock_umiss);
    note(&r, "%s: stock %.1f misses/iteration, %zu hot sections",
         plan_strategy_name(s), stock, r.nhot);
    switch (s) {
    case PLAN_STOCK:
        break;
    case PLAN_HOTBLOCK:
        place_hotblock(&r);
        break;
    case PLAN_COLOUR:
        do_colour(&r, 0, 1.0);
        break;
    case PLAN_RAM:
        if (snap_take(&r, &vs, &start) < 0)
            goto oom;
        select_fast(&r, stock, &vs);
        keep_better(&r, &vs, &start, "ram");
        break;
    case PLAN_RANK:
        select_rank(&r, &vs);
        break;
    case PLAN_DENSITY:
        select_density(&r, &vs, stock_umiss);
        break;
    case PLAN_COMBINED: {
        /* Colour and anneal; choose fast memory by re-simulated misses
         * saved per byte on the annealed layout; anneal the rest again from
         * where it is. And, when colouring first leaves too little for fast
         * memory to find, fast memory chosen on the stock layout first,
         * then coloured. The better of the two, and never worse than the
         * annealed flash-only layout both start from. */
        double c = do_colour(&r, 0, 1.0 / 3);
        if (snap_take(&r, &vs, &start) < 0)
            goto oom;
        select_fast(&r, c, &vs);
        double a = do_colour(&r, 1, 0.5);
        snap first = {0};
        if (snap_take(&r, &vs, &first) < 0) {
            snap_free(&first);
            goto oom;
        }
        for (size_t i = 0; i < m->nunits; i++) {
            r.off[i] = NONE;
            r.fast[i] = 0;
        }
        r.block_end = 0;
        count_targets(&r, &vs);
        select_fast(&r, eval(&r, 0), &vs);
        double b = do_colour(&r, 0, 1.0);
        note(&r, "combined: colour first %.1f, fast memory first %.1f", a, b);
        if (a <= b)
            snap_put(&r, &vs, &first);
        snap_free(&first);
        keep_better(&r, &vs, &start, "combined");
        break;
    }
    default:
        cp_seterr(err, "strategy %d is not a single strategy", (int)s);
        goto out;
    }
    if (r.failed)
        goto out; /* err says why */
    res = make_result(&r, s, stock, stock_umiss, &vs);
    if (res)
        note(&r, "%s: %.1f misses/iteration (%.0f evaluations, %lu moves)",
             plan_strategy_name(s), res->misses, r.evals, r.moves);
    goto out;
oom:
    cp_seterr(err, "out of memory");
out:
    snap_free(&start);
    free(r.umiss);
    free(r.off);
    free(r.fast);
    free(r.hot);
    free(stock_umiss);
    free(vs.target);
    plan_layout_free(&r.L);
    return res;
}
