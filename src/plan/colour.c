/* The hot block in first-touch order, and greedy colouring by the
 * temporal relationship graph; the block's free-space helpers the
 * searches share. */
#include "plan/search.h"

#include <stdlib.h>
#include <string.h>

int plan_find_hot(plan_search *r)
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
static size_t *temporal_order(plan_search *r)
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

/* ---- the hot block as intervals ---------------------------------------- */

/* Is [p, p + size) free of every other placed unit (except skip)? */
int plan_is_free(const plan_search *r, uint32_t p, uint32_t size, size_t skip)
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
uint32_t plan_find_slot(const plan_search *r, size_t u, uint32_t c, uint32_t limit)
{
    const plan_model *m = r->m;
    uint32_t size = align8(m->units[u].size);
    uint32_t al = unit_align(r, u);
    if (c == NONE) {
        for (uint32_t p = align_at(r, 0, al); p + size <= limit; p += al)
            if (plan_is_free(r, p, size, u))
                return p;
        return NONE;
    }
    uint32_t way = m->sets * m->cache.line;
    uint32_t want = (c * m->cache.line) % way;
    uint32_t p = (want + way - (r->hot_base % way)) % way;
    p = align_at(r, p, al);
    for (; p + size <= limit; p += way)
        if (plan_is_free(r, p, size, u))
            return p;
    return NONE;
}

uint32_t plan_block_limit(const plan_search *r)
{
    uint64_t total = 0;
    for (size_t k = 0; k < r->nhot; k++)
        if (!r->fast[r->hot[k]])
            total += align8(r->m->units[r->hot[k]].size);
    return (uint32_t)(total + r->o->pad_limit);
}

void plan_place_hotblock(plan_search *r)
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
/* The lines of each hot unit the planning iterations of every workload
 * touch: tl[k] points at nl bytes (1: touched) for hot unit k, into one
 * allocation (*buf). */
static unsigned char **touched_lines(plan_search *r, const size_t *idx_of,
                                     size_t n, unsigned char **buf,
                                     uint32_t *ntouched)
{
    plan_model *m = r->m;
    unsigned char **tl = malloc((n ? n : 1) * sizeof *tl);
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += unit_lines(r, r->hot[k]);
    *buf = calloc(total ? total : 1, 1);
    if (!tl || !*buf) {
        free(tl);
        free(*buf);
        *buf = NULL;
        return NULL;
    }
    total = 0;
    for (size_t k = 0; k < n; k++) {
        tl[k] = *buf + total;
        ntouched[k] = 0;
        total += unit_lines(r, r->hot[k]);
    }
    for (unsigned wk = 0; wk < m->nwork; wk++) {
      /* Each workload's planning iterations. */
      const plan_work *wo = &m->work[wk];
      size_t q0 = m->iter_start[wo->first];
      size_t q1 = m->iter_start[wo->first + plan_work_iters(m, wk, r->iters)];
      for (size_t q = q0; q < q1; q++) {
        const plan_acc *a = &m->acc[q];
        if (a->unit >= m->nunits || idx_of[a->unit] == NONE || !a->len)
            continue;
        size_t k = idx_of[a->unit];
        uint32_t nl = unit_lines(r, a->unit);
        for (uint32_t l = a->off >> m->line_shift;
             l <= (a->off + a->len - 1) >> m->line_shift && l < nl; l++)
            if (!tl[k][l]) {
                tl[k][l] = 1;
                ntouched[k]++;
            }
      }
    }
    return tl;
}

/* Temporal relationship graph over hot units: w[a * n + b] counts how
 * often b ran between two runs of a within a window of twice the cache. */
