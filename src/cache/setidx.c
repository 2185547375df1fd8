/* The set index: incremental evaluation for searches that make many moves.
 * Sets of a set-associative cache are independent under every policy here,
 * so moving one unit of code only changes the misses of the sets it leaves
 * and enters. A walk (csim_walk) is split once into one time-ordered list
 * per line of each unit and one list per set for every access of no unit;
 * a set is re-simulated by merging the lists of the units that occupy it
 * with its static list. A move by whole lines keeps a unit's lists; a unit
 * whose accesses change otherwise is read again from the walk
 * (csim_setidx_reload). The stream and map front end is setidx-map.c. */
#include "cache/cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/setidx_int.h"

/* The most ways the LRU shortcut of sim_set handles (more: every access
 * is simulated). */
#define MAXWAYS 16

static int occ_add(csim_setidx *x, uint32_t s, uint32_t k, uint32_t l)
{
    if (x->nocc[s] == x->cocc[s]) {
        uint32_t n = x->cocc[s] ? x->cocc[s] * 2 : 4;
        sx_occ *o = realloc(x->occ[s], n * sizeof *o);
        if (!o)
            return -1;
        x->occ[s] = o;
        x->cocc[s] = n;
    }
    x->occ[s][x->nocc[s]++] = (sx_occ){k, l};
    return 0;
}

/* A line of a unit the walk touches: the others never enter a set's
 * stream, so a move need not simulate their sets. */
static int line_used(const csim_setidx *x, size_t k, uint32_t l)
{
    return x->lstart[k][l + 1] > x->lstart[k][l];
}

static void occ_del(csim_setidx *x, uint32_t s, uint32_t k)
{
    for (uint32_t i = 0; i < x->nocc[s];)
        if (x->occ[s][i].k == k)
            x->occ[s][i] = x->occ[s][--x->nocc[s]];
        else
            i++;
}

/* The first of the sorted p[0..e) at or after v (e if none). */
static const uint32_t *first_from(const uint32_t *p, const uint32_t *e,
                                  uint32_t v)
{
    while (p < e) {
        const uint32_t *mid = p + (e - p) / 2;
        if (*mid < v)
            p = mid + 1;
        else
            e = mid;
    }
    return p;
}

/* The merge of one set's lists (the static one and nl unit-line cursors,
 * tm/te/hv/ln): appends to buf[nb..] every access before time lim, in time
 * order, and returns the new end. A line again right after itself in its
 * set is a hit that changes nothing under every policy (LRU: already most
 * recent; FIFO and random: hits leave the set alone; tree-PLRU: the same
 * bits set again), so it is left out; never across a call (a workload's
 * or a warm part's start), nor a read that never fills (CSIM_NOALLOC: a
 * miss stays a miss). A unit line's stretch is one line: one entry. */
static size_t merge_to(csim_setidx *x, unsigned nl, size_t *spp, size_t se,
                       uint32_t lim, size_t nb)
{
    const uint32_t **tm = x->tm, **te = x->te;
    const uint32_t *ln = x->ln;
    uint32_t *hv = x->hv;
    size_t sp = *spp;
    uint32_t last = UINT32_MAX;
    for (;;) {
        /* The earliest next access among the lists, and the next one
         * after it in another list. Accesses of one time are one run, of
         * the static list or of one unit: a unit's run that reaches a set
         * twice (longer than a way) touches its lines in address order. */
        uint32_t best = UINT32_MAX, sec = UINT32_MAX, line = 0;
        int who = -1;
        if (sp < se) {
            best = x->stime[sp];
            line = x->sline[sp];
        }
        for (unsigned i = 0; i < nl; i++) {
            uint32_t v = hv[i];
            if (v < best || (v == best && who >= 0 && ln[i] < line)) {
                sec = best;
                best = v;
                line = ln[i];
                who = (int)i;
            } else if (v < sec) {
                sec = v;
            }
        }
        if (best >= lim)
            break;
        /* That list's accesses before the other lists' next one (and lim)
         * go in one stretch. */
        uint32_t stop = sec < lim ? sec : lim;
        if (who < 0) {
            do {
                uint32_t l = x->sline[sp++];
                if (l != last || (l & CSIM_NOALLOC))
                    x->buf[nb++] = l;
                last = l;
            } while (sp < se && x->stime[sp] < stop);
        } else {
            if (line != last)
                x->buf[nb++] = line;
            last = line;
            /* Gallop to the first access at or after stop. */
            const uint32_t *p = tm[who] + 1, *e = te[who];
            size_t step = 1;
            while (p + step <= e && p[step - 1] < stop) {
                p += step;
                step *= 2;
            }
            p = first_from(p, p + step <= e ? p + step - 1 : e, stop);
            tm[who] = p;
            hv[who] = p < e ? *p : UINT32_MAX;
        }
    }
    *spp = sp;
    return nb;
}

