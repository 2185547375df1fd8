/* Carries a name list to another build (see apply.h). */
#include "plan/apply.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/emit.h"
#include "plan/fromsamples.h"
#include "plan/plan_int.h"

static const char *const how_names[] = {
    "same", "renumbered clone", "clone gone, original used",
    "now a clone", "gone", "dropped by the linker",
    "ambiguous", "not movable", "over the budget",
};

const char *plan_apply_how_name(plan_apply_how h)
{
    return (unsigned)h < sizeof how_names / sizeof how_names[0]
               ? how_names[h] : "?";
}

static char *slurp(const char *path, size_t *len, cp_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cp_seterr(err, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    while (b) {
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *nb = realloc(b, 2 * cap + 1);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b || bad) {
        free(b);
        cp_seterr(err, bad ? "cannot read '%s': read error" : "out of memory",
                  path);
        return NULL;
    }
    b[n] = 0;
    if (len)
        *len = n;
    return b;
}

/* "# key: value  key2: value2" header fields of the emitted list. */
static void header_field(const char *line, const char *key, char *out,
                         size_t cap)
{
    const char *p = strstr(line, key);
    if (!p || cap == 0)
        return;
    p += strlen(key);
    while (*p == ' ')
        p++;
    size_t k = 0;
    while (p[k] && !isspace((unsigned char)p[k]) && k + 1 < cap)
        k++;
    memcpy(out, p, k);
    out[k] = 0;
}

/* A size field of the header ("budget: 16384", "budget: 16K"): read as
 * plan --budget reads its argument (cp_parse_u64 with K/M/G suffixes).
 * Returns 0 (*out untouched when the line has no such field, or when the
 * field says "not given", as apply writes a list without a budget) or -1
 * with file:line. */
static int header_size(const char *list, size_t lineno, const char *line,
                       const char *key, uint32_t *out, cp_err *err)
{
    char b[32] = "";
    uint64_t v;
    header_field(line, key, b, sizeof b);
    if (!b[0] && !strstr(line, key))
        return 0;
    const char *f = strstr(line, key) + strlen(key);
    while (*f == ' ')
        f++;
    if (!strncmp(f, PLAN_BUDGET_NONE_TEXT, strlen(PLAN_BUDGET_NONE_TEXT)))
        return 0;
    if (cp_parse_u64(b, 1, &v) < 0 || v > UINT32_MAX)
        return cp_seterr(err, "%s:%zu: %s'%s' is not a size in bytes (a "
                         "number with an optional K, M or G, as --budget "
                         "takes)", list, lineno, key, b);
    *out = (uint32_t)v;
    return 0;
}

int plan_apply_header(const char *list, char *target, size_t tcap,
                      uint32_t *budget, cp_err *err)
{
    char *t = slurp(list, NULL, err);
    if (!t)
        return -1;
    if (tcap)
        target[0] = 0;
    *budget = UINT32_MAX;
    size_t lineno = 0;
    int rc = 0;
    for (char *l = t; l && *l == '#';) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        if (strstr(l, "target: "))
            header_field(l, "target: ", target, tcap);
        if ((rc = header_size(list, lineno, l, "budget: ", budget, err)) < 0)
            break;
        l = nl ? nl + 1 : NULL;
    }
    free(t);
    return rc;
}

/* ---- clone names ------------------------------------------------------- */

static const char *const clone_kinds[] = {".constprop.", ".isra.", ".part.",
                                          ".cold.", ".lto_priv.",
                                          ".localalias."};

/* The length of name's base (before its first clone suffix). */
static size_t base_len(const char *name)
{
    size_t best = strlen(name);
    for (size_t k = 0; k < sizeof clone_kinds / sizeof clone_kinds[0]; k++) {
        const char *p = strstr(name, clone_kinds[k]);
        if (p && (size_t)(p - name) < best)
            best = (size_t)(p - name);
    }
    return best;
}

