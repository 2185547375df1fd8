/* Plans from PC samples (see fromsamples.h). */
#include "plan/fromsamples.h"

#include <stdlib.h>
#include <string.h>

#include "isa/thumb.h"
#include "plan/plan_int.h"

static uint32_t align8(uint32_t v)
{
    return (v + 7) & ~7u;
}

int plan_thumb_branch(const uint8_t *code, size_t avail, uint32_t addr,
                      uint32_t *target, uint32_t *len)
{
    if (avail < 2)
        return 0;
    uint32_t h1 = code[0] | (uint32_t)code[1] << 8;
    uint32_t pc = addr + 4; /* Thumb: PC reads as the instruction + 4 */
    /* B encodings: ARMv6-M Architecture Reference Manual A6.7.10 (T1, T2),
     * ARMv7-M Architecture Reference Manual A7.7.12 (T1-T4). */
    if ((h1 & 0xf000) == 0xd000 && ((h1 >> 8) & 0xf) < 0xe) {
        /* T1: B<c> with imm8 (cond 0b1110 is UDF, 0b1111 SVC). */
        int32_t imm = (int32_t)(int8_t)(h1 & 0xff) * 2;
        *target = pc + (uint32_t)imm;
        *len = 2;
        return 1;
    }
    if ((h1 & 0xf800) == 0xe000) {
        /* T2: B with imm11. */
        int32_t imm = (int32_t)((h1 & 0x7ff) << 21) >> 20;
        *target = pc + (uint32_t)imm;
        *len = 2;
        return 1;
    }
    if ((h1 & 0xf800) != 0xf000 || avail < 4)
        return 0;
    uint32_t h2 = code[2] | (uint32_t)code[3] << 8;
    uint32_t S = (h1 >> 10) & 1, J1 = (h2 >> 13) & 1, J2 = (h2 >> 11) & 1;
    if ((h2 & 0xd000) == 0x8000 && ((h1 >> 6) & 0xf) < 0xe) {
        /* T3: B<c>.W, S:J2:J1:imm6:imm11:0 (ARMv7-M and later). */
        uint32_t imm = S << 20 | J2 << 19 | J1 << 18 | (h1 & 0x3f) << 12 |
                       (h2 & 0x7ff) << 1;
        if (S)
            imm |= 0xffe00000u;
        *target = pc + imm;
        *len = 4;
        return 1;
    }
    uint32_t t;
    if (thumb_long_branch(h1, h2, addr, &t) == THUMB_BW) {
        /* T4: B.W (isa/thumb.h). */
        *target = t;
        *len = 4;
        return 1;
    }
    return 0;
}

/* Samples of s in [lo, hi): s is sorted by address. */
static uint64_t samples_in(const smp *s, uint32_t lo, uint32_t hi)
{
    size_t a = 0, b = s->n;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if ((s->e[mid].addr & ~1u) < lo)
            a = mid + 1;
        else
            b = mid;
    }
    uint64_t n = 0;
    for (size_t i = a; i < s->n && (s->e[i].addr & ~1u) < hi; i++)
        n += s->e[i].count;
    return n;
}

/* Units by their address in the stock image. */
static int cmp_link(const void *a, const void *b, void *arg)
{
    const plan_model *m = arg;
    uint32_t x = m->units[*(const size_t *)a].addr;
    uint32_t y = m->units[*(const size_t *)b].addr;
    return (x > y) - (x < y);
}

/* A busy-wait loop in unit u: a backward branch whose body (from its
 * target to its end) is at most spin_bytes long and holds spin_share of
 * the unit's samples. Walks the code instruction by instruction (a first
 * halfword 0xe800 or above starts a 32-bit one); returns 1 and fills sp. */
static int find_spin(const plan_model *m, size_t u, const smp *s,
                     uint64_t su, const plan_samples_opts *o, plan_spin *sp)
{
    const plan_unit *un = &m->units[u];
    uint8_t *code = malloc(un->size ? un->size : 1);
    if (!code)
        return 0;
    int found = 0;
    if (img_read(m->im, un->addr, code, un->size) == 0) {
        uint64_t best = 0;
        for (uint32_t i = 0; i + 2 <= un->size;) {
            uint32_t h1 = code[i] | (uint32_t)code[i + 1] << 8;
            uint32_t w = h1 >= 0xe800 ? 4 : 2, t, len;
            uint32_t at = un->addr + i;
            if (plan_thumb_branch(code + i, un->size - i, at, &t, &len) &&
                t <= at && t >= un->addr && at + len - t <= o->spin_bytes) {
                uint64_t in = samples_in(s, t, at + len);
                if (in > best && (double)in >= o->spin_share * (double)su) {
                    best = in;
                    *sp = (plan_spin){u, t, at + len, su, in};
                    found = 1;
                }
            }
            i += w;
        }
    }
    free(code);
    return found;
}

