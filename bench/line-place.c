/* line-place: how far a flash layout could go if every cache line of code
 * could go to any set, each function cut into its lines (no linker does
 * that; codeplace plan keeps every input section whole). An experiment on
 * the bound of layout, not a planner:
 *
 *   line-place TRACE TARGET [MOVES [PLAN_ITERS [SEED [OUT]]]]
 *
 * TRACE is read as codeplace sim reads it for TARGET (a target name or
 * file; its cache must use LRU): cached flash is looked up and filled, a
 * non-allocating alias looked up at the lines it reads, everything else
 * left out; data reads count unless the cache is instruction-only.
 * Iteration 0 warms the cache (it starts empty); the figures are warm
 * misses per iteration. Starting from the lines where the image has them,
 * simulated annealing moves one line that the iterations [1, 1 +
 * PLAN_ITERS) touch (default 3) to a random set, re-simulating the two
 * sets exactly, MOVES times (default 1,000,000; the temperature falls
 * linearly from 2 misses), then replays every iteration with the lines
 * where it left them. Prints the stock figure (it is codeplace sim's
 * warm mean), the result, and how many sets hold how many of the lines
 * the planning iterations touch; OUT, if given, gets one line per such
 * line: its address in the image (hex) and the set it ended in. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "target/target.h"
#include "trace/trace.h"

typedef struct vec {
    uint32_t *v;
    size_t n, cap;
} vec;

static int push(vec *a, uint32_t x)
{
    if (a->n == a->cap) {
        size_t c = a->cap ? 2 * a->cap : 16;
        uint32_t *v = realloc(a->v, c * sizeof *v);
        if (!v)
            return -1;
        a->v = v;
        a->cap = c;
    }
    a->v[a->n++] = x;
    return 0;
}

static uint32_t *lid;   /* per access: its line's index */
static uint32_t *lflag; /* per access: CSIM_NOALLOC or 0 */
static uint32_t *lnum;  /* per line index: its line number in the image */
static uint32_t *setof; /* per line index: its set now */
static vec *occ;        /* per line index: its accesses, in order */
static vec *sacc;       /* per set: its accesses, in order */
static uint32_t nsets, sbits, *buf;
static csim_cache *cc;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static size_t lower(const vec *a, uint32_t x)
{
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (a->v[m] < x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* Misses of set s on the accesses [from, to), replayed from the start. */
static uint64_t sim_set(uint32_t s, uint32_t from, uint32_t to)
{
    const vec *a = &sacc[s];
    size_t b = lower(a, from), e = lower(a, to);
    for (size_t i = 0; i < e; i++) {
        uint32_t x = a->v[i];
        buf[i] = (lid[x] << sbits | s) | lflag[x];
    }
    csim_cache_flush_set(cc, s);
    csim_cache_run(cc, buf, b);
    return csim_cache_run(cc, buf + b, e - b);
}

static void take_out(uint32_t l)
{
    vec *a = &sacc[setof[l]];
    size_t w = 0;
    for (size_t i = 0; i < a->n; i++)
        if (lid[a->v[i]] != l)
            a->v[w++] = a->v[i];
    a->n = w;
}

static int put_in(uint32_t l, uint32_t s)
{
    vec *a = &sacc[s], *o = &occ[l];
    uint32_t *m = malloc((a->n + o->n + 1) * sizeof *m);
    if (!m)
        return -1;
    size_t i = 0, j = 0, k = 0;
    while (i < a->n || j < o->n)
        m[k++] = j >= o->n || (i < a->n && a->v[i] < o->v[j]) ? a->v[i++]
                                                               : o->v[j++];
    free(a->v);
    a->v = m;
    a->n = a->cap = k;
    setof[l] = s;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: line-place TRACE TARGET [MOVES [PLAN_ITERS "
                        "[SEED [OUT]]]]\n");
        return 2;
    }
    long moves = argc > 3 ? atol(argv[3]) : 1000000;
    unsigned pit = argc > 4 ? (unsigned)atoi(argv[4]) : 3;
    unsigned long seed = argc > 5 ? strtoul(argv[5], NULL, 10) : 1;
    cp_err err;
    const tgt *t = tgt_load(argv[2], &err);
    if (!t) {
        fprintf(stderr, "line-place: %s\n", err.msg);
        return 1;
    }
    if (t->cache.repl != TGT_REPL_LRU) {
        fprintf(stderr, "line-place: %s: the cache is not LRU\n", argv[2]);
        return 1;
    }
    const tgt_mem *fl = tgt_cached_window(t);
    trc_reader *r = trc_open(argv[1], &err);
    if (!r || !fl) {
        fprintf(stderr, "line-place: %s\n", r ? "no cached flash" : err.msg);
        return 1;
    }
    const trc_header *h = trc_get_header(r);
    if (h->target[0] && !tgt_header_matches(t, h->target)) {
        fprintf(stderr, "line-place: %s was recorded for target '%s', not "
                "'%s'\n", argv[1], h->target, t->name);
        return 1;
    }
    unsigned ls = 0;
    while ((1u << ls) < t->cache.line)
        ls++;
    nsets = t->cache.size / (t->cache.ways * t->cache.line);
    while ((1u << sbits) < nsets)
        sbits++;
    /* The accesses, as line numbers with the flag, one per line touched;
     * the iteration starts. */
    vec acc = {0}, fg = {0}, its = {0};
    trc_rec rec;
    int rc, in = 0;
    uint32_t last = UINT32_MAX;
    while ((rc = trc_next_complete(r, &rec, &err)) == 1) {
        if (rec.kind == TRC_MARK) {
            in = 1;
            if (push(&its, (uint32_t)acc.n) < 0)
                goto oom;
            last = UINT32_MAX;
            continue;
        }
        if (!in || (rec.kind != TRC_FETCH && rec.kind != TRC_DREAD) ||
            (rec.kind == TRC_DREAD && t->icache_only))
            continue;
        uint32_t a = rec.kind == TRC_FETCH ? rec.addr & ~1u : rec.addr;
        uint32_t len = rec.len ? rec.len : 1, f = 0;
        const tgt_mem *m = tgt_mem_at(t, a);
        if (m && m->kind == TGT_MEM_FLASH) {
            if (rec.flags & TRC_F_UNCACHED)
                continue;
        } else if (m && m->kind == TGT_MEM_FLASH_NOALLOC) {
            a = a - m->base + fl->base;
            f = CSIM_NOALLOC;
        } else {
            continue;
        }
        for (uint32_t l = a >> ls; l <= (a + len - 1) >> ls; l++) {
            if ((l | f) == last && !f)
                continue; /* a hit that changes nothing */
            last = l | f;
            if (push(&acc, l) < 0 || push(&fg, f) < 0)
                goto oom;
        }
    }
    trc_close(r);
    if (rc < 0) {
        fprintf(stderr, "line-place: %s\n", err.msg);
        return 1;
    }
    if (its.n < 2 + pit) {
        fprintf(stderr, "line-place: %s: %zu complete iterations, %u needed\n",
                argv[1], its.n, 2 + pit);
        return 1;
    }
    if (push(&its, (uint32_t)acc.n) < 0)
        goto oom;
    size_t nit = its.n - 1;
    /* Line indices. */
    uint32_t *sorted = malloc((acc.n + 1) * sizeof *sorted);
    if (!sorted)
        goto oom;
    memcpy(sorted, acc.v, acc.n * sizeof *sorted);
    qsort(sorted, acc.n, sizeof *sorted, cmp_u32);
    size_t nl = 0;
    for (size_t i = 0; i < acc.n; i++)
        if (!nl || sorted[nl - 1] != sorted[i])
            sorted[nl++] = sorted[i];
    lnum = sorted;
    if (!nl) {
        fprintf(stderr, "line-place: %s: no fetch or read in %s's cached "
                "memory\n", argv[1], t->name);
        return 1;
    }
    if (nl >= (CSIM_NOALLOC >> sbits)) {
        fprintf(stderr, "line-place: %zu lines: too many\n", nl);
        return 1;
    }
    lid = malloc((acc.n + 1) * sizeof *lid);
    lflag = fg.v;
    occ = calloc(nl + 1, sizeof *occ);
    setof = malloc((nl + 1) * sizeof *setof);
    sacc = calloc(nsets, sizeof *sacc);
    buf = malloc((acc.n + 1) * sizeof *buf);
    cc = csim_cache_new(&t->cache, 1, &err);
    if (!lid || !occ || !setof || !sacc || !buf || !cc)
        goto oom;
    for (size_t x = 0; x < acc.n; x++) {
        size_t lo = 0, hi = nl;
        while (lo < hi) {
            size_t m = (lo + hi) / 2;
            if (lnum[m] < acc.v[x])
                lo = m + 1;
            else
                hi = m;
        }
        lid[x] = (uint32_t)lo;
        if (push(&occ[lo], (uint32_t)x) < 0)
            goto oom;
    }
    for (size_t l = 0; l < nl; l++)
        setof[l] = lnum[l] & (nsets - 1);
    for (size_t x = 0; x < acc.n; x++)
        if (push(&sacc[setof[lid[x]]], (uint32_t)x) < 0)
            goto oom;
    uint32_t w0 = its.v[1], wend = its.v[nit];
    uint32_t p0 = its.v[1], p1 = its.v[1 + pit];
    uint64_t stock = 0, cur = 0;
    double *cost = malloc(nsets * sizeof *cost);
    if (!cost)
        goto oom;
    for (uint32_t s = 0; s < nsets; s++) {
        stock += sim_set(s, w0, wend);
        cost[s] = (double)sim_set(s, p0, p1);
        cur += (uint64_t)cost[s];
    }
    printf("trace %s, target %s: %zu iterations, %zu lines\n", argv[1],
           t->name, nit, nl);
    printf("stock: %.1f warm misses per iteration\n",
           (double)stock / (double)(nit - 1));
    /* The lines the planning iterations touch. */
    uint32_t *hot = malloc((nl + 1) * sizeof *hot);
    size_t nh = 0;
    if (!hot)
        goto oom;
    for (size_t l = 0; l < nl; l++) {
        size_t k = lower(&occ[l], p0);
        if (k < occ[l].n && occ[l].v[k] < p1)
            hot[nh++] = (uint32_t)l;
    }
    srand((unsigned)seed);
    double cost_now = (double)cur;
    for (long mv = 0; mv < moves && nh; mv++) {
        double temp = 2.0 * (1.0 - (double)mv / (double)moves) + 1e-3;
        uint32_t l = hot[(size_t)rand() % nh], a = setof[l];
        uint32_t b = (uint32_t)rand() & (nsets - 1);
        if (a == b)
            continue;
        take_out(l);
        if (put_in(l, b) < 0)
            goto oom;
        double ca = (double)sim_set(a, p0, p1), cb = (double)sim_set(b, p0, p1);
        double d = ca + cb - cost[a] - cost[b];
        if (d <= 0 || (double)rand() / RAND_MAX < exp(-d / temp)) {
            cost[a] = ca;
            cost[b] = cb;
            cost_now += d;
        } else {
            take_out(l);
            if (put_in(l, a) < 0)
                goto oom;
        }
        if (moves >= 10 && (mv + 1) % (moves / 10) == 0)
            fprintf(stderr, "line-place: %ld of %ld moves, %.1f misses per "
                    "planning iteration\n", mv + 1, moves, cost_now / pit);
    }
    uint64_t after = 0;
    for (uint32_t s = 0; s < nsets; s++)
        after += sim_set(s, w0, wend);
    printf("after %ld moves: %.1f per planning iteration, %.1f warm misses "
           "per iteration\n", moves, cost_now / pit,
           (double)after / (double)(nit - 1));
    /* Sets by how many of those lines they hold. */
    uint32_t *cnt = calloc(nsets, sizeof *cnt);
    if (!cnt)
        goto oom;
    for (size_t k = 0; k < nh; k++)
        cnt[setof[hot[k]]]++;
    unsigned hist[17] = {0};
    for (uint32_t s = 0; s < nsets; s++)
        hist[cnt[s] < 16 ? cnt[s] : 16]++;
    for (unsigned k = 0; k < 17; k++)
        if (hist[k])
            printf("sets holding %u%s of them: %u\n", k, k == 16 ? "+" : "",
                   hist[k]);
    if (argc > 6) {
        FILE *o = fopen(argv[6], "w");
        if (!o) {
            perror(argv[6]);
            return 1;
        }
        for (size_t k = 0; k < nh; k++)
            fprintf(o, "%08x %u\n", lnum[hot[k]] << ls, setof[hot[k]]);
        if (fclose(o) != 0) {
            perror(argv[6]);
            return 1;
        }
    }
    return 0;
oom:
    fprintf(stderr, "line-place: out of memory\n");
    return 1;
}