/* Under LRU a set's state is its ways' most recently used distinct lines
 * in their order, whatever came before them: instead of merging a cold
 * part, the last x->ways distinct lines before lim (among the static
 * list and the unit cursors) go to buf[nb..], oldest first, and every
 * cursor moves to lim. The set then holds what the whole part would have
 * left in it, in the same order. Returns the new end of buf. */
static size_t lru_skip_to(csim_setidx *x, unsigned nl, size_t *spp,
                          size_t se, uint32_t lim, size_t nb)
{
    const uint32_t **tm = x->tm, **te = x->te;
    uint32_t *hv = x->hv;
    unsigned w = x->ways;
    size_t nc = 0;
    sx_cand *c = x->cand;
    /* The static list: its last w distinct lines before lim, newest
     * first (an earlier place in the list on the same time is older). */
    size_t lo = (size_t)(first_from(x->stime + *spp, x->stime + se, lim) -
                         x->stime);
    for (size_t q = lo; q > *spp && nc < w; q--) {
        uint32_t l = x->sline[q - 1];
        size_t j = 0;
        while (j < nc && c[j].line != l)
            j++;
        if (j == nc) {
            /* (the count after this one: the order the plans were made
             * with) */
            c[nc] = (sx_cand){x->stime[q - 1], -(int64_t)(nc + 1), l};
            nc++;
        }
    }
    *spp = lo;
    /* Each unit line's last access before lim (one time is one run: of
     * the static list, or of one unit, whose lines the merge takes in
     * address order). */
    for (unsigned i = 0; i < nl; i++) {
        if (hv[i] >= lim)
            continue;
        const uint32_t *e = te[i], *p = first_from(tm[i], e, lim);
        c[nc++] = (sx_cand){p[-1], (int64_t)x->ln[i] + 1, x->ln[i]};
        tm[i] = p;
        hv[i] = p < e ? *p : UINT32_MAX;
    }
    /* Newest first; the w newest distinct lines stay (a line in two
     * lists counts once, at its newest access). */
    for (size_t i = 1; i < nc; i++) {
        sx_cand v = c[i];
        size_t j = i;
        while (j > 0 && (c[j - 1].t < v.t ||
                         (c[j - 1].t == v.t && c[j - 1].pri < v.pri))) {
            c[j] = c[j - 1];
            j--;
        }
        c[j] = v;
    }
    size_t nk = 0;
    for (size_t i = 0; i < nc && nk < w; i++) {
        size_t j = 0;
        while (j < nk && c[j].line != c[i].line)
            j++;
        if (j == nk)
            c[nk++] = c[i];
    }
    while (nk)
        x->buf[nb++] = c[--nk].line;
    return nb;
}

/* Misses of lines b[0..n) through one set of a 2-way LRU cache holding
 * *t0 (most recent) and *t1 (UINT32_MAX: empty), none of them CSIM_NOALLOC
 * (the index replays those through the cache model). */
static uint64_t lru2_run(const uint32_t *b, size_t n, uint32_t *t0,
                         uint32_t *t1)
{
    uint32_t a = *t0, c = *t1;
    uint64_t miss = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t l = b[i];
        if (l == a)
            continue;
        miss += l != c;
        c = a;
        a = l;
    }
    *t0 = a;
    *t1 = c;
    return miss;
}

/* Simulates one set: a merge by time of its static list and the lists of
 * the unit lines in it into one list of lines, then that list through the
 * target's cache model (the set alone: sets are independent under every
 * policy), a workload at a time. -1 when out of memory. */
