/* Set-associative and fully associative LRU cache models. */
#include "cache/cache.h"

#include <stdlib.h>
#include <string.h>

#define INVALID 0xffffffffu

struct csim_cache {
    tgt_cache g;
    uint32_t nsets, mask, ways;
    uint64_t seed;
    int fast2;      /* 2-way LRU: tag[2s] most recent, tag[2s+1] the other */
    uint32_t *tag;  /* nsets * ways; LRU keeps each set most recent first */
    uint64_t *meta; /* per set: FIFO next way, PLRU tree bits, RNG state */
};

static int is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

csim_cache *csim_cache_new(const tgt_cache *g, uint64_t seed, cp_err *err)
{
    if (!g->ways || !is_pow2(g->line) || g->line < 2 || g->ways > 64 ||
        !g->size || g->size % (g->ways * g->line) ||
        !is_pow2(g->size / (g->ways * g->line)))
        return cp_seterr(err, "bad cache geometry: %u bytes, %u ways, %u-byte "
                         "lines", g->size, g->ways, g->line), NULL;
    if (g->repl == TGT_REPL_PLRU && !is_pow2(g->ways))
        return cp_seterr(err, "tree-PLRU needs a power-of-two number of ways"),
               NULL;
    csim_cache *c = calloc(1, sizeof *c);
    if (!c)
        return cp_seterr(err, "out of memory"), NULL;
    c->g = *g;
    c->ways = g->ways;
    c->nsets = g->size / (g->ways * g->line);
    c->mask = c->nsets - 1;
    c->seed = seed;
    c->fast2 = g->repl == TGT_REPL_LRU && g->ways == 2;
    c->tag = malloc((size_t)c->nsets * c->ways * sizeof *c->tag);
    c->meta = malloc((size_t)c->nsets * sizeof *c->meta);
    if (!c->tag || !c->meta) {
        csim_cache_free(c);
        return cp_seterr(err, "out of memory"), NULL;
    }
    csim_cache_flush(c);
    return c;
}

void csim_cache_free(csim_cache *c)
{
    if (!c)
        return;
    free(c->tag);
    free(c->meta);
    free(c);
}

void csim_cache_flush(csim_cache *c)
{
    memset(c->tag, 0xff, (size_t)c->nsets * c->ways * sizeof *c->tag);
    for (uint32_t s = 0; s < c->nsets; s++)
        c->meta[s] = c->g.repl == TGT_REPL_RANDOM
                         ? splitmix(c->seed ^ ((uint64_t)s << 32)) | 1
                         : 0;
}

void csim_cache_flush_set(csim_cache *c, uint32_t set)
{
    set &= c->mask;
    memset(c->tag + (size_t)set * c->ways, 0xff, c->ways * sizeof *c->tag);
    c->meta[set] = c->g.repl == TGT_REPL_RANDOM
                       ? splitmix(c->seed ^ ((uint64_t)set << 32)) | 1
                       : 0;
}

uint32_t csim_cache_nsets(const csim_cache *c)
{
    return c->nsets;
}

/* Tree-PLRU over ways (a power of two): node i (1-based heap order) has
 * children 2i and 2i+1; bit i set means "the victim is on the right". A
 * touch points every node on the way's path away from it. */
static void plru_touch(uint64_t *bits, uint32_t ways, uint32_t w)
{
    uint32_t node = 1, lo = 0, span = ways;
    while (span > 1) {
        span >>= 1;
        int right = w >= lo + span;
        if (right) {
            *bits &= ~(1ULL << node); /* victim side: left */
            lo += span;
        } else {
            *bits |= 1ULL << node;
        }
        node = 2 * node + (uint32_t)right;
    }
}

static uint32_t plru_victim(uint64_t bits, uint32_t ways)
{
    uint32_t node = 1, lo = 0, span = ways;
    while (span > 1) {
        span >>= 1;
        int right = (bits >> node) & 1;
        if (right)
            lo += span;
        node = 2 * node + (uint32_t)right;
    }
    return lo;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dULL;
}

