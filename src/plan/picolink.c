/* The pico-sdk link model: what memmap_default.ld, and the script
 * codeplace_apply() derives from it (cmake/codeplace.cmake), do with a
 * plan.
 *
 * pico-sdk's .text output section starts with the start-up sections
 * (KEEP .vectors with the default exception handlers, .binary_info_header,
 * .embedded_block, .reset with the entry point): they stay first, and the
 * derived script puts the hot block after them, at the next 8-byte
 * boundary (`. = ALIGN(8); __codeplace_hot_start = .;`). The rest of
 * .text follows in link order, as the stock script packs it, up to the
 * last code section (crti.o's .fini), after which ld puts its long-branch
 * stubs: those of the stock image (calls from flash into the SDK's own RAM
 * code, .time_critical and libgcc's) and those the plan adds, in the order
 * of ld's stub table (plan/ldstub.c). Constructor tables and .eh_frame end
 * .text after them and move with them, as .rodata does. */
#include "plan/plan_int.h"

#include "plan/ldstub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An input section of the map in the text section, by name. */
static const img_isec *text_isec(const plan_model *m, const char *name)
{
    for (size_t i = 0; i < img_nisecs(m->im); i++) {
        const img_isec *s = img_isec_at(m->im, i);
        if (s->addr - m->text_start < m->text_end - m->text_start &&
            !strcmp(s->name, name))
            return s;
    }
    return NULL;
}

static int is_stub_isec(const img_isec *s)
{
    return s->path && !strcmp(s->path, "linker stubs");
}

/* Whether codeplace_apply() can move unit u of a pico-sdk build to SRAM:
 * it renames the section that defines the unit's first name in the one
 * link input that defines it, when that section is code (.text*) of an
 * object or archive on the link line. A library ld found with -l (libgcc,
 * libc) is not on it: the map names it by its full path. */
int plan_pico_can_rename(const plan_model *m, const plan_unit *u)
{
    if (strncmp(u->isec, ".text", 5) || (u->isec[5] && u->isec[5] != '.'))
        return 0;
    const img *im = plan_model_image(m);
    for (size_t i = 0; i < img_nisecs(im); i++) {
        const img_isec *s = img_isec_at(im, i);
        if (s->addr == u->addr && !strcmp(s->name, u->isec) && s->path &&
            s->path[0] == '/' && u->archive)
            return 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < img_nfuncs(im); i++)
        n += img_func_named(img_func_at(im, i), u->name);
    return n == 1;
}

/* The unit whose first address is addr, or UINT32_MAX. */
static uint32_t unit_starting(const plan_model *m, uint32_t addr)
{
    for (size_t i = 0; i < m->nunits; i++)
        if (m->units[i].addr <= addr &&
            addr < m->units[i].addr + m->units[i].size)
            return (uint32_t)i;
    return UINT32_MAX;
}

/* The stock image's stubs in fast memory (calls from the SDK's RAM code
 * back to flash): each one's target unit, from its __NAME_veneer symbol
 * (UINT32_MAX: not known, or not a unit). */
static int add_fast_stubs(plan_model *m, const img_isec *s)
{
    for (uint32_t a = s->addr; a + m->veneer_bytes <= s->addr + s->size;
         a += m->veneer_bytes) {
        size_t k = m->stock_fast_stubs + 1;
        uint32_t *nu = realloc(m->stock_fast_unit, k * sizeof *nu);
        if (nu)
            m->stock_fast_unit = nu;
        uint32_t *na = realloc(m->stock_fast_addr, k * sizeof *na);
        if (na)
            m->stock_fast_addr = na;
        void *ni = realloc(m->stock_fast_ins, k * sizeof *m->stock_fast_ins);
        if (ni)
            m->stock_fast_ins = ni;
        if (!nu || !na || !ni)
            return -1;
        memset(m->stock_fast_ins[k - 1], 0, sizeof *m->stock_fast_ins);
        m->stock_fast_addr[k - 1] = a;
        uint32_t u = UINT32_MAX;
        const img_func *f = img_lookup(m->im, a);
        size_t n = f ? strlen(f->name) : 0;
        if (f && f->addr == a && n > 9 && !strncmp(f->name, "__", 2) &&
            !strcmp(f->name + n - 7, "_veneer")) {
            char name[512];
            snprintf(name, sizeof name, "%.*s", (int)(n - 9), f->name + 2);
            const img_func *t = img_find(m->im, name);
            if (t)
                u = unit_starting(m, t->addr);
        }
        m->stock_fast_unit[m->stock_fast_stubs++] = u;
    }
    return 0;
}

