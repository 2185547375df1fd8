/* rep_prof: PC samples attributed to functions, libraries and sections. */
#include "report/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *lib_of(const img *im, const img_func *f)
{
    if (!img_map_path(im))
        return "(no map)";
    if (f->archive)
        return f->archive;
    return f->object ? "(objects)" : "(unattributed)";
}

/* The name of the row that collects samples at addr outside every
 * function. */
static const char *other_name(const img *im, const tgt *tg, uint32_t a,
                              char *buf, size_t n)
{
    if (a == SMP_HALTED)
        return "(halted)";
    for (size_t i = 0; i < img_nsections(im); i++) {
        const img_section *s = img_section_at(im, i);
        if ((s->flags & IMG_SEC_ALLOC) && s->size && a >= s->addr &&
            a - s->addr < s->size) {
            snprintf(buf, n, "(no function in %s)", s->name);
            return buf;
        }
    }
    if (tg) {
        const tgt_mem *m = tgt_mem_at(tg, a);
        if (m) {
            snprintf(buf, n, "(memory %s)", m->name);
            return buf;
        }
    }
    for (size_t i = 0; i < img_nregions(im); i++) {
        const img_region *r = img_region_at(im, i);
        if (a >= r->origin && a - r->origin < r->length) {
            snprintf(buf, n, "(region %s, no function)", r->name);
            return buf;
        }
    }
    return "(outside the image)";
}

void rep_prof_free(rep_profile *p)
{
    if (!p)
        return;
    free(p->rows);
    free(p->libs);
    free(p->secs);
    cp_pool_free(p->pool);
    free(p);
}

static int cmp_group(const void *a, const void *b)
{
    const rep_group *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    if (x->misses != y->misses)
        return x->misses > y->misses ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

static rep_group *group_find(rep_group *g, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(g[i].name, name))
            return &g[i];
    memset(&g[*n], 0, sizeof g[*n]);
    g[*n].name = name;
    return &g[(*n)++];
}

/* Recomputes the library and section sums from the rows. */
static int regroup(rep_profile *p, cp_err *err)
{
    free(p->libs);
    free(p->secs);
    p->nlibs = p->nsecs = 0;
    p->libs = calloc(p->nrows + 1, sizeof *p->libs);
    p->secs = calloc(p->nrows + 1, sizeof *p->secs);
    if (!p->libs || !p->secs)
        return cp_seterr(err, "out of memory");
    for (size_t i = 0; i < p->nrows; i++) {
        const rep_row *r = &p->rows[i];
        rep_group *g[2] = {group_find(p->libs, &p->nlibs, r->library),
                           group_find(p->secs, &p->nsecs, r->section)};
        for (int k = 0; k < 2; k++) {
            g[k]->samples += r->samples;
            g[k]->misses += r->misses;
            g[k]->bytes += r->size;
            g[k]->functions += r->fn != NULL;
        }
    }
    qsort(p->libs, p->nlibs, sizeof *p->libs, cmp_group);
    qsort(p->secs, p->nsecs, sizeof *p->secs, cmp_group);
    return 0;
}

/* Index of the row for the other-row name, added when new. */
static rep_row *other_row(rep_profile *p, size_t nfuncs, const char *name,
                          cp_err *err)
{
    for (size_t i = nfuncs; i < p->nrows; i++)
        if (!strcmp(p->rows[i].name, name))
            return &p->rows[i];
    const char *s = cp_pool_str(p->pool, name);
    if (!s) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    rep_row *r = &p->rows[p->nrows++];
    memset(r, 0, sizeof *r);
    r->name = r->library = r->section = s;
    return r;
}

