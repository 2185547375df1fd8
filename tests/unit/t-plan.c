/* The planner on the m0 fixture image with access streams made here: its
 * evaluator against a plain reference cache, and each strategy on streams
 * whose best answer is known. */
#include "plan/plan.h"
#include "plan/emit.h"
#include "plan/plan_int.h"
#include "plan/search.h"

#include <math.h>

#include "test.h"


/* The set index's moves as a figure, -1 on failure (tests only). */
static double sx_try(csim_setidx *x, size_t k, uint32_t a, size_t k2,
                     uint32_t a2, double limit)
{
    double v;
    return csim_setidx_try(x, k, a, k2, a2, limit, &v, NULL) < 0 ? -1 : v;
}

static double sx_remove(csim_setidx *x, size_t k)
{
    double v;
    return csim_setidx_remove(x, k, &v, NULL) < 0 ? -1 : v;
}

static img *open_m0(void)
{
    char elf[512], map[512];
    snprintf(elf, sizeof elf, "%s/m0.elf", t_fixture_dir());
    snprintf(map, sizeof map, "%s/m0.map", t_fixture_dir());
    cp_err e;
    img *im = img_open(elf, map, &e);
    if (!im)
        printf("# %s\n", e.msg);
    return im;
}

/* A reference set-associative LRU cache over line numbers, written plainly:
 * each set is a list ordered most recent first. */
typedef struct ref {
    unsigned sets, ways;
    long *l; /* sets * ways, -1 empty */
} ref;

static int ref_access(ref *r, long line)
{
    long *s = r->l + (line % r->sets) * r->ways;
    for (unsigned i = 0; i < r->ways; i++)
        if (s[i] == line) {
            for (unsigned j = i; j > 0; j--)
                s[j] = s[j - 1];
            s[0] = line;
            return 0;
        }
    for (unsigned j = r->ways - 1; j > 0; j--)
        s[j] = s[j - 1];
    s[0] = line;
    return 1;
}

static uint64_t seed = 88172645463325252ULL;
static uint32_t rnd(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (uint32_t)seed;
}

/* The first whole line inside unit u, or 0 if it has none. */
static uint32_t line_in(const plan_unit *u, uint32_t line)
{
    uint32_t a = (u->addr + line - 1) / line * line;
    return a + line <= u->addr + u->size ? a : 0;
}

/* A whole line of unit u in set `set` of cache c, or 0. */
static uint32_t line_in_set(const plan_unit *u, const tgt_cache *c,
                            unsigned set)
{
    unsigned sets = tgt_cache_sets(c);
    for (uint32_t a = line_in(u, c->line); a && a + c->line <= u->addr + u->size;
         a += c->line)
        if ((a / c->line) % sets == set)
            return a;
    return 0;
}

/* Three units that each hold a whole line in one set of the cache c; the
 * lines' addresses go to at[]. */
static uint32_t at[3];
static int conflicting_triple(plan_model *m, const tgt_cache *c, size_t out[3])
{
    unsigned sets = tgt_cache_sets(c);
    for (unsigned set = 0; set < sets; set++) {
        size_t n = 0;
        for (size_t b = 0; b < plan_model_nunits(m) && n < 3; b++) {
            const plan_unit *ub = plan_model_unit(m, b);
            if (ub->flags & (PLAN_U_NOMOVE | PLAN_U_NORAM) || ub->size > 512)
                continue;
            uint32_t l = line_in_set(ub, c, set);
            if (l) {
                at[n] = l;
                out[n++] = b;
            }
        }
        if (n == 3)
            return 0;
    }
    return -1;
}

static void eval_matches_reference(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    tgt_cache c = t->cache;
    cp_err e;
    T_EQ(tgt_parse_cache("1K,2,8", &c, &e), 0);
    plan_model *m = plan_model_new(im, t, &c, &e);
    T_ASSERT(m);
    /* Random runs over the whole text, 5 iterations. */
    ref r = {tgt_cache_sets(&c), c.ways, NULL};
    r.l = malloc(r.sets * r.ways * sizeof *r.l);
    memset(r.l, 0xff, r.sets * r.ways * sizeof *r.l);
    long want = 0;
    const plan_unit *u0 = plan_model_unit(m, 0);
    const plan_unit *un = plan_model_unit(m, plan_model_nunits(m) - 1);
    uint32_t lo = u0->addr, span = un->addr + un->size - lo;
    for (int it = 0; it < 5; it++) {
        T_EQ(plan_model_begin_iteration(m), 0);
        for (int k = 0; k < 4000; k++) {
            uint32_t a = lo + (rnd() % span & ~1u);
            uint32_t len = 2 + (rnd() % 40 & ~1u);
            if (a + len > lo + span)
                len = lo + span - a;
            T_EQ(plan_model_add_access(m, a, len, len / 2, 0), 0);
            for (long l = a / 8; l <= (long)(a + len - 1) / 8; l++)
                want += ref_access(&r, l) && it > 0;
        }
    }
    plan_layout L;
    T_EQ(plan_layout_alloc(m, &L), 0);
    plan_layout_stock(m, &L);
    plan_eval_out out = {0};
    T_EQ(plan_eval(m, &L, 0, &out, &e), 0);
    if (fabs(out.misses * 4 - want) > 1e-6) {
        T_FAIL("plan_eval %.2f misses/iteration, reference %.2f",
               out.misses, want / 4.0);
    }
    /* A fully associative cache of the same size misses no more than a
     * 2-way one on a random stream of this kind, and no less than the
     * compulsory misses (0 here after warm-up is possible only if it fits). */
    double fa = -1;
    T_EQ(plan_eval_fa(m, &L, 0, &fa, &e), 0);
    T_ASSERT(fa >= 0 && fa <= out.misses * 1.05);
    plan_layout_free(&L);
    free(r.l);
    plan_model_free(m);
    img_free(im);
}

/* Three sections cycling through one set of a 2-way cache: every access
 * misses as linked; colouring or RAM must remove the misses. */
