/* Cache models against small, plainly written references; hand-made
 * streams with known answers; the stream, map, partial re-simulation,
 * layout files and the analysis. */
#include "cache/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/heat.h"
#include "test.h"

/* ---- Plain references ------------------------------------------------ */

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

/* Set-associative, LRU or FIFO: each way remembers when it was last used
 * and when it was filled; the victim is an empty way, else the oldest. */
typedef struct ref_way {
    int valid;
    uint32_t line;
    uint64_t used, filled;
} ref_way;

static uint64_t ref_sa(const uint32_t *acc, size_t n, uint32_t nsets,
                       uint32_t ways, int fifo, uint8_t *missed)
{
    ref_way *w = calloc((size_t)nsets * ways, sizeof *w);
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t line = acc[i] & CSIM_LINE_MASK;
        int alloc = !(acc[i] & CSIM_NOALLOC);
        ref_way *set = w + (size_t)(line % nsets) * ways;
        int hit = 0;
        for (uint32_t k = 0; k < ways; k++)
            if (set[k].valid && set[k].line == line) {
                set[k].used = i + 1;
                hit = 1;
            }
        if (missed)
            missed[i] = !hit;
        if (hit)
            continue;
        miss++;
        if (!alloc)
            continue;
        uint32_t v = 0;
        for (uint32_t k = 0; k < ways; k++) {
            if (!set[k].valid) {
                v = k;
                break;
            }
            uint64_t a = fifo ? set[k].filled : set[k].used;
            uint64_t b = fifo ? set[v].filled : set[v].used;
            if (a < b)
                v = k;
        }
        set[v] = (ref_way){1, line, i + 1, i + 1};
    }
    free(w);
    return miss;
}

/* Tree-PLRU written as a recursion over halves: each internal node holds
 * which half was used less recently. */
typedef struct ref_plru {
    uint32_t ways;
    int *older;  /* per node (1-based): 0 left half older, 1 right older */
    uint32_t *line;
    int *valid;
} ref_plru;

static void rp_touch(ref_plru *p, uint32_t node, uint32_t lo, uint32_t n,
                     uint32_t w)
{
    if (n == 1)
        return;
    uint32_t half = n / 2;
    if (w < lo + half) {
        p->older[node] = 1; /* right is now older */
        rp_touch(p, 2 * node, lo, half, w);
    } else {
        p->older[node] = 0;
        rp_touch(p, 2 * node + 1, lo + half, half, w);
    }
}

static uint32_t rp_victim(const ref_plru *p, uint32_t node, uint32_t lo,
                          uint32_t n)
{
    if (n == 1)
        return lo;
    uint32_t half = n / 2;
    return p->older[node] ? rp_victim(p, 2 * node + 1, lo + half, half)
                          : rp_victim(p, 2 * node, lo, half);
}

static uint64_t ref_plru_run(const uint32_t *acc, size_t n, uint32_t nsets,
                             uint32_t ways)
{
    ref_plru *s = calloc(nsets, sizeof *s);
    for (uint32_t i = 0; i < nsets; i++) {
        s[i].ways = ways;
        s[i].older = calloc(2 * ways, sizeof(int));
        s[i].line = calloc(ways, sizeof(uint32_t));
        s[i].valid = calloc(ways, sizeof(int));
    }
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t line = acc[i];
        ref_plru *p = &s[line % nsets];
        uint32_t k;
        for (k = 0; k < ways; k++)
            if (p->valid[k] && p->line[k] == line)
                break;
        if (k == ways) {
            miss++;
            for (k = 0; k < ways && p->valid[k]; k++)
                ;
            if (k == ways)
                k = rp_victim(p, 1, 0, ways);
            p->valid[k] = 1;
            p->line[k] = line;
        }
        rp_touch(p, 1, 0, ways, k);
    }
    for (uint32_t i = 0; i < nsets; i++) {
        free(s[i].older);
        free(s[i].line);
        free(s[i].valid);
    }
    free(s);
    return miss;
}

/* Belady by brute force: on a miss with a full cache, scan the future for
 * each cached line and evict the one used last (or never). */
static uint64_t ref_opt(const uint32_t *acc, size_t n, uint32_t cap)
{
    uint32_t *c = malloc(cap * sizeof *c);
    uint32_t used = 0;
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t line = acc[i];
        uint32_t k;
        for (k = 0; k < used && c[k] != line; k++)
            ;
        if (k < used)
            continue;
        miss++;
        if (used < cap) {
            c[used++] = line;
            continue;
        }
        uint32_t victim = 0;
        size_t far = 0;
        for (k = 0; k < used; k++) {
            size_t j;
            for (j = i + 1; j < n && acc[j] != c[k]; j++)
                ;
            if (j > far) {
                far = j;
                victim = k;
            }
        }
        c[victim] = line;
    }
    free(c);
    return miss;
}

/* A random stream with locality: loops over a few regions of lines. */
static uint32_t *random_stream(uint64_t seed, size_t n, uint32_t span)
{
    rng_state = seed;
    uint32_t *a = malloc(n * sizeof *a);
    uint32_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rnd() % 16;
        if (r < 10)
            pos++;
        else if (r < 14)
            pos = rnd() % span;
        else
            pos = (pos + span - 1 - rnd() % 4) % span;
        a[i] = pos % span;
    }
    return a;
}

static tgt_cache geom(uint32_t size, uint32_t ways, uint32_t line,
                      tgt_repl r)
{
    return (tgt_cache){size, ways, line, r, 1, 70};
}

/* ---- Models against the references ------------------------------------ */