static double sim_set(csim_setidx *x, uint32_t s)
{
    const uint32_t **tm = x->tm, **te = x->te;
    uint32_t *ln = x->ln, *hv = x->hv;
    unsigned nl = 0;
    size_t need = x->sstart[s + 1] - x->sstart[s];
    for (uint32_t i = 0; i < x->nocc[s] && nl < x->nscratch; i++) {
        const sx_occ *o = &x->occ[s][i];
        tm[nl] = x->ltime[o->k] + x->lstart[o->k][o->l];
        te[nl] = x->ltime[o->k] + x->lstart[o->k][o->l + 1];
        ln[nl] = x->base[o->k] + o->l;
        need += (size_t)(te[nl] - tm[nl]);
        if (tm[nl] < te[nl]) {
            hv[nl] = *tm[nl];
            nl++;
        }
    }
    if (need > x->cbuf) {
        uint32_t *b = realloc(x->buf, need * sizeof *b);
        if (!b)
            return -1;
        x->buf = b;
        x->cbuf = need;
    }
    size_t sp = x->sstart[s], se = x->sstart[s + 1];
    double miss = 0;
    for (unsigned k = 0; k < x->nwork; k++) {
        /* The workload's lines from buf[0]: its cold part to b, its warm
         * part to e (the lists hold each workload's accesses one workload
         * after the other). */
        size_t b;
        uint32_t warm = x->wwarm[k];
        uint32_t end = k + 1 < x->nwork ? x->wstart[k + 1] : UINT32_MAX;
        if (x->lru)
            b = lru_skip_to(x, nl, &sp, se, warm, 0);
        else
            b = merge_to(x, nl, &sp, se, warm, 0);
        size_t e = merge_to(x, nl, &sp, se, end, b);
        if (!e)
            continue;
        uint64_t m;
        if (x->lru2) {
            uint32_t t0 = UINT32_MAX, t1 = UINT32_MAX;
            lru2_run(x->buf, b, &t0, &t1);
            m = lru2_run(x->buf + b, e - b, &t0, &t1);
        } else {
            csim_cache_flush_set(x->c, s);
            csim_cache_run(x->c, x->buf, b);
            m = csim_cache_run(x->c, x->buf + b, e - b);
        }
        miss += (double)m * x->wscale[k];
    }
    return miss;
}

static void free_unit(csim_setidx *x, size_t k)
{
    free(x->lstart[k]);
    free(x->ltime[k]);
    free(x->memo_ver[k]);
    free(x->memo_val[k]);
    x->lstart[k] = NULL;
    x->ltime[k] = NULL;
    x->memo_ver[k] = NULL;
    x->memo_val[k] = NULL;
}