static float *build_trg(plan_search *r, const size_t *idx_of, size_t n,
                        const uint32_t *ntouched)
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
            bytes += (uint64_t)ntouched[stack[j]] << m->line_shift;
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
int plan_place_colour(plan_search *r)
{
    plan_model *m = r->m;
    size_t n = r->nhot;
    size_t *idx_of = malloc((m->nunits ? m->nunits : 1) * sizeof *idx_of);
    size_t *occ = calloc((size_t)m->sets * MAXOCC, sizeof *occ);
    unsigned *nocc = calloc(m->sets, sizeof *nocc);
    double *sc = malloc(m->sets * sizeof *sc);
    costsort *cs = malloc(m->sets * sizeof *cs);
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    uint32_t *ntouched = malloc((n ? n : 1) * sizeof *ntouched);
    unsigned char **tl = NULL, *tlbuf = NULL;
    float *w = NULL;
    int rc = -1;
    if (!idx_of || !occ || !nocc || !sc || !cs || !ord || !ntouched)
        goto out;
    for (size_t i = 0; i < m->nunits; i++)
        idx_of[i] = NONE;
    for (size_t k = 0; k < n; k++)
        idx_of[r->hot[k]] = k;
    tl = touched_lines(r, idx_of, n, &tlbuf, ntouched);
    if (!tl)
        goto out;
    w = build_trg(r, idx_of, n, ntouched);
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
    uint32_t limit = plan_block_limit(r), mask = m->sets - 1, ways = m->cache.ways;
    for (size_t q = 0; q < no; q++) {
        size_t a = ord[q], u = r->hot[a];
        uint32_t nl = unit_lines(r, u);
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
        /* For each start colour, the sum over the sets the unit's touched
         * lines would fall in. */
        for (uint32_t c = 0; c < m->sets; c++) {
            double win = 0;
            for (uint32_t i = 0; i < nl; i++)
                if (tl[a][i])
                    win += sc[(c + i) & mask];
            cs[c].c = c;
            cs[c].cost = win;
        }
        qsort(cs, m->sets, sizeof *cs, cmp_costsort);
        uint32_t p = NONE;
        for (uint32_t k = 0; k < m->sets && p == NONE; k++)
            p = plan_find_slot(r, u, cs[k].c, limit);
        if (p == NONE)
            p = plan_find_slot(r, u, NONE, limit);
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
            if (tl[a][i] && nocc[s] < MAXOCC)
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
    free(ntouched);
    free(tl);
    free(tlbuf);
    return rc;
}
/* The end of the placed hot units (offset in the block). */
uint32_t plan_placed_end(const plan_search *r)
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

typedef struct gap_ent {
    uint32_t off;
    size_t u;
} gap_ent;

static int cmp_gap_ent(const void *a, const void *b)
{
    const gap_ent *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

int plan_close_way_gaps(const plan_model *m, uint32_t *hot_off,
                        const unsigned char *fast, uint32_t *block_end,
                        uint32_t *removed)
{
    *removed = 0;
    size_t n = 0;
    for (size_t i = 0; i < m->nunits; i++)
        n += hot_off[i] != PLAN_NONE && !fast[i];
    if (!n)
        return 0;
    gap_ent *e = malloc(n * sizeof *e);
    uint32_t *lo = malloc(n * sizeof *lo), *hi = malloc(n * sizeof *hi);
    if (!e || !lo || !hi) {
        free(e);
        free(lo);
        free(hi);
        return -1;
    }
    n = 0;
    for (size_t i = 0; i < m->nunits; i++)
        if (hot_off[i] != PLAN_NONE && !fast[i])
            e[n++] = (gap_ent){hot_off[i], i};
    qsort(e, n, sizeof *e, cmp_gap_ent);
    /* A way: the bytes between two addresses of the same set. Each
     * section, in block order, goes to the lowest free offset a whole
     * number of ways below it (lo / hi: the sections placed so far). */
    uint32_t way = m->sets * m->cache.line, end = 0, nend = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t o = e[k].off, s = m->units[e[k].u].size, q = o % way;
        if (o + s > end)
            end = o + s;
        for (; q < o; q += way) {
            size_t j = 0;
            while (j < k && (q + s <= lo[j] || hi[j] <= q))
                j++;
            if (j == k)
                break;
        }
        lo[k] = q;
        hi[k] = q + s;
        if (q + s > nend)
            nend = q + s;
        hot_off[e[k].u] = q;
    }
    /* What follows the block moves down by whole ways too: from the old
     * end (the padded end, or the last section's) to the lowest end at or
     * after the sections' new one. */
    uint32_t old = *block_end > end ? *block_end : end;
    uint32_t shift = (old - nend) / way * way;
    if (shift || *block_end)
        *block_end = old - shift;
    free(e);
    free(lo);
    free(hi);
    *removed = shift;
    return 0;
}