static void t_lru_fifo_random_streams(void)
{
    static const struct { uint32_t sets, ways; } gs[] = {
        {1, 1}, {4, 1}, {4, 2}, {16, 2}, {8, 4}, {2, 8}, {1, 16}};
    for (int rep = 0; rep < 2; rep++)
        for (size_t g = 0; g < sizeof gs / sizeof gs[0]; g++)
            for (uint64_t seed = 1; seed <= 6; seed++) {
                size_t n = 5000;
                uint32_t *a = random_stream(seed * 7919 + g, n, 200);
                if (seed % 2) /* some non-allocating accesses */
                    for (size_t i = 0; i < n; i += 7)
                        a[i] |= CSIM_NOALLOC;
                tgt_cache tc = geom(gs[g].sets * gs[g].ways * 8, gs[g].ways, 8,
                                    rep ? TGT_REPL_FIFO : TGT_REPL_LRU);
                cp_err err;
                csim_cache *c = csim_cache_new(&tc, 0, &err);
                T_ASSERT(c);
                uint8_t *want = malloc(n);
                uint64_t ref = ref_sa(a, n, gs[g].sets, gs[g].ways, rep, want);
                uint64_t got = 0;
                for (size_t i = 0; i < n; i++) {
                    int miss = !csim_cache_access(c, a[i]);
                    if (miss != want[i]) {
                        T_FAIL("%s %ux%u seed %llu: access %zu differs",
                               rep ? "fifo" : "lru", gs[g].sets, gs[g].ways,
                               (unsigned long long)seed, i);
                        break;
                    }
                    got += miss;
                }
                T_EQ(got, ref);
                /* The batch path (branch-free for 2-way LRU) agrees. */
                csim_cache_flush(c);
                T_EQ(csim_cache_run(c, a, n), ref);
                free(want);
                free(a);
                csim_cache_free(c);
            }
}

static void t_plru_random_streams(void)
{
    static const uint32_t ways[] = {1, 2, 4, 8, 16};
    for (size_t w = 0; w < 5; w++)
        for (uint64_t seed = 1; seed <= 5; seed++) {
            size_t n = 4000;
            uint32_t *a = random_stream(seed * 31 + w, n, 150);
            tgt_cache tc = geom(4 * ways[w] * 16, ways[w], 16, TGT_REPL_PLRU);
            csim_cache *c = csim_cache_new(&tc, 0, NULL);
            T_ASSERT(c);
            T_EQ(csim_cache_run(c, a, n), ref_plru_run(a, n, 4, ways[w]));
            free(a);
            csim_cache_free(c);
        }
}

static void t_fa_lru_random_streams(void)
{
    static const uint32_t caps[] = {1, 2, 7, 32, 64};
    for (size_t k = 0; k < 5; k++)
        for (uint64_t seed = 1; seed <= 5; seed++) {
            size_t n = 6000;
            uint32_t *a = random_stream(seed * 101 + k, n, 120);
            csim_fa *f = csim_fa_new(caps[k], NULL);
            T_ASSERT(f);
            uint64_t got = 0;
            for (size_t i = 0; i < n; i++)
                got += !csim_fa_access(f, a[i]);
            /* Fully associative = one set of caps[k] ways. */
            T_EQ(got, ref_sa(a, n, 1, caps[k], 0, NULL));
            free(a);
            csim_fa_free(f);
        }
}

static void t_opt_random_streams(void)
{
    static const uint32_t caps[] = {1, 3, 8, 20};
    for (size_t k = 0; k < 4; k++)
        for (uint64_t seed = 1; seed <= 5; seed++) {
            size_t n = 1500;
            uint32_t *a = random_stream(seed * 13 + k, n, 60);
            size_t it[3] = {0, 500, 1000};
            csim_seq q = {a, NULL, n, it, 3};
            uint64_t per[3] = {0, 0, 0};
            int64_t got = csim_opt_run(&q, caps[k], per, NULL);
            T_EQ(got, ref_opt(a, n, caps[k]));
            T_EQ(per[0] + per[1] + per[2], got);
            /* Never worse than LRU of the same capacity. */
            T_ASSERT((uint64_t)got <= ref_sa(a, n, 1, caps[k], 0, NULL));
            free(a);
        }
}

static void t_random_policy(void)
{
    size_t n = 20000;
    uint32_t *a = random_stream(77, n, 400);
    tgt_cache tc = geom(32 * 4 * 8, 4, 8, TGT_REPL_RANDOM);
    csim_cache *c1 = csim_cache_new(&tc, 1, NULL), *c2 = csim_cache_new(&tc, 1, NULL);
    csim_cache *c3 = csim_cache_new(&tc, 2, NULL);
    T_ASSERT(c1 && c2 && c3);
    uint64_t m1 = csim_cache_run(c1, a, n), m2 = csim_cache_run(c2, a, n);
    uint64_t m3 = csim_cache_run(c3, a, n);
    T_EQ(m1, m2); /* same seed, same misses */
    T_ASSERT(m1 != m3 || m1 == 0);
    size_t it[1] = {0};
    csim_seq q = {a, NULL, n, it, 1};
    int64_t opt = csim_opt_run(&q, 128, NULL, NULL);
    T_ASSERT(opt >= 0 && (uint64_t)opt <= m1 && (uint64_t)opt <= m3);
    /* A flush reseeds: the same misses again. */
    csim_cache_flush(c1);
    T_EQ(csim_cache_run(c1, a, n), m1);
    free(a);
    csim_cache_free(c1);
    csim_cache_free(c2);
    csim_cache_free(c3);
}

/* ---- Hand-made streams with known answers ---------------------------- */

static void t_cyclic_pass(void)
{
    /* 65 lines cycled 20 times through a 64-line fully associative LRU
     * cache: every access misses. Belady keeps 63 of them and misses
     * about once per 64 accesses after the first pass. */
    size_t n = 65 * 20;
    uint32_t *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = 1000 + (uint32_t)(i % 65);
    csim_fa *f = csim_fa_new(64, NULL);
    uint64_t fa = 0;
    for (size_t i = 0; i < n; i++)
        fa += !csim_fa_access(f, a[i]);
    T_EQ(fa, n);
    size_t it[1] = {0};
    csim_seq q = {a, NULL, n, it, 1};
    int64_t opt = csim_opt_run(&q, 64, NULL, NULL);
    T_EQ(opt, ref_opt(a, n, 64));
    T_ASSERT(opt < 65 + 40);
    csim_fa_free(f);
    free(a);
}

