/* The planner's model: movable units (input sections in cached flash) and
 * the access stream of each iteration, expressed relative to the units so
 * that moving a unit is a change of one base address. */
#include "plan/plan_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/thumb.h"
#include "trace/trace.h"

static uint32_t align_of(uint32_t addr)
{
    uint32_t a = addr & -addr;
    if (a == 0 || a > 8)
        a = 8;
    return a < 2 ? 2 : a;
}

static int add_unit(plan_model *m, size_t *cap, const plan_unit *u)
{
    if (cp_grow((void **)&m->units, cap, m->nunits + 1, sizeof *m->units) < 0)
        return -1;
    m->units[m->nunits++] = *u;
    return 0;
}

/* Units from the map's input sections, or from functions without a map. */
int plan_model_is_pico(const img *im, uint32_t *hot_start)
{
    uint32_t v;
    if (img_symbol(im, "__logical_binary_start", &v, NULL, NULL) < 0 ||
        !img_section_by_name(im, ".boot2"))
        return 0;
    *hot_start = 0;
    if (img_symbol(im, "__codeplace_hot_start", &v, NULL, NULL) == 0)
        *hot_start = v; /* linked with the derived script */
    return 1;
}

static int build_units(plan_model *m, cp_err *err)
{
    const img *im = m->im;
    size_t cap = 0, nf = img_nfuncs(im);
    if (img_nisecs(im)) {
        size_t f = 0;
        uint32_t hs;
        int pico = plan_model_is_pico(im, &hs);
        img_load_isec_align((img *)im);
        for (size_t i = 0; i < img_nisecs(im); i++) {
            const img_isec *s = img_isec_at(im, i);
            if (!tgt_is_cached(m->t, s->addr))
                continue;
            /* ld's stubs of a pico-sdk image are not code to place: they
             * go where ld puts them (plan/picolink.c). */
            if (pico && s->path && !strcmp(s->path, "linker stubs"))
                continue;
            while (f < nf && img_func_at(im, f)->addr < s->addr)
                f++;
            size_t g = f;
            while (g < nf && img_func_at(im, g)->addr < s->addr + s->size)
                g++;
            if (g == f)
                continue; /* no code: data or fill */
            plan_unit u = {0};
            u.isec = s->name;
            u.archive = s->archive;
            u.object = s->object;
            u.name = img_func_at(im, f)->name;
            u.addr = s->addr;
            u.size = s->size;
            u.align = s->align ? s->align : align_of(s->addr);
            if (!s->align)
                m->align_guessed++;
            u.first_func = f;
            u.nfuncs = (unsigned)(g - f);
            if (u.nfuncs > 1)
                u.flags |= PLAN_U_SHARED;
            if (add_unit(m, &cap, &u) < 0)
                return cp_seterr(err, "out of memory");
        }
    } else {
        for (size_t f = 0; f < nf; f++) {
            const img_func *fn = img_func_at(im, f);
            if (!tgt_is_cached(m->t, fn->addr))
                continue;
            /* Nested entry points belong to the function that holds them. */
            if (m->nunits && fn->addr < m->units[m->nunits - 1].addr +
                                            m->units[m->nunits - 1].size) {
                m->units[m->nunits - 1].nfuncs++;
                continue;
            }
            plan_unit u = {0};
            char buf[512];
            snprintf(buf, sizeof buf, ".text.%s", fn->name);
            u.isec = cp_pool_str(m->pool, buf);
            u.name = fn->name;
            u.addr = fn->addr;
            u.size = fn->size;
            u.align = align_of(fn->addr);
            u.first_func = f;
            u.nfuncs = 1;
            u.flags = PLAN_U_GUESSED;
            if (!u.isec || add_unit(m, &cap, &u) < 0)
                return cp_seterr(err, "out of memory");
        }
    }
    if (m->nunits == 0)
        return cp_seterr(err, "'%s': no code in the cached flash window of %s",
                         img_path(im), m->t->name);
    /* The output section most units are in takes the hot block. */
    const img_section *best = NULL;
    size_t best_n = 0;
    for (size_t s = 0; s < img_nsections(im); s++) {
        const img_section *sec = img_section_at(im, s);
        if (!(sec->flags & IMG_SEC_EXEC))
            continue;
        size_t n = 0;
        for (size_t i = 0; i < m->nunits; i++)
            n += m->units[i].addr - sec->addr < sec->size;
        if (n > best_n) {
            best = sec;
            best_n = n;
        }
    }
    if (!best)
        return cp_seterr(err, "'%s': no executable section", img_path(im));
    m->text_name = best->name;
    m->text_start = best->addr;
    m->text_end = best->addr + best->size;
    for (size_t i = 0; i < m->nunits; i++) {
        plan_unit *u = &m->units[i];
        if (u->addr - best->addr >= best->size)
            u->flags |= PLAN_U_NOMOVE;
        /* The reset handler runs before anything is copied to RAM. */
        uint32_t entry = img_entry(im) & ~1u;
        if (entry - u->addr < u->size)
            u->flags |= PLAN_U_NORAM;
    }
    return 0;
}