/* Attributes counts at addresses to rows: samples (which = 0) or misses. */
static int attribute(rep_profile *p, const img *im, const tgt *tg,
                     const smp *s, int which, size_t nfuncs, cp_err *err)
{
    char buf[96];
    for (size_t i = 0; i < s->n; i++) {
        uint32_t a = s->e[i].addr;
        const img_func *f = a == SMP_HALTED ? NULL : img_lookup(im, a & ~1u);
        rep_row *r;
        if (f) {
            size_t lo = 0, hi = nfuncs;
            while (lo < hi) { /* rows[0..nfuncs) are in address order */
                size_t mid = (lo + hi) / 2;
                if (p->rows[mid].fn == f)
                    lo = hi = mid;
                else if (p->rows[mid].addr < f->addr ||
                         (p->rows[mid].addr == f->addr &&
                          p->rows[mid].fn < f))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            r = lo < nfuncs && p->rows[lo].fn == f ? &p->rows[lo] : NULL;
            if (!r) /* never expected: fall back to a scan */
                for (size_t k = 0; k < nfuncs && !r; k++)
                    if (p->rows[k].fn == f)
                        r = &p->rows[k];
        } else {
            r = other_row(p, nfuncs, other_name(im, tg, a, buf, sizeof buf),
                          err);
            if (!r)
                return -1;
        }
        if (!r)
            return cp_seterr(err, "internal: no row for 0x%08x", a);
        if (which == 0)
            r->samples += s->e[i].count;
        else
            r->misses += s->e[i].count;
    }
    return 0;
}

static int cmp_row_addr(const void *a, const void *b)
{
    const rep_row *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->fn < y->fn ? -1 : x->fn > y->fn;
}

rep_profile *rep_prof_build(const img *im, const smp *s, const tgt *tg,
                            cp_err *err)
{
    rep_profile *p = calloc(1, sizeof *p);
    size_t nf = img_nfuncs(im);
    if (!p || !(p->pool = cp_pool_new()) ||
        !(p->rows = calloc(nf + s->n + 1, sizeof *p->rows))) {
        rep_prof_free(p);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < nf; i++) {
        const img_func *f = img_func_at(im, i);
        rep_row *r = &p->rows[i];
        r->name = f->pretty;
        r->fn = f;
        r->addr = f->addr;
        r->size = f->size;
        r->library = lib_of(im, f);
        r->section = f->osec ? f->osec : "(no section)";
    }
    p->nrows = nf;
    qsort(p->rows, nf, sizeof *p->rows, cmp_row_addr);
    if (attribute(p, im, tg, s, 0, nf, err) < 0) {
        rep_prof_free(p);
        return NULL;
    }
    for (size_t i = 0; i < p->nrows; i++) {
        p->total += p->rows[i].samples;
        if (!p->rows[i].fn) {
            p->outside += p->rows[i].samples;
            if (!strcmp(p->rows[i].name, "(halted)"))
                p->halted += p->rows[i].samples;
        }
    }
    if (regroup(p, err) < 0) {
        rep_prof_free(p);
        return NULL;
    }
    rep_prof_sort(p, REP_SORT_SAMPLES);
    return p;
}

int rep_prof_set_misses(rep_profile *p, const rep_miss *m, size_t n,
                        cp_err *err)
{
    rep_row *rows = realloc(p->rows, (p->nrows + n + 1) * sizeof *rows);
    if (!rows)
        return cp_seterr(err, "out of memory");
    p->rows = rows;
    for (size_t i = 0; i < p->nrows; i++)
        p->rows[i].misses = 0;
    p->total_misses = 0;
    for (size_t i = 0; i < n; i++) {
        rep_row *r = NULL;
        for (size_t k = 0; k < p->nrows && !r; k++) {
            if (m[i].f ? p->rows[k].fn == m[i].f
                       : (!p->rows[k].fn && !strcmp(p->rows[k].name,
                                                    m[i].name)))
                r = &p->rows[k];
        }
        if (!r) {
            const char *name = m[i].f ? m[i].f->pretty : m[i].name;
            const char *s = cp_pool_str(p->pool, name ? name : "(unknown)");
            if (!s)
                return cp_seterr(err, "out of memory");
            r = &p->rows[p->nrows++];
            memset(r, 0, sizeof *r);
            r->name = r->library = r->section = s;
        }
        r->misses += m[i].misses;
        p->total_misses += m[i].misses;
    }
    p->have_misses = 1;
    if (regroup(p, err) < 0)
        return -1;
    rep_prof_sort(p, REP_SORT_SAMPLES);
    return 0;
}

int rep_sort_parse(const char *s, rep_sort *out)
{
    static const struct {
        const char *name;
        rep_sort key;
    } keys[] = {
        {"samples", REP_SORT_SAMPLES}, {"density", REP_SORT_DENSITY},
        {"size", REP_SORT_SIZE},       {"name", REP_SORT_NAME},
        {"addr", REP_SORT_ADDR},       {"misses", REP_SORT_MISSES},
        {"miss-density", REP_SORT_MISS_DENSITY},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!strcmp(s, keys[i].name)) {
            *out = keys[i].key;
            return 0;
        }
    }
    return -1;
}

static rep_sort sort_key;

/* a/b compared as a.num/a.den vs b.num/b.den without division; rows of
 * size 0 count as density 0. */
static int cmp_density(uint64_t an, uint32_t ad, uint64_t bn, uint32_t bd)
{
    double x = ad ? (double)an / ad : 0, y = bd ? (double)bn / bd : 0;
    return x > y ? -1 : x < y;
}

static int cmp_row(const void *a, const void *b)
{
    const rep_row *x = a, *y = b;
    int c = 0;
    switch (sort_key) {
    case REP_SORT_SAMPLES:
        c = x->samples > y->samples ? -1 : x->samples < y->samples;
        break;
    case REP_SORT_DENSITY:
        c = cmp_density(x->samples, x->size, y->samples, y->size);
        break;
    case REP_SORT_SIZE:
        c = x->size > y->size ? -1 : x->size < y->size;
        break;
    case REP_SORT_NAME:
        c = strcmp(x->name, y->name);
        break;
    case REP_SORT_ADDR:
        c = x->addr < y->addr ? -1 : x->addr > y->addr;
        break;
    case REP_SORT_MISSES:
        c = x->misses > y->misses ? -1 : x->misses < y->misses;
        break;
    case REP_SORT_MISS_DENSITY:
        c = cmp_density(x->misses, x->size, y->misses, y->size);
        break;
    }
    if (c)
        return c;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    if ((x->fn == NULL) != (y->fn == NULL))
        return x->fn ? -1 : 1;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return strcmp(x->name, y->name);
}

void rep_prof_sort(rep_profile *p, rep_sort key)
{
    sort_key = key;
    qsort(p->rows, p->nrows, sizeof *p->rows, cmp_row);
}