static void t_three_lines_one_set(void)
{
    /* RP2040 geometry: lines 0x10000000, +8 KiB, +16 KiB share set 0. */
    tgt_cache tc = tgt_find("rp2040")->cache;
    csim_cache *c = csim_cache_new(&tc, 0, NULL);
    T_EQ(csim_cache_nsets(c), 1024);
    uint32_t l0 = 0x10000000 >> 3, l1 = (0x10000000 + 8192) >> 3,
             l2 = (0x10000000 + 16384) >> 3;
    uint64_t miss = 0;
    for (int i = 0; i < 300; i++)
        miss += !csim_cache_access(c, i % 3 == 0 ? l0 : i % 3 == 1 ? l1 : l2);
    T_EQ(miss, 300);
    /* Two of them fit: only the first two accesses miss. */
    csim_cache_flush(c);
    miss = 0;
    for (int i = 0; i < 300; i++)
        miss += !csim_cache_access(c, i % 2 ? l0 : l1);
    T_EQ(miss, 2);
    csim_cache_free(c);
}

static void t_working_set_fits(void)
{
    static const tgt_repl pol[] = {TGT_REPL_LRU, TGT_REPL_FIFO,
                                   TGT_REPL_RANDOM, TGT_REPL_PLRU};
    for (int p = 0; p < 4; p++) {
        tgt_cache tc = geom(16 * 1024, 2, 8, pol[p]);
        csim_cache *c = csim_cache_new(&tc, 5, NULL);
        /* 1,500 consecutive lines (12 KiB) fit 1,024 sets of 2 ways. */
        uint64_t first = csim_cache_span(c, 5000, 5000 + 1499);
        T_EQ(first, 1500);
        for (int pass = 0; pass < 5; pass++)
            T_EQ(csim_cache_span(c, 5000, 5000 + 1499), 0);
        csim_cache_free(c);
    }
}

static void t_noalloc_model(void)
{
    tgt_cache tc = geom(1024, 2, 8, TGT_REPL_LRU);
    csim_cache *c = csim_cache_new(&tc, 0, NULL);
    for (int i = 0; i < 5; i++)
        T_EQ(csim_cache_access(c, 77 | CSIM_NOALLOC), 0);
    T_EQ(csim_cache_access(c, 77), 0);
    T_EQ(csim_cache_access(c, 77 | CSIM_NOALLOC), 1);
    csim_cache_free(c);
}

static void t_bad_geometry(void)
{
    cp_err err;
    tgt_cache tc = geom(3000, 2, 8, TGT_REPL_LRU);
    T_ASSERT(!csim_cache_new(&tc, 0, &err));
    T_ASSERT(strstr(err.msg, "geometry"));
    tc = geom(16 * 1024, 3, 8, TGT_REPL_PLRU);
    T_ASSERT(!csim_cache_new(&tc, 0, &err));
}

/* ---- The stream, the map and partial re-simulation -------------------- */

static trc_rec fetch(uint32_t addr, uint32_t len)
{
    return (trc_rec){TRC_FETCH, addr, len, len / 2, 0};
}
static trc_rec mark(uint32_t k)
{
    return (trc_rec){TRC_MARK, k, 0, 0, 0};
}

/* A random program over n functions of the rp2040 flash: each iteration
 * runs some functions in a fixed order with random entry points. */
static csim_stream *random_program(const img *im, uint64_t seed, int iters,
                                   uint32_t span)
{
    const tgt *t = tgt_find("rp2040");
    csim_stream *s = csim_stream_new(im, t, NULL);
    rng_state = seed;
    csim_stream_add(s, &(trc_rec){TRC_FETCH, 0x10000000, 64, 32, 0}, NULL);
    for (int k = 0; k < iters; k++) {
        trc_rec m = mark((uint32_t)k);
        csim_stream_add(s, &m, NULL);
        uint64_t save = rng_state;
        rng_state = seed; /* the same path every iteration, mostly */
        for (int j = 0; j < 300; j++) {
            uint32_t a = 0x10000000 + (rnd() % span) * 2;
            if (k && j % 37 == k % 37)
                a += 64;
            trc_rec r = fetch(a, 2 + 2 * (rnd() % 40));
            csim_stream_add(s, &r, NULL);
            if (j % 50 == 0) { /* SRAM code and data reads */
                trc_rec x = fetch(0x20000100, 16);
                csim_stream_add(s, &x, NULL);
                trc_rec d = {TRC_DREAD, a + 200, 4, 0, 0};
                csim_stream_add(s, &d, NULL);
            }
        }
        rng_state = save;
    }
    csim_stream_finish(s, NULL);
    return s;
}

static void t_stream_basics(void)
{
    const tgt *t = tgt_find("rp2040");
    cp_err err;
    csim_stream *s = csim_stream_new(NULL, t, &err);
    T_ASSERT(s);
    trc_rec pro = fetch(0x10000000, 8);
    T_EQ(csim_stream_add(s, &pro, &err), 0);
    trc_rec m0 = mark(0), m1 = mark(1);
    T_EQ(csim_stream_add(s, &m0, &err), 0);
    /* A run across a 4 KiB block boundary is two runs of two blocks. */
    trc_rec r = fetch(0x10000ff8, 16);
    T_EQ(csim_stream_add(s, &r, &err), 0);
    T_EQ(csim_stream_add(s, &m1, &err), 0);
    T_EQ(csim_stream_add(s, &r, &err), 0);
    T_EQ(csim_stream_finish(s, &err), 0);
    T_EQ(csim_stream_niters(s), 2);
    T_EQ(csim_stream_prologue(s), 1);
    T_EQ(csim_stream_nruns(s), 4);
    T_EQ(csim_stream_nfns(s), 2);
    T_STREQ(csim_stream_fn(s, 0)->name, "?0x10000000");
    T_STREQ(csim_stream_fn(s, 1)->name, "?0x10001000");
    T_EQ(csim_stream_iter_insns(s, 1), 8);
    csim_map *m = csim_map_new(s);
    csim_eval_result e;
    T_EQ(csim_eval(s, m, &t->cache, 0, &e, &err), 0);
    T_EQ(e.accesses, 4);
    T_EQ(e.misses, 2); /* cold: two lines; warm: hits */
    T_EQ(csim_eval(s, m, &t->cache, 1, &e, &err), 0);
    T_EQ(e.misses, 0);
    T_EQ(e.accesses, 2);
    csim_map_free(m);
    csim_stream_free(s);
}

