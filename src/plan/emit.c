#include "plan/emit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan/plan_int.h"
#include "util/wdir.h"
#include "util/wfile.h"

static const char *region_name(const plan_emit_info *info, plan_region r)
{
    if (r == PLAN_FAST)
        return info->t->fast_mem;
    return "flash";
}

static void header_ex(FILE *f, const char *what, const plan_model *m,
                      const plan_result *r, const plan_emit_info *info,
                      const char *c0, int full)
{
    /* A C comment opener is followed by lines that start with " *". */
    const char *c = strcmp(c0, "/*") ? c0 : " *";
    fprintf(f, "%s codeplace %s 1\n", c0, what);
    fprintf(f, "%s target: %s  image: %s\n", c, info->t->name,
            img_hash(plan_model_image(m)));
    if (info->budget == PLAN_BUDGET_NONE)
        fprintf(f, "%s strategy: %s  budget: %s\n", c, info->strategy,
                PLAN_BUDGET_NONE_TEXT);
    else
        fprintf(f, "%s strategy: %s  budget: %u bytes of %s\n", c,
                info->strategy, info->budget, info->t->fast_mem);
    if (!full)
        ; /* the fragment states what its integration applies */
    else if (info->no_prediction)
        fprintf(f, "%s predicted: nothing: %s\n", c,
                info->basis ? info->basis : "not simulated");
    else
        fprintf(f, "%s predicted: %.1f misses per iteration (stock %.1f), "
                "%.0f instructions\n", c, r->misses, r->stock_misses,
                r->insns);
    if (info->unverified)
        fprintf(f, "%s UNVERIFIED prediction: %s\n", c, info->unverified);
}

static void header(FILE *f, const char *what, const plan_model *m,
                   const plan_result *r, const plan_emit_info *info,
                   const char *c0)
{
    header_ex(f, what, m, r, info, c0, 1);
}

/* The hot block's own size: its last section's end or the padding. */
static uint32_t hot_size(const plan_model *m, const plan_result *r)
{
    uint32_t hot = r->text_start ? r->hot_bytes : r->block_end;
    for (size_t i = 0; i < r->nitems; i++)
        if (r->items[i].region == PLAN_FLASH_HOT) {
            uint32_t e = r->items[i].offset +
                         plan_model_unit(m, r->items[i].unit)->size;
            if (e > hot)
                hot = e;
        }
    return hot;
}

/* Where a list entry goes besides its name (docs/zephyr.md, "Name list"):
 * the offset in the hot block, and the input section by archive and object
 * when the map gives them (a static function's name alone may stand for
 * several sections; an assembly or libgcc function's section is not
 * .text.NAME). */
static void entry_place(char *buf, size_t n, const plan_unit *u,
                        const plan_item *it, int first)
{
    char pat[1024] = "";
    size_t k = 0;
    buf[0] = 0;
    if (first && it->region == PLAN_FLASH_HOT)
        k = (size_t)snprintf(buf, n, " +0x%05x", it->offset);
    if (u->object && k < n && plan_unit_pattern(u, pat, sizeof pat) == 0)
        snprintf(buf + k, n - k, " %s", pat);
}