/* Stub bookkeeping like the trace-driven selection: a unit in fast memory
 * needs one stub per flash target it branches to; its callers in flash
 * share one stub each (those go to flash, not to fast memory). */
uint32_t plan_fast_bytes(const plan_model *m, const unsigned char *fast)
{
    uint32_t n = 0;
    for (size_t i = 0; i < m->nunits; i++)
        if (fast[i])
            n += align8(m->units[i].size);
    unsigned char *seen = calloc(m->ntargets ? m->ntargets : 1, 1);
    if (!seen)
        return UINT32_MAX;
    for (size_t i = 0; i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        if (fast[c->caller] && !fast[m->targets[c->target].unit] &&
            !seen[c->target]) {
            seen[c->target] = 1;
            n += m->veneer_bytes;
        }
    }
    free(seen);
    return n;
}

typedef struct heat {
    size_t u;
    double density;
} heat;

static int cmp_heat(const void *a, const void *b)
{
    const heat *x = a, *y = b;
    if (x->density != y->density)
        return x->density > y->density ? -1 : 1;
    return x->u < y->u ? -1 : x->u > y->u;
}

static int cmp_spin(const void *a, const void *b)
{
    const plan_spin *x = a, *y = b;
    if (x->loop_samples != y->loop_samples)
        return x->loop_samples > y->loop_samples ? -1 : 1;
    return x->unit < y->unit ? -1 : x->unit > y->unit;
}

plan_result *plan_result_place(const plan_model *m, const size_t *fast,
                               size_t nfast, const size_t *hot, size_t nhot,
                               const uint32_t *hot_set, const uint32_t *hot_gap,
                               uint32_t pad_limit, size_t *sets_dropped,
                               const double *weight)
{
    if (sets_dropped)
        *sets_dropped = nhot;
    size_t n = m->nunits ? m->nunits : 1;
    plan_result *res = calloc(1, sizeof *res);
    unsigned char *inf = calloc(n, 1);
    if (!res || !inf || !(res->items = calloc(nfast + nhot + 1,
                                              sizeof *res->items))) {
        if (res)
            free(res->items);
        free(res);
        free(inf);
        return NULL;
    }
    uint32_t fast_off = 0, p = 0, hot_sum = 0;
    uint32_t hot_base = plan_hot_base(m);
    uint32_t al0 = m->cache.line > 8 ? m->cache.line : 8;
    for (size_t k = 0; k < nfast; k++) {
        plan_item *it = &res->items[res->nitems++];
        it->unit = fast[k];
        it->samples = weight ? weight[fast[k]] : 0;
        it->region = PLAN_FAST;
        it->offset = fast_off;
        fast_off += align8(m->units[fast[k]].size);
        inf[fast[k]] = 1;
    }
    for (size_t k = 0; k < nhot; k++) {
        const plan_unit *un = &m->units[hot[k]];
        plan_item *it = &res->items[res->nitems++];
        /* Hot units start on a cache line (and their own alignment). */
        uint32_t al = un->align > al0 ? un->align : al0;
        p = ((hot_base + p + al - 1) & ~(al - 1)) - hot_base;
        if (hot_set && hot_set[k] != UINT32_MAX && (!sets_dropped ||
                                                    *sets_dropped == nhot)) {
            /* The next offset, on the line grid, at the unit's set. */
            uint32_t cur = ((hot_base + p) >> m->line_shift) & (m->sets - 1);
            uint32_t want = hot_set[k] & (m->sets - 1);
            uint32_t ahead = (want - cur) & (m->sets - 1);
            uint32_t q = p + ahead * m->cache.line;
            q = ((hot_base + q + al - 1) & ~(al - 1)) - hot_base;
            uint32_t pad = (p > hot_sum ? p - hot_sum : 0) + (q - p);
            /* A set less than half a way ahead of where the plan had it
             * (its gap before the unit) is padded to; one behind (the code
             * before grew past the gap) is not: the unit follows on, and
             * the drift is taken up by the next gap of the original
             * layout. */
            uint64_t reach = (uint64_t)(hot_gap && hot_gap[k] != UINT32_MAX
                                        ? hot_gap[k] : 0) + m->sets / 2;
            if (ahead < reach && pad <= pad_limit)
                p = q;
            else if (ahead < reach && sets_dropped)
                *sets_dropped = k;
        }
        it->unit = hot[k];
        it->samples = weight ? weight[hot[k]] : 0;
        it->region = PLAN_FLASH_HOT;
        it->offset = p;
        it->colour = ((hot_base + p) >> m->line_shift) & (m->sets - 1);
        p += align8(un->size);
        hot_sum += align8(un->size);
    }
    res->strategy = nhot ? PLAN_HOTBLOCK : PLAN_RANK;
    res->hot_base = hot_base;
    res->hot_bytes = p;
    res->pad_bytes = p > hot_sum ? p - hot_sum : 0;
    res->fast_bytes = plan_fast_bytes(m, inf);
    if (m->veneer_bytes)
        res->veneers = (res->fast_bytes - fast_off) / m->veneer_bytes;
    plan_layout L;
    if (plan_layout_alloc(m, &L) == 0) {
        plan_layout_build(m, res->items, res->nitems, hot_base, 0, &L, NULL);
        res->flash_stubs = L.nstubs;
        res->stub_order = L.stub_order;
        res->text_end = (uint32_t)((int64_t)((m->text_end + 7) & ~7u) +
                                   L.text_delta);
        plan_layout_free(&L);
    }
    free(inf);
    return res;
}