static void t_uncached_and_noalloc(void)
{
    const tgt *t = tgt_find("rp2040");
    csim_stream *s = csim_stream_new(NULL, t, NULL);
    trc_rec m0 = mark(0);
    csim_stream_add(s, &m0, NULL);
    for (int i = 0; i < 10; i++) {
        trc_rec a = fetch(0x20000000, 64);              /* SRAM */
        trc_rec b = fetch(0x10000000, 64);              /* flagged */
        b.flags = TRC_F_UNCACHED;
        trc_rec c = fetch(0x11000400, 8);               /* no-allocate */
        csim_stream_add(s, &a, NULL);
        csim_stream_add(s, &b, NULL);
        csim_stream_add(s, &c, NULL);
    }
    csim_stream_finish(s, NULL);
    csim_map *m = csim_map_new(s);
    csim_eval_result e;
    T_EQ(csim_eval(s, m, &t->cache, 0, &e, NULL), 0);
    T_EQ(e.accesses, 10);
    T_EQ(e.misses, 10);
    /* The same code through the allocating window: one miss. */
    size_t fn = csim_stream_find(s, "?0x11000000");
    T_ASSERT(fn != (size_t)-1);
    T_EQ(csim_map_kind(m, fn), CSIM_NOFILL);
    csim_map_move(m, fn, 0x10000000);
    T_EQ(csim_eval(s, m, &t->cache, 0, &e, NULL), 0);
    T_EQ(e.misses, 1);
    csim_map_free(m);
    csim_stream_free(s);
}