static void strategies_fix_a_three_way_conflict(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    tgt_cache c = t->cache;
    cp_err e;
    T_EQ(tgt_parse_cache("2K,2,8", &c, &e), 0);
    plan_model *m = plan_model_new(im, t, &c, &e);
    T_ASSERT(m);
    size_t tri[3];
    if (conflicting_triple(m, &c, tri) < 0) {
        T_FAIL("no three sections share a set in the fixture");
        plan_model_free(m);
        img_free(im);
        return;
    }
    for (int it = 0; it < 6; it++) {
        T_EQ(plan_model_begin_iteration(m), 0);
        for (int k = 0; k < 50; k++)
            for (int j = 0; j < 3; j++)
                T_EQ(plan_model_add_access(m, at[j],
                                           8, 4, 0), 0);
    }
    plan_opts o = plan_opts_default(t);
    o.search_moves = 50;
    o.descent_passes = 0; /* the descent: t0631-plan-descent */
    plan_result *r = plan_run(m, PLAN_STOCK, &o, &e);
    T_ASSERT(r);
    T_EQ((long)r->misses, 150);  /* every access misses */
    T_ASSERT(r->conflict_before > 149); /* a fully assoc. cache holds 3 lines */
    plan_result_free(r);

    r = plan_run(m, PLAN_COLOUR, &o, &e);
    T_ASSERT(r);
    T_EQ((long)r->misses, 0);
    T_EQ(r->nitems, 3);
    /* The three hot lines no longer share one set. */
    {
        uint32_t hs[3];
        unsigned sets = tgt_cache_sets(&c);
        for (size_t k = 0; k < 3; k++) {
            const plan_item *it = &r->items[k];
            size_t j = it->unit == tri[0] ? 0 : it->unit == tri[1] ? 1 : 2;
            T_EQ(it->unit, tri[j]);
            hs[k] = (it->colour + (at[j] - plan_model_unit(m, tri[j])->addr) /
                                  c.line) % sets;
        }
        T_ASSERT(hs[0] != hs[1] || hs[1] != hs[2]);
    }
    T_ASSERT(fabs(plan_result_eval(m, r) - r->misses) < 1e-9);
    plan_result_free(r);

    r = plan_run(m, PLAN_HOTBLOCK, &o, &e);
    T_ASSERT(r);
    T_EQ((long)r->misses, 0); /* contiguous: three different sets */
    plan_result_free(r);

    /* RAM: room for one section only; moving one leaves two lines per set. */
    uint32_t s0 = plan_model_unit(m, tri[0])->size;
    uint32_t s1 = plan_model_unit(m, tri[1])->size;
    uint32_t s2 = plan_model_unit(m, tri[2])->size;
    uint32_t big = s0 > s1 ? (s0 > s2 ? s0 : s2) : (s1 > s2 ? s1 : s2);
    o.budget = ((big + 7) & ~7u) + 64 * o.veneer_bytes;
    r = plan_run(m, PLAN_RAM, &o, &e);
    T_ASSERT(r);
    T_EQ((long)r->misses, 0);
    T_ASSERT(r->fast_bytes <= o.budget);
    size_t nfast = 0;
    for (size_t i = 0; i < r->nitems; i++)
        nfast += r->items[i].region == PLAN_FAST;
    T_EQ(nfast, 1);
    plan_result_free(r);

    /* combined leaves the plan of its first search, the colour
     * strategy's: the same sections at the same places, the same figure
     * (no time limit: the shares of one would differ). */
    {
        plan_opts oc = o;
        oc.time_limit = 0;
        plan_result *col = NULL, *alone;
        plan_opts on = oc;
        oc.colour_out = &col;
        r = plan_run(m, PLAN_COMBINED, &oc, &e);
        alone = plan_run(m, PLAN_COLOUR, &on, &e);
        T_ASSERT(r && col && alone);
        if (r && col && alone) {
            T_EQ(col->strategy, PLAN_COLOUR);
            T_EQ(col->fast_bytes, 0);
            T_EQ(col->nitems, alone->nitems);
            for (size_t i = 0; i < col->nitems && i < alone->nitems; i++) {
                T_EQ(col->items[i].unit, alone->items[i].unit);
                T_EQ(col->items[i].region, alone->items[i].region);
                T_EQ(col->items[i].offset, alone->items[i].offset);
            }
            T_ASSERT(fabs(col->misses - alone->misses) < 1e-9);
            T_EQ(col->moves, alone->moves);
        }
        plan_result_free(r);
        plan_result_free(col);
        plan_result_free(alone);
    }
    /* auto with a budget: colour a candidate without a run of its own. */
    r = plan_run(m, PLAN_AUTO, &o, &e);
    T_ASSERT(r);
    T_EQ((long)r->misses, 0);
    plan_result_free(r);

    o.budget = 0;
    r = plan_run(m, PLAN_AUTO, &o, &e);
    T_ASSERT(r);
    T_EQ((long)r->misses, 0);
    plan_result_free(r);
    plan_model_free(m);
    img_free(im);
}

/* RAM selection prefers the section that saves most per byte; the
 * instructions-per-byte baseline can be fooled by a busy loop. */