/* The unit holding addr, or PLAN_FIXED. */
static uint32_t unit_at(const plan_model *m, uint32_t addr)
{
    size_t lo = 0, hi = m->nunits;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->units[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && addr - m->units[lo - 1].addr < m->units[lo - 1].size)
        return (uint32_t)(lo - 1);
    return PLAN_FIXED;
}

/* The index of the first target at addr (in unit), added when new; -1 on
 * OOM. */
static long target_of(plan_model *m, uint32_t addr, uint32_t unit)
{
    for (size_t i = 0; i < m->ntargets; i++)
        if (m->targets[i].addr == addr)
            return (long)i;
    if (cp_grow((void **)&m->targets, &m->ctargets, m->ntargets + 1,
                sizeof *m->targets) < 0)
        return -1;
    m->targets[m->ntargets] = (plan_target){addr, unit, NULL, NULL};
    return (long)m->ntargets++;
}

const plan_site *plan_model_site_at(const plan_model *m, uint32_t addr)
{
    size_t lo = 0, hi = m->nsites;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->sites[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nsites && m->sites[lo].addr == addr ? &m->sites[lo] : NULL;
}

int plan_model_add_call(plan_model *m, uint32_t caller, uint32_t t)
{
    for (size_t i = 0; i < m->ncalls; i++)
        if (m->calls[i].caller == caller && m->calls[i].target == (uint32_t)t)
            return 0;
    if (cp_grow((void **)&m->calls, &m->ccalls, m->ncalls + 1,
                sizeof *m->calls) < 0)
        return -1;
    m->calls[m->ncalls++] = (plan_call){caller, (uint32_t)t};
    return 0;
}

/* A call site at site (units are scanned in address order, so the sites
 * stay sorted) from unit caller to addr in unit callee. */
static int add_call(plan_model *m, uint32_t caller, uint32_t site,
                    uint32_t addr, uint32_t callee)
{
    long t = target_of(m, addr, callee);
    if (t < 0 || cp_grow((void **)&m->sites, &m->csites, m->nsites + 1,
                         sizeof *m->sites) < 0)
        return -1;
    m->sites[m->nsites++] = (plan_site){site, caller, (uint32_t)t, UINT32_MAX};
    return plan_model_add_call(m, caller, (uint32_t)t);
}

/* Whether the fetch run that ended at end (exclusive) ended with a direct
 * BL / B.W to target: how a call that the linker may route through a stub
 * shows in the trace. */
static int run_ends_in_branch_to(const plan_model *m, uint32_t end,
                                 uint32_t target)
{
    uint8_t b[4];
    uint32_t t;
    if (end < 4 || img_read(m->im, end - 4, b, 4) < 0)
        return 0;
    return thumb_long_branch(b[0] | b[1] << 8, b[2] | b[3] << 8, end - 4,
                             &t) && t == target;
}

static int add_stock_call(plan_model *m, uint32_t caller, uint32_t stub)
{
    for (size_t i = 0; i < m->nstock_calls; i++)
        if (m->stock_calls[i].caller == caller &&
            m->stock_calls[i].target == stub)
            return 0;
    if (cp_grow((void **)&m->stock_calls, &m->cstock_calls,
                m->nstock_calls + 1, sizeof *m->stock_calls) < 0)
        return -1;
    m->stock_calls[m->nstock_calls++] = (plan_call){caller, stub};
    return 0;
}

/* The calls and far jumps in the code (Thumb BL, and B.W on ARMv7-M and
 * later) between units: each one that crosses between flash and fast
 * memory gets a linker stub, executed or not. */
static int find_calls(plan_model *m)
{
    for (size_t u = 0; u < m->nunits; u++) {
        const plan_unit *un = &m->units[u];
        uint8_t *code = malloc(un->size ? un->size : 1);
        if (!code)
            return -1;
        if (img_read(m->im, un->addr, code, un->size) < 0) {
            free(code);
            continue;
        }
        for (uint32_t i = 0; i + 4 <= un->size;) {
            uint32_t h1 = code[i] | code[i + 1] << 8;
            uint32_t top = h1 >> 11;
            if (top != 0x1d && top != 0x1e && top != 0x1f) {
                i += 2;
                continue;
            }
            uint32_t h2 = code[i + 2] | code[i + 3] << 8, target;
            if (thumb_long_branch(h1, h2, un->addr + i, &target)) {
                uint32_t v = unit_at(m, target);
                if (v != PLAN_FIXED && v != u &&
                    add_call(m, (uint32_t)u, un->addr + i, target, v) < 0) {
                    free(code);
                    return -1;
                }
                /* A call through one of the stock image's own stubs: the
                 * stub stays while a caller stays in flash. */
                uint32_t s = (target - m->stock_stub_lo) / m->veneer_bytes;
                if (v == PLAN_FIXED && m->stock_stubs &&
                    target >= m->stock_stub_lo && s < m->stock_stubs &&
                    add_stock_call(m, (uint32_t)u, s) < 0) {
                    free(code);
                    return -1;
                }
            }
            i += 4;
        }
        free(code);
    }
    return 0;
}

plan_model *plan_model_make(const img *im, const tgt *t,
                            const tgt_cache *c, cp_err *err)
{
    plan_model *m = calloc(1, sizeof *m);
    if (!m || !(m->pool = cp_pool_new())) {
        free(m);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    m->im = im;
    m->t = t;
    m->cache = *c;
    while ((1u << m->line_shift) < c->line)
        m->line_shift++;
    m->sets = tgt_cache_sets(c);
    m->last_unit = PLAN_FIXED;
    m->last_fetch_unit = PLAN_FIXED;
    m->plan_iters = 0;
    m->cache_seed = 1;
    /* GNU ld's Thumb long-branch stubs (tgt_stub_thumb2). */
    m->veneer_bytes = tgt_stub_bytes(t);
    m->veneer_insns = tgt_stub_thumb2(t) ? 1 : 5;
    if (build_units(m, err) < 0) {
        plan_model_free(m);
        return NULL;
    }
    return m;
}

int plan_model_find_calls(plan_model *m)
{
    int calls = find_calls(m);
    if (calls >= 0 && m->nstock_calls &&
        !(m->stock_call_ins = calloc(m->nstock_calls,
                                     sizeof *m->stock_call_ins)))
        calls = -1;
    return calls < 0 ? -1 : 0;
}

void plan_model_free(plan_model *m)
{
    if (!m)
        return;
    free(m->zacc);
    free(m->ziter_start);
    free(m->stock_stub_sfx);
    free(m->stock_calls);
    free(m->stock_fast_unit);
    free(m->stock_call_ins);
    free(m->stock_fast_addr);
    free(m->stock_fast_ins);
    free(m->units);
    free(m->acc);
    free(m->iter_start);
    free(m->iter_insns);
    free(m->calls);
    free(m->sites);
    free(m->targets);
    free(m->stub_fixed);
    free(m->unit_sec_id);
    free(m->call_seq);
    free(m->tcall_start);
    free(m->tcall);
    free(m->after);
    cp_pool_free(m->pool);
    free(m);
}

static int cmp_acc_off(const void *a, const void *b)
{
    const plan_acc *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

int plan_model_compress(plan_model *m)
{
    if (m->compressed)
        return 0;
    free(m->zacc);
    free(m->ziter_start);
    m->zacc = malloc((m->nacc ? m->nacc : 1) * sizeof *m->zacc);
    m->ziter_start = malloc((m->niters + 1) * sizeof *m->ziter_start);
    plan_acc *tmp = malloc((m->nacc ? m->nacc : 1) * sizeof *tmp);
    if (!m->zacc || !m->ziter_start || !tmp) {
        free(tmp);
        return -1;
    }
    uint32_t way = m->sets * m->cache.line;
    size_t n = 0;
    for (unsigned it = 0; it < m->niters; it++) {
        m->ziter_start[it] = n;
        size_t k = m->iter_start[it], end = m->iter_start[it + 1];
        while (k < end) {
            uint32_t u = m->acc[k].unit;
            if (u >= m->nunits || m->units[u].size + m->cache.line > way) {
                m->zacc[n++] = m->acc[k++];
                continue;
            }
            size_t j = k, nt = 0;
            while (j < end && m->acc[j].unit == u)
                tmp[nt++] = m->acc[j++];
            qsort(tmp, nt, sizeof *tmp, cmp_acc_off);
            plan_acc cur = tmp[0];
            for (size_t q = 1; q < nt; q++) {
                if (tmp[q].off <= cur.off + cur.len) {
                    uint32_t e = tmp[q].off + tmp[q].len;
                    if (e > cur.off + cur.len)
                        cur.len = e - cur.off;
                } else {
                    m->zacc[n++] = cur;
                    cur = tmp[q];
                }
            }
            m->zacc[n++] = cur;
            k = j;
        }
    }
    m->ziter_start[m->niters] = n;
    m->nzacc = n;
    m->compressed = 1;
    free(tmp);
    return 0;
}

int plan_model_new_workload(plan_model *m, const char *name, double weight,
                            cp_err *err)
{
    if (m->nwork >= PLAN_MAX_WORK)
        return cp_seterr(err, "at most %d workloads (traces) per plan",
                         PLAN_MAX_WORK);
    if (!(weight > 0) || weight > 1e9)
        return cp_seterr(err, "workload weight %g: not a positive number",
                         weight);
    plan_work *w = &m->work[m->nwork];
    w->name = name ? cp_pool_str(m->pool, name) : NULL;
    w->weight = weight;
    w->first = m->niters;
    w->n = 0;
    m->work_open = 1;
    m->last_unit = PLAN_FIXED;
    m->last_fetch_unit = PLAN_FIXED;
    m->last_fetch_end = 0;
    return 0;
}

int plan_model_begin_iteration(plan_model *m)
{
    if (m->nwork == 0 && !m->work_open &&
        plan_model_new_workload(m, NULL, 1, NULL) < 0)
        return -1;
    if (m->work_open) {
        m->work_open = 0;
        m->nwork++;
        m->work_wsum = 0;
        for (unsigned k = 0; k < m->nwork; k++)
            m->work_wsum += m->work[k].weight;
    }
    m->work[m->nwork - 1].n++;
    m->compressed = 0;
    if (cp_grow((void **)&m->iter_start, &m->citer, m->niters + 2,
                sizeof *m->iter_start) < 0)
        return -1;
    double *ins = realloc(m->iter_insns, (m->niters + 1) * sizeof *ins);
    if (!ins)
        return -1;
    m->iter_insns = ins;
    m->iter_insns[m->niters] = 0;
    m->iter_start[m->niters] = m->nacc;
    m->niters++;
    m->iter_start[m->niters] = m->nacc;
    return 0;
}

static int push(plan_model *m, uint32_t unit, uint32_t off, uint32_t len)
{
    if (cp_grow((void **)&m->acc, &m->cacc, m->nacc + 1, sizeof *m->acc) < 0)
        return -1;
    m->acc[m->nacc++] = (plan_acc){unit, off, len};
    m->iter_start[m->niters] = m->nacc;
    return 0;
}

/* Instructions of a workload's iterations: all, and its first's. */
static void credit(const plan_model *m, double (*w)[2], uint32_t ninsn)
{
    unsigned k = m->nwork - 1;
    w[k][0] += ninsn;
    if (m->niters - 1 == m->work[k].first)
        w[k][1] += ninsn;
}

void plan_stock_fast_count(plan_model *m, uint32_t addr, uint32_t ninsn)
{
    if (!ninsn || !m->nwork || !m->niters)
        return;
    for (uint32_t s = 0; s < m->stock_fast_stubs; s++)
        if (addr - m->stock_fast_addr[s] < m->veneer_bytes) {
            credit(m, m->stock_fast_ins[s], ninsn);
            return;
        }
}

void plan_stock_stub_count(plan_model *m, uint32_t stub, uint32_t caller,
                           uint32_t ninsn)
{
    if (!ninsn || !m->nwork || !m->niters || !m->stock_call_ins)
        return;
    for (size_t i = 0; i < m->nstock_calls; i++)
        if (m->stock_calls[i].caller == caller &&
            m->stock_calls[i].target == stub) {
            credit(m, m->stock_call_ins[i], ninsn);
            return;
        }
}

int plan_model_add_nofill(plan_model *m, uint32_t addr, uint32_t len,
                          uint32_t ninsn)
{
    m->compressed = 0;
    if (m->niters == 0 || m->work_open)
        return 0;
    m->iter_insns[m->niters - 1] += ninsn;
    if (len == 0)
        return 0;
    if (push(m, PLAN_NOFILL, addr, len) < 0)
        return -1;
    m->nnofill++;
    m->last_unit = PLAN_FIXED;
    if (ninsn) {
        m->last_fetch_end = addr + len;
        m->last_fetch_unit = PLAN_FIXED;
    }
    return 0;
}

int plan_model_add_access(plan_model *m, uint32_t addr, uint32_t len,
                          uint32_t ninsn, int uncached)
{
    m->compressed = 0;
    if (m->niters == 0 || m->work_open)
        return 0; /* before a trace's first iteration: start-up, not planned */
    m->iter_insns[m->niters - 1] += ninsn;
    if (uncached && m->stock_fast_stubs)
        plan_stock_fast_count(m, addr, ninsn);
    if (uncached || len == 0)
        return 0;
    /* Split the run at unit boundaries. */
    uint32_t first = unit_at(m, addr), first_addr = addr;
    uint32_t run_end = addr + len;
    while (len) {
        uint32_t u = unit_at(m, addr);
        uint32_t take = len;
        if (u == PLAN_FIXED) {
            /* Up to the next unit, if the run reaches into one. */
            size_t lo = 0, hi = m->nunits;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (m->units[mid].addr <= addr)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < m->nunits && m->units[lo].addr - addr < len)
                take = m->units[lo].addr - addr;
            /* The stock image's own stubs move as ld lays them out again
             * (plan/picolink.c). */
            uint32_t sb = m->stock_stubs * m->veneer_bytes;
            uint32_t kind = PLAN_FIXED, off = addr, plen = 0;
            if (m->stock_stubs && addr - m->stock_stub_lo < sb) {
                kind = PLAN_STOCKSTUB;
                off = addr - m->stock_stub_lo;
                if (take > sb - off)
                    take = sb - off;
                if (ninsn && addr == first_addr)
                    plan_stock_stub_count(m, off / m->veneer_bytes,
                                          m->last_fetch_unit, ninsn);
                /* The caller, when the run is its call into the stub:
                 * moved to fast memory, it no longer goes through it. */
                if (addr == first_addr && m->last_fetch_unit < m->nunits &&
                    take <= 0xff)
                    plen = take | (m->last_fetch_unit + 1) << 8;
                else if (take > 0xff)
                    plen = 0xff, take = 0xff;
            } else if (m->stock_stubs && addr < m->stock_stub_lo &&
                       m->stock_stub_lo - addr < take) {
                take = m->stock_stub_lo - addr;
            }
            if (push(m, kind, off, plen ? plen : take) < 0)
                return -1;
        } else {
            plan_unit *un = &m->units[u];
            uint32_t off = addr - un->addr;
            if (take > un->size - off)
                take = un->size - off;
            if (ninsn && addr == first_addr && u != m->last_fetch_unit &&
                m->last_fetch_unit != PLAN_FIXED &&
                run_ends_in_branch_to(m, m->last_fetch_end, addr)) {
                /* Entered by a direct BL / B.W from another unit: the call
                 * the linker gives a stub when one side is in fast memory
                 * (calls through a function pointer, returns and fall
                 * through never use one), through the stub of the name
                 * that call site's relocation uses. */
                const plan_site *site =
                    plan_model_site_at(m, m->last_fetch_end - 4);
                long tg = site && m->targets[site->target].addr == addr
                              ? (long)site->target
                              : target_of(m, addr, u);
                if (tg < 0 ||
                    push(m, PLAN_CALL, (uint32_t)tg, m->last_fetch_unit) < 0)
                    return -1;
            }
            un->runs++;
            un->bytes_fetched += take;
            if (push(m, u, off, take) < 0)
                return -1;
        }
        m->last_unit = u;
        addr += take;
        len -= take;
    }
    /* Instructions: credited to the unit of the run's start. */
    if (first != PLAN_FIXED)
        m->units[first].insns += ninsn;
    if (ninsn) {
        /* Where the last fetch run ended, in which unit: the next fetch
         * run starting in another unit is a call when this one ended with a
         * direct branch to it (data reads in between do not matter). */
        m->last_fetch_end = run_end;
        m->last_fetch_unit = unit_at(m, run_end - 2);
    }
    return 0;
}

int plan_model_add_trace(plan_model *m, const char *path, unsigned max_iters,
                         cp_err *err)
{
    return plan_model_add_workload(m, path, 1, max_iters, NULL, err);
}

/* plan_model_add_workload's pass over one trace. */
typedef struct wl_read {
    plan_model *m;
    const char *path;
    double weight;
    unsigned max_iters, seen;
    plan_read *rd;
    const tgt_mem *flash; /* the window a non-allocating alias reads */
} wl_read;

static int wl_header(void *arg, const trc_header *h, cp_err *err)
{
    wl_read *w = arg;
    plan_model *m = w->m;
    if (h->elf_hash[0] && strcmp(h->elf_hash, img_hash(m->im)))
        return cp_seterr(err, "'%s' is a trace of another image (%s, not %s "
                         "of '%s')", w->path, h->elf_hash, img_hash(m->im),
                         img_path(m->im));
    return plan_model_new_workload(m, w->path, w->weight, err);
}

/* One record: an iteration mark opens an iteration (past max_iters it
 * ends the pass), a fetch or a read through the cache is an access. */
static int wl_rec(void *arg, const trc_rec *rec, cp_err *err)
{
    wl_read *w = arg;
    plan_model *m = w->m;
    if (rec->kind == TRC_MARK && w->max_iters && w->seen >= w->max_iters)
        return 1;
    if (w->rd) {
        w->rd->records++;
        if (w->rd->on_rec)
            w->rd->on_rec(w->rd->arg, rec);
    }
    int rc = 0;
    if (rec->kind == TRC_MARK) {
        w->seen++;
        rc = plan_model_begin_iteration(m);
    } else if (rec->kind == TRC_FETCH ||
               (rec->kind == TRC_DREAD && !m->t->icache_only)) {
        uint32_t ni = rec->kind == TRC_FETCH ? rec->ninsn : 0;
        const tgt_mem *mem = tgt_mem_at(m->t, rec->addr);
        if (mem && mem->kind == TGT_MEM_FLASH_NOALLOC && w->flash) {
            /* Looked up in the lines of the cached window, never filled
             * (as codeplace sim replays it). */
            uint32_t a = rec->kind == TRC_FETCH ? rec->addr & ~1u : rec->addr;
            rc = plan_model_add_nofill(m, a - mem->base + w->flash->base,
                                       rec->len ? rec->len : 1, ni);
        } else {
            int unc = (rec->flags & TRC_F_UNCACHED) ||
                      !tgt_is_cached(m->t, rec->addr);
            rc = plan_model_add_access(m, rec->addr, rec->len, ni, unc);
        }
    }
    return rc < 0 ? cp_seterr(err, "'%s': out of memory", w->path) : 0;
}

int plan_model_add_workload(plan_model *m, const char *path, double weight,
                            unsigned max_iters, plan_read *rd, cp_err *err)
{
    if (m->nwork >= PLAN_MAX_WORK)
        return cp_seterr(err, "'%s': at most %d traces per plan", path,
                         PLAN_MAX_WORK);
    wl_read w = {m, path, weight, max_iters, 0, rd, tgt_cached_window(m->t)};
    trc_pass_fn fn = {wl_header, wl_rec, &w};
    trc_pass p;
    /* Complete iterations only: an interrupted recording's unfinished last
     * iteration is dropped (plan_model_dropped). */
    int rc = trc_read_pass(path, &fn, &p, err);
    m->dropped += (unsigned)p.dropped;
    if (rd)
        rd->cut = p.cut;
    if (rc < 0)
        return -1;
    if (m->work_open) {
        m->work_open = 0;
        return cp_seterr(err, "'%s': no complete iterations (%s)", path,
                         p.dropped ? "the only one was unfinished"
                                   : "no iteration marks");
    }
    return 0;
}

size_t plan_model_exclude(plan_model *m, const char *pattern, int ram_only)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nunits; i++) {
        plan_unit *u = &m->units[i];
        int hit = cp_glob(pattern, u->isec);
        for (unsigned k = 0; !hit && k < u->nfuncs; k++) {
            const img_func *f = img_func_at(m->im, u->first_func + k);
            hit = cp_glob(pattern, f->name);
            for (unsigned a = 0; !hit && a < f->nalias; a++)
                hit = cp_glob(pattern, f->alias[a]);
        }
        if (hit) {
            u->flags |= ram_only ? PLAN_U_NORAM : PLAN_U_NOMOVE;
            n++;
        }
    }
    return n;
}

