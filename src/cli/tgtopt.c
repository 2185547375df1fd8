/* cli: the shared target options and the cached-memory check (tgtopt.h). */
#include "cli/tgtopt.h"

#include <stdio.h>
#include <string.h>

/* Loads spec for option opt; a name that is not there is a usage error
 * (exit 2), a file that cannot be read or is wrong a failure (exit 1). */
static const tgt *load(cli_ctx *ctx, const char *opt, const char *spec,
                       int *rc)
{
    cp_err err;
    const tgt *t = tgt_load(spec, &err);
    if (!t) {
        if (strchr(spec, '/') || strstr(spec, ".target")) {
            cli_error("%s: %s", opt, err.msg);
            *rc = CLI_FAIL;
        } else {
            *rc = cli_usage_error(ctx, "%s: %s", opt, err.msg);
        }
    }
    return t;
}

int cli_tgt_resolve(cli_ctx *ctx, cli_tgt *o, const char *trace,
                    const char *dflt, int required)
{
    int rc = CLI_OK;
    cp_err err;
    o->base = NULL;
    o->trace_target[0] = 0;
    memset(&o->t, 0, sizeof o->t);
    if (trace) {
        trc_reader *rd = trc_open_ex(trace, TRC_OPEN_PARTIAL, &err);
        if (rd) {
            snprintf(o->trace_target, sizeof o->trace_target, "%s",
                     trc_get_header(rd)->target);
            trc_close(rd);
        } else if (!o->name && required) {
            /* The command reports the unreadable trace itself when it
             * knows the target; without one there is nothing to go on. */
            return cli_usage_error(ctx, "--target is required when the "
                                   "trace cannot tell it (%s)", err.msg);
        } else if (!o->name) {
            cli_error("%s", err.msg);
            return CLI_FAIL;
        }
    }
    if (o->name) {
        if (!(o->base = load(ctx, o->label ? o->label : "--target", o->name,
                             &rc)))
            return rc;
        if (o->trace_target[0] && !tgt_header_matches(o->base, o->trace_target)) {
            char base[64];
            tgt_header_base(o->trace_target, base, sizeof base);
            if (!strcmp(base, o->base->name))
                cli_warn("%s was recorded with another file of target '%s' "
                         "(%s); using %s", trace, base, o->trace_target,
                         o->base->path);
            else
                cli_warn("%s was recorded for target '%s'; using '%s' (%s) as "
                         "--target says", trace, o->trace_target,
                         o->base->name, o->base->path);
        }
    } else if (o->trace_target[0]) {
        char base[64];
        tgt_header_base(o->trace_target, base, sizeof base);
        o->base = tgt_load(base, &err);
        if (!o->base) {
            cli_error("%s: the trace's target '%s' cannot be loaded: %s; give "
                      "--target NAME or --target FILE", trace, o->trace_target,
                      err.msg);
            return CLI_FAIL;
        }
        if (!tgt_header_matches(o->base, o->trace_target)) {
            cli_error("%s was recorded with a target file of '%s' (%s), not "
                      "%s; give that file with --target FILE", trace, base,
                      o->trace_target, o->base->path);
            o->base = NULL;
            return CLI_FAIL;
        }
    } else if (dflt && *dflt) {
        /* A default from another file's header (samples): used when it is
         * there, as before targets were files. */
        char base[64];
        tgt_header_base(dflt, base, sizeof base);
        o->base = tgt_find(base);
        if (o->base && !tgt_header_matches(o->base, dflt))
            o->base = NULL; /* another file of that name */
    } else if (trace && required) {
        cli_error("%s: the trace names no target; give --target", trace);
        return CLI_FAIL;
    } else if (required) {
        return cli_usage_error(ctx, "give the target with --target");
    }
    if (!o->base) {
        if (o->as || o->cache)
            return cli_usage_error(ctx, "--as and --cache need a target "
                                   "(--target)");
        return CLI_OK;
    }
    o->t = *o->base;
    if (o->as) {
        const tgt *from = load(ctx, "--as", o->as, &rc);
        if (!from)
            return rc;
        tgt_take_timing(&o->t, from);
    }
    if (o->cache && tgt_parse_cache(o->cache, &o->t.cache, &err) < 0)
        return cli_usage_error(ctx, "--cache: %s", err.msg);
    return CLI_OK;
}