void csim_setidx_free(csim_setidx *x)
{
    if (!x)
        return;
    for (size_t k = 0; x->lstart && k < x->nunits; k++)
        free_unit(x, k);
    for (uint32_t s = 0; x->occ && s < x->sets; s++)
        free(x->occ[s]);
    void *all[] = {x->nlines, x->lstart, x->ltime, x->base, x->sstart,
                   x->stime, x->sline, x->occ, x->nocc, x->cocc, x->miss,
                   x->touched, x->touched_old, x->touched_ver, x->sver,
                   x->memo_ver, x->memo_val, x->tval, x->sdl, x->sdstart,
                   x->mark, x->enter, x->tm, x->te, x->ln, x->hv, x->cand,
                   x->buf};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
    csim_cache_free(x->c);
    csim_setidx_map_free(x);
    if (x->walk.drop)
        x->walk.drop(x->walk.arg);
    free(x);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Each set's distinct static lines, sorted. */
static int static_lines(csim_setidx *x)
{
    size_t n = x->sstart[x->sets];
    x->sdl = malloc((n ? n : 1) * sizeof *x->sdl);
    x->sdstart = malloc((x->sets + 1) * sizeof *x->sdstart);
    if (!x->sdl || !x->sdstart)
        return -1;
    size_t o = 0;
    for (uint32_t s = 0; s < x->sets; s++) {
        x->sdstart[s] = o;
        size_t a = x->sstart[s], e = x->sstart[s + 1];
        memcpy(x->sdl + o, x->sline + a, (e - a) * sizeof *x->sdl);
        qsort(x->sdl + o, e - a, sizeof *x->sdl, cmp_u32);
        size_t w = o;
        for (size_t i = o; i < o + (e - a); i++)
            if (w == o || x->sdl[w - 1] != x->sdl[i])
                x->sdl[w++] = x->sdl[i];
        o = w;
    }
    x->sdstart[x->sets] = o;
    return 0;
}

/* Is line (in set s) already in that set's stream: a static line or
 * another unit's line at the same address as unit k's? */
static int line_present(const csim_setidx *x, uint32_t s, uint32_t line,
                        size_t k)
{
    const uint32_t *e = x->sdl + x->sdstart[s + 1],
                   *p = first_from(x->sdl + x->sdstart[s], e, line);
    if (p < e && *p == line)
        return 1;
    for (uint32_t i = 0; i < x->nocc[s]; i++) {
        const sx_occ *o = &x->occ[s][i];
        if (o->k != k && x->base[o->k] + o->l == line)
            return 1;
    }
    return 0;
}

/* The walk's two passes: pass 0 counts each unit line's and each set's
 * accesses, pass 1 stores them (lstart / sstart advance as they fill). */
typedef struct fill_ctx {
    csim_setidx *x;
    int pass;
    size_t only;   /* CSIM_STATIC: every access; else that unit's only */
    int bad;       /* a unit's access outside its lines or not filling */
} fill_ctx;

static int fill(void *arg, uint32_t t, uint32_t first, uint32_t last,
                size_t unit)
{
    fill_ctx *f = arg;
    csim_setidx *x = f->x;
    if (f->only != CSIM_STATIC && unit != f->only)
        return 0;
    uint32_t nf = first & CSIM_NOALLOC;
    if (unit != CSIM_STATIC) {
        uint32_t k = (uint32_t)unit, b = x->base[k];
        first &= CSIM_LINE_MASK;
        if (unit >= x->nunits || nf || first < b ||
            last - b >= x->nlines[k]) {
            f->bad = 1;
            return -1;
        }
        for (uint32_t line = first; line <= last; line++) {
            uint32_t l = line - b;
            if (f->pass == 0)
                x->lstart[k][l + 1]++;
            else
                x->ltime[k][x->lstart[k][l]++] = t;
        }
        return 0;
    }
    for (uint32_t line = first & CSIM_LINE_MASK; line <= last; line++) {
        uint32_t s = line & x->mask;
        if (f->pass == 0) {
            x->sstart[s + 1]++;
        } else {
            x->stime[x->sstart[s]] = t;
            x->sline[x->sstart[s]++] = line | nf;
        }
    }
    return 0;
}

/* Unit k's empty lists for its nlines[k] lines: -1 when out of memory. */
static int unit_alloc(csim_setidx *x, size_t k)
{
    uint32_t n = x->nlines[k];
    x->lstart[k] = calloc((size_t)n + 2, sizeof **x->lstart);
    x->memo_ver[k] = calloc(n ? n : 1, sizeof **x->memo_ver);
    x->memo_val[k] = malloc((n ? n : 1) * sizeof **x->memo_val);
    return x->lstart[k] && x->memo_ver[k] && x->memo_val[k] ? 0 : -1;
}

/* After a counting pass: each line's start in the times of unit k, and
 * room for them. -1 when out of memory. */
static int unit_counted(csim_setidx *x, size_t k)
{
    uint32_t n = x->nlines[k];
    for (uint32_t l = 0; l < n; l++)
        x->lstart[k][l + 1] += x->lstart[k][l];
    x->ltime[k] = malloc(((size_t)x->lstart[k][n] + 1) * sizeof **x->ltime);
    return x->ltime[k] ? 0 : -1;
}

/* After the filling pass, which advanced each line's start to the next
 * one's: shift them back. */
static void unit_filled(csim_setidx *x, size_t k)
{
    for (uint32_t l = x->nlines[k]; l > 0; l--)
        x->lstart[k][l] = x->lstart[k][l - 1];
    x->lstart[k][0] = 0;
}

/* Reads unit k's accesses from the walk into fresh lists (its lines:
 * nlines[k] from base[k]); its sets' occupancy is not touched. */
static int load_unit(csim_setidx *x, size_t k, cp_err *err)
{
    free_unit(x, k);
    if (unit_alloc(x, k) < 0)
        return cp_seterr(err, "out of memory (set index)");
    fill_ctx f = {x, 0, k, 0};
    if (x->walk.run(x->walk.arg, k, fill, &f) < 0)
        goto bad;
    if (unit_counted(x, k) < 0)
        return cp_seterr(err, "out of memory (set index)");
    f.pass = 1;
    if (x->walk.run(x->walk.arg, k, fill, &f) < 0)
        goto bad;
    unit_filled(x, k);
    return 0;
bad:
    if (f.bad)
        return cp_seterr(err, "set index: an access of unit %zu outside "
                         "its %u lines or through a non-allocating alias",
                         k, x->nlines[k]);
    return cp_seterr(err, "out of memory (set index)");
}

/* Room for one cursor per unit line (and the LRU shortcut's candidates). */
static int scratch(csim_setidx *x)
{
    size_t nall = 0;
    for (size_t k = 0; k < x->nunits; k++)
        nall += (size_t)x->nlines[k] + 2;
    if (nall <= x->nscratch && x->tm)
        return 0;
    x->nscratch = nall ? nall : 1;
    free(x->tm);
    free(x->te);
    free(x->ln);
    free(x->hv);
    free(x->cand);
    x->tm = malloc(x->nscratch * sizeof *x->tm);
    x->te = malloc(x->nscratch * sizeof *x->te);
    x->ln = malloc(x->nscratch * sizeof *x->ln);
    x->hv = malloc(x->nscratch * sizeof *x->hv);
    x->cand = malloc((x->nscratch + MAXWAYS) * sizeof *x->cand);
    return x->tm && x->te && x->ln && x->hv && x->cand ? 0 : -1;
}

csim_setidx *csim_setidx_build(const tgt_cache *g, uint64_t seed,
                               const csim_walk *w, size_t nunits,
                               const uint32_t *first_line,
                               const uint32_t *nlines, cp_err *err)
{
    if (w->nwork < 1 || w->nwork > CSIM_MAX_WORK) {
        if (w->drop)
            w->drop(w->arg);
        return cp_seterr(err, "set index: %u workloads (1 to %d)", w->nwork,
                         CSIM_MAX_WORK), NULL;
    }
    csim_setidx *x = calloc(1, sizeof *x);
    if (!x) {
        if (w->drop)
            w->drop(w->arg);
        return cp_seterr(err, "out of memory"), NULL;
    }
    x->walk = *w;
    if (!(x->c = csim_cache_new(g, seed, err))) {
        csim_setidx_free(x);
        return NULL;
    }
    x->sets = csim_cache_nsets(x->c);
    x->mask = x->sets - 1;
    x->ls = log2u(g->line);
    x->ways = g->ways;
    /* A read that never fills breaks the shortcut's premise (a set holds
     * its last distinct lines) and the early stop's (adding lines to a set
     * never lowers its misses): without them every access is replayed. */
    x->lru = g->repl == TGT_REPL_LRU && x->ways <= MAXWAYS && !w->nofill;
    x->lru2 = x->lru && x->ways == 2;
    x->nunits = nunits;
    x->nwork = w->nwork;
    for (unsigned k = 0; k < w->nwork; k++) {
        x->wstart[k] = w->start[k];
        x->wwarm[k] = w->warm[k];
        x->wscale[k] = w->scale[k];
    }
    size_t nu = nunits ? nunits : 1;
    x->nlines = calloc(nu, sizeof *x->nlines);
    x->lstart = calloc(nu, sizeof *x->lstart);
    x->ltime = calloc(nu, sizeof *x->ltime);
    x->memo_ver = calloc(nu, sizeof *x->memo_ver);
    x->memo_val = calloc(nu, sizeof *x->memo_val);
    x->base = calloc(nu, sizeof *x->base);
    x->sstart = calloc(x->sets + 1, sizeof *x->sstart);
    x->occ = calloc(x->sets, sizeof *x->occ);
    x->nocc = calloc(x->sets, sizeof *x->nocc);
    x->cocc = calloc(x->sets, sizeof *x->cocc);
    x->miss = calloc(x->sets, sizeof *x->miss);
    x->touched = malloc(2 * x->sets * sizeof *x->touched);
    x->touched_old = malloc(2 * x->sets * sizeof *x->touched_old);
    x->touched_ver = malloc(2 * x->sets * sizeof *x->touched_ver);
    x->sver = malloc(x->sets * sizeof *x->sver);
    x->tval = malloc(2 * x->sets * sizeof *x->tval);
    x->mark = calloc(x->sets, 1);
    x->enter = calloc(x->sets, 1);
    if (!x->nlines || !x->lstart || !x->ltime || !x->memo_ver ||
        !x->memo_val || !x->base || !x->sstart || !x->occ || !x->nocc ||
        !x->cocc || !x->miss || !x->touched || !x->touched_old ||
        !x->tval || !x->mark || !x->enter || !x->touched_ver || !x->sver)
        goto oom;
    for (uint32_t s = 0; s < x->sets; s++)
        x->sver[s] = s + 1;
    x->vnext = (uint64_t)x->sets + 1;
    for (size_t k = 0; k < nunits; k++) {
        x->base[k] = first_line[k];
        x->nlines[k] = nlines[k];
        if (unit_alloc(x, k) < 0)
            goto oom;
    }
    if (scratch(x) < 0)
        goto oom;
    /* Pass 0: count; pass 1: fill. */
    for (int pass = 0; pass < 2; pass++) {
        fill_ctx f = {x, pass, CSIM_STATIC, 0};
        if (w->run(w->arg, CSIM_STATIC, fill, &f) < 0) {
            if (f.bad) {
                cp_seterr(err, "set index: an access of a unit outside its "
                          "lines or through a non-allocating alias");
                csim_setidx_free(x);
                return NULL;
            }
            goto oom;
        }
        if (pass == 0) {
            for (uint32_t s = 0; s < x->sets; s++)
                x->sstart[s + 1] += x->sstart[s];
            x->stime = malloc((x->sstart[x->sets] + 1) * sizeof *x->stime);
            x->sline = malloc((x->sstart[x->sets] + 1) * sizeof *x->sline);
            if (!x->stime || !x->sline)
                goto oom;
            for (size_t k = 0; k < nunits; k++)
                if (unit_counted(x, k) < 0)
                    goto oom;
        } else {
            /* The fill advanced each start to the next one: shift back. */
            for (uint32_t s = x->sets; s > 0; s--)
                x->sstart[s] = x->sstart[s - 1];
            x->sstart[0] = 0;
            for (size_t k = 0; k < nunits; k++)
                unit_filled(x, k);
        }
    }
    if (x->lru && static_lines(x) < 0)
        goto oom;
    for (size_t k = 0; k < nunits; k++)
        for (uint32_t l = 0; l < x->nlines[k]; l++)
            if (line_used(x, k, l) &&
                occ_add(x, (x->base[k] + l) & x->mask, (uint32_t)k, l) < 0)
                goto oom;
    x->total = 0;
    for (uint32_t s = 0; s < x->sets; s++) {
        if ((x->miss[s] = sim_set(x, s)) < 0)
            goto oom;
        x->total += x->miss[s];
    }
    return x;
oom:
    csim_setidx_free(x);
    return cp_seterr(err, "out of memory (set index)"), NULL;
}

/* The running total moves by differences of weighted set counts, and
 * rounding leaves it a hair below 0 once every set is down to no miss
 * (-1e-13 at 16 KiB on a Zephyr echo server): a count of misses is never
 * negative. */
static double nonneg(double v)
{
    return v > 0 ? v : 0;
}

double csim_setidx_total(const csim_setidx *x)
{
    return nonneg(x->total);
}

/* Marks set s as changed: 1 lines enter it, 2 a line leaves it. */
static void touch(csim_setidx *x, uint32_t s, unsigned char kind)
{
    if (x->mark[s]) {
        if (kind > x->mark[s])
            x->mark[s] = kind;
        return;
    }
    x->mark[s] = kind;
    x->touched_old[x->ntouched] = x->miss[s];
    x->touched_ver[x->ntouched] = x->sver[s];
    x->touched[x->ntouched++] = s;
}

/* A change starts with no set marked (the last one stays as it is). */
static void begin_change(csim_setidx *x)
{
    for (size_t i = 0; i < x->ntouched; i++)
        x->mark[x->touched[i]] = x->enter[x->touched[i]] = 0;
    x->ntouched = 0;
}

/* Re-simulates the sets a change marked into *total; -1 when out of
 * memory. The sets a line left go first, then the ones lines only
 * entered: under LRU adding a line's accesses to a set never turns another
 * access into a hit (a stack algorithm: it only lengthens reuse
 * distances), so each of those can only add misses, and once the total so
 * far passes limit the change is given up there, with that partial total
 * (above limit, below the true one; undo the change). The sets' figures
 * are taken in the order they were marked, so a change that is not given
 * up adds up exactly as one pass would. */
static int resim_touched(csim_setidx *x, double limit, double *total)
{
    double part = 0;
    /* A move of one unit alone: the sets it only leaves are the memo's. */
    int alone = x->nundo == 1;
    size_t mk = x->undo_k[0];
    uint32_t mb = x->undo_base[0];
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < x->ntouched; i++) {
            uint32_t s = x->touched[i];
            if ((x->mark[s] == 2) != (pass == 0))
                continue;
            double v;
            if (alone && !x->enter[s]) {
                uint32_t g = (s - mb) & x->mask;
                if (x->memo_ver[mk][g] == x->touched_ver[i]) {
                    v = x->memo_val[mk][g];
                } else if ((v = sim_set(x, s)) >= 0) {
                    x->memo_ver[mk][g] = x->touched_ver[i];
                    x->memo_val[mk][g] = v;
                }
            } else {
                v = sim_set(x, s);
            }
            if (v < 0)
                return -1;
            x->tval[i] = v;
            part += v - x->miss[s];
            if (pass && x->lru && x->total + part > limit) {
                *total = nonneg(x->total + part);
                return 0;
            }
        }
    for (size_t i = 0; i < x->ntouched; i++) {
        uint32_t s = x->touched[i];
        x->total += x->tval[i] - x->miss[s];
        x->miss[s] = x->tval[i];
        x->sver[s] = x->vnext++;
    }
    *total = csim_setidx_total(x);
    return 0;
}