void plan_model_set_plan_iters(plan_model *m, unsigned n) { m->plan_iters = n; }

/* plan_model_unplanned's scan over the first iters iterations (0: all);
 * late (nunits bytes, or NULL) gets 1 for each unit with such bytes. */
static int unplanned(const plan_model *m, unsigned iters, plan_unplanned *out,
                     unsigned char *late_out)
{
    memset(out, 0, sizeof *out);
    size_t *base = malloc((m->nunits + 1) * sizeof *base);
    if (!base)
        return -1;
    base[0] = 0;
    for (size_t i = 0; i < m->nunits; i++)
        base[i + 1] = base[i] + (m->units[i].size + 7) / 8;
    /* Per granule: 1 run by a planning iteration, 2 only later. */
    unsigned char *g = calloc(base[m->nunits] + 1, 1);
    unsigned char *late = calloc(m->nunits + 1, 1);
    if (!g || !late) {
        free(base);
        free(g);
        free(late);
        return -1;
    }
    int found = 0;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned k = 0; k < m->nwork; k++) {
            const plan_work *w = &m->work[k];
            unsigned np = plan_work_iters(m, k, iters);
            unsigned i0 = pass ? np : 0, i1 = pass ? w->n : np;
            for (unsigned i = i0; i < i1; i++)
                for (size_t a = m->iter_start[w->first + i];
                     a < m->iter_start[w->first + i + 1]; a++) {
                    const plan_acc *x = &m->acc[a];
                    if (x->unit >= m->nunits || !x->len ||
                        (m->units[x->unit].flags & PLAN_U_NOMOVE))
                        continue;
                    size_t g0 = base[x->unit] + x->off / 8,
                           g1 = base[x->unit] + (x->off + x->len - 1) / 8;
                    if (g1 >= base[x->unit + 1])
                        g1 = base[x->unit + 1] - 1;
                    for (size_t q = g0; q <= g1; q++) {
                        if (g[q])
                            continue;
                        g[q] = (unsigned char)(1 + pass);
                        if (!pass)
                            continue;
                        out->bytes += 8;
                        out->units += !late[x->unit];
                        late[x->unit] = 1;
                        if (!found) {
                            found = 1;
                            out->first = i;
                            out->work = k;
                        }
                        if (i + 1 > out->cover)
                            out->cover = i + 1;
                    }
                }
        }
    if (late_out)
        memcpy(late_out, late, m->nunits);
    free(base);
    free(g);
    free(late);
    return 0;
}