static void ram_beats_rank_on_a_busy_loop(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    tgt_cache c = t->cache;
    cp_err e;
    T_EQ(tgt_parse_cache("1K,1,8", &c, &e), 0); /* direct mapped, 128 sets */
    plan_model *m = plan_model_new(im, t, &c, &e);
    T_ASSERT(m);
    size_t tri[3];
    T_EQ(conflicting_triple(m, &c, tri), 0);
    /* B and C conflict; fast memory holds one of them. Unit A is a busy
     * loop: many instructions, no conflict (a set of its own), and too big
     * to share fast memory with B or C. */
    uint32_t sb = (plan_model_unit(m, tri[1])->size + 7) & ~7u;
    uint32_t sc = (plan_model_unit(m, tri[2])->size + 7) & ~7u;
    uint32_t budget = sb > sc ? sb : sc, small = sb < sc ? sb : sc;
    unsigned setb = (at[1] / 8) % 128;
    uint32_t la = 0;
    size_t a = (size_t)-1;
    for (size_t i = 0; i < plan_model_nunits(m) && a == (size_t)-1; i++) {
        const plan_unit *u = plan_model_unit(m, i);
        uint32_t su = (u->size + 7) & ~7u;
        if (i == tri[1] || i == tri[2] || (u->flags & PLAN_U_NORAM) ||
            su > budget || su + small <= budget || !line_in(u, 8))
            continue;
        for (uint32_t l = line_in(u, 8); l + 8 <= u->addr + u->size; l += 8)
            if ((l / 8) % 128 != setb) {
                a = i;
                la = l;
                break;
            }
    }
    T_ASSERT(a != (size_t)-1);
    for (int it = 0; it < 4; it++) {
        T_EQ(plan_model_begin_iteration(m), 0);
        for (int k = 0; k < 20; k++) {
            T_EQ(plan_model_add_access(m, la, 8,
                                       4000, 0), 0);
            T_EQ(plan_model_add_access(m, at[1], 8,
                                       4, 0), 0);
            T_EQ(plan_model_add_access(m, at[2], 8,
                                       4, 0), 0);
        }
    }
    plan_opts o = plan_opts_default(t);
    o.search_moves = 0;
    o.veneer_bytes = 0;
    o.budget = budget;
    plan_result *ram = plan_run(m, PLAN_RAM, &o, &e);
    plan_result *rank = plan_run(m, PLAN_RANK, &o, &e);
    T_ASSERT(ram && rank);
    T_ASSERT(ram->misses < rank->misses);
    T_EQ((long)ram->misses, 0);
    plan_result_free(ram);
    plan_result_free(rank);
    plan_model_free(m);
    img_free(im);
}

static void patterns_and_names(void)
{
    plan_unit u = {0};
    char b[256];
    u.isec = ".text.vfprintf";
    u.archive = "libc.a";
    u.object = "vfprintf.c.o";
    T_EQ(plan_unit_pattern(&u, b, sizeof b), 0);
    T_STREQ(b, "*libc.a:vfprintf.c.o(.text.vfprintf)");
    u.archive = NULL;
    T_EQ(plan_unit_pattern(&u, b, sizeof b), 0);
    T_STREQ(b, "*vfprintf.c.o(.text.vfprintf)");
    T_EQ(plan_unit_pattern(&u, b, 8), -1);
    plan_strategy s;
    T_EQ(plan_strategy_parse("combined", &s), 0);
    T_EQ(s, PLAN_COMBINED);
    T_EQ(plan_strategy_parse("color", &s), 0);
    T_EQ(s, PLAN_COLOUR);
    T_EQ(plan_strategy_parse("best", &s), -1);
}

static void exclusions(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    cp_err e;
    const tgt *t = tgt_find("rp2040");
    plan_model *m = plan_model_new(im, t, &t->cache, &e);
    T_ASSERT(m);
    T_EQ(plan_model_exclude(m, "fx_s*", 1), 3); /* fx_scale, fx_sum, fx_special */
    T_EQ(plan_model_exclude(m, "*.fx_special", 0), 1);
    T_EQ(plan_model_exclude(m, "nothing_like_this", 0), 0);
    /* The reset handler can't go to RAM. */
    const img_func *entry = img_lookup(im, img_entry(im) & ~1u);
    T_ASSERT(entry);
    for (size_t i = 0; i < plan_model_nunits(m); i++)
        if (plan_model_unit(m, i)->addr == entry->addr)
            T_ASSERT(plan_model_unit(m, i)->flags & PLAN_U_NORAM);
    plan_model_free(m);
    img_free(im);
}

/* A random stream over the fixture's text in two workloads (weights 1 and
 * 0.25) of 4 iterations each. */
static plan_model *random_model(img *im, const tgt *t, const tgt_cache *c)
{
    cp_err e;
    plan_model *m = plan_model_new(im, t, c, &e);
    if (!m)
        return NULL;
    const plan_unit *u0 = plan_model_unit(m, 0);
    const plan_unit *un = plan_model_unit(m, plan_model_nunits(m) - 1);
    uint32_t lo = u0->addr, span = un->addr + un->size - lo;
    for (int w = 0; w < 2; w++) {
        if (plan_model_new_workload(m, w ? "b" : "a", w ? 0.25 : 1, &e) < 0)
            goto bad;
        for (int it = 0; it < 4; it++) {
            if (plan_model_begin_iteration(m) < 0)
                goto bad;
            for (int k = 0; k < 3000; k++) {
                uint32_t a = lo + (rnd() % (span / (w + 1)) & ~1u);
                uint32_t len = 2 + (rnd() % 40 & ~1u);
                if (a + len > lo + span)
                    len = lo + span - a;
                if (plan_model_add_access(m, a, len, len / 2, 0) < 0)
                    goto bad;
            }
        }
    }
    if (plan_model_nworkloads(m) != 2)
        goto bad;
    return m;
bad:
    plan_model_free(m);
    return NULL;
}

/* The incremental evaluation agrees with the full one after every move,
 * for every replacement policy and both workloads. */