int csim_cache_access(csim_cache *c, uint32_t a)
{
    uint32_t line = a & CSIM_LINE_MASK;
    int alloc = !(a & CSIM_NOALLOC);
    uint32_t s = line & c->mask, W = c->ways;
    uint32_t *t = c->tag + (size_t)s * W;
    uint32_t w;
    for (w = 0; w < W; w++)
        if (t[w] == line)
            break;
    switch (c->g.repl) {
    case TGT_REPL_LRU:
        if (w < W) {
            memmove(t + 1, t, w * sizeof *t);
            t[0] = line;
            return 1;
        }
        if (alloc) {
            memmove(t + 1, t, (W - 1) * sizeof *t);
            t[0] = line;
        }
        return 0;
    case TGT_REPL_FIFO:
        if (w < W)
            return 1;
        if (alloc) {
            t[c->meta[s]] = line;
            c->meta[s] = (c->meta[s] + 1) % W;
        }
        return 0;
    case TGT_REPL_RANDOM:
        if (w < W)
            return 1;
        if (alloc) {
            uint32_t v;
            for (v = 0; v < W && t[v] != INVALID; v++)
                ;
            if (v == W)
                v = (uint32_t)(xorshift(&c->meta[s]) % W);
            t[v] = line;
        }
        return 0;
    case TGT_REPL_PLRU:
        if (w < W) {
            plru_touch(&c->meta[s], W, w);
            return 1;
        }
        if (alloc) {
            uint32_t v;
            for (v = 0; v < W && t[v] != INVALID; v++)
                ;
            if (v == W)
                v = plru_victim(c->meta[s], W);
            t[v] = line;
            plru_touch(&c->meta[s], W, v);
        }
        return 0;
    }
    return 0;
}

/* 2-way LRU, branch-free: after an access the line is most recent, and the
 * other way holds the old most recent line unless that was the line. */
static inline uint32_t lru2(uint32_t *tag, uint32_t mask, uint32_t line)
{
    uint32_t *t = tag + 2 * (line & mask);
    uint32_t t0 = t[0], t1 = t[1];
    uint32_t hit = (t0 == line) | (t1 == line);
    t[1] = t0 == line ? t1 : t0;
    t[0] = line;
    return hit ^ 1;
}

uint64_t csim_cache_run(csim_cache *c, const uint32_t *lines, size_t n)
{
    uint64_t miss = 0;
    if (c->fast2) {
        uint32_t *tag = c->tag, mask = c->mask;
        size_t i = 0;
        while (i < n) {
            /* Unflagged stretch: the branch-free loop. */
            size_t j = i;
            while (j < n && !(lines[j] & CSIM_NOALLOC))
                j++;
            for (; i < j; i++)
                miss += lru2(tag, mask, lines[i]);
            if (i < n)
                miss += !csim_cache_access(c, lines[i++]);
        }
        return miss;
    }
    for (size_t i = 0; i < n; i++)
        miss += !csim_cache_access(c, lines[i]);
    return miss;
}

uint64_t csim_cache_span(csim_cache *c, uint32_t first, uint32_t last)
{
    uint64_t miss = 0;
    uint32_t flag = first & CSIM_NOALLOC;
    first &= CSIM_LINE_MASK;
    if (c->fast2 && !flag) {
        for (uint32_t l = first; l <= last; l++)
            miss += lru2(c->tag, c->mask, l);
        return miss;
    }
    for (uint32_t l = first; l <= last; l++)
        miss += !csim_cache_access(c, l | flag);
    return miss;
}

/* ---- Fully associative LRU: a hash table (linear probing) of lines to
 * nodes of a doubly linked recency list. */

struct csim_fa {
    uint32_t cap, used;
    uint32_t *line, *prev, *next; /* cap nodes; head = most recent */
    uint32_t head, tail;
    uint32_t *ht;                 /* node index + 1, 0 empty */
    uint32_t hmask;
};

