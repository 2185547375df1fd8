/* The set index: the stream's line accesses under a map, split into one
 * time-ordered list per cache set. Moving a function edits only the lists
 * of the sets it leaves and enters and re-simulates only those, so a move
 * costs the accesses of those sets instead of the whole stream. */
#include "cache/cache.h"

#include <stdlib.h>
#include <string.h>

#include "cache/stream_int.h"

typedef struct sent {
    uint32_t run;  /* time: index of the run in the stream */
    uint32_t line; /* line number | CSIM_NOALLOC */
    uint32_t fn;
} sent;

typedef struct slist {
    sent *e;
    size_t n, cap;
    uint64_t miss;
} slist;

struct csim_setidx {
    const csim_stream *s;
    csim_map *m;
    tgt_cache g;
    uint32_t nsets, ls;
    size_t fr;           /* first counted run */
    slist *set;
    uint64_t total;
    csim_cache *c;
    uint32_t *touched;   /* scratch: sets of one move */
    uint8_t *mark;
    sent *ev;            /* scratch: the moved function's accesses */
    size_t nev, capev;
    uint32_t *cnt;       /* scratch: counting sort by set */
};

static int push(slist *l, sent x)
{
    if (l->n == l->cap &&
        cp_grow((void **)&l->e, &l->cap, l->n + 1, sizeof *l->e) < 0)
        return -1;
    l->e[l->n++] = x;
    return 0;
}

/* Re-simulates list l alone in x->c (sets are independent, so the other
 * sets' state does not matter). */
static void sim_set(csim_setidx *x, slist *l)
{
    uint64_t miss = 0;
    if (x->g.repl == TGT_REPL_LRU && x->g.ways == 2) {
        /* One set of a 2-way LRU cache: the two tags, most recent first. */
        uint32_t t0 = 0xffffffffu, t1 = 0xffffffffu;
        for (size_t i = 0; i < l->n; i++) {
            uint32_t line = l->e[i].line & CSIM_LINE_MASK;
            if (line == t0)
                continue;
            if (line == t1) {
                t1 = t0;
                t0 = line;
                continue;
            }
            miss += l->e[i].run >= x->fr;
            if (!(l->e[i].line & CSIM_NOALLOC)) {
                t1 = t0;
                t0 = line;
            }
        }
    } else {
        for (size_t i = 0; i < l->n; i++)
            if (!csim_cache_access(x->c, l->e[i].line) &&
                l->e[i].run >= x->fr)
                miss++;
    }
    x->total = x->total - l->miss + miss;
    l->miss = miss;
}

void csim_setidx_free(csim_setidx *x)
{
    if (!x)
        return;
    for (uint32_t i = 0; x->set && i < x->nsets; i++)
        free(x->set[i].e);
    free(x->set);
    csim_map_free(x->m);
    csim_cache_free(x->c);
    free(x->touched);
    free(x->mark);
    free(x->ev);
    free(x->cnt);
    free(x);
}

csim_setidx *csim_setidx_new(const csim_stream *s, const csim_map *m,
                             const tgt_cache *g, size_t from, cp_err *err)
{
    if (!s->finished)
        return cp_seterr(err, "stream: not finished"), NULL;
    csim_setidx *x = calloc(1, sizeof *x);
    if (!x)
        return cp_seterr(err, "out of memory"), NULL;
    x->s = s;
    x->g = *g;
    if (!(x->c = csim_cache_new(g, 0, err))) {
        csim_setidx_free(x);
        return NULL;
    }
    x->nsets = csim_cache_nsets(x->c);
    x->ls = log2u(g->line);
    x->fr = from < s->niter ? s->iter[from] : s->nruns;
    x->m = csim_map_copy(m);
    x->set = calloc(x->nsets, sizeof *x->set);
    x->touched = malloc(x->nsets * sizeof *x->touched);
    x->mark = calloc(x->nsets, 1);
    x->cnt = malloc((x->nsets + 1) * sizeof *x->cnt);
    if (!x->m || !x->set || !x->touched || !x->mark || !x->cnt)
        goto oom;
    uint32_t mask = x->nsets - 1;
    for (size_t i = 0; i < s->nruns; i++) {
        uint32_t a, last, fn = (uint32_t)run_fn(s->run[i]);
        if (!run_lines(x->m, s->run[i], x->ls, &a, &last))
            continue;
        uint32_t fl = a & CSIM_NOALLOC;
        for (uint32_t l = a & CSIM_LINE_MASK; l <= last; l++)
            if (push(&x->set[l & mask], (sent){(uint32_t)i, l | fl, fn}) < 0)
                goto oom;
    }
    csim_cache_flush(x->c);
    for (uint32_t i = 0; i < x->nsets; i++)
        sim_set(x, &x->set[i]);
    return x;
oom:
    csim_setidx_free(x);
    return cp_seterr(err, "out of memory (set index)"), NULL;
}

uint64_t csim_setidx_misses(const csim_setidx *x)
{
    return x->total;
}

uint64_t csim_setidx_set_misses(const csim_setidx *x, uint32_t set)
{
    return set < x->nsets ? x->set[set].miss : 0;
}

const csim_map *csim_setidx_map(const csim_setidx *x)
{
    return x->m;
}

/* Collects fn's accesses under the current map into x->ev, grouped by set
 * (stable, so each group stays in time order); x->cnt[set] .. cnt[set+1]
 * after the call delimit the groups. */
