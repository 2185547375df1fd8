/* Layouts as the linker makes them: every unit's address, the stubs of
 * calls from flash into fast memory and what moves after the text, from
 * placed items or from a hot block and the units in fast memory. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

int plan_layout_alloc(const plan_model *m, plan_layout *L)
{
    size_t n = m->nunits ? m->nunits : 1;
    L->addr = malloc(n * sizeof *L->addr);
    L->stub = calloc(m->ntargets ? m->ntargets : 1, sizeof *L->stub);
    L->stub_hot = calloc(m->ntargets ? m->ntargets : 1, sizeof *L->stub_hot);
    L->nstubs_hot = 0;
    L->hot_end = 0;
    L->tg = malloc((m->ntargets ? m->ntargets : 1) * sizeof *L->tg);
    L->live = malloc(m->stock_stubs ? m->stock_stubs : 1);
    L->stock_addr = calloc(m->stock_stubs ? m->stock_stubs : 1,
                           sizeof *L->stock_addr);
    L->after_delta = calloc(m->nafter ? m->nafter : 1, sizeof *L->after_delta);
    L->after_end_delta = 0;
    L->after_uncertain = PLAN_NONE;
    L->after_moved = 0;
    L->text_delta = 0;
    L->nstubs = 0;
    L->stub_order = 0;
    if (!L->addr || !L->stub || !L->stub_hot || !L->tg || !L->live ||
        !L->stock_addr || !L->after_delta) {
        plan_layout_free(L);
        return -1;
    }
    return 0;
}

void plan_layout_free(plan_layout *L)
{
    free(L->addr);
    free(L->stub);
    free(L->stub_hot);
    free(L->tg);
    free(L->live);
    free(L->stock_addr);
    L->live = NULL;
    L->stock_addr = NULL;
    free(L->after_delta);
    L->after_delta = NULL;
    L->addr = NULL;
    L->stub = NULL;
    L->stub_hot = NULL;
    L->tg = NULL;
}

void plan_layout_stock(const plan_model *m, plan_layout *L)
{
    for (size_t i = 0; i < m->nunits; i++)
        L->addr[i] = m->units[i].addr;
    memset(L->stub, 0, (m->ntargets ? m->ntargets : 1) * sizeof *L->stub);
    if (m->stock_stubs)
        memset(L->stock_addr, 0, m->stock_stubs * sizeof *L->stock_addr);
    memset(L->stub_hot, 0,
           (m->ntargets ? m->ntargets : 1) * sizeof *L->stub_hot);
    L->nstubs_hot = 0;
    L->hot_end = 0;
    L->text_delta = 0;
    L->nstubs = 0;
    L->stub_order = 0;
    memset(L->after_delta, 0,
           (m->nafter ? m->nafter : 1) * sizeof *L->after_delta);
    L->after_end_delta = 0;
    L->after_uncertain = PLAN_NONE;
    L->after_moved = 0;
}

uint32_t plan_hot_base(const plan_model *m)
{
    if (m->hot_start)
        return m->hot_start; /* after pico-sdk's start-up sections */
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
    uint32_t cur = end, group = PLAN_NONE, group_end = 0;
    for (size_t i = 0; i < m->nunits; i++) {
        const plan_unit *u = &m->units[i];
        if (fast[i] || (u->flags & PLAN_U_NOMOVE))
            continue;
        if (hot_off[i] == PLAN_NONE) {
            cur = (cur + u->align - 1) & ~(u->align - 1);
            L->addr[i] = cur;
            cur += u->size;
        }
        /* ld puts a stub group's stubs after its last code section. */
        if (L->addr[i] + u->size >= group_end) {
            group_end = L->addr[i] + u->size;
            group = (uint32_t)i;
        }
    }
    /* A hot block that is an output section of its own gets its own stubs
     * for calls from it into fast memory, after its last input section, in
     * the order of the calls. */
    if (m->hot_own_stubs) {
        uint32_t hend = 0;
        for (size_t i = 0; i < m->nunits; i++)
            if (!fast[i] && hot_off[i] != PLAN_NONE &&
                L->addr[i] + m->units[i].size > hend)
                hend = L->addr[i] + m->units[i].size;
        L->hot_end = hend;
        uint32_t last = PLAN_NONE;
        for (size_t i = 0; i < m->nunits; i++)
            if (!fast[i] && hot_off[i] != PLAN_NONE &&
                L->addr[i] + m->units[i].size == hend)
                last = (uint32_t)i;
        /* the targets, in ld's stub order when it can be worked out */
        size_t nh = 0;
        for (size_t i = 0; i < m->ncalls && nh < m->stub_nt; i++) {
            const plan_call *c = &m->calls[i];
            uint32_t tu = m->targets[c->target].unit;
            if (fast[tu] && !fast[c->caller] &&
                hot_off[c->caller] != PLAN_NONE && !L->stub_hot[c->target]) {
                L->stub_hot[c->target] = 1;
                L->tg[nh++] = c->target;
            }
        }
        if (last != PLAN_NONE)
            plan_ldstub_sort(m, last, fast, 0, L->tg, nh);
        uint32_t hs = (hend + 7) & ~7u;
        for (size_t i = 0; i < nh; i++) {
            L->stub_hot[L->tg[i]] = hs;
            hs += m->veneer_bytes;
            L->nstubs_hot++;
        }
    }
    /* Stubs: one per target in fast memory that flash code branches to,
     * in the order of ld's stub table when it can be worked out, else in
     * the order of the calls. */
    uint32_t *tg = L->tg;
    size_t ntg = 0;
    int over = 0; /* more targets than when the model was made */
    for (size_t i = 0; i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        uint32_t tu = m->targets[c->target].unit;
        if (m->hot_own_stubs && hot_off[c->caller] != PLAN_NONE)
            continue; /* the hot block's own stub */
        if (fast[tu] && !fast[c->caller] && !L->stub[c->target]) {
            L->stub[c->target] = 1; /* seen; the address comes below */
            if (ntg < m->stub_nt)
                tg[ntg++] = c->target;
            else
                over = 1;
        }
    }
    L->stub_order = !over && plan_ldstub_sort(m, group, fast, 0, tg, ntg) == 0;
    uint32_t units_end = cur; /* the text's end when it has no stubs */
    cur = (cur + 7) & ~7u;
    if (over) {
        ntg = 0;
        for (size_t i = 0; i < m->ncalls; i++)
            if (L->stub[m->calls[i].target] == 1) {
                L->stub[m->calls[i].target] = cur;
                cur += m->veneer_bytes;
                L->nstubs++;
            }
    }
    /* With the stock image's own stubs, in ld's table together
     * (plan/picolink.c). */
    uint32_t nst = plan_place_stubs(m, group, fast, tg, ntg, cur, L);
    cur += nst * m->veneer_bytes;
    L->nstubs += nst;
    uint32_t old_end = (m->text_end + 7) & ~7u;
    L->text_delta = (int64_t)((cur + 7) & ~7u) - (int64_t)old_end;
    plan_layout_after(m, L, L->nstubs ? cur : units_end);
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
