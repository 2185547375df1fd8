/* Belady's optimal replacement (the ideal bound) and dense line ids. */
#include "cache/cache.h"

#include <stdlib.h>
#include <string.h>

void csim_seq_free(csim_seq *q)
{
    if (!q)
        return;
    free(q->acc);
    free(q->fn);
    free(q->iter);
    memset(q, 0, sizeof *q);
}

int csim_seq_ids(const csim_seq *q, uint32_t **id_out, uint32_t **line_out,
                 uint32_t *nids, cp_err *err)
{
    size_t hs = 1024;
    uint32_t *ht = calloc(hs, sizeof *ht); /* id + 1, 0 empty */
    uint32_t *id = malloc((q->n ? q->n : 1) * sizeof *id);
    uint32_t *line_of = NULL;
    size_t cap = 0;
    uint32_t n = 0;
    if (!ht || !id)
        goto oom;
    for (size_t i = 0; i < q->n; i++) {
        uint32_t line = q->acc[i] & CSIM_LINE_MASK;
        size_t h = cp_hash32(line) & (hs - 1);
        while (ht[h] && line_of[ht[h] - 1] != line)
            h = (h + 1) & (hs - 1);
        if (!ht[h]) {
            if (cp_grow((void **)&line_of, &cap, (size_t)n + 1,
                        sizeof *line_of) < 0)
                goto oom;
            line_of[n] = line;
            ht[h] = ++n;
            if ((size_t)n * 2 > hs) { /* rehash */
                size_t ns = hs * 2;
                uint32_t *nt = calloc(ns, sizeof *nt);
                if (!nt)
                    goto oom;
                for (uint32_t k = 0; k < n; k++) {
                    size_t g = cp_hash32(line_of[k]) & (ns - 1);
                    while (nt[g])
                        g = (g + 1) & (ns - 1);
                    nt[g] = k + 1;
                }
                free(ht);
                ht = nt;
                hs = ns;
            }
            id[i] = n - 1;
        } else {
            id[i] = ht[h] - 1;
        }
    }
    free(ht);
    if (!line_of)
        line_of = malloc(sizeof *line_of);
    *id_out = id;
    *line_out = line_of;
    *nids = n;
    return 0;
oom:
    free(ht);
    free(id);
    free(line_of);
    return cp_seterr(err, "out of memory (%zu line accesses)", q->n);
}

/* Max-heap of cache slots keyed by next use. */
typedef struct heap {
    uint32_t *slot; /* heap order */
    uint32_t *pos;  /* slot -> heap index */
    uint32_t *key;  /* slot -> next use */
    uint32_t n;
} heap;

static void h_swap(heap *h, uint32_t i, uint32_t j)
{
    uint32_t a = h->slot[i], b = h->slot[j];
    h->slot[i] = b;
    h->slot[j] = a;
    h->pos[b] = i;
    h->pos[a] = j;
}

static void h_up(heap *h, uint32_t i)
{
    while (i) {
        uint32_t p = (i - 1) / 2;
        if (h->key[h->slot[p]] >= h->key[h->slot[i]])
            break;
        h_swap(h, i, p);
        i = p;
    }
}

static void h_down(heap *h, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->key[h->slot[l]] > h->key[h->slot[m]])
            m = l;
        if (r < h->n && h->key[h->slot[r]] > h->key[h->slot[m]])
            m = r;
        if (m == i)
            return;
        h_swap(h, i, m);
        i = m;
    }
}

#define NEVER 0xffffffffu

int64_t csim_opt_run(const csim_seq *q, uint32_t nlines, uint64_t *miss,
                     cp_err *err)
{
    if (q->n >= NEVER)
        return cp_seterr(err, "stream too long for the ideal bound (%zu "
                         "accesses)", q->n);
    if (!nlines)
        return cp_seterr(err, "ideal bound: capacity of 0 lines");
    uint32_t *id, *line_of, nids;
    if (csim_seq_ids(q, &id, &line_of, &nids, err) < 0)
        return -1;
    free(line_of);
    uint32_t *next = malloc((q->n ? q->n : 1) * sizeof *next);
    uint32_t *last = malloc((nids ? nids : 1) * sizeof *last);
    uint32_t *slot_of = malloc((nids ? nids : 1) * sizeof *slot_of);
    uint32_t *id_of = malloc(nlines * sizeof *id_of);
    heap h = {malloc(nlines * sizeof(uint32_t)), malloc(nlines * sizeof(uint32_t)),
              malloc(nlines * sizeof(uint32_t)), 0};
    if (!next || !last || !slot_of || !id_of || !h.slot || !h.pos || !h.key) {
        free(id);
        free(next);
        free(last);
        free(slot_of);
        free(id_of);
        free(h.slot);
        free(h.pos);
        free(h.key);
        return cp_seterr(err, "out of memory (ideal bound over %zu accesses)",
                         q->n);
    }
    /* Pass 1: the next use of each access's line. */
    for (uint32_t k = 0; k < nids; k++)
        last[k] = NEVER;
    for (size_t i = q->n; i-- > 0;) {
        next[i] = last[id[i]];
        last[id[i]] = (uint32_t)i;
    }
    free(last);
    for (uint32_t k = 0; k < nids; k++)
        slot_of[k] = NEVER;
    /* Pass 2: evict the line used furthest in the future. */
    int64_t total = 0;
    size_t it = 0;
    for (size_t i = 0; i < q->n; i++) {
        while (it + 1 < q->niter && q->iter[it + 1] <= i)
            it++;
        uint32_t d = id[i], s = slot_of[d];
        if (s != NEVER) {
            h.key[s] = next[i];
            h_up(&h, h.pos[s]);
            continue;
        }
        total++;
        if (miss && q->niter)
            miss[it]++;
        if (q->acc[i] & CSIM_NOALLOC)
            continue;
        if (h.n < nlines) {
            s = h.n;
            h.slot[h.n] = s;
            h.pos[s] = h.n;
            h.key[s] = next[i];
            id_of[s] = d;
            slot_of[d] = s;
            h.n++;
            h_up(&h, h.n - 1);
        } else {
            s = h.slot[0];
            slot_of[id_of[s]] = NEVER;
            id_of[s] = d;
            slot_of[d] = s;
            h.key[s] = next[i];
            h_down(&h, 0);
        }
    }
    free(id);
    free(next);
    free(slot_of);
    free(id_of);
    free(h.slot);
    free(h.pos);
    free(h.key);
    return total;
}