int plan_model_unplanned(const plan_model *m, plan_unplanned *out)
{
    return unplanned(m, m->plan_iters, out, NULL);
}

long plan_model_late_units(const plan_model *m, unsigned iters,
                           unsigned char *late)
{
    plan_unplanned un;
    if (unplanned(m, iters, &un, late) < 0)
        return -1;
    return (long)un.units;
}

void plan_model_set_cache_seed(plan_model *m, uint64_t seed)
{
    m->cache_seed = seed;
}

int plan_model_view(plan_model *m, plan_model *view)
{
    if (plan_model_compress(m) < 0)
        return -1;
    *view = *m;
    return 0;
}

void plan_model_views_done(plan_model *m, plan_model *const *views,
                           unsigned n)
{
    unsigned long base = m->nevals, sum = base;
    for (unsigned i = 0; i < n; i++)
        sum += views[i]->nevals - base;
    m->nevals = sum;
}

void plan_model_fail_after(plan_model *m, unsigned long n)
{
    m->fail_after = n;
    m->nevals = 0;
}

unsigned plan_model_nworkloads(const plan_model *m) { return m->nwork; }

const char *plan_model_workload(const plan_model *m, unsigned k,
                                double *weight)
{
    if (k >= m->nwork)
        return NULL;
    if (weight)
        *weight = m->work[k].weight;
    return m->work[k].name;
}