/* Does b's clone suffix equal a's with the numbers ignored? */
static int same_kind(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (isdigit((unsigned char)*a))
                a++;
            while (isdigit((unsigned char)*b))
                b++;
            continue;
        }
        if (*a != *b)
            return 0;
        a++;
        b++;
    }
    return !*a && !*b;
}

/* ---- the map's discarded sections --------------------------------------- */

static int discarded(const char *map_text, const char *name)
{
    if (!map_text)
        return 0;
    const char *p = strstr(map_text, "\nDiscarded input sections");
    if (!p)
        return 0;
    const char *end = strstr(p, "\nMemory Configuration");
    char want[300];
    snprintf(want, sizeof want, "\n .text.%s", name);
    size_t wl = strlen(want);
    for (const char *q = p; (q = strstr(q, want)) && (!end || q < end);
         q += wl)
        if (isspace((unsigned char)q[wl]) || !q[wl])
            return 1;
    return 0;
}

/* ---- resolution -------------------------------------------------------- */

static long unit_of(const plan_model *m, uint32_t addr)
{
    for (size_t i = 0; i < m->nunits; i++)
        if (addr - m->units[i].addr < m->units[i].size)
            return (long)i;
    return -1;
}

/* The function in the new build that name stands for, or NULL with
 * n->how and n->why set. */
static const img_func *resolve(const img *im, const char *map_text,
                               plan_apply_name *n)
{
    const img_func *f = img_find(im, n->name);
    if (f) {
        n->how = PLAN_APPLY_SAME;
        return f;
    }
    size_t bl = base_len(n->name), nf = img_nfuncs(im);
    int is_clone = n->name[bl] != 0;
    const img_func *cand = NULL;
    size_t ncand = 0;
    char list[120] = "";
    for (size_t i = 0; i < nf; i++) {
        const img_func *g = img_func_at(im, i);
        if (strncmp(g->name, n->name, bl) || base_len(g->name) != bl ||
            !g->name[bl])
            continue;
        if (is_clone && !same_kind(n->name + bl, g->name + bl))
            continue;
        if (!cand || strcmp(cand->name, g->name)) {
            size_t ll = strlen(list);
            snprintf(list + ll, sizeof list - ll, "%s%s", ncand ? ", " : "",
                     g->name);
            ncand++;
        }
        cand = g;
    }
    if (ncand == 1) {
        n->how = is_clone ? PLAN_APPLY_RENUMBERED : PLAN_APPLY_CLONED;
        return cand;
    }
    if (ncand > 1) {
        n->how = PLAN_APPLY_LOST_AMBIGUOUS;
        snprintf(n->why, sizeof n->why, "%zu clones could be it: %s", ncand,
                 list);
        return NULL;
    }
    if (is_clone) {
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)bl, n->name);
        if ((f = img_find(im, base))) {
            n->how = PLAN_APPLY_UNCLONED;
            return f;
        }
    }
    if (discarded(map_text, n->name)) {
        n->how = PLAN_APPLY_LOST_DISCARDED;
        snprintf(n->why, sizeof n->why, ".text.%s is among the map's "
                 "discarded input sections (unused: inlined into every "
                 "caller, or no longer called)", n->name);
    } else {
        n->how = PLAN_APPLY_LOST_GONE;
        snprintf(n->why, sizeof n->why, "not in the new build (removed, "
                 "renamed, or inlined)");
    }
    return NULL;
}

void plan_apply_free(plan_apply *a)
{
    if (!a)
        return;
    plan_result_free(a->res);
    free(a->names);
    free(a->text);
    free(a);
}

/* ---- the list ---------------------------------------------------------- */

/* What a list says besides its names: the header's budget and block end
 * (UINT32_MAX, 0 when not given) and the region the names below the last
 * "region:" line go to. */
typedef struct {
    uint32_t budget, block_end;
    plan_region region;
} apply_header;

/* A header line p (line lineno) of the list into a and h. 0, or -1 with
 * file:line. */