int plan_from_samples_predicts(const plan_model *m)
{
    return m->niters > 0;
}

void plan_samples_info_free(plan_samples_info *info)
{
    if (!info)
        return;
    free(info->spin);
    free(info->unit_samples);
    memset(info, 0, sizeof *info);
}

/* The per-unit arrays of plan_from_samples: each unit's samples (us), the
 * units with a busy-wait loop (spin; the loops in sp), the movable sampled
 * units by samples per byte (h), and the choice: ord_fast for the fast
 * memory, ord_hot for the hot block. */
typedef struct {
    double *us;
    unsigned char *fast, *spin;
    heat *h;
    plan_spin *sp;
    size_t *ord_fast, *ord_hot;
    size_t nh, nf, nhb;
} samples_work;

static int work_alloc(samples_work *w, size_t n)
{
    memset(w, 0, sizeof *w);
    w->us = calloc(n, sizeof *w->us);
    w->fast = calloc(n, 1);
    w->spin = calloc(n, 1);
    w->h = malloc(n * sizeof *w->h);
    w->sp = malloc(n * sizeof *w->sp);
    w->ord_fast = malloc(n * sizeof *w->ord_fast);
    w->ord_hot = malloc(n * sizeof *w->ord_hot);
    return w->us && w->fast && w->spin && w->h && w->sp && w->ord_fast &&
           w->ord_hot ? 0 : -1;
}

/* The arrays plan_from_samples does not hand over (all but us and sp). */
static void work_free(samples_work *w)
{
    free(w->fast);
    free(w->spin);
    free(w->h);
    free(w->ord_fast);
    free(w->ord_hot);
}

/* The samples of each unit (w->us), the busy-wait loops (w->spin, w->sp,
 * hottest first) and the movable sampled units by samples per byte (w->h);
 * info's tallies. 0, or -1 when no sample falls in a unit. */
static int tally_units(const plan_model *m, const smp *s,
                       const plan_samples_opts *o, plan_samples_info *info,
                       samples_work *w, cp_err *err)
{
    for (size_t i = 0; i < s->n; i++) {
        info->total += s->e[i].count;
        if (s->e[i].addr == SMP_HALTED)
            info->halted += s->e[i].count;
    }
    for (size_t u = 0; u < m->nunits; u++) {
        const plan_unit *un = &m->units[u];
        uint64_t su = samples_in(s, un->addr, un->addr + un->size);
        w->us[u] = (double)su;
        if (!su)
            continue;
        info->sampled_units++;
        info->in_units += su;
        if (m->niters && !un->runs)
            info->untraced += su;
        if (un->flags & PLAN_U_NOMOVE)
            continue;
        if (su >= o->spin_min &&
            find_spin(m, u, s, su, o, &w->sp[info->nspin])) {
            w->spin[u] = 1;
            info->nspin++;
        }
        w->h[w->nh++] = (heat){u, (double)su / (un->size ? un->size : 1)};
    }
    if (!info->in_units)
        return cp_seterr(err, "none of the %llu samples falls in the cached "
                         "code of %s: samples of another image or another "
                         "core?", (unsigned long long)info->total,
                         img_path(m->im));
    qsort(w->h, w->nh, sizeof *w->h, cmp_heat);
    qsort(w->sp, info->nspin, sizeof *w->sp, cmp_spin);
    return 0;
}

/* Fast memory by samples per byte, like the trace's rank: each unit that
 * still fits, busy-wait loops and --no-ram matches left out. */
static void pick_fast(const plan_model *m, uint32_t budget, samples_work *w)
{
    for (size_t k = 0; k < w->nh && budget; k++) {
        size_t u = w->h[k].u;
        if (w->spin[u] || (m->units[u].flags & PLAN_U_NORAM))
            continue;
        w->fast[u] = 1;
        if (plan_fast_bytes(m, w->fast) > budget)
            w->fast[u] = 0;
    }
}