static void incr_matches_full_every_policy(void)
{
    static const char *const specs[] = {"1K,2,8,lru", "1K,2,8,fifo",
                                        "1K,4,8,random", "1K,4,8,plru",
                                        "2K,4,16,lru"};
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    for (size_t sp = 0; sp < sizeof specs / sizeof *specs; sp++) {
        tgt_cache c = t->cache;
        cp_err e;
        T_EQ(tgt_parse_cache(specs[sp], &c, &e), 0);
        plan_model *m = random_model(im, t, &c);
        T_ASSERT(m);
        plan_model_set_cache_seed(m, 7);
        size_t nu = plan_model_nunits(m), hot[8], nhot = 0;
        uint32_t *off = malloc(nu * sizeof *off);
        unsigned char *fast = calloc(nu, 1);
        for (size_t i = 0; i < nu; i++)
            off[i] = PLAN_NONE;
        /* Eight small units, line-aligned, one way apart each. */
        uint32_t way = c.size / c.ways, p = 0;
        for (size_t i = 0; i < nu && nhot < 8; i++) {
            const plan_unit *u = plan_model_unit(m, i);
            if (!u->runs || u->size > 256 || (u->flags & PLAN_U_NOMOVE))
                continue;
            hot[nhot++] = i;
            off[i] = p;
            p += way / 4;
        }
        T_EQ(nhot, 8);
        uint32_t base = plan_hot_base(m), end = p + way;
        plan_layout L;
        T_EQ(plan_layout_alloc(m, &L), 0);
        plan_layout_make(m, off, fast, base, end, &L);
        csim_setidx *x = plan_setidx_new(m, &L, hot, nhot, 3, &e);
        T_ASSERT(x);
        for (int mv = 0; mv < 80; mv++) {
            size_t k = rnd() % nhot;
            uint32_t old = off[hot[k]];
            uint32_t q = (rnd() % ((end - 256) / c.line)) * c.line;
            double v;
            size_t k2 = (k + 1 + rnd() % (nhot - 1)) % nhot;
            uint32_t old2 = off[hot[k2]];
            if (mv % 4 == 1) {
                /* Two units at once (a swap of places), then maybe undone
                 * together. */
                uint32_t q2 = (rnd() % ((end - 256) / c.line)) * c.line;
                off[hot[k]] = q;
                off[hot[k2]] = q2;
                v = sx_try(x, k, base + q, k2, base + q2, HUGE_VAL);
            } else {
                off[hot[k]] = q;
                v = sx_try(x, k, base + q, SIZE_MAX, 0, HUGE_VAL);
            }
            if (mv % 3 == 2 || mv % 8 == 5) {
                csim_setidx_undo(x);
                off[hot[k]] = old;
                if (mv % 4 == 1)
                    off[hot[k2]] = old2;
                v = csim_setidx_total(x);
            }
            plan_layout_make(m, off, fast, base, end, &L);
            plan_eval_out out = {0};
            T_EQ(plan_eval(m, &L, 3, &out, &e), 0);
            if (fabs(v - out.misses) > 1e-6) {
                T_FAIL("%s move %d: incremental %.4f, full %.4f", specs[sp],
                       mv, v, out.misses);
                break;
            }
        }
        /* A move given a limit (csim_setidx_try): the exact total when that
         * is at most the limit (and under every policy but LRU, always);
         * under LRU it may stop above the limit, with a figure that is no
         * more than the total, and undone it leaves the total before. */
        int lru = c.repl == TGT_REPL_LRU, stopped = 0;
        for (int mv = 0; mv < 60; mv++) {
            double before = csim_setidx_total(x);
            size_t k = rnd() % nhot, k2 = SIZE_MAX;
            uint32_t old = off[hot[k]], old2 = 0;
            uint32_t q = (rnd() % ((end - 256) / c.line)) * c.line, q2 = 0;
            off[hot[k]] = q;
            if (mv % 3 == 0) {
                k2 = (k + 1 + rnd() % (nhot - 1)) % nhot;
                old2 = off[hot[k2]];
                q2 = (rnd() % ((end - 256) / c.line)) * c.line;
                off[hot[k2]] = q2;
            }
            double limit = before + (double)(rnd() % 7) - 3;
            double v = sx_try(x, k, base + q, k2, base + q2, limit);
            plan_layout_make(m, off, fast, base, end, &L);
            plan_eval_out out = {0};
            T_EQ(plan_eval(m, &L, 3, &out, &e), 0);
            int exact = fabs(v - out.misses) <= 1e-6, above = v > limit;
            if (!exact && (!lru || !above || v > out.misses + 1e-6)) {
                T_FAIL("%s limited move %d: %.4f with limit %.4f, full %.4f",
                       specs[sp], mv, v, limit, out.misses);
                break;
            }
            stopped += !exact;
            /* Above the limit the change is undone (it may be counted only
             * in part). */
            if (above || mv % 2) {
                csim_setidx_undo(x);
                off[hot[k]] = old;
                if (k2 != SIZE_MAX)
                    off[hot[k2]] = old2;
                if (fabs(csim_setidx_total(x) - before) > 1e-6) {
                    T_FAIL("%s limited move %d undone: %.4f, before %.4f",
                           specs[sp], mv, csim_setidx_total(x), before);
                    break;
                }
            }
        }
        /* The limits above stop some LRU moves early (else the case tests
         * nothing of the stop). */
        if (lru)
            T_ASSERT(stopped > 0);
        /* One unit's moves from the same place undone, a swap, another
         * unit's kept move and then the first unit's, and that one kept:
         * each the full evaluation. */
        for (int mv = 0; mv < 40; mv++) {
            size_t k = (size_t)(mv / 8) % nhot, k2 = SIZE_MAX;
            int step = mv % 8;
            if (step == 4)
                k = (k + 1) % nhot;
            if (step == 3)
                k2 = (k + 1) % nhot;
            uint32_t old = off[hot[k]], old2 = 0, q2 = 0;
            uint32_t q = (rnd() % ((end - 256) / c.line)) * c.line;
            off[hot[k]] = q;
            if (k2 != SIZE_MAX) {
                old2 = off[hot[k2]];
                q2 = (rnd() % ((end - 256) / c.line)) * c.line;
                off[hot[k2]] = q2;
            }
            double v = sx_try(x, k, base + q, k2, base + q2, HUGE_VAL);
            plan_layout_make(m, off, fast, base, end, &L);
            plan_eval_out out = {0};
            T_EQ(plan_eval(m, &L, 3, &out, &e), 0);
            if (fabs(v - out.misses) > 1e-6) {
                T_FAIL("%s repeated move %d: incremental %.4f, full %.4f",
                       specs[sp], mv, v, out.misses);
                break;
            }
            if (step != 4 && step != 7) {
                csim_setidx_undo(x);
                off[hot[k]] = old;
                if (k2 != SIZE_MAX)
                    off[hot[k2]] = old2;
            }
        }
        /* A unit moved alone from the same place again (the sets it
         * leaves come from the memo of its earlier move), undone, then
         * after another unit's kept move (which changes the states the
         * memo was for) and after its own kept move: each the full
         * evaluation. */
        for (int mv = 0; mv < 48; mv++) {
            size_t k = (size_t)(mv / 6) % nhot;
            int step = mv % 6;
            if (step == 3)
                k = (k + 1 + (size_t)(mv / 6) % (nhot - 1)) % nhot;
            uint32_t old = off[hot[k]];
            uint32_t q = (rnd() % ((end - 256) / c.line)) * c.line;
            off[hot[k]] = q;
            double v = sx_try(x, k, base + q, SIZE_MAX, 0, HUGE_VAL);
            plan_layout_make(m, off, fast, base, end, &L);
            plan_eval_out out = {0};
            T_EQ(plan_eval(m, &L, 3, &out, &e), 0);
            if (fabs(v - out.misses) > 1e-6) {
                T_FAIL("%s memo move %d: incremental %.4f, full %.4f",
                       specs[sp], mv, v, out.misses);
                break;
            }
            if (step != 3 && step != 5) {
                csim_setidx_undo(x);
                off[hot[k]] = old;
            }
        }
        /* A unit taken out (to fast memory: no calls in this model, so no
         * stubs, and the block keeps its end): the full evaluation of the
         * layout without it; undone, the placement before; two taken out
         * one after the other. */
        for (size_t k = 0; k < nhot; k++) {
            int keep = k >= nhot - 2;
            double v = sx_remove(x, k);
            uint32_t old = off[hot[k]];
            off[hot[k]] = PLAN_NONE;
            fast[hot[k]] = 1;
            plan_layout_make(m, off, fast, base, end, &L);
            plan_eval_out ro = {0};
            T_EQ(plan_eval(m, &L, 3, &ro, &e), 0);
            if (fabs(v - ro.misses) > 1e-6)
                T_FAIL("%s: unit %zu taken out: incremental %.4f, full %.4f",
                       specs[sp], k, v, ro.misses);
            if (keep)
                continue;
            csim_setidx_undo(x);
            off[hot[k]] = old;
            fast[hot[k]] = 0;
            plan_layout_make(m, off, fast, base, end, &L);
            T_EQ(plan_eval(m, &L, 3, &ro, &e), 0);
            if (fabs(csim_setidx_total(x) - ro.misses) > 1e-6)
                T_FAIL("%s: unit %zu put back: incremental %.4f, full %.4f",
                       specs[sp], k, csim_setidx_total(x), ro.misses);
        }
        /* Each workload's figure; the total is their weighted mean. */
        plan_eval_out out = {0};
        T_EQ(plan_eval(m, &L, 0, &out, &e), 0);
        T_ASSERT(fabs(out.misses - (out.work_misses[0] + 0.25 * out.work_misses[1]) /
                                       1.25) < 1e-6);
        T_ASSERT(out.work_misses[0] != out.work_misses[1]);
        csim_setidx_free(x);
        plan_layout_free(&L);
        free(off);
        free(fast);
        plan_model_free(m);
    }
    img_free(im);
}