#define NIL 0xffffffffu

csim_fa *csim_fa_new(uint32_t nlines, cp_err *err)
{
    if (!nlines || nlines > (1u << 28))
        return cp_seterr(err, "fully associative cache of %u lines", nlines),
               NULL;
    csim_fa *f = calloc(1, sizeof *f);
    if (!f)
        return cp_seterr(err, "out of memory"), NULL;
    f->cap = nlines;
    uint32_t hs = 4;
    while (hs < 2 * nlines)
        hs <<= 1;
    f->hmask = hs - 1;
    f->line = malloc(nlines * sizeof *f->line);
    f->prev = malloc(nlines * sizeof *f->prev);
    f->next = malloc(nlines * sizeof *f->next);
    f->ht = malloc(hs * sizeof *f->ht);
    if (!f->line || !f->prev || !f->next || !f->ht) {
        csim_fa_free(f);
        return cp_seterr(err, "out of memory"), NULL;
    }
    csim_fa_flush(f);
    return f;
}

void csim_fa_free(csim_fa *f)
{
    if (!f)
        return;
    free(f->line);
    free(f->prev);
    free(f->next);
    free(f->ht);
    free(f);
}

void csim_fa_flush(csim_fa *f)
{
    f->used = 0;
    f->head = f->tail = NIL;
    memset(f->ht, 0, ((size_t)f->hmask + 1) * sizeof *f->ht);
}

static void fa_unlink(csim_fa *f, uint32_t n)
{
    if (f->prev[n] != NIL)
        f->next[f->prev[n]] = f->next[n];
    else
        f->head = f->next[n];
    if (f->next[n] != NIL)
        f->prev[f->next[n]] = f->prev[n];
    else
        f->tail = f->prev[n];
}

static void fa_push_front(csim_fa *f, uint32_t n)
{
    f->prev[n] = NIL;
    f->next[n] = f->head;
    if (f->head != NIL)
        f->prev[f->head] = n;
    f->head = n;
    if (f->tail == NIL)
        f->tail = n;
}

/* Slot of line in the hash table, or of the empty slot where it goes. */
static uint32_t fa_slot(const csim_fa *f, uint32_t line)
{
    uint32_t h = cp_hash32(line) & f->hmask;
    while (f->ht[h] && f->line[f->ht[h] - 1] != line)
        h = (h + 1) & f->hmask;
    return h;
}

/* Deletes slot h with backward-shift deletion. */
static void fa_del_slot(csim_fa *f, uint32_t h)
{
    uint32_t j = h;
    for (;;) {
        j = (j + 1) & f->hmask;
        if (!f->ht[j])
            break;
        uint32_t k = cp_hash32(f->line[f->ht[j] - 1]) & f->hmask;
        /* Move j back to h unless k lies cyclically in (h, j]. */
        if ((h <= j) ? (h < k && k <= j) : (h < k || k <= j))
            continue;
        f->ht[h] = f->ht[j];
        h = j;
    }
    f->ht[h] = 0;
}

int csim_fa_access(csim_fa *f, uint32_t a)
{
    uint32_t line = a & CSIM_LINE_MASK;
    uint32_t h = fa_slot(f, line);
    if (f->ht[h]) {
        uint32_t n = f->ht[h] - 1;
        if (f->head != n) {
            fa_unlink(f, n);
            fa_push_front(f, n);
        }
        return 1;
    }
    if (a & CSIM_NOALLOC)
        return 0;
    uint32_t n;
    if (f->used < f->cap) {
        n = f->used++;
    } else {
        n = f->tail;
        fa_unlink(f, n);
        fa_del_slot(f, fa_slot(f, f->line[n]));
        h = fa_slot(f, line);
    }
    f->line[n] = line;
    f->ht[h] = n + 1;
    fa_push_front(f, n);
    return 0;
}