/* Takes unit k out of the sets of its used lines (marking them) and puts
 * it in at line nb (marking those). */
static int relocate(csim_setidx *x, size_t k, uint32_t nb)
{
    uint32_t ob = x->base[k];
    for (uint32_t l = 0; l < x->nlines[k]; l++)
        if (line_used(x, k, l)) {
            touch(x, (ob + l) & x->mask, 2);
            touch(x, (nb + l) & x->mask, 1);
            x->enter[(nb + l) & x->mask] = 1;
        }
    for (size_t i = 0; i < x->ntouched; i++)
        occ_del(x, x->touched[i], (uint32_t)k);
    x->base[k] = nb;
    for (uint32_t l = 0; l < x->nlines[k]; l++)
        if (line_used(x, k, l)) {
            uint32_t s = (nb + l) & x->mask;
            /* A line already in the set's stream can turn misses into
             * hits: that set is simulated in full (resim_touched). */
            if (x->lru && x->mark[s] == 1 && line_present(x, s, nb + l, k))
                x->mark[s] = 2;
            if (occ_add(x, s, (uint32_t)k, l) < 0)
                return -1;
        }
    return 0;
}

int csim_setidx_try(csim_setidx *x, size_t k, uint32_t addr, size_t k2,
                    uint32_t addr2, double limit, double *total, cp_err *err)
{
    unsigned nm = k2 == SIZE_MAX ? 1 : 2;
    size_t ks[2] = {k, k2};
    uint32_t as[2] = {addr, addr2};
    if (x->broken)
        return cp_seterr(err, "set index: unusable after a failed reload");
    if (k >= x->nunits || (nm == 2 && (k2 >= x->nunits || k2 == k)))
        return cp_seterr(err, "set index: no unit %zu", k >= x->nunits ? k
                                                                       : k2);
    begin_change(x);
    x->nundo = 0;
    for (unsigned q = 0; q < nm; q++) {
        x->undo_k[q] = ks[q];
        x->undo_base[q] = x->base[ks[q]];
        x->nundo = q + 1;
        if (relocate(x, ks[q], as[q] >> x->ls) < 0)
            return cp_seterr(err, "out of memory (set index)");
    }
    if (resim_touched(x, limit, total) < 0)
        return cp_seterr(err, "out of memory (set index)");
    return 0;
}