static int header_line(plan_apply *a, const plan_model *m, const char *list,
                       size_t lineno, const char *p, apply_header *h,
                       cp_err *err)
{
    if (strstr(p, "target: "))
        header_field(p, "target: ", a->target, sizeof a->target);
    if (strstr(p, "strategy: "))
        header_field(p, "strategy: ", a->strategy, sizeof a->strategy);
    if (header_size(list, lineno, p, "budget: ", &h->budget, err) < 0 ||
        header_size(list, lineno, p, "block end: ", &h->block_end, err) < 0)
        return -1;
    char r[32] = "";
    header_field(p, "region: ", r, sizeof r);
    if (!r[0])
        return 0;
    if (!strcmp(r, "flash"))
        h->region = PLAN_FLASH_HOT;
    else if (!strcmp(r, m->t->fast_mem))
        h->region = PLAN_FAST;
    else
        return cp_seterr(err, "%s:%zu: region '%s' is neither flash nor "
                         "%s's fast memory (%s)", list, lineno, r,
                         m->t->name, m->t->fast_mem);
    return 0;
}

/* A name line p (line lineno) of the list, added to a's names with the
 * set and size its comment gives ("N bytes, set S"). p is cut after the
 * name. 0, or -1 (out of memory). */
static int name_line(plan_apply *a, size_t *cap, size_t lineno, char *p,
                     plan_region region, cp_err *err)
{
    char *e = p;
    while (*e && !isspace((unsigned char)*e))
        e++;
    uint32_t set = UINT32_MAX, osize = UINT32_MAX;
    char *hash = *e ? strchr(e + 1, '#') : NULL, *sp;
    if (hash && (sp = strstr(hash, " set ")) && isdigit((unsigned char)sp[5]))
        set = (uint32_t)strtoul(sp + 5, NULL, 10);
    /* "N bytes, set S": the section's size in the planned build. */
    if (hash && set != UINT32_MAX && (sp = strstr(hash, " bytes, set ")) &&
        sp > hash && isdigit((unsigned char)sp[-1])) {
        char *d = sp;
        while (d > hash && isdigit((unsigned char)d[-1]))
            d--;
        osize = (uint32_t)strtoul(d, NULL, 10);
    }
    *e = 0;
    if (cp_grow((void **)&a->names, cap, a->n + 1, sizeof *a->names) < 0)
        return cp_seterr(err, "out of memory");
    plan_apply_name *n = &a->names[a->n++];
    memset(n, 0, sizeof *n);
    n->name = p;
    n->line = lineno;
    n->region = region;
    n->set = region == PLAN_FLASH_HOT ? set : UINT32_MAX;
    n->osize = region == PLAN_FLASH_HOT ? osize : UINT32_MAX;
    return 0;
}

/* The list's text (a->text, cut into lines in place) into a's names,
 * target and strategy, and h. 0, or -1 (err says why). */
