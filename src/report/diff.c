/* rep_diff: function-level differences between two images; name lists. */
#include "report/diff.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct ent {
    const img_func *f;
    size_t rank; /* among functions of the same name, in address order */
} ent;

static int cmp_ent(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    int c = strcmp(x->f->name, y->f->name);
    if (c)
        return c;
    return x->f->addr < y->f->addr ? -1 : x->f->addr > y->f->addr;
}

static ent *sorted(const img *im, size_t *n)
{
    *n = img_nfuncs(im);
    ent *e = calloc(*n + 1, sizeof *e);
    if (!e)
        return NULL;
    for (size_t i = 0; i < *n; i++)
        e[i].f = img_func_at(im, i);
    qsort(e, *n, sizeof *e, cmp_ent);
    for (size_t i = 1; i < *n; i++)
        if (!strcmp(e[i].f->name, e[i - 1].f->name))
            e[i].rank = e[i - 1].rank + 1;
    return e;
}

static int cmp_key(const ent *x, const ent *y)
{
    int c = strcmp(x->f->name, y->f->name);
    if (c)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static uint32_t absdiff(uint32_t a, uint32_t b)
{
    return a > b ? a - b : b - a;
}

static int cmp_row(const void *a, const void *b)
{
    const rep_diff_row *x = a, *y = b;
    static const int order[] = {3, 0, 1, 2}; /* changed, added, removed, same */
    if (x->kind != y->kind)
        return order[x->kind] - order[y->kind];
    uint32_t dx = 0, dy = 0;
    if (x->kind == REP_DIFF_CHANGED) {
        dx = absdiff(x->old_size, x->new_size);
        dy = absdiff(y->old_size, y->new_size);
    } else if (x->kind != REP_DIFF_SAME) {
        dx = x->old_size + x->new_size;
        dy = y->old_size + y->new_size;
    }
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return strcmp(x->name, y->name);
}

rep_diff *rep_diff_build(const img *old_im, const img *new_im, cp_err *err)
{
    size_t na, nb;
    ent *a = sorted(old_im, &na), *b = sorted(new_im, &nb);
    rep_diff *d = calloc(1, sizeof *d);
    if (!a || !b || !d || !(d->rows = calloc(na + nb + 1, sizeof *d->rows))) {
        free(a);
        free(b);
        rep_diff_free(d);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        rep_diff_row *r = &d->rows[d->n++];
        int c = i == na ? 1 : j == nb ? -1 : cmp_key(&a[i], &b[j]);
        if (c < 0) {
            *r = (rep_diff_row){a[i].f->pretty, REP_DIFF_REMOVED, a[i].f->addr,
                                a[i].f->size, 0, 0};
            d->nremoved++;
            i++;
        } else if (c > 0) {
            *r = (rep_diff_row){b[j].f->pretty, REP_DIFF_ADDED, 0, 0,
                                b[j].f->addr, b[j].f->size};
            d->nadded++;
            j++;
        } else {
            /* A symbol without st_size has an inferred size (up to the next
             * symbol), which moves with its neighbours: not compared. */
            int nosize = (a[i].f->flags | b[j].f->flags) & IMG_FN_NO_SIZE;
            int same = a[i].f->size == b[j].f->size;
            if (!same && nosize) {
                same = 1;
                d->nnosize++;
            }
            *r = (rep_diff_row){a[i].f->pretty,
                                same ? REP_DIFF_SAME : REP_DIFF_CHANGED,
                                a[i].f->addr, a[i].f->size, b[j].f->addr,
                                b[j].f->size};
            if (same)
                d->nsame++;
            else
                d->nchanged++;
            i++;
            j++;
        }
    }
    for (i = 0; i < na; i++)
        d->old_bytes += a[i].f->size;
    for (j = 0; j < nb; j++)
        d->new_bytes += b[j].f->size;
    qsort(d->rows, d->n, sizeof *d->rows, cmp_row);
    free(a);
    free(b);
    return d;
}

void rep_diff_free(rep_diff *d)
{
    if (!d)
        return;
    free(d->rows);
    free(d);
}

void rep_names_free(rep_names *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->name[i]);
    free(l->name);
    free(l->line);
    free(l);
}

rep_names *rep_names_parse(const char *data, size_t len, const char *file,
                           cp_err *err)
{
    rep_names *l = calloc(1, sizeof *l);
    size_t cap = 0, lcap = 0, lineno = 0, pos = 0;
    if (!l) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    while (pos < len) {
        size_t end = pos;
        while (end < len && data[end] != '\n')
            end++;
        lineno++;
        const char *p = data + pos, *e = data + end;
        pos = end + 1;
        const char *hash = memchr(p, '#', (size_t)(e - p));
        if (hash)
            e = hash;
        while (p < e && isspace((unsigned char)*p))
            p++;
        const char *w = p;
        while (w < e && !isspace((unsigned char)*w))
            w++;
        if (w == p)
            continue;
        if (memchr(p, 0, (size_t)(w - p))) {
            cp_seterr(err, "%s:%zu: NUL byte: not a text name list", file,
                      lineno);
            goto fail;
        }
        if (cp_grow((void **)&l->name, &cap, l->n + 1, sizeof *l->name) < 0 ||
            cp_grow((void **)&l->line, &lcap, l->n + 1, sizeof *l->line) < 0 ||
            !(l->name[l->n] = strndup(p, (size_t)(w - p)))) {
            cp_seterr(err, "out of memory");
            goto fail;
        }
        l->line[l->n++] = lineno;
    }
    return l;
fail:
    rep_names_free(l);
    return NULL;
}

rep_names *rep_names_read(const char *path, cp_err *err)
{
    char *data;
    size_t len;
    if (cp_read_file(path, &data, &len, err) < 0)
        return NULL;
    rep_names *l = rep_names_parse(data, len, path, err);
    free(data);
    return l;
}