/* An evaluation that fails stops the plan with its error: a failure never
 * counts as a figure. */
static void failed_evaluation_is_an_error(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    tgt_cache c = t->cache;
    cp_err e;
    T_EQ(tgt_parse_cache("1K,2,8", &c, &e), 0);
    plan_model *m = random_model(im, t, &c);
    T_ASSERT(m);
    plan_opts o = plan_opts_default(t);
    o.search_moves = 200;
    o.descent_passes = 0; /* the descent: t0631-plan-descent */
    o.time_limit = 0;
    for (unsigned long n = 1; n < 6; n++) {
        plan_model_fail_after(m, n);
        e.msg[0] = 0;
        plan_result *r = plan_run(m, PLAN_COLOUR, &o, &e);
        T_ASSERT(r == NULL);
        T_ASSERT(strstr(e.msg, "out of memory") != NULL);
        plan_result_free(r);
    }
    plan_model_fail_after(m, 0);
    plan_result *a = plan_run(m, PLAN_COLOUR, &o, &e);
    plan_result *b = plan_run(m, PLAN_COLOUR, &o, &e);
    T_ASSERT(a && b);
    /* The same inputs and seed: the same plan. */
    T_EQ(a->nitems, b->nitems);
    for (size_t i = 0; a && b && i < a->nitems && i < b->nitems; i++)
        T_EQ(a->items[i].offset, b->items[i].offset);
    T_ASSERT(a->misses == b->misses);
    plan_result *h = plan_run(m, PLAN_HOTBLOCK, &o, &e);
    T_ASSERT(h && a->misses <= h->misses + 1e-9);
    plan_result_free(a);
    plan_result_free(b);
    plan_result_free(h);
    plan_model_free(m);
    img_free(im);
}

/* Two chains per search (in two threads) with a move budget: the same plan
 * twice; chain 0 is the one-chain search (the same seed and start); each
 * chain's result, evaluated in full, is what its incremental evaluation
 * counted; the result is the better chain's; and an evaluation that fails
 * in any chain stops the plan, wherever the count of evaluations stands. */