int plan_emit_list(FILE *f, const plan_model *m, const plan_result *r,
                   const plan_emit_info *info)
{
    const img *im = plan_model_image(m);
    header(f, "name list", m, r, info, "#");
    if (r->block_end && !r->text_start)
        fprintf(f, "# block end: %u bytes (the hot block is padded to it)\n",
                r->block_end);
    int any_hot = 0;
    for (size_t i = 0; i < r->nitems; i++)
        any_hot |= r->items[i].region == PLAN_FLASH_HOT;
    if (any_hot)
        fprintf(f, "# hot block: start 0x%08x size 0x%05x\n", r->hot_base,
                hot_size(m, r));
    if (r->text_start)
        fprintf(f, "# text start: 0x%08x\n", r->text_start);
    fprintf(f, "# One function name per line (the linker's name), grouped by\n"
            "# region, then its offset in the hot block (flash) and its input\n"
            "# section by archive and object when the map gives them; the\n"
            "# comment after each is its size%s and where it\n"
            "# came from (and the C++ name first when the linker's is mangled).\n"
            "# Regions: a fast memory (sram, itcm), then flash in hot-block\n"
            "# order, with the cache set each hot section starts at.\n",
            info->from_samples    ? ", the PC samples in it"
            : info->no_prediction ? ""
                                  : ", the misses per iteration it had in\n"
                                    "# the stock image");
    plan_region cur = (plan_region)-1;
    char place[1100];
    for (size_t i = 0; i < r->nitems; i++) {
        const plan_item *it = &r->items[i];
        const plan_unit *u = plan_model_unit(m, it->unit);
        if (it->region != cur) {
            cur = it->region;
            fprintf(f, "# region: %s\n", region_name(info, cur));
        }
        /* A hot section's cache set, so that codeplace apply can keep the
         * colouring in another build. */
        char set[24] = "";
        if (it->region == PLAN_FLASH_HOT)
            snprintf(set, sizeof set, "set %u, ", it->colour);
        for (unsigned k = 0; k < u->nfuncs; k++) {
            const img_func *fn = img_func_at(im, u->first_func + k);
            int cxx = strcmp(fn->pretty, fn->name) != 0;
            const char *cx = cxx ? fn->pretty : "", *cs = cxx ? ": " : "";
            entry_place(place, sizeof place, u, it, k == 0);
            if (k == 0 && info->from_samples)
                fprintf(f, "%-40s%s # %s%s%u bytes, %s%.0f samples, %s%s%s%s %s%s\n",
                        fn->name, place, cx, cs, u->size, set, it->samples,
                        u->archive ? u->archive : "",
                        u->object ? "(" : "", u->object ? u->object : "",
                        u->object ? ")" : "", u->isec,
                        (u->flags & PLAN_U_GUESSED) ? " (section guessed)" : "");
            else if (k == 0 && info->no_prediction)
                fprintf(f, "%-40s%s # %s%s%u bytes, %s%s%s%s%s %s%s\n",
                        fn->name, place, cx, cs, u->size, set,
                        u->archive ? u->archive : "",
                        u->object ? "(" : "", u->object ? u->object : "",
                        u->object ? ")" : "", u->isec,
                        (u->flags & PLAN_U_GUESSED) ? " (section guessed)" : "");
            else if (k == 0)
                fprintf(f, "%-40s%s # %s%s%u bytes, %s%.1f misses, %s%s%s%s %s%s\n",
                        fn->name, place, cx, cs, u->size, set, it->misses,
                        u->archive ? u->archive : "",
                        u->object ? "(" : "", u->object ? u->object : "",
                        u->object ? ")" : "", u->isec,
                        (u->flags & PLAN_U_GUESSED) ? " (section guessed)" : "");
            else
                fprintf(f, "%-40s%s # %s%sshares %s with %s\n", fn->name,
                        place, cx, cs, u->isec, u->name);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* The name ld gives t's stub (__NAME_veneer): the symbol its calls'
 * relocations use when known (scalbn or its alias ldexp), else the
 * function's. */
static const char *stub_sym(const plan_target *t, const img_func *fn)
{
    return t->sym ? t->sym : fn->name;
}

/* Whether target t is a second name of a function an earlier target
 * already has (ldexp after scalbn): the traced calls through its stub are
 * then those of the branch sites whose relocations name it, and its @stub
 * line lists them (from:); a call the model cannot tell goes to the first
 * target at the address (plan_model_add_access), whose line lists none. */
static int later_name(const plan_model *m, size_t t)
{
    for (size_t i = 0; i < t; i++)
        if (m->targets[i].addr == m->targets[t].addr)
            return 1;
    return 0;
}

/* Whether a call from site s goes through the hot block's own stub rather
 * than the text's: as the evaluation decides (plan_acc_lines), by where
 * the layout puts its caller. */
static int site_hot(const plan_layout *L, const plan_site *s)
{
    uint32_t a = L->addr[s->caller];
    return L->nstubs_hot && a != PLAN_ADDR_FAST && a < L->hot_end;
}

/* Whether L's @stub lines need layout version 3 (one lists its sites). */
static int stubs_need_sites(const plan_model *m, const plan_layout *L)
{
    if (L->nstubs_hot)
        return 1; /* the hot block's stubs name their call sites */
    for (size_t t = 0; t < m->ntargets; t++)
        if (L->stub[t] && later_name(m, t))
            return 1;
    for (size_t i = 0; i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        if (L->addr[c->caller] == PLAN_ADDR_FAST &&
            L->addr[m->targets[c->target].unit] != PLAN_ADDR_FAST &&
            later_name(m, c->target))
            return 1;
    }
    return 0;
}

/* The branch sites to target t whose calls take the hot block's own stub
 * (hot 1) or the text's (hot 0), as " from:0xSITE,..." (f NULL: only
 * counted): how many. */
static size_t stub_sites(FILE *f, const plan_model *m, const plan_layout *L,
                         size_t t, int hot)
{
    const char *sep = " from:";
    size_t n = 0;
    for (size_t i = 0; i < m->nsites; i++)
        if (m->sites[i].target == t && site_hot(L, &m->sites[i]) == hot) {
            if (f)
                fprintf(f, "%s0x%08x", sep, m->sites[i].addr);
            sep = ",";
            n++;
        }
    return n;
}

/* Ends an @stub line of flash code's stub to t (hot: the hot block's own)
 * or of fast memory's (L NULL). A later name's lines and the hot block's
 * name the branch sites that use them; the text's stub of a first name
 * names none: every other call to t takes it, as in ld. */
static void stub_end(FILE *f, const plan_model *m, const plan_layout *L,
                     size_t t, int hot)
{
    if (L && hot)
        stub_sites(f, m, L, t, 1);
    else if (L && later_name(m, t))
        stub_sites(f, m, L, t, 0);
    else if (later_name(m, t)) {
        const char *sep = " from:";
        for (size_t i = 0; i < m->nsites; i++)
            if (m->sites[i].target == t) {
                fprintf(f, "%s0x%08x", sep, m->sites[i].addr);
                sep = ",";
            }
    }
    fputc('\n', f);
}

/* Which functions of im share their primary name with another (static
 * functions of several files): per function index (img_func_at), 1 when
 * shared. NULL when out of memory. */
typedef struct name_idx {
    const char *name;
    size_t i;
} name_idx;

static int cmp_name_idx(const void *a, const void *b)
{
    return strcmp(((const name_idx *)a)->name, ((const name_idx *)b)->name);
}

static unsigned char *shared_names(const img *im)
{
    size_t n = img_nfuncs(im);
    name_idx *v = malloc((n ? n : 1) * sizeof *v);
    unsigned char *dup = calloc(n ? n : 1, 1);
    if (!v || !dup) {
        free(v);
        free(dup);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (name_idx){img_func_at(im, i)->name, i};
    qsort(v, n, sizeof *v, cmp_name_idx);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(v[i].name, v[i - 1].name))
            dup[v[i].i] = dup[v[i - 1].i] = 1;
    free(v);
    return dup;
}

/* A layout entry's name for function k of the image: NAME@0xADDR (its
 * traced address) when another function has that name, since a reader
 * gives a bare name to the first of them not placed yet, which need not be
 * the one the plan moved (docs/formats/layout.md). */
static const char *entry_name(char *buf, size_t n, const img *im,
                              const unsigned char *dup, size_t k)
{
    const img_func *fn = img_func_at(im, k);
    if (!dup[k])
        return fn->name;
    snprintf(buf, n, "%s@0x%08x", fn->name, fn->addr);
    return buf;
}

/* The stubs GNU ld adds for direct calls from flash into fast memory (sim
 * --layout fetches them in front of their target): the hot block's own
 * when it is an output section of its own (Zephyr's rom_start), for the
 * calls from it, and the text's, for the others. */
static void flash_stubs(FILE *f, const plan_model *m, const plan_layout *L)
{
    const img *im = plan_model_image(m);
    for (int hot = 1; hot >= 0; hot--)
        for (size_t t = 0; t < m->ntargets; t++) {
            uint32_t at = hot ? L->stub_hot[t] : L->stub[t];
            if (!at || (hot && !L->nstubs_hot))
                continue;
            const img_func *fn = img_lookup(im, m->targets[t].addr);
            if (!fn || fn->addr != m->targets[t].addr)
                continue;
            /* (a hot stub with no site in the hot block is not called) */
            if (hot && !stub_sites(NULL, m, L, t, 1))
                continue;
            fprintf(f, "@stub 0x%08x %u %u %s@0x%08x", at, m->veneer_bytes,
                    m->veneer_insns, stub_sym(&m->targets[t], fn), fn->addr);
            stub_end(f, m, L, t, hot);
        }
}

int plan_emit_layout(FILE *f, const plan_model *m, const plan_result *r,
                     const plan_emit_info *info, cp_err *err)
{
    const img *im = plan_model_image(m);
    plan_layout L;
    if (plan_layout_of(m, r, &L) < 0)
        return cp_seterr(err, "out of memory");
    char *why = calloc(plan_model_nunits(m) ? plan_model_nunits(m) : 1, 1);
    unsigned char *dup = shared_names(im);
    char nbuf[300];
    if (!why || !dup) {
        free(why);
        free(dup);
        plan_layout_free(&L);
        return cp_seterr(err, "out of memory");
    }
    for (size_t i = 0; i < r->nitems; i++)
        why[r->items[i].unit] = r->items[i].region == PLAN_FAST ? 'f' : 'h';
    fprintf(f, "# codeplace layout %d\n", stubs_need_sites(m, &L) ? 3 : 2);
    fprintf(f, "# target: %s  image: %s  strategy: %s\n", info->t->name,
            img_hash(im), info->strategy);
    if (info->unverified)
        fprintf(f, "# UNVERIFIED prediction: %s\n", info->unverified);
    /* What `codeplace verify` checks the relinked image's stubs against:
     * ld's long-branch stubs (tgt_stub_bytes: 16 bytes each on ARMv6-M and
     * ARMv8-M Baseline, 8 on ARMv7-M and v8-M Mainline) end the text
     * section. */
    fprintf(f, "# stubs: flash %u fast %u bytes %u text_end 0x%08x "
            "fast_bytes %u\n", r->flash_stubs, r->veneers + plan_stock_fast_stubs(m, r),
            m->veneer_bytes,
            r->text_end, r->fast_bytes);
    if (L.nstubs_hot)
        fprintf(f, "# hot block stubs: %u at 0x%08x\n", L.nstubs_hot,
                (L.hot_end + 7) & ~7u);
    fputs("# name region place size reason\n", f);
    if (L.text_delta) {
        /* What follows the text section (.rodata) moves with its end. */
        fprintf(f, "@shift 0x%08x %lld\n", (plan_model_text_end(m) + 7) & ~7u,
                (long long)L.text_delta);
    }
    flash_stubs(f, m, &L);
    const tgt_mem *fast = NULL;
    for (unsigned k = 0; k < info->t->nmems; k++)
        if (!strcmp(info->t->mems[k].name, info->t->fast_mem))
            fast = &info->t->mems[k];
    /* Fast-memory addresses as GNU ld assigns them: the sections in the
     * order codeplace_ram.ld names them (plan_emit_snippets writes the same
     * order), each at its own input-section alignment; a fast memory at
     * address 0 keeps its first 8 bytes free so that no function has the
     * address of a null pointer (firmware/ld/imxrt1062.ld,
     * __coderam_reserve). ld's veneers for calls back to flash go after
     * the sections (.text.__stub at the end of .ramfunc). */
    uint64_t cur = fast ? fast->base : 0;
    if (fast && fast->base == 0)
        cur = 8;
    for (size_t i = 0; i < r->nitems; i++) {
        const plan_item *it = &r->items[i];
        const plan_unit *u = plan_model_unit(m, it->unit);
        if (it->region != PLAN_FAST)
            continue;
        uint32_t al = u->align ? u->align : 1;
        cur = (cur + al - 1) & ~(uint64_t)(al - 1);
        for (unsigned k = 0; k < u->nfuncs; k++) {
            const img_func *fn = img_func_at(im, u->first_func + k);
            const char *nm = entry_name(nbuf, sizeof nbuf, im, dup,
                                        u->first_func + k);
            if (info->from_samples)
                fprintf(f, "%s %s 0x%08llx %u fast-memory:%.0f-samples\n",
                        nm, info->t->fast_mem,
                        (unsigned long long)(cur + (fn->addr - u->addr)),
                        fn->size, it->samples);
            else
                fprintf(f, "%s %s 0x%08llx %u fast-memory:saves-%.1f-misses\n",
                        nm, info->t->fast_mem,
                        (unsigned long long)(cur + (fn->addr - u->addr)),
                        fn->size, it->saved > 0 ? it->saved : it->misses);
        }
        cur += u->size;
    }
    /* ld's veneers for direct calls from fast memory back to flash, one per
     * target, after the sections: they cost instructions, never misses. */
    cur = (cur + 7) & ~(uint64_t)7;
    size_t nu = plan_model_nunits(m);
    unsigned char *done = calloc(m->ntargets ? m->ntargets : 1, 1);
    unsigned char *infast = calloc(nu ? nu : 1, 1);
    uint32_t *tg = malloc((m->ntargets ? m->ntargets : 1) * sizeof *tg);
    if (!done || !infast || !tg) {
        free(done);
        free(infast);
        free(tg);
        free(why);
        free(dup);
        plan_layout_free(&L);
        return cp_seterr(err, "out of memory");
    }
    uint32_t last_fast = UINT32_MAX; /* the section ld's stubs follow */
    for (size_t i = 0; i < r->nitems; i++)
        if (r->items[i].region == PLAN_FAST)
            last_fast = r->items[i].unit;
    for (size_t i = 0; i < nu; i++)
        infast[i] = L.addr[i] == PLAN_ADDR_FAST;
    size_t ntg = 0;
    for (size_t i = 0; fast && i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        const plan_target *t = &m->targets[c->target];
        if (done[c->target] || L.addr[c->caller] != PLAN_ADDR_FAST ||
            L.addr[t->unit] == PLAN_ADDR_FAST)
            continue;
        const img_func *fn = img_lookup(im, t->addr);
        if (!fn || fn->addr != t->addr)
            continue;
        done[c->target] = 1;
        tg[ntg++] = c->target;
    }
    /* In ld's order when it can be worked out (plan/ldstub.c). */
    plan_ldstub_sort(m, last_fast, infast, 1, tg, ntg);
    for (size_t i = 0; i < ntg; i++) {
        const img_func *fn = img_lookup(im, m->targets[tg[i]].addr);
        fprintf(f, "@stub 0x%08llx %u %u %s@0x%08x", (unsigned long long)cur,
                m->veneer_bytes, m->veneer_insns,
                stub_sym(&m->targets[tg[i]], fn), fn->addr);
        stub_end(f, m, NULL, tg[i], 0);
        cur += m->veneer_bytes;
    }
    free(done);
    free(infast);
    free(tg);
    for (size_t i = 0; i < plan_model_nunits(m); i++) {
        const plan_unit *u = plan_model_unit(m, i);
        if (L.addr[i] == PLAN_ADDR_FAST || L.addr[i] == u->addr)
            continue;
        for (unsigned k = 0; k < u->nfuncs; k++) {
            const img_func *fn = img_func_at(im, u->first_func + k);
            fprintf(f, "%s flash 0x%08x %u %s\n",
                    entry_name(nbuf, sizeof nbuf, im, dup, u->first_func + k),
                    L.addr[i] + (fn->addr - u->addr), fn->size,
                    why[i] == 'h' ? "hot-block" : "shifted");
        }
    }
    free(why);
    free(dup);
    plan_layout_free(&L);
    return ferror(f) ? cp_seterr(err, "write error") : 0;
}

int plan_unit_pattern(const plan_unit *u, char *buf, size_t n)
{
    int k;
    if (u->archive && u->object)
        k = snprintf(buf, n, "*%s:%s(%s)", u->archive, u->object, u->isec);
    else if (u->object)
        k = snprintf(buf, n, "*%s(%s)", u->object, u->isec);
    else
        k = snprintf(buf, n, "*(%s)", u->isec);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* Each snippet is written whole or not at all (util/wfile.h): one is open
 * at a time. */
static cp_wfile cur;

static FILE *create(const char *dir, const char *name, cp_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (cp_wfile_open(&cur, path, err) < 0)
        return NULL;
    return cur.f;
}

static int finish(FILE *f, const char *dir, const char *name, cp_err *err)
{
    (void)f;
    (void)dir;
    (void)name;
    return cp_wfile_commit(&cur, err);
}

/* The input-section statements of one region; with hot offsets when
 * base_sym is given. */
static void sections(FILE *f, const plan_model *m, const plan_result *r,
                     plan_region region, const char *base_sym)
{
    char pat[1024];
    for (size_t i = 0; i < r->nitems; i++) {
        const plan_item *it = &r->items[i];
        if (it->region != region)
            continue;
        const plan_unit *u = plan_model_unit(m, it->unit);
        if (plan_unit_pattern(u, pat, sizeof pat) < 0)
            continue;
        if (base_sym)
            fprintf(f, "    . = %s + 0x%05x;\n", base_sym, it->offset);
        fprintf(f, "    %s", pat);
        if (region == PLAN_FLASH_HOT)
            fprintf(f, " /* %s, %u bytes, set %u */\n", u->name, u->size,
                    it->colour);
        else
            fprintf(f, " /* %s, %u bytes */\n", u->name, u->size);
    }
}

/* The prediction of what an integration applies, for its fragment. */
static int applied(FILE *f, plan_model *m, const plan_result *r,
                   plan_integration in, cp_err *err)
{
    plan_applied ap;
    plan_result *a = plan_result_for(m, r, in, &ap, err);
    if (!a)
        return -1;
    fprintf(f, "# %s applies: %.1f misses per iteration predicted for what it "
            "can place\n# (the full plan: %.1f, stock %.1f)",
            plan_integration_name(in), a->misses, r->misses, r->stock_misses);
    if (!ap.fast_dropped && !ap.flash_dropped)
        fputs("; all of the plan.\n", f);
    else
        fputs(":\n", f);
    if (ap.fast_dropped && in == PLAN_INT_PICO)
        fprintf(f, "#   %zu fast-memory section%s not moved (in a library ld "
                "finds with -l, or\n#   a name several functions have)\n",
                ap.fast_dropped, ap.fast_dropped == 1 ? "" : "s");
    else if (ap.fast_dropped)
        fprintf(f, "#   %zu fast-memory section%s not moved (the list cannot "
                "single %s out: no map,\n#   and another section has the "
                "same name)\n", ap.fast_dropped,
                ap.fast_dropped == 1 ? "" : "s",
                ap.fast_dropped == 1 ? "it" : "them");
    if (ap.flash_dropped)
        fprintf(f, "#   %zu hot-block section%s not placed (the list cannot "
                "single %s out: no map,\n#   and another section has the "
                "same name)\n", ap.flash_dropped,
                ap.flash_dropped == 1 ? "" : "s",
                ap.flash_dropped == 1 ? "it" : "them");
    plan_result_free(a);
    return 0;
}

/* The header of a Zephyr or pico-sdk fragment: the prediction of what
 * that integration applies, or, for a plan that was not simulated, that
 * there is none. 0, or -1 with the fragment's temporary file removed. */
static int fragment_header(FILE *f, const char *what, plan_model *m,
                           const plan_result *r, const plan_emit_info *info,
                           plan_integration in, cp_err *err)
{
    header_ex(f, what, m, r, info, "#", info->no_prediction);
    if (!info->no_prediction && applied(f, m, r, in, err) < 0) {
        cp_wfile_abort(&cur);
        return -1;
    }
    return 0;
}

/* The set, written into dir (the temporary directory). */
static int write_snippets(const char *dir, plan_model *m,
                          const plan_result *r, const plan_emit_info *info,
                          cp_err *err)
{
    FILE *f;

    /* GNU ld, for a script that INCLUDEs them (firmware/ld/sections.ld). */
    if (!(f = create(dir, "codeplace_flash.ld", err)))
        return -1;
    header(f, "GNU ld flash hot block", m, r, info, "/*");
    fprintf(f, " * INCLUDEd first thing in .text, where __codeplace_hot_start "
            "is 0x%08x;\n * each section starts at its cache set. */\n",
            r->hot_base);
    sections(f, m, r, PLAN_FLASH_HOT, "__codeplace_hot_start");
    if (r->block_end)
        fprintf(f, "    . = __codeplace_hot_start + 0x%05x; /* the block's end "
                "*/\n", r->block_end);
    if (finish(f, dir, "codeplace_flash.ld", err) < 0)
        return -1;
    if (!(f = create(dir, "codeplace_ram.ld", err)))
        return -1;
    header(f, "GNU ld fast-memory code", m, r, info, "/*");
    fprintf(f, " * INCLUDEd inside the output section that runs from %s and "
            "is copied at boot. */\n", info->t->fast_mem);
    sections(f, m, r, PLAN_FAST, NULL);
    if (finish(f, dir, "codeplace_ram.ld", err) < 0)
        return -1;

    /* The name list, which the Zephyr module and the pico-sdk function
     * apply: section names in those builds differ from this image's, so
     * they place by function name (docs/zephyr.md, docs/pico-sdk.md). */
    if (!(f = create(dir, "codeplace.list", err)))
        return -1;
    plan_emit_list(f, m, r, info);
    if (finish(f, dir, "codeplace.list", err) < 0)
        return -1;
    if (!(f = create(dir, "codeplace.cmake", err)))
        return -1;
    if (fragment_header(f, "Zephyr CMake fragment", m, r, info,
                        PLAN_INT_ZEPHYR, err) < 0)
        return -1;
    fputs("# With the codeplace Zephyr module in the build (ZEPHYR_EXTRA_MODULES\n"
          "# or west.yml), include(path/to/codeplace.cmake) in the application's\n"
          "# CMakeLists.txt after find_package(Zephyr): the fast-memory group goes\n"
          "# to SRAM or ITCM through zephyr_code_relocate(), the flash group first\n"
          "# in ROM through zephyr_linker_sources(ROM_START), and names that do\n"
          "# not resolve are reported after the link. Or set\n"
          "# CONFIG_CODEPLACE_LIST to codeplace.list in prj.conf.\n", f);
    fputs("codeplace_zephyr_apply(${CMAKE_CURRENT_LIST_DIR}/codeplace.list)\n", f);
    if (finish(f, dir, "codeplace.cmake", err) < 0)
        return -1;
    if (!(f = create(dir, "codeplace_pico.cmake", err)))
        return -1;
    if (fragment_header(f, "pico-sdk CMake fragment", m, r, info,
                        PLAN_INT_PICO, err) < 0)
        return -1;
    fprintf(f, "# The hot block starts at 0x%08x, after pico-sdk's start-up "
            "sections.\n", r->hot_base);
    fputs("# include(/path/to/codeplace/cmake/codeplace.cmake) first, then\n"
          "# include(path/to/codeplace_pico.cmake) and call\n"
          "# codeplace_plan_apply(<your executable target>) after add_executable:\n"
          "# the fast-memory group goes to SRAM as .time_critical code, the\n"
          "# flash group (codeplace_flash.ld) first in .text through a linker\n"
          "# script derived from the SDK's memmap_default.ld (docs/pico-sdk.md).\n", f);
    fputs("function(codeplace_plan_apply target)\n"
          "  codeplace_apply(${target} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/codeplace.list\n"
          "                  FLASH ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/codeplace_flash.ld ${ARGN})\n"
          "endfunction()\n", f);
    if (finish(f, dir, "codeplace_pico.cmake", err) < 0)
        return -1;
    return 0;
}

int plan_emit_snippets(const char *dir, plan_model *m,
                       const plan_result *r, const plan_emit_info *info,
                       cp_err *err)
{
    /* The old set or the new one, never a mix (util/wdir.h). */
    cp_wdir w;
    if (cp_wdir_open(&w, dir, err) < 0)
        return -1;
    if (write_snippets(w.tmp, m, r, info, err) < 0) {
        /* (err names the temporary file: say which set it belongs to) */
        cp_err e2 = *err;
        cp_seterr(err, "%s; '%s' is left as it was", e2.msg, dir);
        cp_wdir_abort(&w);
        return -1;
    }
    return cp_wdir_commit(&w, err);
}
