#include "plan/incr.h"

#include "cache/cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The most ways the LRU shortcut of sim_set handles (more: every access
 * is simulated). */
#define PLAN_INCR_MAXWAYS 16

/* A line the LRU shortcut may leave in a set: its last access time, the
 * merge's order among accesses of the same time, the line. */
typedef struct skip_cand {
    uint32_t t;
    int64_t pri;
    uint32_t line;
} skip_cand;

typedef struct occ {
    uint32_t k;   /* hot unit */
    uint32_t l;   /* its line */
} occ;

struct plan_incr {
    const plan_model *m;
    uint32_t sets, mask, ls;
    unsigned ways;        /* the cache's ways */
    int lru;              /* LRU: a set's cold part is skipped (lru_skip_to) */
    csim_cache *c;        /* the target's cache; one set simulated at a time */
    /* Workloads, in stream time (indices into the model's zacc): each
     * starts with its set empty, counts misses from wwarm[k] on, each
     * weighted wscale[k]; wstart[nwork] ends the last. */
    unsigned nwork;
    size_t wstart[PLAN_MAX_WORK + 1], wwarm[PLAN_MAX_WORK];
    double wscale[PLAN_MAX_WORK];
    /* Scratch of sim_set: one cursor per hot line of a set. */
    const uint32_t **tm, **te;
    uint32_t *ln;
    uint32_t *hv;         /* each cursor's next time (UINT32_MAX: none) */
    skip_cand *cand;      /* lru_skip_to's: one per cursor and way */
    size_t nscratch;
    uint32_t *buf;        /* one set's lines in time order */
    size_t cbuf;
    size_t nhot;
    /* Per hot unit: lines, and the times each line is touched. */
    uint32_t *nlines;
    size_t **lstart;      /* nlines + 1 offsets into ltime */
    uint32_t **ltime;
    uint32_t *base;       /* start line of each hot unit */
    /* Per set: the accesses of everything else (time, line). */
    size_t *sstart;
    uint32_t *stime, *sline;
    /* Per set: hot lines in it. */
    occ **occ;
    uint32_t *nocc, *cocc;
    double *miss;         /* per set, counted misses */
    double total;
    /* Undo of the last move (one or two units). */
    size_t undo_k[2];
    uint32_t undo_base[2];
    unsigned nundo;
    uint32_t *touched;    /* sets re-simulated by the last move */
    double *touched_old;
    double *tval;         /* their new figures */
    /* Under LRU, per set: the distinct lines of its static list, sorted
     * (sdl from sdstart[s]), for telling whether a line entering it is new
     * there. */
    uint32_t *sdl;
    size_t *sdstart;
    unsigned char *mark;  /* per set: in touched[] (touch's kind) */
    unsigned char *enter; /* per set: a moved unit's line enters it */
    size_t ntouched;
    /* The sets' states: an id per set, new whenever a change to the set is
     * kept (undo puts the old one back), unique over all sets and states;
     * touched_ver holds the ids of the last change's sets as they were.
     * Per hot line (memo_off[k] + l): the figure of the set it occupied in
     * state memo_ver, without its unit, from an earlier move of that unit
     * alone (0: none), which a move of the unit alone from the same state
     * takes instead of simulating the set again. */
    uint64_t *sver, vnext;
    uint64_t *touched_ver;
    size_t *memo_off;
    uint64_t *memo_ver;
    double *memo_val;
};

static int occ_add(plan_incr *x, uint32_t s, uint32_t k, uint32_t l)
{
    if (x->nocc[s] == x->cocc[s]) {
        uint32_t n = x->cocc[s] ? x->cocc[s] * 2 : 4;
        occ *o = realloc(x->occ[s], n * sizeof *o);
        if (!o)
            return -1;
        x->occ[s] = o;
        x->cocc[s] = n;
    }
    x->occ[s][x->nocc[s]++] = (occ){k, l};
    return 0;
}