uint32_t plan_stock_fast_stubs(const plan_model *m, const plan_result *r)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < m->stock_fast_stubs; s++) {
        int gone = 0;
        for (size_t i = 0; i < r->nitems && !gone; i++)
            gone = r->items[i].region == PLAN_FAST &&
                   r->items[i].unit == m->stock_fast_unit[s];
        n += !gone;
    }
    return n;
}

int plan_model_pico_link(plan_model *m)
{
    uint32_t hot;
    if (!plan_model_is_pico(m->im, &hot))
        return 0;
    const img_isec *reset = text_isec(m, ".reset");
    if (!reset)
        return 0; /* not memmap_default.ld's shape: plan as for GNU ld */
    if (!hot)
        hot = (reset->addr + reset->size + 7) & ~7u;
    m->hot_start = hot;
    m->pico = 1;
    /* The start-up sections stay where they are (what follows .reset in
     * the stock image, crti.o's .init, goes after the block). */
    for (size_t i = 0; i < m->nunits; i++)
        if (m->units[i].addr < reset->addr + reset->size)
            m->units[i].flags |= PLAN_U_NOMOVE | PLAN_U_NORAM;
    /* Only what codeplace_apply() can rename goes to SRAM: the plan is
     * what the pico-sdk build makes of it. */
    for (size_t i = 0; i < m->nunits; i++)
        if (!plan_pico_can_rename(m, &m->units[i]))
            m->units[i].flags |= PLAN_U_NORAM;
    /* The end of the code and of ld's stubs after it: what follows moves
     * with the text's size. */
    uint32_t code_end = m->text_start;
    for (size_t i = 0; i < m->nunits; i++) {
        const plan_unit *u = &m->units[i];
        if (!(u->addr - m->text_start < m->text_end - m->text_start))
            continue;
        if (u->addr + u->size > code_end)
            code_end = u->addr + u->size;
    }
    size_t nstub = 0;
    for (size_t i = 0; i < img_nisecs(m->im); i++) {
        const img_isec *s = img_isec_at(m->im, i);
        if (!is_stub_isec(s) || !s->size)
            continue;
        if (!tgt_is_cached(m->t, s->addr)) {
            if (add_fast_stubs(m, s) < 0)
                return -1;
            continue;
        }
        if (s->addr - m->text_start >= m->text_end - m->text_start)
            continue;
        if (!m->stock_stubs)
            m->stock_stub_lo = s->addr;
        m->stock_stubs += s->size / m->veneer_bytes;
        if (s->addr + s->size > code_end)
            code_end = s->addr + s->size;
    }
    m->text_end = code_end;
    if (!m->stock_stubs)
        return 0;
    /* Each stock stub's name in ld's table, from its __NAME_veneer symbol
     * (a global target: "_NAME+0_type"; a static one's name needs ids the
     * image does not keep, and leaves the order a guess). */
    m->stock_stub_sfx = calloc(m->stock_stubs, sizeof *m->stock_stub_sfx);
    if (!m->stock_stub_sfx)
        return -1;
    for (size_t i = 0; i < img_nisecs(m->im); i++) {
        const img_isec *s = img_isec_at(m->im, i);
        if (!is_stub_isec(s) || !s->size || !tgt_is_cached(m->t, s->addr) ||
            s->addr - m->text_start >= m->text_end - m->text_start)
            continue;
        for (uint32_t a = s->addr; a < s->addr + s->size && nstub < m->stock_stubs;
             a += m->veneer_bytes) {
            const img_func *f = img_lookup(m->im, a);
            const char *sfx = NULL;
            size_t n = f ? strlen(f->name) : 0;
            if (f && f->addr == a && n > 9 && !strncmp(f->name, "__", 2) &&
                !strcmp(f->name + n - 7, "_veneer")) {
                char buf[600];
                snprintf(buf, sizeof buf, "_%.*s+0_%d", (int)(n - 9),
                         f->name + 2,
                         tgt_stub_thumb2(m->t) ? PLAN_LDSTUB_THUMB2_ONLY
                                               : PLAN_LDSTUB_THUMB_ONLY);
                sfx = cp_pool_str(m->pool, buf);
                if (!sfx)
                    return -1;
            }
            m->stock_stub_sfx[nstub++] = sfx;
        }
    }
    return 0;
}

uint32_t plan_stock_stubs_live(const plan_model *m, const unsigned char *fast,
                               unsigned char *live)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < m->stock_stubs; s++) {
        int called = 0, stays = 0;
        for (size_t i = 0; i < m->nstock_calls; i++)
            if (m->stock_calls[i].target == s) {
                called = 1;
                stays |= !fast[m->stock_calls[i].caller];
            }
        live[s] = !called || stays;
        n += live[s];
    }
    return n;
}

