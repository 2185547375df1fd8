/* Exact evaluation of a layout: the model's access stream, remapped to the
 * layout's addresses, through the target's cache (LRU, as the presets), and
 * through a fully associative LRU cache of the same capacity. Also builds
 * layouts from placed items the way the linker will. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

#define NO_LINE UINT32_MAX

int plan_layout_alloc(const plan_model *m, plan_layout *L)
{
    size_t n = m->nunits ? m->nunits : 1;
    L->addr = malloc(n * sizeof *L->addr);
    L->stub = calloc(m->ntargets ? m->ntargets : 1, sizeof *L->stub);
    L->text_delta = 0;
    L->nstubs = 0;
    if (!L->addr || !L->stub) {
        plan_layout_free(L);
        return -1;
    }
    return 0;
}

void plan_layout_free(plan_layout *L)
{
    free(L->addr);
    free(L->stub);
    L->addr = NULL;
    L->stub = NULL;
}

void plan_layout_stock(const plan_model *m, plan_layout *L)
{
    for (size_t i = 0; i < m->nunits; i++)
        L->addr[i] = m->units[i].addr;
    memset(L->stub, 0, (m->ntargets ? m->ntargets : 1) * sizeof *L->stub);
    L->text_delta = 0;
    L->nstubs = 0;
}

uint32_t plan_hot_base(const plan_model *m)
{
    return (m->text_start + 7) & ~7u;
}

void plan_layout_make(const plan_model *m, const uint32_t *hot_off,
                      const unsigned char *fast, uint32_t hot_base,
                      uint32_t block_end, plan_layout *L)
{
    plan_layout_stock(m, L);
    int moved = 0;
    uint32_t end = hot_base + block_end;
    for (size_t i = 0; i < m->nunits; i++) {
        if (fast[i]) {
            L->addr[i] = PLAN_ADDR_FAST;
            moved = 1;
        } else if (hot_off[i] != PLAN_NONE) {
            L->addr[i] = hot_base + hot_off[i];
            if (L->addr[i] + m->units[i].size > end)
                end = L->addr[i] + m->units[i].size;
            moved = 1;
        }
    }
    if (!moved)
        return;
    uint32_t cur = end;
    for (size_t i = 0; i < m->nunits; i++) {
        const plan_unit *u = &m->units[i];
        if ((u->flags & PLAN_U_NOMOVE) || fast[i] || hot_off[i] != PLAN_NONE)
            continue;
        cur = (cur + u->align - 1) & ~(u->align - 1);
        L->addr[i] = cur;
        cur += u->size;
    }
    /* Stubs: one per target in fast memory that flash code branches to. */
    cur = (cur + 7) & ~7u;
    for (size_t i = 0; i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        uint32_t tu = m->targets[c->target].unit;
        if (fast[tu] && !fast[c->caller] && !L->stub[c->target]) {
            L->stub[c->target] = cur;
            cur += m->veneer_bytes;
            L->nstubs++;
        }
    }
    uint32_t old_end = (m->text_end + 7) & ~7u;
    L->text_delta = (int64_t)((cur + 7) & ~7u) - (int64_t)old_end;
}

int plan_layout_build(const plan_model *m, const plan_item *items,
                      size_t nitems, uint32_t hot_base, uint32_t block_end,
                      plan_layout *L, uint32_t *hot_bytes)
{
    size_t n = m->nunits ? m->nunits : 1;
    uint32_t *off = malloc(n * sizeof *off);
    unsigned char *fast = calloc(n, 1);
    if (!off || !fast) {
        free(off);
        free(fast);
        return -1;
    }
    for (size_t i = 0; i < m->nunits; i++)
        off[i] = PLAN_NONE;
    uint32_t end = 0;
    for (size_t i = 0; i < nitems; i++) {
        if (items[i].region == PLAN_FAST)
            fast[items[i].unit] = 1;
        else if (items[i].region == PLAN_FLASH_HOT) {
            off[items[i].unit] = items[i].offset;
            if (items[i].offset + m->units[items[i].unit].size > end)
                end = items[i].offset + m->units[items[i].unit].size;
        }
    }
    plan_layout_make(m, off, fast, hot_base, block_end, L);
    if (hot_bytes)
        *hot_bytes = end > block_end ? end : block_end;
    free(off);
    free(fast);
    return 0;
}