static void t_eval_sets_matches(void)
{
    const tgt *t = tgt_find("rp2040");
    for (int pol = 0; pol < 4; pol++) {
        tgt_cache g = t->cache;
        g.size = 2048; /* 128 sets: conflicts */
        g.repl = (tgt_repl)pol;
        csim_stream *s = random_program(NULL, 1234 + (uint64_t)pol, 6, 3000);
        csim_map *m = csim_map_new(s);
        uint32_t nsets = tgt_cache_sets(&g);
        uint64_t *per = calloc(nsets, sizeof *per), sum = 0;
        csim_eval_result e;
        T_EQ(csim_eval(s, m, &g, 1, &e, NULL), 0);
        T_EQ(csim_eval_per_set(s, m, &g, 1, per, NULL), 0);
        for (uint32_t i = 0; i < nsets; i++)
            sum += per[i];
        T_EQ(sum, e.misses);
        /* Move the block holding 0x10000000 by 200 bytes (not a multiple
         * of the line): only the sets it leaves and enters change. */
        uint32_t *sets = malloc(nsets * sizeof *sets);
        size_t fn = csim_stream_find(s, "?0x10000000");
        T_ASSERT(fn != (size_t)-1);
        size_t n = csim_func_sets(s, m, &g, fn, sets, 0);
        T_ASSERT(n > 0);
        csim_map_move(m, fn, 0x10000000 + 8 * 4096 + 202);
        n = csim_func_sets(s, m, &g, fn, sets, n);
        uint64_t *now = calloc(n, sizeof *now), before = 0, after = 0;
        T_EQ(csim_eval_sets(s, m, &g, 1, sets, n, now, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            before += per[sets[i]];
            after += now[i];
        }
        csim_eval_result e2;
        T_EQ(csim_eval(s, m, &g, 1, &e2, NULL), 0);
        T_EQ(e.misses - before + after, e2.misses);
        /* Every set re-simulated alone equals the whole run. */
        uint64_t *per2 = calloc(nsets, sizeof *per2);
        T_EQ(csim_eval_per_set(s, m, &g, 1, per2, NULL), 0);
        for (uint32_t i = 0; i < nsets; i++)
            sets[i] = i;
        T_EQ(csim_eval_sets(s, m, &g, 1, sets, nsets, per, NULL), 0);
        for (uint32_t i = 0; i < nsets; i++)
            T_EQ(per[i], per2[i]);
        free(per2);
        free(now);
        free(sets);
        free(per);
        csim_map_free(m);
        csim_stream_free(s);
    }
}

/* ---- The analysis ------------------------------------------------------ */

static void t_analysis_adds_up(void)
{
    const tgt *t = tgt_find("rp2040");
    for (int pol = 0; pol < 4; pol++) {
        tgt_cache g = t->cache;
        g.size = 4096;
        g.repl = (tgt_repl)pol;
        csim_stream *s = random_program(NULL, 99 + (uint64_t)pol, 5, 6000);
        csim_map *m = csim_map_new(s);
        csim_report r;
        cp_err err;
        T_EQ(csim_analyze(s, m, &g, 0, &r, &err), 0);
        T_EQ(r.niter, 5);
        T_EQ(r.from, 1);
        csim_seq q;
        T_EQ(csim_expand(s, m, &g, &q, &err), 0);
        uint64_t misses = 0, fsum = 0;
        for (size_t k = 0; k < r.niter; k++) {
            const csim_iter *it = &r.iter[k];
            /* compulsory + capacity + conflict = misses */
            int64_t cap = (int64_t)it->fa_misses - (int64_t)it->compulsory;
            int64_t conf = (int64_t)it->misses - (int64_t)it->fa_misses;
            T_EQ((int64_t)it->compulsory + cap + conf, it->misses);
            T_ASSERT(cap >= 0);
            T_ASSERT(it->ideal <= it->fa_misses);
            T_ASSERT(it->misses <= it->accesses);
            size_t end = k + 1 < q.niter ? q.iter[k + 1] : q.n;
            T_EQ(it->accesses, end - q.iter[k]);
            if (k >= r.from)
                misses += it->misses;
        }
        /* The cold iteration's compulsory misses are its footprint. */
        T_EQ(r.iter[0].compulsory, r.iter[0].footprint);
        for (size_t i = 0; i < r.nfstat; i++)
            fsum += r.fstat[i].misses;
        T_EQ(fsum, misses);
        uint64_t ssum = 0;
        for (uint32_t i = 0; i < r.nsets; i++)
            ssum += r.sstat[i].misses;
        T_EQ(ssum, misses);
        T_EQ(r.warm_sum.misses, misses);
        /* With seed 0 csim_eval agrees with the analysis. */
        csim_eval_result e;
        T_EQ(csim_eval(s, m, &g, 1, &e, &err), 0);
        T_EQ(e.misses, misses);
        /* Against the reference models over the same line stream. */
        if (pol <= 1) {
            uint64_t total = 0;
            for (size_t k = 0; k < r.niter; k++)
                total += r.iter[k].misses;
            T_EQ(total, ref_sa(q.acc, q.n, r.nsets, g.ways, pol, NULL));
        }
        uint64_t fa = 0, ideal = 0;
        for (size_t k = 0; k < r.niter; k++) {
            fa += r.iter[k].fa_misses;
            ideal += r.iter[k].ideal;
        }
        T_EQ(fa, ref_sa(q.acc, q.n, 1, r.nsets * g.ways, 0, NULL));
        T_EQ(ideal, ref_opt(q.acc, q.n, r.nsets * g.ways));
        csim_seq_free(&q);
        csim_report_free(&r);
        csim_map_free(m);
        csim_stream_free(s);
    }
}

static void t_analysis_hot_sets(void)
{
    /* Each iteration touches three lines of set 5 and two of set 9 in a
     * 2-way cache: set 5 holds more hot lines than ways. */
    const tgt *t = tgt_find("rp2040");
    csim_stream *s = csim_stream_new(NULL, t, NULL);
    for (int k = 0; k < 4; k++) {
        trc_rec m = mark((uint32_t)k);
        csim_stream_add(s, &m, NULL);
        for (uint32_t w = 0; w < 3; w++) {
            trc_rec r = fetch(0x10000000 + w * 8192 + 5 * 8, 8);
            csim_stream_add(s, &r, NULL);
        }
        for (uint32_t w = 0; w < 2; w++) {
            trc_rec r = fetch(0x10000000 + w * 8192 + 9 * 8, 8);
            csim_stream_add(s, &r, NULL);
        }
    }
    csim_stream_finish(s, NULL);
    csim_map *m = csim_map_new(s);
    csim_report r;
    T_EQ(csim_analyze(s, m, &t->cache, 0, &r, NULL), 0);
    T_EQ(r.sstat[5].hot, 3);
    T_EQ(r.sstat[9].hot, 2);
    T_EQ(r.overfull_sets, 1);
    T_EQ(r.hot_lines, 5);
    T_EQ(r.iter[0].misses, 5);
    T_EQ(r.iter[1].misses, 3);   /* set 5 misses every access */
    T_EQ(r.iter[1].fa_misses, 0); /* five lines fit 2,048 */
    T_EQ(r.iter[1].ideal, 0);
    T_EQ(r.warm_median, 3);
    T_EQ(r.iter[1].footprint, 5);
    T_ASSERT(r.sstat[5].lines > 2.99 && r.sstat[5].lines < 3.01);
    char buf[4096];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    rep_heat_text(f, &r, 64);
    fclose(f);
    T_ASSERT(!strncmp(buf, "      0  .....3...2....", 23));
    csim_report_free(&r);
    csim_map_free(m);
    csim_stream_free(s);
}

/* ---- With an ELF: functions, layouts ---------------------------------- */

static img *open_m0(void)
{
    char elf[512], map[512];
    snprintf(elf, sizeof elf, "%s/m0.elf", t_fixture_dir());
    snprintf(map, sizeof map, "%s/m0.map", t_fixture_dir());
    return img_open(elf, map, NULL);
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static void t_layout_moves_functions(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    const img_func *sum = img_find(im, "fx_sum"), *sc = img_find(im, "fx_scale");
    T_ASSERT(sum && sc);
    csim_stream *s = csim_stream_new(im, t, NULL);
    for (int k = 0; k < 3; k++) {
        trc_rec m = mark((uint32_t)k);
        csim_stream_add(s, &m, NULL);
        trc_rec a = fetch(sum->addr, sum->size), b = fetch(sc->addr, sc->size);
        csim_stream_add(s, &a, NULL);
        csim_stream_add(s, &b, NULL);
    }
    csim_stream_finish(s, NULL);
    size_t fsum = csim_stream_find(s, "fx_sum"), fsc = csim_stream_find(s, "fx_scale");
    T_EQ(csim_stream_find(s, "fx_sum_alias"), fsum);
    char at[64];
    snprintf(at, sizeof at, "fx_sum@0x%x", sum->addr);
    T_EQ(csim_stream_find(s, at), fsum);
    T_EQ(csim_stream_fn_insns(s, fsum, 1), sum->size); /* two warm iters */
    tgt_cache g = t->cache;
    /* Put fx_scale in the same set as fx_sum's first line, 2 ways apart,
     * and a third copy-free conflict does not exist: still all hits warm. */
    char path[] = "/tmp/cp-layout-XXXXXX";
    int fd = mkstemp(path);
    T_ASSERT(fd >= 0);
    close(fd);
    char text[1024];
    snprintf(text, sizeof text,
             "# codeplace layout 1\n# target: rp2040\n"
             "# name region place size reason\n"
             "fx_scale  sram   -       %u  ram: hot\n"
             "fx_sum    flash  set:17  %u  colour\n"
             "no_such   flash  0x10001000 4 gone\n",
             sc->size, sum->size);
    T_EQ(write_file(path, text), 0);
    csim_map *m = csim_map_new(s);
    csim_layout_stats st;
    cp_err err;
    T_EQ(csim_layout_apply(path, s, m, &g, &st, &err), 0);
    T_EQ(st.placed, 2);
    T_EQ(st.to_ram, 1);
    T_EQ(st.coloured, 1);
    T_EQ(st.missing, 1);
    T_STREQ(st.first_missing, "no_such");
    T_EQ(csim_map_kind(m, fsc), CSIM_UNCACHED);
    T_EQ((csim_map_addr(m, fsum) >> 3) & 1023, 17);
    T_EQ(csim_map_addr(m, fsum) % 8, 0);
    csim_report r;
    T_EQ(csim_analyze(s, m, &g, 0, &r, &err), 0);
    T_EQ(r.iter[0].misses, sum->size / 8); /* line-aligned now */
    T_EQ(r.iter[1].misses, 0);
    T_EQ(r.uncached_insns, 2 * (sc->size / 2));
    csim_report_free(&r);

    /* Errors name the file and line. */
    static const char *const bad[] = {
        "# codeplace layout 4\n",
        "fx_sum flash set:1 4 x\n",
        "# codeplace layout 1\nfx_sum flash set:5000 32 x\n",
        "# codeplace layout 1\nfx_sum flash 0x20000000 32 x\n",
        "# codeplace layout 1\nfx_sum moon 0x10000000 32 x\n",
        "# codeplace layout 1\nfx_sum flash 0x10000000\n",
        "# codeplace layout 1\nfx_sum sram - 32 x\nfx_sum sram - 32 x\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_EQ(write_file(path, bad[i]), 0);
        csim_map *m2 = csim_map_new(s);
        if (csim_layout_apply(path, s, m2, &g, &st, &err) != -1)
            T_FAIL("bad layout %zu accepted", i);
        else if (!strstr(err.msg, path))
            T_FAIL("error does not name the file: %s", err.msg);
        csim_map_free(m2);
    }
    /* Overlap: fx_scale moved onto fx_sum. */
    snprintf(text, sizeof text, "# codeplace layout 1\nfx_scale flash 0x%x 8 x\n",
             sum->addr + 4);
    T_EQ(write_file(path, text), 0);
    csim_map *m3 = csim_map_new(s);
    T_EQ(csim_layout_apply(path, s, m3, &g, &st, &err), -1);
    T_ASSERT(strstr(err.msg, "overlaps"));
    csim_map_free(m3);
    /* Functions that overlap in the image (libgcc's __aeabi_cdrcmple falls
     * into __aeabi_cdcmpeq) may move together, not apart. */
    const img_func *c1 = img_find(im, "__aeabi_cdrcmple");
    const img_func *c2 = img_find(im, "__aeabi_cdcmpeq");
    T_ASSERT(c1 && c2 && c2->addr < c1->addr + c1->size);
    snprintf(text, sizeof text, "# codeplace layout 1\n"
             "__aeabi_cdrcmple flash 0x10030000 %u x\n"
             "__aeabi_cdcmpeq flash 0x%x %u x\n", c1->size,
             0x10030000 + (c2->addr - c1->addr), c2->size);
    T_EQ(write_file(path, text), 0);
    m3 = csim_map_new(s);
    T_EQ(csim_layout_apply(path, s, m3, &g, &st, &err), 0);
    csim_map_free(m3);
    snprintf(text, sizeof text, "# codeplace layout 1\n"
             "__aeabi_cdrcmple flash 0x10030000 %u x\n", c1->size);
    T_EQ(write_file(path, text), 0);
    m3 = csim_map_new(s);
    T_EQ(csim_layout_apply(path, s, m3, &g, &st, &err), 0); /* apart: fine */
    csim_map_free(m3);
    snprintf(text, sizeof text, "# codeplace layout 1\n"
             "__aeabi_cdrcmple flash 0x%x %u x\n", c2->addr + 2, c1->size);
    T_EQ(write_file(path, text), 0);
    m3 = csim_map_new(s);
    T_EQ(csim_layout_apply(path, s, m3, &g, &st, &err), -1);
    csim_map_free(m3);
    unlink(path);
    csim_map_free(m);
    csim_stream_free(s);
    img_free(im);
}

/* Partial re-simulation over many small functions (the gather-and-sort
 * path; moving one of 30 touches few runs) against the whole run. */
static void t_eval_sets_functions(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    tgt_cache g = t->cache;
    g.size = 1024; /* 64 sets: functions collide */
    csim_stream *s = csim_stream_new(im, t, NULL);
    size_t nf = 0, pick[30];
    for (size_t i = 0; i < img_nfuncs(im) && nf < 30; i++)
        if (img_func_at(im, i)->size >= 16)
            pick[nf++] = i;
    T_ASSERT(nf >= 10);
    rng_state = 4242;
    for (int k = 0; k < 5; k++) {
        trc_rec mk = mark((uint32_t)k);
        csim_stream_add(s, &mk, NULL);
        for (int j = 0; j < 400; j++) {
            const img_func *f = img_func_at(im, pick[rnd() % nf]);
            uint32_t off = (rnd() % (f->size / 2)) * 2;
            uint32_t len = 2 + 2 * (rnd() % ((f->size - off) / 2));
            trc_rec r = fetch(f->addr + off, len);
            csim_stream_add(s, &r, NULL);
        }
    }
    T_EQ(csim_stream_finish(s, NULL), 0);
    csim_map *m = csim_map_new(s);
    uint32_t nsets = tgt_cache_sets(&g);
    uint64_t *per = calloc(nsets, sizeof *per);
    T_EQ(csim_eval_per_set(s, m, &g, 1, per, NULL), 0);
    csim_eval_result e;
    T_EQ(csim_eval(s, m, &g, 1, &e, NULL), 0);
    uint64_t total = e.misses;
    uint32_t *sets = malloc(nsets * sizeof *sets);
    for (int mv = 0; mv < 12; mv++) {
        size_t fn = pick[rnd() % nf];
        size_t n = csim_func_sets(s, m, &g, fn, sets, 0);
        csim_map_move(m, fn, 0x10040000 + (uint32_t)mv * 1000 + 2 * (rnd() % 8));
        n = csim_func_sets(s, m, &g, fn, sets, n);
        uint64_t *now = calloc(n ? n : 1, sizeof *now);
        T_EQ(csim_eval_sets(s, m, &g, 1, sets, n, now, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            total = total - per[sets[i]] + now[i];
            per[sets[i]] = now[i];
        }
        free(now);
        T_EQ(csim_eval(s, m, &g, 1, &e, NULL), 0);
        T_EQ(total, e.misses);
    }
    /* The set index follows the same moves (and RAM, and back). */
    for (int pol = 0; pol < 4; pol++) {
        g.repl = (tgt_repl)pol;
        csim_map *m2 = csim_map_new(s);
        csim_setidx *x = csim_setidx_new(s, m2, &g, 1, NULL);
        T_ASSERT(x);
        T_EQ(csim_eval(s, m2, &g, 1, &e, NULL), 0);
        T_EQ(csim_setidx_misses(x), e.misses);
        for (int mv = 0; mv < 15; mv++) {
            size_t fn = pick[rnd() % nf];
            int64_t got;
            if (mv % 5 == 4) {
                got = csim_setidx_uncache(x, fn, NULL);
                csim_map_uncache(m2, fn);
            } else if (mv % 5 == 3) {
                uint32_t back = csim_stream_fn(s, fn)->addr;
                got = csim_setidx_move(x, fn, back, NULL);
                csim_map_move(m2, fn, back);
            } else {
                uint32_t a = 0x10040000 + (uint32_t)mv * 1000 + 2 * (rnd() % 8);
                got = csim_setidx_move(x, fn, a, NULL);
                csim_map_move(m2, fn, a);
            }
            T_EQ(csim_eval(s, m2, &g, 1, &e, NULL), 0);
            if ((uint64_t)got != e.misses)
                T_FAIL("policy %d move %d (fn %zu)", pol, mv, fn);
            T_EQ(got, e.misses);
        }
        uint64_t *ps = calloc(nsets, sizeof *ps);
        T_EQ(csim_eval_per_set(s, m2, &g, 1, ps, NULL), 0);
        for (uint32_t i = 0; i < nsets; i++)
            T_EQ(csim_setidx_set_misses(x, i), ps[i]);
        free(ps);
        csim_setidx_free(x);
        csim_map_free(m2);
    }
    free(sets);
    free(per);
    csim_map_free(m);
    csim_stream_free(s);
    img_free(im);
}

/* The one layout reader: every line's shape, in order, and the errors
 * naming the file and line. */
typedef struct seen_lines {
    char got[512];
} seen_lines;

static int on_line(void *ctx, const csim_layout_line *l, cp_err *err)
{
    seen_lines *x = ctx;
    char b[128];
    (void)err;
    switch (l->kind) {
    case CSIM_LAYOUT_COMMENT:
        snprintf(b, sizeof b, "%u:# ", l->line);
        break;
    case CSIM_LAYOUT_ENTRY:
        snprintf(b, sizeof b, "%u:%s %s %s %u ", l->line, l->name, l->region,
                 l->place, l->size);
        break;
    case CSIM_LAYOUT_SHIFT:
        snprintf(b, sizeof b, "%u:shift %x %lld ", l->line, l->shift_from,
                 l->shift_by);
        break;
    case CSIM_LAYOUT_STUB:
        snprintf(b, sizeof b, "%u:stub %x %u %u %s v%u ", l->line,
                 l->stub_addr, l->stub_bytes, l->stub_insns, l->stub_target,
                 l->version);
        break;
    }
    strncat(x->got, b, sizeof x->got - strlen(x->got) - 1);
    return 0;
}

static void t_layout_reader(void)
{
    static const char good[] =
        "# codeplace layout 2\r\n"
        "# target: rp2040  image: fnv1a64:00  strategy: colour\n"
        "\n"
        "  f flash 0x10000100 24 hot\n"
        "g sram - 0x10 rank\n"
        "@shift 0x10004000 -16\n"
        "@stub 0x10000200 16 5 f@0x10000100\n";
    seen_lines x = {""};
    cp_err err;
    T_EQ(csim_layout_read("a.layout", good, strlen(good), on_line, &x, &err),
         0);
    T_STREQ(x.got, "2:# 4:f flash 0x10000100 24 5:g sram - 16 "
                   "6:shift 10004000 -16 7:stub 10000200 16 5 "
                   "f@0x10000100 v2 ");
    char h[32];
    T_EQ(csim_layout_image_text(good, strlen(good), h, sizeof h), 1);
    T_STREQ(h, "fnv1a64:00");
    static const struct {
        const char *text, *err;
    } bad[] = {
        {"", "a.layout: empty file, not a layout"},
        {"name flash 0x10000000 4 x\n",
         "a.layout:1: not a layout file (expected '# codeplace layout 2')"},
        {"# codeplace layout 4\n",
         "a.layout:1: layout version 4; this codeplace reads versions 1 to 3"},
        {"# codeplace layout 2\n@stub 0x10000000 8 1 f from:0x10000010\n",
         "a.layout:2: from: on an @stub line needs layout version 3 (the "
         "file says 2)"},
        {"# codeplace layout 2\nf flash 0x10000000\n",
         "a.layout:2: expected NAME REGION PLACE SIZE REASON"},
        {"# codeplace layout 2\nf flash 0x10000000 big x\n",
         "a.layout:2: bad size 'big'"},
        {"# codeplace layout 1\n@stub 0x10000000 8 1 f\n",
         "a.layout:2: @stub lines need layout version 2 (the file says 1)"},
        {"# codeplace layout 2\n\n@stub 0x10000000 99 1 f\n",
         "a.layout:3: expected '@stub 0xADDR SIZE INSNS TARGET "
         "[from:0xSITE,...]' (SIZE 1..64 bytes, INSNS 0..64)"},
        {"# codeplace layout 2\n@shift 0x10 -17\n",
         "a.layout:2: expected '@shift 0xFROM DELTA'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        seen_lines y = {""};
        err.msg[0] = 0;
        T_EQ(csim_layout_read("a.layout", bad[i].text, strlen(bad[i].text),
                              on_line, &y, &err), -1);
        T_STREQ(err.msg, bad[i].err);
    }
    static const char none[] = "# codeplace layout 2\nf flash 0 4 x\n";
    T_EQ(csim_layout_image_text(none, strlen(none), h, sizeof h), 0);
}

/* main calls fx_sum with the BL at main + 0x32. The stubs of a layout are
 * taken when a map is evaluated: with fx_sum in SRAM and main in flash the
 * call fetches the stub that names its branch (not the one for every
 * other branch), whose first line shares a set with main's and two data
 * reads' (four lines in a 2-way set: misses); with main in SRAM as well,
 * no stub (the two reads alone fit). The set index follows a caller's
 * move between the sides. */
static void t_stubs_at_evaluation(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    const img_func *mn = img_find(im, "main"), *sum = img_find(im, "fx_sum");
    T_ASSERT(mn && sum && mn->addr == 0x10000040);
    csim_stream *s = csim_stream_new(im, t, NULL);
    for (int k = 0; k < 3; k++) {
        trc_rec r[] = {mark((uint32_t)k), fetch(mn->addr, 0x36),
                       fetch(sum->addr, 8), fetch(mn->addr + 0x36, 4),
                       {TRC_DREAD, 0x10002040, 8, 0, 0},
                       {TRC_DREAD, 0x10006040, 8, 0, 0}};
        for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
            T_EQ(csim_stream_add(s, &r[i], NULL), 0);
    }
    T_EQ(csim_stream_finish(s, NULL), 0);
    uint32_t site = mn->addr + 0x32, other = mn->addr + 0x3a;
    csim_stub st[] = {{0x10006000, 16, 5, sum->addr, &other, 1},
                      {0x10004040, 16, 5, sum->addr, &site, 1},
                      {0x10008000, 16, 5, sum->addr, NULL, 0}};
    cp_err err;
    T_EQ(csim_stream_set_stubs(s, st, 3, &err), 0);
    size_t n = csim_stream_nfns(s), fmain = csim_stream_find(s, "main");
    size_t fsum = csim_stream_find(s, "fx_sum");
    T_EQ(csim_stream_fn(s, n - 2)->flags, CSIM_FN_STUB);
    tgt_cache g = t->cache;
    csim_map *m = csim_map_new(s);
    csim_map_uncache(m, fsum);
    csim_report r;
    T_EQ(csim_analyze(s, m, &g, 0, &r, &err), 0);
    T_EQ(r.iter[1].insns, 0x36 / 2 + 8 / 2 + 4 / 2 + 5);
    uint64_t stub_acc[3] = {0};
    for (size_t i = 0; i < r.nfstat; i++)
        if (r.fstat[i].fn >= n - 3)
            stub_acc[r.fstat[i].fn - (n - 3)] = r.fstat[i].accesses;
    T_EQ(stub_acc[0], 0);
    T_EQ(stub_acc[1], 2 * 2); /* two lines, two warm iterations */
    T_EQ(stub_acc[2], 0);
    csim_report_free(&r);
    csim_eval_result a, b;
    T_EQ(csim_eval(s, m, &g, 1, &a, &err), 0);
    T_ASSERT(a.misses > 0);
    csim_setidx *x = csim_setidx_new(s, m, &g, 1, &err);
    T_ASSERT(x);
    T_EQ(csim_setidx_misses(x), a.misses);
    csim_map *m2 = csim_map_copy(m);
    csim_map_uncache(m2, fmain);
    T_EQ(csim_eval(s, m2, &g, 1, &b, &err), 0);
    T_EQ(b.misses, 0);
    T_EQ(csim_setidx_uncache(x, fmain, &err), (int64_t)b.misses);
    T_EQ(csim_setidx_move(x, fmain, mn->addr, &err), (int64_t)a.misses);
    csim_setidx_free(x);
    csim_map_free(m2);
    csim_map_free(m);
    csim_stream_free(s);
    img_free(im);
}

static const t_case cases[] = {
    {"layout_reader", t_layout_reader},
    {"lru_fifo_random_streams", t_lru_fifo_random_streams},
    {"plru_random_streams", t_plru_random_streams},
    {"fa_lru_random_streams", t_fa_lru_random_streams},
    {"opt_random_streams", t_opt_random_streams},
    {"random_policy", t_random_policy},
    {"cyclic_pass", t_cyclic_pass},
    {"three_lines_one_set", t_three_lines_one_set},
    {"working_set_fits", t_working_set_fits},
    {"noalloc_model", t_noalloc_model},
    {"bad_geometry", t_bad_geometry},
    {"stream_basics", t_stream_basics},
    {"uncached_and_noalloc", t_uncached_and_noalloc},
    {"eval_sets_matches", t_eval_sets_matches},
    {"analysis_adds_up", t_analysis_adds_up},
    {"analysis_hot_sets", t_analysis_hot_sets},
    {"layout_moves_functions", t_layout_moves_functions},
    {"eval_sets_functions", t_eval_sets_functions},
    {"stubs_at_evaluation", t_stubs_at_evaluation},
    {NULL, NULL},
};

T_MAIN(cases)