unsigned plan_model_workload_iters(const plan_model *m, unsigned k)
{
    return k < m->nwork ? m->work[k].n : 0;
}

double plan_model_insns(const plan_model *m)
{
    double sum = 0;
    for (unsigned k = 0; k < m->nwork; k++) {
        const plan_work *w = &m->work[k];
        unsigned first = w->first + (w->n > 1);
        double ins = 0;
        for (unsigned i = first; i < w->first + w->n; i++)
            ins += m->iter_insns[i];
        sum += ins * plan_work_scale(m, k, 0);
    }
    return sum;
}

uint32_t plan_model_text_end(const plan_model *m) { return m->text_end; }

size_t plan_model_align_guessed(const plan_model *m) { return m->align_guessed; }

size_t plan_model_nunits(const plan_model *m) { return m->nunits; }
const plan_unit *plan_model_unit(const plan_model *m, size_t i)
{
    return i < m->nunits ? &m->units[i] : NULL;
}
unsigned plan_model_niters(const plan_model *m) { return m->niters; }
unsigned plan_model_dropped(const plan_model *m) { return m->dropped; }
const img *plan_model_image(const plan_model *m) { return m->im; }
const tgt_cache *plan_model_cache(const plan_model *m) { return &m->cache; }

int plan_model_stub_order(const plan_model *m, const char **why)
{
    if (why)
        *why = m->stub_order ? NULL : m->stub_order_why;
    return m->stub_order;
}