/* Where each stub goes in ld's table: the new ones (in ld's order already)
 * and the stock ones that stay, merged by bucket; stock stubs of one
 * bucket keep the order the stock image has them in. -1 when a new stub
 * shares a bucket with a stock one (their order is the order ld made them
 * in) or a name is not known. */
static int merge_slots(const plan_model *m, uint32_t group,
                       const uint32_t *tg, size_t n, const plan_layout *L,
                       uint32_t *slot_new, uint32_t *slot_stock)
{
    uint64_t bs[64], bn;
    if (m->stock_stubs > 64)
        return -1;
    for (uint32_t s = 0; s < m->stock_stubs; s++) {
        if (!L->live[s])
            continue;
        bs[s] = plan_ldstub_bucket(m, group, m->stock_stub_sfx[s]);
        if (bs[s] == UINT64_MAX)
            return -1;
    }
    for (uint32_t s = 0; s < m->stock_stubs; s++)
        slot_stock[s] = 0;
    for (size_t j = 0; j < n; j++) {
        bn = plan_ldstub_bucket(m, group, m->targets[tg[j]].suffix);
        if (bn == UINT64_MAX)
            return -1;
        uint32_t before = 0;
        for (uint32_t s = 0; s < m->stock_stubs; s++) {
            if (!L->live[s])
                continue;
            if (bs[s] == bn)
                return -1;
            if (bs[s] < bn)
                before++;
            else
                slot_stock[s]++; /* this new one comes before it */
        }
        slot_new[j] = (uint32_t)j + before;
    }
    for (uint32_t s = 0; s < m->stock_stubs; s++) {
        if (!L->live[s])
            continue;
        for (uint32_t q = 0; q < m->stock_stubs; q++)
            slot_stock[s] += L->live[q] &&
                             (bs[q] < bs[s] || (bs[q] == bs[s] && q < s));
    }
    return 0;
}

uint32_t plan_place_stubs(const plan_model *m, uint32_t group,
                          const unsigned char *fast, const uint32_t *tg,
                          size_t n, uint32_t base, plan_layout *L)
{
    uint32_t vb = m->veneer_bytes;
    if (!m->stock_stubs) {
        for (size_t j = 0; j < n; j++)
            L->stub[tg[j]] = base + (uint32_t)j * vb;
        return (uint32_t)n;
    }
    uint32_t nlive = plan_stock_stubs_live(m, fast, L->live);
    /* slot_new in L->stub (then turned into addresses), slot_stock in
     * L->stock_addr */
    uint32_t *slot_new = L->stub;
    int known = L->stub_order;
    if (known) {
        uint32_t tmp[256];
        if (n > 256 ||
            merge_slots(m, group, tg, n, L, tmp, L->stock_addr) < 0)
            known = 0;
        else
            for (size_t j = 0; j < n; j++)
                slot_new[tg[j]] = tmp[j];
    }
    if (!known) {
        L->stub_order = 0;
        uint32_t k = (uint32_t)n;
        for (size_t j = 0; j < n; j++)
            slot_new[tg[j]] = (uint32_t)j;
        for (uint32_t s = 0; s < m->stock_stubs; s++)
            if (L->live[s])
                L->stock_addr[s] = k++;
    }
    for (size_t j = 0; j < n; j++)
        L->stub[tg[j]] = base + slot_new[tg[j]] * vb;
    for (uint32_t s = 0; s < m->stock_stubs; s++)
        L->stock_addr[s] = L->live[s] ? base + L->stock_addr[s] * vb
                                      : UINT32_MAX;
    return (uint32_t)n + nlive;
}

/* ... per warm iteration, weighted as plan_model_insns weighs them. */
static double warm_ins(const plan_model *m, double (*w)[2])
{
    double v = 0;
    for (unsigned k = 0; k < m->nwork; k++)
        v += (w[k][0] - (m->work[k].n > 1 ? w[k][1] : 0)) *
             plan_work_scale(m, k, 0);
    return v;
}

double plan_stock_fast_saved(const plan_model *m, const plan_result *r)
{
    double saved = 0;
    for (size_t i = 0; i < r->nitems; i++) {
        if (r->items[i].region != PLAN_FAST)
            continue;
        uint32_t u = (uint32_t)r->items[i].unit;
        /* A stock stub in SRAM whose flash target moves there too. */
        for (uint32_t s = 0; s < m->stock_fast_stubs; s++)
            if (m->stock_fast_unit[s] == u)
                saved += warm_ins(m, m->stock_fast_ins[s]);
        /* A call from flash into the SDK's RAM code whose caller moves to
         * SRAM: it no longer goes through the stock stub. */
        for (size_t c = 0; m->stock_call_ins && c < m->nstock_calls; c++)
            if (m->stock_calls[c].caller == u)
                saved += warm_ins(m, m->stock_call_ins[c]);
    }
    return saved;
}