void plan_eval(const plan_model *m, const plan_layout *L, unsigned iters,
               plan_eval_out *out)
{
    if (!iters || iters > m->niters)
        iters = m->niters;
    uint32_t ways = m->cache.ways, mask = m->sets - 1;
    uint32_t *tag = malloc((size_t)m->sets * ways * sizeof *tag);
    double misses = 0, acc = 0, stubs = 0;
    if (out->unit_misses)
        memset(out->unit_misses, 0, m->nunits * sizeof *out->unit_misses);
    if (!tag || plan_model_compress((plan_model *)m) < 0) {
        free(tag);
        out->misses = -1;
        return;
    }
    memset(tag, 0xff, (size_t)m->sets * ways * sizeof *tag);
    unsigned first_counted = iters > 1 ? 1 : 0;
    for (unsigned it = 0; it < iters; it++) {
        int count = it >= first_counted;
        for (size_t k = m->ziter_start[it]; k < m->ziter_start[it + 1]; k++) {
            const plan_acc *a = &m->zacc[k];
            uint32_t l0, l1;
            if (a->unit == PLAN_CALL && count && a->len < m->nunits &&
                (L->addr[m->targets[a->off].unit] == PLAN_ADDR_FAST) !=
                    (L->addr[a->len] == PLAN_ADDR_FAST))
                stubs++;
            if (!plan_acc_lines(m, L, a, &l0, &l1))
                continue;
            for (uint32_t line = l0; line <= l1; line++) {
                uint32_t *t = tag + (size_t)(line & mask) * ways;
                acc += count;
                if (t[0] == line)
                    continue;
                uint32_t w = 1;
                while (w < ways && t[w] != line)
                    w++;
                if (w == ways) {
                    w = ways - 1; /* evict the least recently used */
                    if (count) {
                        misses++;
                        if (out->unit_misses && a->unit < m->nunits)
                            out->unit_misses[a->unit]++;
                    }
                }
                memmove(t + 1, t, w * sizeof *t);
                t[0] = line;
            }
        }
    }
    free(tag);
    double n = iters - first_counted;
    out->misses = misses / n;
    out->accesses = acc / n;
    out->stub_calls = stubs / n;
    if (out->unit_misses)
        for (size_t i = 0; i < m->nunits; i++)
            out->unit_misses[i] /= n;
}

/* Fully associative LRU with an open-addressing table of line -> node and
 * an intrusive doubly linked recency list. */
double plan_eval_fa(const plan_model *m, const plan_layout *L, unsigned iters)
{
    if (!iters || iters > m->niters)
        iters = m->niters;
    uint32_t cap = m->cache.size / m->cache.line;
    uint32_t hsize = 1;
    while (hsize < cap * 4)
        hsize <<= 1;
    uint32_t *hkey = malloc(hsize * sizeof *hkey);
    uint32_t *hval = malloc(hsize * sizeof *hval);
    uint32_t *nline = malloc(cap * sizeof *nline);
    uint32_t *prev = malloc(cap * sizeof *prev), *next = malloc(cap * sizeof *next);
    double misses = -1;
    if (!hkey || !hval || !nline || !prev || !next)
        goto out;
    memset(hkey, 0xff, hsize * sizeof *hkey);
    misses = 0;
    uint32_t used = 0, head = NO_LINE, tail = NO_LINE;
    unsigned first_counted = iters > 1 ? 1 : 0;
    for (unsigned it = 0; it < iters; it++) {
        int count = it >= first_counted;
        for (size_t k = m->iter_start[it]; k < m->iter_start[it + 1]; k++) {
            uint32_t l0, l1;
            if (!plan_acc_lines(m, L, &m->acc[k], &l0, &l1))
                continue;
            for (uint32_t line = l0; line <= l1; line++) {
                uint32_t h = (line * 2654435761u) & (hsize - 1);
                while (hkey[h] != NO_LINE && hkey[h] != line)
                    h = (h + 1) & (hsize - 1);
                uint32_t node;
                if (hkey[h] == line) {
                    node = hval[h];
                    if (node == head)
                        continue;
                    /* unlink */
                    next[prev[node]] = next[node];
                    if (next[node] != NO_LINE)
                        prev[next[node]] = prev[node];
                    else
                        tail = prev[node];
                } else {
                    misses += count;
                    if (used < cap) {
                        node = used++;
                    } else {
                        node = tail;
                        tail = prev[node];
                        if (tail != NO_LINE)
                            next[tail] = NO_LINE;
                        else
                            head = NO_LINE;
                        /* delete nline[node] from the table (backshift) */
                        uint32_t d = (nline[node] * 2654435761u) & (hsize - 1);
                        while (hkey[d] != nline[node])
                            d = (d + 1) & (hsize - 1);
                        uint32_t j = d;
                        for (;;) {
                            hkey[d] = NO_LINE;
                            for (;;) {
                                j = (j + 1) & (hsize - 1);
                                if (hkey[j] == NO_LINE)
                                    goto deleted;
                                uint32_t home = (hkey[j] * 2654435761u) & (hsize - 1);
                                if (d <= j ? (d < home && home <= j)
                                           : (d < home || home <= j))
                                    continue;
                                break;
                            }
                            hkey[d] = hkey[j];
                            hval[d] = hval[j];
                            d = j;
                        }
                    deleted:
                        h = (line * 2654435761u) & (hsize - 1);
                        while (hkey[h] != NO_LINE)
                            h = (h + 1) & (hsize - 1);
                    }
                    hkey[h] = line;
                    hval[h] = node;
                    nline[node] = line;
                }
                prev[node] = NO_LINE;
                next[node] = head;
                if (head != NO_LINE)
                    prev[head] = node;
                head = node;
                if (tail == NO_LINE)
                    tail = node;
            }
        }
    }
    misses /= (iters - first_counted);
out:
    free(hkey);
    free(hval);
    free(nline);
    free(prev);
    free(next);
    return misses;
}