static void two_chains_repeatable_and_exact(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    tgt_cache c = t->cache;
    cp_err e;
    T_EQ(tgt_parse_cache("1K,2,8", &c, &e), 0);
    plan_model *m = random_model(im, t, &c);
    T_ASSERT(m);
    plan_opts o = plan_opts_default(t);
    o.search_moves = 150;
    o.descent_passes = 0; /* the descent: t0631-plan-descent */
    o.time_limit = 0;
    o.budget = 512;
    plan_result *one = plan_run(m, PLAN_COLOUR, &o, &e);
    o.threads = 2;
    plan_model_fail_after(m, 0); /* counts the evaluations from here */
    plan_result *a = plan_run(m, PLAN_COLOUR, &o, &e);
    unsigned long nevals = m->nevals;
    plan_result *b = plan_run(m, PLAN_COLOUR, &o, &e);
    T_ASSERT(one && a && b);
    T_EQ(one->nchains, 1);
    T_EQ(a->nchains, 2);
    T_EQ(a->nitems, b->nitems);
    for (size_t i = 0; i < a->nitems; i++) {
        T_EQ(a->items[i].unit, b->items[i].unit);
        T_EQ(a->items[i].offset, b->items[i].offset);
    }
    T_ASSERT(a->misses == b->misses);
    T_EQ(a->moves, b->moves);
    T_EQ(a->moves, 2 * o.search_moves);
    T_ASSERT(one->chains[0].misses == a->chains[0].misses);
    T_EQ(one->chains[0].moves, a->chains[0].moves);
    T_ASSERT(a->chains[0].misses != a->chains[1].misses ||
             a->chains[0].moves != a->chains[1].moves); /* two searches */
    unsigned wins = 0;
    double lo = HUGE_VAL;
    for (unsigned k = 0; k < a->nchains; k++) {
        const plan_chain *ch = &a->chains[k];
        if (fabs(ch->misses - ch->incr_misses) > 1e-6 * (1 + ch->misses))
            T_FAIL("chain %u: full %.6f, incremental %.6f", k, ch->misses,
                   ch->incr_misses);
        T_EQ(ch->moves, o.search_moves);
        T_EQ(ch->time_cut, 0);
        wins += ch->wins;
        if (ch->misses < lo)
            lo = ch->misses;
        T_ASSERT(ch->misses == b->chains[k].misses);
    }
    T_EQ(wins, 1);
    for (unsigned k = 0; k < a->nchains; k++)
        if (a->chains[k].wins)
            T_ASSERT(a->chains[k].misses == lo);
    /* Three searches, carried on from one another: still repeatable. */
    plan_result *c1 = plan_run(m, PLAN_COMBINED, &o, &e);
    plan_result *c2 = plan_run(m, PLAN_COMBINED, &o, &e);
    T_ASSERT(c1 && c2);
    T_EQ(c1->nitems, c2->nitems);
    for (size_t i = 0; i < c1->nitems; i++) {
        T_EQ(c1->items[i].unit, c2->items[i].unit);
        T_EQ(c1->items[i].region, c2->items[i].region);
        T_EQ(c1->items[i].offset, c2->items[i].offset);
    }
    T_ASSERT(c1->misses == c2->misses);
    T_EQ(c1->chains[0].wins + c1->chains[1].wins, 3);
    /* Every evaluation limit below what the plan needs fails it (the
     * count does not depend on the moves). */
    o.search_moves = 40;
    o.descent_passes = 0; /* the descent: t0631-plan-descent */
    for (unsigned long n = 1; n < nevals; n++) {
        plan_model_fail_after(m, n);
        e.msg[0] = 0;
        plan_result *f = plan_run(m, PLAN_COLOUR, &o, &e);
        if (f || !strstr(e.msg, "out of memory"))
            T_FAIL("limit %lu of %lu evaluations: %s", n, nevals,
                   f ? "a plan" : e.msg);
        plan_result_free(f);
    }
    o.search_moves = 150;
    o.descent_passes = 0; /* the descent: t0631-plan-descent */
    plan_model_fail_after(m, nevals);
    plan_result *f = plan_run(m, PLAN_COLOUR, &o, &e);
    T_ASSERT(f && f->misses == a->misses);
    plan_result_free(f);
    plan_result_free(one);
    plan_result_free(a);
    plan_result_free(b);
    plan_result_free(c1);
    plan_result_free(c2);
    plan_model_free(m);
    img_free(im);
}

/* Only direct BL / B.W calls go through a linker stub: a stream that
 * enters a function in fast memory once by its caller's BL and ten times
 * from code that did not branch there (a call through a function pointer,
 * BLX Rm) counts one stub call per iteration, not eleven. */
static void stub_calls_only_from_direct_branches(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    cp_err e;
    plan_model *m = plan_model_new(im, t, &t->cache, &e);
    T_ASSERT(m);
    /* A BL from unit A to the first byte of unit B. */
    uint32_t ua = PLAN_NONE, ub = PLAN_NONE, bl = 0;
    for (size_t i = 0; i < m->ncalls && ua == PLAN_NONE; i++) {
        const plan_call *c = &m->calls[i];
        const plan_target *tg = &m->targets[c->target];
        const plan_unit *a = plan_model_unit(m, c->caller);
        if (tg->addr != plan_model_unit(m, tg->unit)->addr)
            continue;
        for (uint32_t o = 0; o + 4 <= a->size; o += 2) {
            uint8_t b[4];
            T_EQ(img_read(im, a->addr + o, b, 4), 0);
            uint32_t h1 = b[0] | b[1] << 8, h2 = b[2] | b[3] << 8;
            if (h1 >> 11 != 0x1e || (h2 & 0xd000) != 0xd000)
                continue;
            uint32_t S = (h1 >> 10) & 1, I1 = !(((h2 >> 13) & 1) ^ S);
            uint32_t I2 = !(((h2 >> 11) & 1) ^ S);
            uint32_t imm = S << 24 | I1 << 23 | I2 << 22 |
                           (h1 & 0x3ff) << 12 | (h2 & 0x7ff) << 1;
            if (S)
                imm |= 0xfe000000u;
            if (a->addr + o + 4 + imm == tg->addr) {
                ua = c->caller;
                ub = tg->unit;
                bl = a->addr + o;
                break;
            }
        }
    }
    T_ASSERT(ua != PLAN_NONE);
    const plan_unit *A = plan_model_unit(m, ua), *B = plan_model_unit(m, ub);
    for (int it = 0; it < 3; it++) {
        T_EQ(plan_model_begin_iteration(m), 0);
        /* A runs up to and including its BL, then B's first bytes */
        T_EQ(plan_model_add_access(m, A->addr, bl + 4 - A->addr, 4, 0), 0);
        T_EQ(plan_model_add_access(m, B->addr, 2, 1, 0), 0);
        for (int k = 0; k < 10; k++) {
            /* A's first halfword (no branch to B), then B: a BLX Rm */
            T_EQ(plan_model_add_access(m, A->addr, 2, 1, 0), 0);
            T_EQ(plan_model_add_access(m, B->addr, 2, 1, 0), 0);
        }
    }
    size_t n = plan_model_nunits(m);
    uint32_t *off = malloc(n * sizeof *off);
    unsigned char *fast = calloc(n, 1);
    T_ASSERT(off && fast);
    for (size_t i = 0; i < n; i++)
        off[i] = PLAN_NONE;
    fast[ub] = 1;
    plan_layout L;
    T_EQ(plan_layout_alloc(m, &L), 0);
    plan_layout_make(m, off, fast, plan_hot_base(m), 0, &L);
    T_ASSERT(L.nstubs >= 1);
    plan_eval_out out = {0};
    T_EQ(plan_eval(m, &L, 0, &out, NULL), 0);
    if (fabs(out.stub_calls - 1.0) > 1e-9)
        T_FAIL("%.2f stub calls per iteration, want 1 (one direct BL)",
               out.stub_calls);
    plan_layout_free(&L);
    free(off);
    free(fast);
    plan_model_free(m);
    img_free(im);
}