/* ---- where the instructions ran ---------------------------------------- */

void cli_tally_init(cli_tally *c, const tgt *t)
{
    memset(c, 0, sizeof *c);
    c->t = t;
}

static int cached_kind(tgt_mem_kind k)
{
    /* The cache is looked up for both: an alias that never fills still
     * hits. */
    return k == TGT_MEM_FLASH || k == TGT_MEM_FLASH_NOALLOC;
}

static void end_iter(cli_tally *c)
{
    if (!c->it_insns)
        return;
    c->iters++;
    if (c->it_cached * 2 < c->it_insns)
        c->low++;
    c->it_insns = c->it_cached = 0;
}

void cli_tally_add(cli_tally *c, const trc_rec *r)
{
    if (r->kind == TRC_MARK) {
        if (c->marked)
            end_iter(c);
        else
            c->it_insns = c->it_cached = 0; /* before the first mark */
        c->marked = 1;
        return;
    }
    if (r->kind != TRC_FETCH || !r->ninsn)
        return;
    const tgt_mem *m = tgt_mem_at(c->t, r->addr);
    c->insns += r->ninsn;
    c->it_insns += r->ninsn;
    if (m && cached_kind(m->kind)) {
        c->cached += r->ninsn;
        c->it_cached += r->ninsn;
        return;
    }
    unsigned k = m ? (unsigned)(m - c->t->mems) : c->t->nmems;
    if (!c->by_mem[k])
        c->first_at[k] = r->addr;
    c->by_mem[k] += r->ninsn;
}

static int caches(const tgt *t, uint32_t addr)
{
    const tgt_mem *m = tgt_mem_at(t, addr);
    return m && m->kind == TGT_MEM_FLASH;
}

/* A target whose cached memory holds addr: the trace's own, else the first
 * in the search path; NULL when none does. */
static const tgt *target_caching(uint32_t addr, const cli_tgt *o)
{
    const tgt *not = o->base;
    if (o->trace_target[0]) {
        char base[64];
        tgt_header_base(o->trace_target, base, sizeof base);
        const tgt *t = tgt_find(base);
        if (t && t != not && caches(t, addr))
            return t;
    }
    for (unsigned i = 0; tgt_at(i); i++) {
        const tgt *t = tgt_at(i);
        const tgt_mem *m = tgt_mem_at(t, addr);
        if (t != not && m && m->kind == TGT_MEM_FLASH)
            return t;
    }
    return NULL;
}

int cli_tgt_verdict(cli_ctx *ctx, const cli_tgt *o, cli_tally *c,
                    const char *trace)
{
    (void)ctx;
    end_iter(c);
    const tgt *t = &o->t;
    if (!c->insns)
        return CLI_OK;
    if (!c->low)
        return CLI_OK;
    /* Where most of the rest ran. */
    unsigned k = 0;
    for (unsigned i = 1; i <= t->nmems; i++)
        if (c->by_mem[i] > c->by_mem[k])
            k = i;
    char where[160];
    if (k == t->nmems)
        snprintf(where, sizeof where, "outside every memory of %s (first at "
                 "0x%08x)", t->name, c->first_at[k]);
    else
        snprintf(where, sizeof where, "from %s memory '%s' (0x%08x..)",
                 tgt_mem_kind_name(t->mems[k].kind), t->mems[k].name,
                 t->mems[k].base);
    char fix[200];
    const tgt *other = target_caching(c->first_at[k], o);
    if (other)
        snprintf(fix, sizeof fix, "--target %s --as %s (%s's memory map with "
                 "this cache), or --target %s --cache SIZE,WAYS,LINE",
                 other->name, t->name, other->name, other->name);
    else
        snprintf(fix, sizeof fix, "a target whose cached memory holds "
                 "0x%08x: a target file of your board (docs/formats/"
                 "target.md)", c->first_at[k]);
    const tgt_mem *w = tgt_cached_window(t);
    char cb[32], ib[32];
    if (!c->cached) {
        if (o->allow_uncached) {
            cli_warn("%s: none of its %s instructions ran from %s's cached "
                     "memory ('%s' at 0x%08x); they ran %s. Every figure "
                     "below counts no cache at all (--allow-uncached)", trace,
                     cp_commas(ib, c->insns), t->name, w ? w->name : "?",
                     w ? w->base : 0, where);
            return CLI_OK;
        }
        cli_error("%s: none of its %s instructions ran from %s's cached "
                  "memory ('%s' at 0x%08x): they ran %s, so a cache figure "
                  "would be 0 and mean nothing. Try %s; --allow-uncached goes "
                  "on anyway", trace, cp_commas(ib, c->insns), t->name,
                  w ? w->name : "?", w ? w->base : 0, where, fix);
        return CLI_FAIL;
    }
    if (k < t->nmems && t->fast_mem && !strcmp(t->mems[k].name, t->fast_mem)) {
        /* Most of the rest ran from the memory plans fill: a placed image
         * (or one that runs from RAM), whose cache figures are those of the
         * code left in cached memory. No other target would do better. */
        cli_warn("%s: in %llu of %llu iterations most instructions ran from "
                 "%s's fast memory '%s' (%.1f%% overall from its cached "
                 "memory): the cache figures cover only the cached part, as "
                 "for an image with code placed in %s", trace,
                 (unsigned long long)c->low, (unsigned long long)c->iters,
                 t->name, t->mems[k].name,
                 100.0 * (double)c->cached / (double)c->insns,
                 t->mems[k].name);
        return CLI_OK;
    }
    cli_warn("%s: in %llu of %llu iterations fewer than half of the "
             "instructions ran from %s's cached memory (%s of %s overall, "
             "%.1f%%); most of the rest ran %s. The cache figures cover only "
             "the cached part; if that code should be cached, try %s", trace,
             (unsigned long long)c->low, (unsigned long long)c->iters,
             t->name, cp_commas(cb, c->cached), cp_commas(ib, c->insns),
             100.0 * (double)c->cached / (double)c->insns, where, fix);
    return CLI_OK;
}