/* A line of a hot unit the planning iterations touch: the others never
 * enter a set's stream, so a move need not simulate their sets. */
static int line_used(const plan_incr *x, size_t k, uint32_t l)
{
    return x->lstart[k][l + 1] > x->lstart[k][l];
}

static void occ_del(plan_incr *x, uint32_t s, uint32_t k)
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

/* The merge of one set's lists (the static one and nl hot-line cursors,
 * tm/te/hv/ln): appends to buf[nb..] every access before time lim, in time
 * order, and returns the new end. A line again right after itself in its
 * set is a hit that changes nothing under every policy (LRU: already most
 * recent; FIFO and random: hits leave the set alone; tree-PLRU: the same
 * bits set again), so it is left out; never across a call (a workload's
 * or a warm part's start), nor a read that never fills (CSIM_NOALLOC: a
 * miss stays a miss). A hot line's stretch is one line: one entry. */
static size_t merge_to(plan_incr *x, unsigned nl, size_t *spp, size_t se,
                       uint32_t lim, size_t nb)
{
    const uint32_t **tm = x->tm, **te = x->te;
    const uint32_t *ln = x->ln;
    uint32_t *hv = x->hv;
    size_t sp = *spp;
    uint32_t last = UINT32_MAX;
    for (;;) {
        /* The earliest next access among the lists (the static one first
         * on a tie, then the lowest index), and the next one after it in
         * another list. */
        uint32_t best = UINT32_MAX, sec = UINT32_MAX, line = 0;
        int who = -1;
        if (sp < se) {
            best = x->stime[sp];
            line = x->sline[sp];
        }
        for (unsigned i = 0; i < nl; i++) {
            uint32_t v = hv[i];
            if (v < best) {
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
 * list and the hot cursors) go to buf[nb..], oldest first, and every
 * cursor moves to lim. The set then holds what the whole part would have
 * left in it, in the same order. Returns the new end of buf. */
static size_t lru_skip_to(plan_incr *x, unsigned nl, size_t *spp, size_t se,
                          uint32_t lim, size_t nb)
{
    const uint32_t **tm = x->tm, **te = x->te;
    uint32_t *hv = x->hv;
    unsigned w = x->ways;
    size_t nc = 0;
    skip_cand *c = x->cand;
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
            /* (the count after this one: what GCC made of the unsequenced
             * c[nc++] = {..., -nc, ...} this was, kept for the same plans) */
            c[nc] = (skip_cand){x->stime[q - 1], -(int64_t)(nc + 1), l};
            nc++;
        }
    }
    *spp = lo;
    /* Each hot line's last access before lim (the merge takes hot lines
     * after the static list on the same time, in index order). */
    for (unsigned i = 0; i < nl; i++) {
        if (hv[i] >= lim)
            continue;
        const uint32_t *e = te[i], *p = first_from(tm[i], e, lim);
        c[nc++] = (skip_cand){p[-1], (int64_t)i + 1, x->ln[i]};
        tm[i] = p;
        hv[i] = p < e ? *p : UINT32_MAX;
    }
    /* Newest first; the w newest distinct lines stay (a line in two
     * lists counts once, at its newest access). */
    for (size_t i = 1; i < nc; i++) {
        skip_cand v = c[i];
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

/* Simulates one set: a merge by time of its static list and the lists of
 * the hot lines in it into one list of lines, then that list through the
 * target's cache model (csim_cache_run on the set alone: sets are
 * independent under every policy), a workload at a time. */
static double sim_set(plan_incr *x, uint32_t s)
{
    const uint32_t **tm = x->tm, **te = x->te;
    uint32_t *ln = x->ln, *hv = x->hv;
    unsigned nl = 0;
    size_t need = x->sstart[s + 1] - x->sstart[s];
    for (uint32_t i = 0; i < x->nocc[s] && nl < x->nscratch; i++) {
        const occ *o = &x->occ[s][i];
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
         * part to e (the lists hold each workload's planning iterations
         * only, one after the other). */
        size_t b;
        uint32_t warm = (uint32_t)x->wwarm[k];
        uint32_t end = x->wstart[k + 1] == SIZE_MAX ? UINT32_MAX
                                                     : (uint32_t)x->wstart[k + 1];
        if (x->lru)
            b = lru_skip_to(x, nl, &sp, se, warm, 0);
        else
            b = merge_to(x, nl, &sp, se, warm, 0);
        size_t e = merge_to(x, nl, &sp, se, end, b);
        if (!e)
            continue;
        csim_cache_flush_set(x->c, s);
        csim_cache_run(x->c, x->buf, b);
        miss += (double)csim_cache_run(x->c, x->buf + b, e - b) * x->wscale[k];
    }
    return miss;
}

void plan_incr_free(plan_incr *x)
{
    if (!x)
        return;
    for (size_t k = 0; k < x->nhot; k++) {
        free(x->lstart ? x->lstart[k] : NULL);
        free(x->ltime ? x->ltime[k] : NULL);
    }
    for (uint32_t s = 0; x->occ && s < x->sets; s++)
        free(x->occ[s]);
    free(x->nlines);
    free(x->lstart);
    free(x->ltime);
    free(x->base);
    free(x->sstart);
    free(x->stime);
    free(x->sline);
    free(x->occ);
    free(x->nocc);
    free(x->cocc);
    free(x->miss);
    free(x->touched);
    free(x->touched_old);
    free(x->touched_ver);
    free(x->sver);
    free(x->memo_off);
    free(x->memo_ver);
    free(x->memo_val);
    free(x->tval);
    free(x->sdl);
    free(x->sdstart);
    free(x->mark);
    free(x->enter);
    free(x->tm);
    free(x->te);
    free(x->ln);
    free(x->hv);
    free(x->cand);
    free(x->buf);
    csim_cache_free(x->c);
    free(x);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Each set's distinct static lines, sorted. */
static int static_lines(plan_incr *x)
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
 * another hot unit's line at the same address than hot unit k's? */
static int line_present(const plan_incr *x, uint32_t s, uint32_t line,
                        size_t k)
{
    const uint32_t *e = x->sdl + x->sdstart[s + 1],
                   *p = first_from(x->sdl + x->sdstart[s], e, line);
    if (p < e && *p == line)
        return 1;
    for (uint32_t i = 0; i < x->nocc[s]; i++) {
        const occ *o = &x->occ[s][i];
        if (o->k != k && x->base[o->k] + o->l == line)
            return 1;
    }
    return 0;
}

plan_incr *plan_incr_new(const plan_model *m, const plan_layout *L,
                         const size_t *hot, size_t nhot, unsigned iters,
                         cp_err *err)
{
    plan_incr *x = calloc(1, sizeof *x);
    if (!x)
        return cp_seterr(err, "out of memory"), NULL;
    if (plan_model_compress((plan_model *)m) < 0) {
        free(x);
        return cp_seterr(err, "out of memory"), NULL;
    }
    x->m = m;
    x->sets = m->sets;
    x->mask = m->sets - 1;
    x->ls = m->line_shift;
    x->ways = m->cache.ways;
    /* A read that never fills breaks the shortcut's premise (a set holds
     * its last distinct lines) and the early stop's (adding lines to a set
     * never lowers its misses): without them every access is replayed. */
    x->lru = m->cache.repl == TGT_REPL_LRU && x->ways <= PLAN_INCR_MAXWAYS &&
             !m->nnofill;
    x->nhot = nhot;
    if (!(x->c = csim_cache_new(&m->cache, m->cache_seed, err))) {
        free(x);
        return NULL;
    }
    x->nwork = m->nwork;
    for (unsigned k = 0; k < m->nwork; k++) {
        const plan_work *w = &m->work[k];
        x->wstart[k] = m->ziter_start[w->first];
        x->wwarm[k] = m->ziter_start[plan_work_warm(m, k, iters)];
        x->wscale[k] = plan_work_scale(m, k, iters);
    }
    x->wstart[m->nwork] = SIZE_MAX;
    uint32_t *kof = malloc((m->nunits ? m->nunits : 1) * sizeof *kof);
    x->nlines = calloc(nhot ? nhot : 1, sizeof *x->nlines);
    x->lstart = calloc(nhot ? nhot : 1, sizeof *x->lstart);
    x->ltime = calloc(nhot ? nhot : 1, sizeof *x->ltime);
    x->base = calloc(nhot ? nhot : 1, sizeof *x->base);
    x->sstart = calloc(x->sets + 1, sizeof *x->sstart);
    x->occ = calloc(x->sets, sizeof *x->occ);
    x->nocc = calloc(x->sets, sizeof *x->nocc);
    x->cocc = calloc(x->sets, sizeof *x->cocc);
    x->miss = calloc(x->sets, sizeof *x->miss);
    x->touched = malloc(2 * x->sets * sizeof *x->touched);
    x->touched_old = malloc(2 * x->sets * sizeof *x->touched_old);
    x->touched_ver = malloc(2 * x->sets * sizeof *x->touched_ver);
    x->sver = malloc(x->sets * sizeof *x->sver);
    x->memo_off = malloc((nhot + 1) * sizeof *x->memo_off);
    x->tval = malloc(2 * x->sets * sizeof *x->tval);
    x->mark = calloc(x->sets, 1);
    x->enter = calloc(x->sets, 1);
    size_t nall = 0;
    for (size_t k = 0; k < nhot; k++)
        nall += (m->units[hot[k]].size >> x->ls) + 2;
    x->nscratch = nall ? nall : 1;
    x->tm = malloc(x->nscratch * sizeof *x->tm);
    x->te = malloc(x->nscratch * sizeof *x->te);
    x->ln = malloc(x->nscratch * sizeof *x->ln);
    x->hv = malloc(x->nscratch * sizeof *x->hv);
    x->cand = malloc((x->nscratch + PLAN_INCR_MAXWAYS) * sizeof *x->cand);
    if (!x->tm || !x->te || !x->ln || !x->hv || !x->cand || !kof || !x->nlines || !x->lstart || !x->ltime || !x->base ||
        !x->sstart || !x->occ || !x->nocc || !x->cocc || !x->miss ||
        !x->touched || !x->touched_old || !x->tval || !x->mark ||
        !x->enter || !x->touched_ver ||
        !x->sver || !x->memo_off)
        goto fail;
    x->memo_off[0] = 0;
    for (uint32_t s = 0; s < x->sets; s++)
        x->sver[s] = s + 1;
    x->vnext = (uint64_t)x->sets + 1;
    for (size_t i = 0; i < m->nunits; i++)
        kof[i] = UINT32_MAX;
    for (size_t k = 0; k < nhot; k++) {
        size_t u = hot[k];
        kof[u] = (uint32_t)k;
        x->base[k] = L->addr[u] >> x->ls;
        uint32_t end = (L->addr[u] + m->units[u].size + (1u << x->ls) - 1) >> x->ls;
        x->nlines[k] = end - x->base[k];
        x->lstart[k] = calloc(x->nlines[k] + 2, sizeof **x->lstart);
        if (!x->lstart[k])
            goto fail;
        x->memo_off[k + 1] = x->memo_off[k] + x->nlines[k];
    }
    x->memo_ver = calloc(x->memo_off[nhot] ? x->memo_off[nhot] : 1,
                         sizeof *x->memo_ver);
    x->memo_val = malloc((x->memo_off[nhot] ? x->memo_off[nhot] : 1) *
                         sizeof *x->memo_val);
    if (!x->memo_ver || !x->memo_val)
        goto fail;
    /* Pass 1: count; pass 2: fill. Each workload's planning iterations. */
    for (int pass = 0; pass < 2; pass++) {
      for (unsigned wk = 0; wk < m->nwork; wk++) {
        const plan_work *w = &m->work[wk];
        size_t t_end = m->ziter_start[w->first + plan_work_iters(m, wk, iters)];
        for (size_t t = x->wstart[wk]; t < t_end; t++) {
            const plan_acc *a = &m->zacc[t];
            uint32_t l0, l1;
            if (!plan_acc_lines(m, L, a, &l0, &l1))
                continue;
            uint32_t k = a->unit < m->nunits ? kof[a->unit] : UINT32_MAX;
            uint32_t nf = l0 & CSIM_NOALLOC;
            for (uint32_t line = l0 & CSIM_LINE_MASK; line <= l1; line++) {
                if (k != UINT32_MAX) {
                    uint32_t l = line - x->base[k];
                    if (pass == 0)
                        x->lstart[k][l + 1]++;
                    else
                        x->ltime[k][x->lstart[k][l]++] = (uint32_t)t;
                } else {
                    uint32_t s = line & x->mask;
                    if (pass == 0) {
                        x->sstart[s + 1]++;
                    } else {
                        x->stime[x->sstart[s]] = (uint32_t)t;
                        x->sline[x->sstart[s]++] = line | nf;
                    }
                }
            }
        }
      }
        if (pass == 0) {
            for (uint32_t s = 0; s < x->sets; s++)
                x->sstart[s + 1] += x->sstart[s];
            x->stime = malloc((x->sstart[x->sets] + 1) * sizeof *x->stime);
            x->sline = malloc((x->sstart[x->sets] + 1) * sizeof *x->sline);
            if (!x->stime || !x->sline)
                goto fail;
            for (size_t k = 0; k < nhot; k++) {
                for (uint32_t l = 0; l < x->nlines[k]; l++)
                    x->lstart[k][l + 1] += x->lstart[k][l];
                x->ltime[k] = malloc((x->lstart[k][x->nlines[k]] + 1) *
                                     sizeof **x->ltime);
                if (!x->ltime[k])
                    goto fail;
            }
        } else {
            /* The fill advanced each start to the next one: shift back. */
            for (uint32_t s = x->sets; s > 0; s--)
                x->sstart[s] = x->sstart[s - 1];
            x->sstart[0] = 0;
            for (size_t k = 0; k < nhot; k++) {
                for (uint32_t l = x->nlines[k]; l > 0; l--)
                    x->lstart[k][l] = x->lstart[k][l - 1];
                x->lstart[k][0] = 0;
            }
        }
    }
    if (x->lru && static_lines(x) < 0)
        goto fail;
    for (size_t k = 0; k < nhot; k++)
        for (uint32_t l = 0; l < x->nlines[k]; l++)
            if (line_used(x, k, l) &&
                occ_add(x, (x->base[k] + l) & x->mask, (uint32_t)k, l) < 0)
                goto fail;
    x->total = 0;
    for (uint32_t s = 0; s < x->sets; s++) {
        if ((x->miss[s] = sim_set(x, s)) < 0)
            goto fail;
        x->total += x->miss[s];
    }
    free(kof);
    return x;
fail:
    free(kof);
    plan_incr_free(x);
    return cp_seterr(err, "out of memory (incremental evaluation)"), NULL;
}

/* The running total moves by differences of weighted set counts, and
 * rounding leaves it a hair below 0 once every set is down to no miss
 * (-1e-13 at 16 KiB on a Zephyr echo server): a count of misses is never
 * negative, and a negative value is what the calls here return on failure. */
static double nonneg(double v)
{
    return v > 0 ? v : 0;
}

double plan_incr_total(const plan_incr *x)
{
    return nonneg(x->total);
}

/* Marks set s as changed: 1 lines enter it, 2 a line leaves it. */
static void touch(plan_incr *x, uint32_t s, unsigned char kind)
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

/* A change starts with no set marked. */
static void untouch_all(plan_incr *x)
{
    for (size_t i = 0; i < x->ntouched; i++)
        x->mark[x->touched[i]] = x->enter[x->touched[i]] = 0;
    x->ntouched = 0;
}

/* A change is about to be made (the last one stays as it is now). */
static void begin_change(plan_incr *x)
{
    untouch_all(x);
}

/* Re-simulates the sets a change marked; the new total, or -1 (out of
 * memory). The sets a line left go first, then the ones lines only
 * entered: under LRU adding a line's accesses to a set never turns another
 * access into a hit (a stack algorithm: it only lengthens reuse
 * distances), so each of those can only add misses, and once the total so
 * far passes limit the change is given up there, returning that partial
 * total (above limit, below the true one; undo the change). The sets'
 * figures are taken in the order they were marked, so a change that is
 * not given up adds up exactly as one pass would. */
static double resim_touched(plan_incr *x, double limit)
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
                size_t g = x->memo_off[mk] + ((s - mb) & x->mask);
                if (x->memo_ver[g] == x->touched_ver[i]) {
                    v = x->memo_val[g];
                } else if ((v = sim_set(x, s)) >= 0) {
                    x->memo_ver[g] = x->touched_ver[i];
                    x->memo_val[g] = v;
                }
            } else {
                v = sim_set(x, s);
            }
            if (v < 0)
                return -1;
            x->tval[i] = v;
            part += v - x->miss[s];
            if (pass && x->lru && x->total + part > limit)
                return nonneg(x->total + part);
        }
    for (size_t i = 0; i < x->ntouched; i++) {
        uint32_t s = x->touched[i];
        x->total += x->tval[i] - x->miss[s];
        x->miss[s] = x->tval[i];
        x->sver[s] = x->vnext++;
    }
    return plan_incr_total(x);
}

/* Takes unit k out of the sets of its used lines (marking them) and puts
 * it in at line nb (marking those). */
static int relocate(plan_incr *x, size_t k, uint32_t nb)
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

double plan_incr_try2(plan_incr *x, size_t k, uint32_t addr, size_t k2,
                      uint32_t addr2, double limit)
{
    unsigned nm = k2 == SIZE_MAX ? 1 : 2;
    size_t ks[2] = {k, k2};
    uint32_t as[2] = {addr, addr2};
    begin_change(x);
    x->nundo = 0;
    for (unsigned q = 0; q < nm; q++) {
        x->undo_k[q] = ks[q];
        x->undo_base[q] = x->base[ks[q]];
        x->nundo = q + 1;
        if (relocate(x, ks[q], as[q] >> x->ls) < 0)
            return -1;
    }
    return resim_touched(x, limit);
}

double plan_incr_move2(plan_incr *x, size_t k, uint32_t addr, size_t k2,
                       uint32_t addr2)
{
    return plan_incr_try2(x, k, addr, k2, addr2, HUGE_VAL);
}

double plan_incr_remove(plan_incr *x, size_t k)
{
    begin_change(x);
    x->undo_k[0] = k;
    x->undo_base[0] = x->base[k];
    x->nundo = 1;
    for (uint32_t l = 0; l < x->nlines[k]; l++)
        if (line_used(x, k, l))
            touch(x, (x->base[k] + l) & x->mask, 2);
    for (size_t i = 0; i < x->ntouched; i++)
        occ_del(x, x->touched[i], (uint32_t)k);
    return resim_touched(x, HUGE_VAL);
}

double plan_incr_move(plan_incr *x, size_t k, uint32_t addr)
{
    return plan_incr_move2(x, k, addr, SIZE_MAX, 0);
}

void plan_incr_undo(plan_incr *x)
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

size_t plan_incr_pick(const plan_incr *x, double r, uint64_t salt)
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

double plan_incr_misses_at(const plan_incr *x, size_t k, uint32_t addr)
{
    uint32_t b = addr >> x->ls;
    double sum = 0;
    for (uint32_t l = 0; l < x->nlines[k]; l++)
        if (line_used(x, k, l))
            sum += x->miss[(b + l) & x->mask];
    return sum;
}