/* Random runs inside the units that may move (what stays where the linker
 * put it, and bytes outside every unit, keep their stock addresses under
 * any layout, so a layout that moves code over them changes which lines
 * they share: plan_run checks that case by evaluating). */
static plan_model *movable_model(img *im, const tgt *t, const tgt_cache *c)
{
    cp_err e;
    plan_model *m = plan_model_new(im, t, c, &e);
    if (!m)
        return NULL;
    size_t nu = plan_model_nunits(m), mv[64], n = 0;
    for (size_t i = 0; i < nu && n < 64; i++) {
        const plan_unit *u = plan_model_unit(m, i);
        if (!(u->flags & PLAN_U_NOMOVE) && u->size >= 8 && u->size <= 256)
            mv[n++] = i;
    }
    if (n < 12)
        goto bad;
    for (int w = 0; w < 2; w++) {
        if (plan_model_new_workload(m, w ? "b" : "a", w ? 0.25 : 1, &e) < 0)
            goto bad;
        for (int it = 0; it < 4; it++) {
            if (plan_model_begin_iteration(m) < 0)
                goto bad;
            for (int k = 0; k < 3000; k++) {
                const plan_unit *u = plan_model_unit(m, mv[rnd() % (n / (w + 1))]);
                uint32_t a = u->addr + (rnd() % u->size & ~1u);
                uint32_t len = 2 + (rnd() % 40 & ~1u);
                if (a + len > u->addr + u->size)
                    len = u->addr + u->size - a;
                if (plan_model_add_access(m, a, len, len / 2, 0) < 0)
                    goto bad;
            }
        }
    }
    return m;
bad:
    plan_model_free(m);
    return NULL;
}

/* Closing the hot block's gaps of whole ways changes no line's set: the
 * full evaluation is the same before and after under every policy, with a
 * unit in fast memory (stubs after the text) and with and without a padded
 * block end; what is left between sections is less than a way. */
static void closing_way_gaps_keeps_every_policy(void)
{
    static const char *const specs[] = {"1K,2,8,lru", "1K,2,8,fifo",
                                        "1K,4,8,random", "1K,4,8,plru",
                                        "2K,4,16,lru"};
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    for (size_t sp = 0; sp < 2 * sizeof specs / sizeof *specs; sp++) {
        tgt_cache c = t->cache;
        cp_err e;
        T_EQ(tgt_parse_cache(specs[sp / 2], &c, &e), 0);
        plan_model *m = movable_model(im, t, &c);
        T_ASSERT(m);
        plan_model_set_cache_seed(m, 7);
        size_t nu = plan_model_nunits(m), hot[8], nhot = 0;
        uint32_t *off = malloc(nu * sizeof *off);
        unsigned char *fast = calloc(nu, 1);
        T_ASSERT(off && fast);
        for (size_t i = 0; i < nu; i++)
            off[i] = PLAN_NONE;
        /* Eight units, line-aligned, with gaps of 0 to 3 ways and some
         * lines; one more in fast memory. */
        uint32_t way = c.size / c.ways, p = way * (rnd() % 2);
        int in_fast = 0;
        for (size_t i = 0; i < nu && nhot < 8; i++) {
            const plan_unit *u = plan_model_unit(m, i);
            if (!u->runs || u->size > 256 || (u->flags & PLAN_U_NOMOVE))
                continue;
            if (!in_fast) {
                fast[i] = in_fast = 1;
                continue;
            }
            hot[nhot++] = i;
            off[i] = p;
            p += (u->size + c.line - 1) / c.line * c.line;
            p += way * (rnd() % 4) + c.line * (rnd() % 5);
        }
        T_EQ(nhot, 8);
        uint32_t base = plan_hot_base(m);
        uint32_t end = sp % 2 ? p + 2 * way + 24 : 0, end0 = end;
        plan_layout L;
        T_EQ(plan_layout_alloc(m, &L), 0);
        plan_layout_make(m, off, fast, base, end, &L);
        plan_eval_out before = {0}, after = {0};
        double fa0 = -1, fa1 = -1;
        T_EQ(plan_eval(m, &L, 0, &before, &e), 0);
        T_EQ(plan_eval_fa(m, &L, 0, &fa0, &e), 0);
        uint32_t removed = 0, p_end = 0;
        for (size_t k = 0; k < nhot; k++) {
            uint32_t ek = off[hot[k]] + plan_model_unit(m, hot[k])->size;
            p_end = ek > p_end ? ek : p_end;
        }
        T_EQ(plan_close_way_gaps(m, off, fast, &end, &removed), 0);
        T_ASSERT(removed >= way && removed % way == 0);
        /* What follows the block starts removed bytes lower. */
        T_EQ(end, (end0 > p_end ? end0 : p_end) - removed);
        /* Every gap left is less than a way. */
        for (size_t k = 0; k < nhot; k++) {
            uint32_t prev = 0;
            for (size_t j = 0; j < nhot; j++) {
                uint32_t ej = off[hot[j]] + plan_model_unit(m, hot[j])->size;
                if (off[hot[j]] < off[hot[k]] && ej > prev)
                    prev = ej;
            }
            T_ASSERT(off[hot[k]] - prev < way);
        }
        plan_layout_make(m, off, fast, base, end, &L);
        T_EQ(plan_eval(m, &L, 0, &after, &e), 0);
        if (before.misses != after.misses || before.accesses != after.accesses ||
            before.stub_calls != after.stub_calls)
            T_FAIL("%s%s: %.4f misses before closing %u bytes, %.4f after",
                   specs[sp / 2], end0 ? " (padded end)" : "", before.misses,
                   removed, after.misses);
        for (unsigned k = 0; k < plan_model_nworkloads(m); k++)
            T_ASSERT(before.work_misses[k] == after.work_misses[k]);
        T_EQ(plan_eval_fa(m, &L, 0, &fa1, &e), 0);
        if (fa0 != fa1)
            T_FAIL("%s: fully associative %.4f before, %.4f after", specs[sp / 2], fa0, fa1);
        plan_layout_free(&L);
        free(off);
        free(fast);
        plan_model_free(m);
    }
    img_free(im);
}

