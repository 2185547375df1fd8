/* sim-bench: speed of the cache models on synthetic streams (bench/sim.sh).
 *   sim-bench [MILLION_INSNS [ELF TRACE]]   (default 100)
 * 1. The 2-way LRU kernel and the generic model over an array of line
 *    numbers with code-like locality.
 * 2. A synthetic program (fetch runs over 64 KiB of flash, a fixed path per
 *    iteration) of MILLION_INSNS million instructions loaded into a stream:
 *    whole re-simulation, the ideal bound, the full analysis, and moving one
 *    function with partial re-simulation.
 * 3. With ELF and TRACE: moves of the traced image's functions, each
 *    re-evaluated by partial re-simulation, against one whole re-simulation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache.h"

/* CPU time of this process: the machine is shared, wall time is not a
 * measure of the code. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rs = 88172645463325252ULL;
static uint32_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs >> 16);
}

/* Lines of a code-like stream: sequential runs of 1-6 lines, jumps within a
 * 40 KiB footprint, a path that repeats. */
static uint32_t *line_stream(size_t n)
{
    uint32_t *a = malloc(n * sizeof *a);
    if (!a)
        return NULL;
    size_t plen = 200000;
    uint32_t *path = malloc(plen * sizeof *path);
    uint32_t base = 0x10000000 >> 3, pos = base;
    for (size_t i = 0; i < plen; i++) {
        if (rnd() % 3 == 0)
            pos = base + rnd() % 5120;
        else
            pos++;
        path[i] = pos;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = path[i % plen];
    free(path);
    return a;
}

/* The plain loop the kernel is measured against: 2-way LRU with branches. */
static uint64_t naive_lru2(const uint32_t *a, size_t n, uint32_t nsets)
{
    uint32_t *tag = malloc(2 * nsets * sizeof *tag);
    memset(tag, 0xff, 2 * nsets * sizeof *tag);
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t *t = tag + 2 * (a[i] & (nsets - 1));
        if (t[0] == a[i])
            continue;
        if (t[1] != a[i])
            miss++;
        t[1] = t[0];
        t[0] = a[i];
    }
    free(tag);
    return miss;
}

typedef struct blk {
    uint32_t addr, len;
} blk;