static int collect(csim_setidx *x, size_t fn)
{
    const csim_stream *s = x->s;
    const csim_map *m = x->m;
    x->nev = 0;
    memset(x->cnt, 0, (x->nsets + 1) * sizeof *x->cnt);
    if (m->kind[fn] == CSIM_UNCACHED)
        return 0;
    sent *tmp = NULL;
    size_t ntmp = 0, cap = 0;
    for (size_t j = s->fn_start[fn]; j < s->fn_start[fn + 1]; j++) {
        uint32_t ri = s->fn_runs[j], a, last;
        if (!run_lines(m, s->run[ri], x->ls, &a, &last))
            continue;
        uint32_t fl = a & CSIM_NOALLOC;
        for (uint32_t l = a & CSIM_LINE_MASK; l <= last; l++) {
            if (ntmp == cap &&
                cp_grow((void **)&tmp, &cap, ntmp + 1, sizeof *tmp) < 0) {
                free(tmp);
                return -1;
            }
            tmp[ntmp++] = (sent){ri, l | fl, (uint32_t)fn};
        }
    }
    if (cp_grow((void **)&x->ev, &x->capev, ntmp + 1, sizeof *x->ev) < 0) {
        free(tmp);
        return -1;
    }
    uint32_t mask = x->nsets - 1;
    memset(x->cnt, 0, (x->nsets + 1) * sizeof *x->cnt);
    for (size_t i = 0; i < ntmp; i++)
        x->cnt[(tmp[i].line & mask) + 1]++;
    for (uint32_t i = 0; i < x->nsets; i++)
        x->cnt[i + 1] += x->cnt[i];
    for (size_t i = 0; i < ntmp; i++) {
        uint32_t st = tmp[i].line & mask;
        x->ev[x->cnt[st]++] = tmp[i];
    }
    /* cnt[st] is now the end of group st; shift back to starts. */
    memmove(x->cnt + 1, x->cnt, x->nsets * sizeof *x->cnt);
    x->cnt[0] = 0;
    x->nev = ntmp;
    free(tmp);
    return 0;
}

/* Merges the group of events ev[lo, hi) (one set, time order) into list l. */
static int merge(slist *l, const sent *ev, size_t lo, size_t hi)
{
    size_t add = hi - lo, n = l->n;
    if (cp_grow((void **)&l->e, &l->cap, n + add, sizeof *l->e) < 0)
        return -1;
    /* From the back: the larger run index goes last. */
    size_t i = n, j = hi, k = n + add;
    while (j > lo) {
        if (i > 0 && l->e[i - 1].run > ev[j - 1].run)
            l->e[--k] = l->e[--i];
        else
            l->e[--k] = ev[--j];
    }
    l->n = n + add;
    return 0;
}

/* Merges g's accesses under the current map into its sets' lists, adding
 * the sets to x->touched (nt so far); returns the new nt, or -1. */
static long enter(csim_setidx *x, size_t g, size_t nt)
{
    if (collect(x, g) < 0)
        return -1;
    for (uint32_t st = 0; st < x->nsets; st++) {
        size_t lo = x->cnt[st], hi = st + 1 < x->nsets ? x->cnt[st + 1] : x->nev;
        if (lo == hi)
            continue;
        if (merge(&x->set[st], x->ev, lo, hi) < 0)
            return -1;
        if (!x->mark[st]) {
            x->mark[st] = 1;
            x->touched[nt++] = st;
        }
    }
    return (long)nt;
}

/* Moves fn. A function moving between cached flash and memory the cache
 * does not see changes which stubs its calls go through, so with stubs
 * their accesses are taken out and merged again too. */
static int64_t apply(csim_setidx *x, size_t fn, int to_ram, uint32_t addr,
                     cp_err *err)
{
    const csim_stream *s = x->s;
    if (fn >= s->nfns)
        return cp_seterr(err, "no function %zu", fn);
    size_t s0 = s->nstubs && fn < s->stub_fn0 ? s->stub_fn0 : s->nfns;
    size_t nt = csim_func_sets(s, x->m, &x->g, fn, x->touched, 0);
    for (size_t g = s0; g < s->nfns; g++)
        nt = csim_func_sets(s, x->m, &x->g, g, x->touched, nt);
    /* Leave: drop their accesses from their sets. */
    for (size_t i = 0; i < nt; i++) {
        slist *l = &x->set[x->touched[i]];
        size_t k = 0;
        for (size_t j = 0; j < l->n; j++)
            if (l->e[j].fn != fn && l->e[j].fn < s0)
                l->e[k++] = l->e[j];
        l->n = k;
        x->mark[x->touched[i]] = 1;
    }
    if (to_ram)
        csim_map_uncache(x->m, fn);
    else
        csim_map_move(x->m, fn, addr);
    /* Enter: merge their accesses under the new map. */
    long n = enter(x, fn, nt);
    for (size_t g = s0; g < s->nfns && n >= 0; g++)
        n = enter(x, g, (size_t)n);
    if (n < 0)
        return cp_seterr(err, "out of memory");
    nt = (size_t)n;
    csim_cache_flush(x->c);
    for (size_t i = 0; i < nt; i++) {
        sim_set(x, &x->set[x->touched[i]]);
        x->mark[x->touched[i]] = 0;
    }
    return (int64_t)x->total;
}

int64_t csim_setidx_move(csim_setidx *x, size_t fn, uint32_t addr,
                         cp_err *err)
{
    return apply(x, fn, 0, addr, err);
}

int64_t csim_setidx_uncache(csim_setidx *x, size_t fn, cp_err *err)
{
    return apply(x, fn, 1, 0, err);
}