static int read_list(plan_apply *a, const plan_model *m, const char *list,
                     apply_header *h, cp_err *err)
{
    size_t lineno = 0, cap = 0;
    h->budget = UINT32_MAX;
    h->block_end = 0;
    h->region = PLAN_FLASH_HOT;
    for (char *l = a->text; l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        char *p = l;
        /* every blank, '\r' too: a CRLF list's empty line is no name */
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '#') {
            if (header_line(a, m, list, lineno, p, h, err) < 0)
                return -1;
        } else if (*p && name_line(a, &cap, lineno, p, h->region, err) < 0) {
            return -1;
        }
        l = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* ---- the placement ----------------------------------------------------- */

/* The units the names resolve to: ofast[nfast] for the fast memory, in the
 * list's order, and ohot[nhot] for the hot block, with the set (oset), the
 * sets left free before it (ogap) and the name (oname) of each. */
typedef struct {
    unsigned char *fast, *taken;  /* per unit */
    size_t *ofast, *ohot, *oname;
    uint32_t *oset, *ogap;
    size_t nfast, nhot;
} apply_units;

static int units_alloc(apply_units *w, const plan_model *m)
{
    size_t nu = m->nunits ? m->nunits : 1;
    memset(w, 0, sizeof *w);
    w->fast = calloc(nu, 1);
    w->taken = calloc(nu, 1);
    w->ofast = malloc(nu * sizeof *w->ofast);
    w->ohot = malloc(nu * sizeof *w->ohot);
    w->oset = malloc(nu * sizeof *w->oset);
    w->ogap = malloc(nu * sizeof *w->ogap);
    w->oname = malloc(nu * sizeof *w->oname);
    return w->fast && w->taken && w->ofast && w->ohot && w->oset && w->ogap &&
           w->oname ? 0 : -1;
}

static void units_free(apply_units *w)
{
    free(w->fast);
    free(w->taken);
    free(w->ofast);
    free(w->ohot);
    free(w->oset);
    free(w->ogap);
    free(w->oname);
}

/* Name i, resolved to function f, to its unit in w: or why it cannot move
 * (n->how, n->why), or that another name's section takes it along. */
static void take_unit(plan_apply *a, const plan_model *m, size_t i,
                      const img_func *f, apply_units *w)
{
    plan_apply_name *n = &a->names[i];
    n->now = f->name;
    long u = unit_of(m, f->addr);
    if (u < 0 || (m->units[u].flags & PLAN_U_NOMOVE) ||
        (n->region == PLAN_FAST && (m->units[u].flags & PLAN_U_NORAM))) {
        n->how = PLAN_APPLY_LOST_NOT_MOVABLE;
        snprintf(n->why, sizeof n->why, "%s",
                 u < 0 && !f->isec && img_map_path(m->im)
                 ? "in no input section the map lists (a map cut "
                   "short, or of another build)"
                 : u < 0
                 ? "not in the cached flash window (in RAM already, or "
                   "not code)"
                 : "must stay where it is (startup code, or excluded)");
        return;
    }
    if (w->taken[u]) {
        n->shared = 1;
        snprintf(n->why, sizeof n->why, "%s moves with %s",
                 m->units[u].isec, m->units[u].name);
        return;
    }
    if (n->region == PLAN_FAST) {
        w->fast[u] = 1;
        uint32_t used = plan_fast_bytes(m, w->fast);
        if (a->budget != UINT32_MAX && used > a->budget) {
            w->fast[u] = 0;
            n->how = PLAN_APPLY_LOST_BUDGET;
            snprintf(n->why, sizeof n->why, "%u bytes (now) do not fit: "
                     "%u of the %u-byte budget are used",
                     m->units[u].size, plan_fast_bytes(m, w->fast),
                     a->budget);
            return;
        }
        w->ofast[w->nfast++] = (size_t)u;
    } else {
        w->oset[w->nhot] = n->set;
        w->oname[w->nhot] = i;
        w->ohot[w->nhot++] = (size_t)u;
    }
    w->taken[u] = 1;
}

/* Every name resolved in the new build and taken to its unit; a's tallies
 * of the names found, lost and renamed. */
static void resolve_all(plan_apply *a, const plan_model *m,
                        const char *map_text, apply_units *w)
{
    for (size_t i = 0; i < a->n; i++) {
        const img_func *f = resolve(m->im, map_text, &a->names[i]);
        if (f)
            take_unit(a, m, i, f, w);
    }
    for (size_t i = 0; i < a->n; i++) {
        plan_apply_how h = a->names[i].how;
        a->nlost += plan_apply_lost(h);
        a->nresolved += !plan_apply_lost(h);
        a->nrenamed += h == PLAN_APPLY_RENUMBERED || h == PLAN_APPLY_UNCLONED ||
                       h == PLAN_APPLY_CLONED;
    }
}

/* The sets the plan left free before each hot section (w->ogap), from the
 * list's sets and sizes (UINT32_MAX where the list does not say); and the
 * padding limit, raised to the padding the planned block had (block_end
 * less the sections' sizes), which the same build needs. */
static uint32_t planned_gaps(const plan_apply *a, const plan_model *m,
                             apply_units *w, uint32_t block_end,
                             uint32_t pad_limit)
{
    uint32_t line = m->cache.line, mask = m->sets - 1;
    uint32_t prev_end = ((plan_hot_base(m) + line - 1) / line) & mask;
    uint64_t osum = 0;
    int sizes_known = 1;
    for (size_t k = 0; k < w->nhot; k++) {
        const plan_apply_name *n = &a->names[w->oname[k]];
        uint32_t set = w->oset[k];
        w->ogap[k] = UINT32_MAX;
        if (n->osize == UINT32_MAX || set == UINT32_MAX) {
            sizes_known = 0;
            prev_end = UINT32_MAX;
            continue;
        }
        osum += (n->osize + 7) & ~7u;
        if (prev_end != UINT32_MAX)
            w->ogap[k] = (set - prev_end) & mask;
        prev_end = (set + (((n->osize + 7) & ~7u) + line - 1) / line) & mask;
    }
    if (sizes_known && block_end > osum && block_end - osum > pad_limit)
        pad_limit = (uint32_t)(block_end - osum);
    return pad_limit;
}

/* The block's end as planned: what follows it stays where the plan put it
 * (called when the block still fits). */
static void keep_block_end(const plan_model *m, plan_result *r,
                           uint32_t block_end)
{
    r->pad_bytes += block_end - r->hot_bytes;
    r->hot_bytes = r->block_end = block_end;
    plan_layout L;
    if (plan_layout_alloc(m, &L) != 0)
        return;
    plan_layout_build(m, r->items, r->nitems, r->hot_base, r->block_end, &L,
                      NULL);
    r->flash_stubs = L.nstubs;
    r->stub_order = L.stub_order;
    r->text_end = (uint32_t)((int64_t)((m->text_end + 7) & ~7u) +
                             L.text_delta);
    plan_layout_free(&L);
}

/* The placement of w's units (a->res), at their list's sets where the
 * padding allows. 0, or -1 (out of memory). */
static int place_units(plan_apply *a, const plan_model *m,
                       const apply_units *w, uint32_t block_end,
                       uint32_t pad_limit, cp_err *err)
{
    size_t dropped, nhot = w->nhot;
    if (!(a->res = plan_result_place(m, w->ofast, w->nfast, w->ohot, nhot,
                                     w->oset, w->ogap, pad_limit, &dropped,
                                     NULL)))
        return cp_seterr(err, "out of memory");
    a->sets_dropped_at = dropped < nhot ? w->oname[dropped] : a->n;
    if (block_end > a->res->hot_bytes && dropped == nhot)
        keep_block_end(m, a->res, block_end);
    for (size_t k = 0; k < nhot; k++) {
        if (w->oset[k] == UINT32_MAX)
            continue;
        /* plan_result_place keeps the order: fast items, then hot ones */
        int kept = a->res->items[w->nfast + k].colour ==
                   (w->oset[k] & (m->sets - 1));
        a->sets_kept += kept;
        a->sets_drifted += !kept && k < dropped;
    }
    return 0;
}

plan_apply *plan_apply_list(plan_model *m, const char *list, const char *map,
                            uint32_t budget, uint32_t pad_limit, cp_err *err)
{
    plan_apply *a = calloc(1, sizeof *a);
    char *map_text = NULL;
    apply_units w;
    apply_header h;
    if (units_alloc(&w, m) < 0 || !a) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    if (!(a->text = slurp(list, NULL, err)))
        goto fail;
    if (map && !(map_text = slurp(map, NULL, err)))
        goto fail;
    if (read_list(a, m, list, &h, err) < 0)
        goto fail;
    a->budget = budget != UINT32_MAX ? budget : h.budget;
    resolve_all(a, m, map_text, &w);
    pad_limit = planned_gaps(a, m, &w, h.block_end, pad_limit);
    if (place_units(a, m, &w, h.block_end, pad_limit, err) < 0)
        goto fail;
    free(map_text);
    units_free(&w);
    return a;
fail:
    plan_apply_free(a);
    free(map_text);
    units_free(&w);
    return NULL;
}