/* Five sections longer than a cache way, each running only its first
 * line, in turn: the relationship graph's colouring must see that only
 * those lines compete, and give no set of the 2-way cache more than two of
 * them. Counting every line a section spans, each section covers every
 * set, every start costs the same, and all five start at one set. The
 * touched lines are every workload's: the five run in the second of two
 * workloads too. */
static void colouring_counts_touched_lines(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const tgt *t = tgt_find("rp2040");
    tgt_cache c = t->cache;
    cp_err e;
    T_EQ(tgt_parse_cache("512,2,8", &c, &e), 0);
    uint32_t way = c.size / c.ways;
    /* Alone, and as the second of two workloads (the first runs another
     * section), planned on 3 iterations of each. */
    for (int two = 0; two < 2; two++) {
        plan_model *m = plan_model_new(im, t, &c, &e);
        T_ASSERT(m);
        size_t nu = plan_model_nunits(m), pick[5], np = 0, other = SIZE_MAX;
        for (size_t i = 0; i < nu; i++) {
            const plan_unit *u = plan_model_unit(m, i);
            if (u->flags & PLAN_U_NOMOVE)
                continue;
            if (u->size >= way && u->size < 2 * way && np < 5)
                pick[np++] = i;
            else if (u->size >= 8 && u->size < way && other == SIZE_MAX)
                other = i;
        }
        T_EQ(np, 5);
        T_ASSERT(other != SIZE_MAX);
        if (two) {
            T_EQ(plan_model_new_workload(m, "other", 1, &e), 0);
            for (int it = 0; it < 4; it++) {
                T_EQ(plan_model_begin_iteration(m), 0);
                T_EQ(plan_model_add_access(m, plan_model_unit(m, other)->addr,
                                           4, 2, 0), 0);
            }
            T_EQ(plan_model_new_workload(m, "five", 1, &e), 0);
        }
        for (int it = 0; it < 4; it++) {
            T_EQ(plan_model_begin_iteration(m), 0);
            for (int k = 0; k < 20; k++)
                for (size_t j = 0; j < np; j++)
                    T_EQ(plan_model_add_access(m, plan_model_unit(m, pick[j])->addr,
                                               4, 2, 0), 0);
        }
        plan_opts o = plan_opts_default(t);
        plan_search r;
        memset(&r, 0, sizeof r);
        r.m = m;
        r.o = &o;
        r.err = &e;
        r.iters = 3;
        r.hot_base = plan_hot_base(m);
        r.off = malloc(nu * sizeof *r.off);
        r.fast = calloc(nu, 1);
        T_ASSERT(r.off && r.fast);
        for (size_t i = 0; i < nu; i++)
            r.off[i] = PLAN_NONE;
        T_EQ(plan_find_hot(&r), 0);
        T_EQ(r.nhot, 5 + (size_t)two);
        T_EQ(plan_place_colour(&r), 0);
        unsigned per_set[64] = {0};
        for (size_t j = 0; j < np; j++) {
            T_ASSERT(r.off[pick[j]] != PLAN_NONE);
            uint32_t s = colour_of(&r, r.off[pick[j]]);
            T_ASSERT(s < 64);
            if (++per_set[s] > c.ways)
                T_FAIL("%s: %u of the sections' hot lines in set %u of a "
                       "%u-way cache", two ? "second workload" : "alone",
                       per_set[s], s, c.ways);
        }
        free(r.off);
        free(r.fast);
        free(r.hot);
        plan_model_free(m);
    }
    img_free(im);
}

static const t_case cases[] = {
    {"colouring_counts_touched_lines", colouring_counts_touched_lines},
    {"incr_matches_full_every_policy", incr_matches_full_every_policy},
    {"closing_way_gaps_keeps_every_policy", closing_way_gaps_keeps_every_policy},
    {"failed_evaluation_is_an_error", failed_evaluation_is_an_error},
    {"two_chains_repeatable_and_exact", two_chains_repeatable_and_exact},
    {"eval_matches_reference", eval_matches_reference},
    {"strategies_fix_a_three_way_conflict", strategies_fix_a_three_way_conflict},
    {"ram_beats_rank_on_a_busy_loop", ram_beats_rank_on_a_busy_loop},
    {"patterns_and_names", patterns_and_names},
    {"exclusions", exclusions},
    {"stub_calls_only_from_direct_branches", stub_calls_only_from_direct_branches},
    {NULL, NULL},
};
T_MAIN(cases)