int main(int argc, char **argv)
{
    double minsn = argc > 1 ? atof(argv[1]) : 100;
    const tgt *t = tgt_find("rp2040");
    cp_err err;

    /* 1. Kernels. */
    size_t n = 200u * 1000 * 1000;
    uint32_t *lines = line_stream(n);
    if (!lines)
        return 1;
    csim_cache *c = csim_cache_new(&t->cache, 1, &err);
    double t0 = now();
    uint64_t m = csim_cache_run(c, lines, n);
    double dt = now() - t0;
    printf("2-way LRU kernel (csim_cache_run): %zu line accesses, %llu misses,"
           " %.2f s, %.0f M accesses/s\n", n, (unsigned long long)m, dt,
           n / dt / 1e6);
    t0 = now();
    uint64_t m2 = naive_lru2(lines, n, 1024);
    dt = now() - t0;
    printf("plain branchy 2-way LRU loop, for comparison: %.0f M accesses/s "
           "(%s misses)\n", n / dt / 1e6, m2 == m ? "same" : "DIFFERENT");
    csim_cache_flush(c);
    size_t n2 = n / 4;
    t0 = now();
    m = 0;
    for (size_t i = 0; i < n2; i++)
        m += !csim_cache_access(c, lines[i]);
    dt = now() - t0;
    printf("generic model, 2-way LRU (csim_cache_access per line): %.0f M "
           "accesses/s\n", n2 / dt / 1e6);
    csim_cache_free(c);
    tgt_cache g4 = t->cache;
    tgt_parse_cache("16K,4,8,plru", &g4, &err);
    c = csim_cache_new(&g4, 1, &err);
    t0 = now();
    m = csim_cache_run(c, lines, n2);
    dt = now() - t0;
    printf("generic model, 4-way tree-PLRU: %.0f M accesses/s\n",
           n2 / dt / 1e6);
    csim_cache_free(c);
    free(lines);

    /* 2. A synthetic program in a stream. */
    size_t nblk = 3000;
    blk *b = malloc(nblk * sizeof *b);
    for (size_t i = 0; i < nblk; i++) {
        b[i].addr = 0x10000000 + (rnd() % (64 * 1024 / 2)) * 2;
        b[i].len = 4 + 2 * (rnd() % 18);
    }
    size_t plen = 12000;
    uint32_t *path = malloc(plen * sizeof *path);
    for (size_t i = 0; i < plen; i++)
        path[i] = rnd() % nblk;
    csim_stream *s = csim_stream_new(NULL, t, &err);
    uint64_t insns = 0, target = (uint64_t)(minsn * 1e6);
    uint32_t k = 0;
    t0 = now();
    while (insns < target) {
        trc_rec mk = {TRC_MARK, k++, 0, 0, 0};
        csim_stream_add(s, &mk, &err);
        for (size_t i = 0; i < plen && insns < target; i++) {
            const blk *x = &b[path[i]];
            trc_rec r = {TRC_FETCH, x->addr, x->len, x->len / 2, 0};
            if (csim_stream_add(s, &r, &err) < 0) {
                fprintf(stderr, "sim-bench: %s\n", err.msg);
                return 1;
            }
            insns += r.ninsn;
        }
    }
    csim_stream_finish(s, &err);
    printf("synthetic program: %.0f M instruction fetches in %zu fetch runs, "
           "%zu iterations (loaded in %.2f s)\n", insns / 1e6,
           csim_stream_nruns(s), csim_stream_niters(s), now() - t0);
    csim_map *mp = csim_map_new(s);
    csim_eval_result e;
    t0 = now();
    csim_eval(s, mp, &t->cache, 1, &e, &err);
    dt = now() - t0;
    printf("whole re-simulation (csim_eval, 2-way LRU): %.2f s, %.0f M line "
           "accesses/s, %.0f M fetch runs/s\n", dt, e.accesses / dt / 1e6,
           csim_stream_nruns(s) / dt / 1e6);
    csim_seq q;
    t0 = now();
    if (csim_expand(s, mp, &t->cache, &q, &err) < 0) {
        fprintf(stderr, "sim-bench: %s\n", err.msg);
        return 1;
    }
    double texp = now() - t0;
    t0 = now();
    int64_t opt = csim_opt_run(&q, 2048, NULL, &err);
    dt = now() - t0;
    printf("ideal bound (csim_expand + csim_opt_run): %zu line accesses, "
           "%lld misses, %.2f s (expand %.2f s)\n", q.n, (long long)opt,
           dt + texp, texp);
    csim_seq_free(&q);
    csim_report r;
    t0 = now();
    if (csim_analyze(s, mp, &t->cache, 1, &r, &err) < 0) {
        fprintf(stderr, "sim-bench: %s\n", err.msg);
        return 1;
    }
    dt = now() - t0;
    printf("full analysis (csim_analyze: set-assoc, fully assoc, infinite, "
           "ideal, per function/set): %.2f s\n", dt);
    csim_report_free(&r);
    /* Moving one 4 KiB block and re-simulating only its sets. */
    uint32_t nsets = tgt_cache_sets(&t->cache);
    uint32_t *sets = malloc(nsets * sizeof *sets);
    uint64_t *mis = malloc(nsets * sizeof *mis);
    csim_eval_result e2;
    (void)e2;
    size_t fn = csim_stream_find(s, "?0x10003000");
    int moves = 20;
    t0 = now();
    size_t touched = 0;
    for (int i = 0; i < moves; i++) {
        size_t ns = csim_func_sets(s, mp, &t->cache, fn, sets, 0);
        csim_map_move(mp, fn, 0x10100000 + (uint32_t)i * 24);
        ns = csim_func_sets(s, mp, &t->cache, fn, sets, ns);
        csim_eval_sets(s, mp, &t->cache, 1, sets, ns, mis, &err);
        touched += ns;
    }
    dt = now() - t0;
    printf("move one 4 KiB block + partial re-simulation (csim_eval_sets, "
           "%.0f sets of %u each): %.1f ms per move\n",
           (double)touched / moves, nsets, dt / moves * 1e3);
    if (argc > 3) {
        img *im = img_open(argv[2], NULL, &err);
        csim_stream *ds = im ? csim_stream_load(argv[3], im, t, &err) : NULL;
        if (!ds) {
            fprintf(stderr, "sim-bench: %s\n", err.msg);
            return 1;
        }
        csim_map *dm = csim_map_new(ds);
        t0 = now();
        csim_eval(ds, dm, &t->cache, 1, &e, &err);
        double whole = now() - t0;
        /* Functions that ran, moved one at a time to a free spot past the
         * image. */
        size_t nf = csim_stream_nfns(ds), *hot = malloc(nf * sizeof *hot), nh = 0;
        for (size_t i = 0; i < nf; i++)
            if (csim_stream_fn_insns(ds, i, 1) && !csim_stream_fn(ds, i)->flags)
                hot[nh++] = i;
        int dmoves = 300;
        touched = 0;
        t0 = now();
        for (int i = 0; i < dmoves && nh; i++) {
            size_t f = hot[rnd() % nh];
            size_t ns = csim_func_sets(ds, dm, &t->cache, f, sets = realloc(sets, nsets * sizeof *sets), 0);
            csim_map_move(dm, f, 0x10200000 + (uint32_t)i * 8192 + 8 * (rnd() % 1024));
            ns = csim_func_sets(ds, dm, &t->cache, f, sets, ns);
            mis = realloc(mis, nsets * sizeof *mis);
            csim_eval_sets(ds, dm, &t->cache, 1, sets, ns, mis, &err);
            touched += ns;
        }
        dt = now() - t0;
        printf("%s: %zu iterations, %zu fetch runs; whole re-simulation %.0f ms;"
               " moving one of %zu functions that ran + partial re-simulation "
               "(%.0f sets): %.2f ms per move, %.0f moves/s\n", argv[3],
               csim_stream_niters(ds), csim_stream_nruns(ds), whole * 1e3, nh,
               (double)touched / dmoves, dt / dmoves * 1e3, dmoves / dt);
        /* The same kind of moves through the set index. */
        csim_map *m0 = csim_map_new(ds);
        t0 = now();
        csim_setidx *x = csim_setidx_new(ds, m0, &t->cache, 1, &err);
        double build = now() - t0;
        if (!x) {
            fprintf(stderr, "sim-bench: %s\n", err.msg);
            return 1;
        }
        t0 = now();
        for (int i = 0; i < dmoves && nh; i++) {
            size_t f = hot[rnd() % nh];
            csim_setidx_move(x, f, 0x10200000 + (uint32_t)i * 8192 +
                                       8 * (rnd() % 1024), &err);
        }
        dt = now() - t0;
        printf("set index (csim_setidx): built in %.0f ms; moving one function "
               "+ re-simulating its sets: %.2f ms per move, %.0f moves/s\n",
               build * 1e3, dt / dmoves * 1e3, dmoves / dt);
        csim_setidx_free(x);
        csim_map_free(m0);
        free(hot);
        csim_map_free(dm);
        csim_stream_free(ds);
        img_free(im);
    }
    free(sets);
    free(mis);
    free(b);
    free(path);
    csim_map_free(mp);
    csim_stream_free(s);
    return 0;
}