int csim_setidx_remove(csim_setidx *x, size_t k, double *total, cp_err *err)
{
    if (x->broken)
        return cp_seterr(err, "set index: unusable after a failed reload");
    if (k >= x->nunits)
        return cp_seterr(err, "set index: no unit %zu", k);
    begin_change(x);
    x->undo_k[0] = k;
    x->undo_base[0] = x->base[k];
    x->nundo = 1;
    for (uint32_t l = 0; l < x->nlines[k]; l++)
        if (line_used(x, k, l))
            touch(x, (x->base[k] + l) & x->mask, 2);
    for (size_t i = 0; i < x->ntouched; i++)
        occ_del(x, x->touched[i], (uint32_t)k);
    if (resim_touched(x, HUGE_VAL, total) < 0)
        return cp_seterr(err, "out of memory (set index)");
    return 0;
}

void csim_setidx_undo(csim_setidx *x)
{
    if (!x->nundo)
        return;
    /* The touched sets are those of both placements of every moved unit:
     * take the units out of them and put them back where they were. Room
     * for these entries was there before the move. */
    for (unsigned q = 0; q < x->nundo; q++) {
        size_t k = x->undo_k[q];
        for (size_t i = 0; i < x->ntouched; i++)
            occ_del(x, x->touched[i], (uint32_t)k);
    }
    for (unsigned q = x->nundo; q-- > 0;) {
        size_t k = x->undo_k[q];
        x->base[k] = x->undo_base[q];
    }
    for (unsigned q = 0; q < x->nundo; q++) {
        size_t k = x->undo_k[q];
        for (uint32_t l = 0; l < x->nlines[k]; l++)
            if (line_used(x, k, l))
                (void)occ_add(x, (x->base[k] + l) & x->mask, (uint32_t)k, l);
    }
    for (size_t i = 0; i < x->ntouched; i++) {
        uint32_t s = x->touched[i];
        x->total += x->touched_old[i] - x->miss[s];
        x->miss[s] = x->touched_old[i];
        x->sver[s] = x->touched_ver[i];
    }
    x->nundo = 0;
}