/* The memory of t holding [a, a + n) whole (not peripherals), or NULL. */
static const tgt_mem *holding(const tgt *t, uint32_t a, uint32_t n)
{
    const tgt_mem *m = tgt_mem_at(t, a);
    if (!m || m->kind == TGT_MEM_PERIPH)
        return NULL;
    return (uint64_t)a + n <= (uint64_t)m->base + m->size ? m : NULL;
}

/* "flash 0x10000000+16M, sram 0x20000000+264K" (what t has, for errors). */
static void mem_list(const tgt *t, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < t->nmems && k + 1 < cap; i++) {
        const tgt_mem *m = &t->mems[i];
        if (m->kind == TGT_MEM_PERIPH)
            continue;
        int w = snprintf(buf + k, cap - k, "%s%s 0x%08x", k ? ", " : "",
                         m->name, m->base);
        if (w < 0)
            break;
        k += (size_t)w < cap - k ? (size_t)w : cap - k - 1;
    }
}

/* Instruction sets that need a Mainline core (Tag_CPU_arch, as elf.c
 * names it; ARM IHI 0045 "Addenda to the ABI", Tag_CPU_arch values). */
static int needs_mainline(const char *arch)
{
    static const char *const mainline[] = {"v6T2", "v7", "v7E-M",
                                           "v8-M.main", "v8.1-M.main"};
    for (size_t i = 0; arch && i < sizeof mainline / sizeof *mainline; i++)
        if (!strcmp(arch, mainline[i]))
            return 1;
    return 0;
}

/* Whether im can be the image running on t (cli_tgt_check_image): 0, or
 * with why in buf 1 (its memories do not fit t's) or 2 (t's core cannot
 * run its code). */
static int image_fits(const tgt *t, const img *im, char *why, size_t cap)
{
    char mems[400];
    mem_list(t, mems, sizeof mems);
    for (size_t i = 0; i < img_nsegments(im); i++) {
        const img_segment *s = img_segment_at(im, i);
        uint32_t at[2] = {s->paddr, s->vaddr}, len[2] = {s->filesz, s->memsz};
        for (int k = 0; k < 2; k++) {
            if (!len[k] || holding(t, at[k], len[k]))
                continue;
            snprintf(why, cap, "its segment at 0x%08x (0x%x bytes) lies "
                     "outside %s's memories (%s)", at[k], len[k], t->name,
                     mems);
            return 1;
        }
    }
    uint32_t entry = img_entry(im) & ~1u;
    if (entry && !holding(t, entry, 2)) {
        snprintf(why, cap, "its entry point 0x%08x lies outside %s's "
                 "memories (%s)", entry, t->name, mems);
        return 1;
    }
    if (!tgt_stub_thumb2(t) && needs_mainline(img_cpu_arch(im))) {
        snprintf(why, cap, "it is built for Arm%s, which the %s (a baseline "
                 "core) cannot run", img_cpu_arch(im), t->cpu);
        return 2;
    }
    return 0;
}