/* The flash hot block: the hottest sampled sections left in flash, as
 * many as fit in one cache's worth of bytes, gathered in link order. A
 * contiguous block no larger than the cache puts at most `ways` lines of
 * it in each set, so it cannot conflict with itself; past that, an order
 * taken from samples (which say where the time goes, not which fetches
 * miss) raises misses as often as it lowers them (docs/plan.md has the
 * demo's figures). Link order keeps the linker's neighbours (a caller
 * next to its callees) together. The fast units go to w->ord_fast, by
 * samples per byte; the ones the block has no room for, to info. */
static void pick_hot(plan_model *m, int hotblock, plan_samples_info *info,
                     samples_work *w)
{
    uint32_t hb_bytes = 0, cap = m->cache.size;
    uint32_t al0 = m->cache.line > 8 ? m->cache.line : 8;
    for (size_t k = 0; k < w->nh; k++) {
        size_t u = w->h[k].u;
        const plan_unit *un = &m->units[u];
        if (w->fast[u]) {
            w->ord_fast[w->nf++] = u;
        } else if (hotblock) {
            /* What the unit can take in the block whatever its place in
             * it: plan_result_place starts each on a line (and its own
             * alignment) and rounds its size to 8 bytes. */
            uint32_t end = hb_bytes +
                           ((align8(un->size) + al0 - 1) & ~(al0 - 1)) +
                           (un->align > al0 ? un->align - al0 : 0);
            if (end <= cap) {
                w->ord_hot[w->nhb++] = u;
                hb_bytes = end;
            } else {
                info->left_units++;
                info->left_bytes += un->size;
                info->left_samples += (uint64_t)w->us[u];
            }
        }
    }
    qsort_r(w->ord_hot, w->nhb, sizeof *w->ord_hot, cmp_link, m);
}

/* res's misses, stock misses and instructions per iteration, simulated on
 * the trace (m->niters > 0); calls through the linker's stubs add their
 * instructions, as in every strategy's result. 0, or -1. */
static int predict(plan_model *m, plan_result *res, cp_err *err)
{
    plan_layout L;
    plan_eval_out out = {0};
    if (plan_layout_alloc(m, &L) < 0)
        return cp_seterr(err, "out of memory");
    plan_layout_build(m, res->items, res->nitems, res->hot_base,
                      res->block_end, &L, NULL);
    int erc = plan_eval(m, &L, 0, &out, err);
    plan_layout_free(&L);
    if (erc < 0)
        return -1;
    res->misses = out.misses;
    plan_result stock = {0};
    stock.hot_base = res->hot_base;
    res->stock_misses = plan_result_eval(m, &stock);
    double ins = 0;
    unsigned first = m->niters > 1 ? 1 : 0;
    for (unsigned i = first; i < m->niters; i++)
        ins += m->iter_insns[i];
    res->insns = ins / (m->niters - first) + out.stub_calls * m->veneer_insns;
    for (size_t i = 0; i < res->nitems; i++)
        res->items[i].misses = 0;
    return 0;
}

plan_result *plan_from_samples(plan_model *m, const smp *s,
                               const plan_samples_opts *o0,
                               plan_samples_info *info, cp_err *err)
{
    plan_samples_opts o = *o0;
    if (o.spin_share <= 0)
        o.spin_share = 0.8;
    if (!o.spin_bytes)
        o.spin_bytes = 32;
    if (!o.spin_min)
        o.spin_min = 20;
    plan_samples_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    if (s->elf[0] && strcmp(s->elf, img_hash(m->im))) {
        cp_seterr(err, "the samples are of another image (theirs %s, this "
                  "one %s)", s->elf, img_hash(m->im));
        return NULL;
    }
    plan_result *res = NULL;
    samples_work w;
    if (work_alloc(&w, m->nunits ? m->nunits : 1) < 0) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    if (tally_units(m, s, &o, info, &w, err) < 0)
        goto fail;
    pick_fast(m, o.budget, &w);
    pick_hot(m, o.hotblock, info, &w);
    res = plan_result_place(m, w.ord_fast, w.nf, w.ord_hot, w.nhb, NULL, NULL,
                            0, NULL, w.us);
    if (!res) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    res->strategy = o.hotblock ? PLAN_HOTBLOCK : PLAN_RANK;
    if (m->niters && predict(m, res, err) < 0)
        goto fail;
    work_free(&w);
    if (info == &local) {
        free(w.sp);
        free(w.us);
    } else {
        info->spin = w.sp;
        info->unit_samples = w.us;
    }
    return res;
fail:
    if (res)
        free(res->items);
    free(res);
    free(w.us);
    free(w.sp);
    work_free(&w);
    return NULL;
}