int csim_setidx_reload(csim_setidx *x, size_t k, uint32_t first_line,
                       uint32_t nlines, cp_err *err)
{
    if (k >= x->nunits)
        return cp_seterr(err, "set index: no unit %zu", k);
    begin_change(x);
    x->nundo = 0; /* not undone: reload again */
    for (uint32_t l = 0; l < x->nlines[k]; l++)
        if (line_used(x, k, l))
            touch(x, (x->base[k] + l) & x->mask, 2);
    for (size_t i = 0; i < x->ntouched; i++)
        occ_del(x, x->touched[i], (uint32_t)k);
    x->base[k] = first_line;
    x->nlines[k] = nlines;
    if (load_unit(x, k, err) < 0)
        goto fail;
    for (uint32_t l = 0; l < nlines; l++)
        if (line_used(x, k, l)) {
            uint32_t s = (first_line + l) & x->mask;
            touch(x, s, 2);
            if (occ_add(x, s, (uint32_t)k, l) < 0)
                goto oom;
        }
    double t;
    if (scratch(x) < 0 || resim_touched(x, HUGE_VAL, &t) < 0)
        goto oom;
    return 0;
oom:
    cp_seterr(err, "out of memory (set index)");
fail:
    /* The index no longer matches the walk: every call fails from now. */
    x->broken = 1;
    return -1;
}

double csim_setidx_set_total(const csim_setidx *x, uint32_t s)
{
    return s < x->sets ? nonneg(x->miss[s]) : 0;
}

size_t csim_setidx_pick(const csim_setidx *x, double r, uint64_t salt)
{
    /* Walk the sets by their misses (squared, to favour the worst). */
    double sum = 0;
    for (uint32_t s = 0; s < x->sets; s++)
        sum += x->miss[s] * x->miss[s];
    if (sum <= 0)
        return SIZE_MAX;
    double goal = r * sum, acc = 0;
    uint32_t s = 0;
    for (; s < x->sets; s++) {
        acc += x->miss[s] * x->miss[s];
        if (acc > goal)
            break;
    }
    if (s >= x->sets)
        s = x->sets - 1;
    if (!x->nocc[s])
        return SIZE_MAX;
    return x->occ[s][salt % x->nocc[s]].k;
}

double csim_setidx_misses_at(const csim_setidx *x, size_t k, uint32_t addr)
{
    uint32_t b = addr >> x->ls;
    double sum = 0;
    for (uint32_t l = 0; l < x->nlines[k]; l++)
        if (line_used(x, k, l))
            sum += x->miss[(b + l) & x->mask];
    return sum;
}