int cli_tgt_check_image(cli_ctx *ctx, const tgt *t, const img *im)
{
    (void)ctx;
    char why[600];
    int bad = image_fits(t, im, why, sizeof why);
    if (!bad)
        return CLI_OK;
    if (bad == 2)
        cli_error("'%s' is not an image for %s: %s", img_path(im), t->name,
                  why);
    else
        cli_error("'%s' is not an image for %s: %s: give the target it was "
                  "built for", img_path(im), t->name, why);
    return CLI_FAIL;
}

/* 1 when some of im's code (its executable segments; every segment when
 * none is marked so) lies in t's cached memory; else 0, with the address
 * of its first code in *code_at. */
static int code_cached(const tgt *t, const img *im, uint32_t *code_at)
{
    int any_x = 0, first = 1;
    for (size_t i = 0; i < img_nsegments(im); i++)
        any_x |= (img_segment_at(im, i)->flags & 1) != 0; /* PF_X */
    *code_at = 0;
    for (size_t i = 0; i < img_nsegments(im); i++) {
        const img_segment *s = img_segment_at(im, i);
        if (!s->memsz || (any_x && !(s->flags & 1)))
            continue;
        if (first)
            *code_at = s->vaddr;
        first = 0;
        for (unsigned k = 0; k < t->nmems; k++) {
            const tgt_mem *m = &t->mems[k];
            if (cached_kind(m->kind) && m->size &&
                s->vaddr < (uint64_t)m->base + m->size &&
                m->base < (uint64_t)s->vaddr + s->memsz)
                return 1;
        }
    }
    return 0;
}

/* The names of up to 4 targets of the search path other than t that im
 * fits, with code in their cached memory ("mps2-an385, mps2-an500") into
 * buf; returns how many. */
static size_t fitting_targets(const tgt *t, const img *im, char *buf,
                              size_t cap)
{
    size_t k = 0, n = 0;
    buf[0] = 0;
    for (unsigned i = 0; tgt_at(i) && n < 4; i++) {
        const tgt *o = tgt_at(i);
        char why[600];
        uint32_t a;
        if (!strcmp(o->name, t->name) || image_fits(o, im, why, sizeof why) ||
            !code_cached(o, im, &a))
            continue;
        int w = snprintf(buf + k, cap - k, "%s%s", n ? ", " : "", o->name);
        if (w > 0 && (size_t)w < cap - k)
            k += (size_t)w;
        n++;
    }
    return n;
}

int cli_tgt_check_traced(cli_ctx *ctx, const tgt *t, const img *im)
{
    if (cli_tgt_check_image(ctx, t, im) != CLI_OK)
        return CLI_FAIL;
    uint32_t at;
    if (code_cached(t, im, &at))
        return CLI_OK;
    char fits[200];
    size_t nfit = fitting_targets(t, im, fits, sizeof fits);
    const tgt_mem *m = tgt_mem_at(t, at), *w = tgt_cached_window(t);
    char where[96], which[512];
    if (m)
        snprintf(where, sizeof where, "in %s memory '%s'",
                 tgt_mem_kind_name(m->kind), m->name);
    else
        snprintf(where, sizeof where, "outside every memory of %s", t->name);
    if (nfit)
        snprintf(which, sizeof which, "give the target of the memory map it "
                 "was built for (%s %s), and take %s's cache with sim --as "
                 "%s", nfit == 1 ? "this one fits:" : "these fit:", fits,
                 t->name, t->name);
    else
        snprintf(which, sizeof which, "give the target of the memory map it "
                 "was built for (a target file of the board, "
                 "docs/formats/target.md), and take %s's cache with sim --as "
                 "%s", t->name, t->name);
    cli_error("'%s' is not an image for %s: none of its code lies in %s's "
              "cached memory ('%s' at 0x%08x); it is at 0x%08x, %s, so its "
              "trace would hold no cached fetch: %s", img_path(im), t->name,
              t->name, w ? w->name : "?", w ? w->base : 0, at, where, which);
    return CLI_FAIL;
}
