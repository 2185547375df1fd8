/* Several annealing chains per search (plan --threads): each chain runs
 * plan_anneal (anneal.c) on its own copy of the search state, in its own
 * thread, and the best final placement wins. */
#include "plan/search.h"

#include "util/stats.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the chains of one search share: their progress, for the one line the
 * first chain (in the calling thread) shows. */
typedef struct chain_share {
    pthread_mutex_t mu;
    unsigned n;
    unsigned long tries[PLAN_MAX_THREADS];
    double best[PLAN_MAX_THREADS];
} chain_share;

/* One chain of a search: its own copy of the search state (placement,
 * layout, block map, error), a view of the model (its own count of
 * evaluations) and options whose progress lines go to last[]. */
typedef struct plan_chain_run {
    plan_search r;
    plan_model view;
    plan_opts o;
    cp_err err;
    const plan_opts *user;  /* the caller's options (progress) */
    chain_share *share;
    unsigned index;
    uint64_t seed;
    unsigned long moves;
    double t_end, cost;
    char last[256];         /* its last progress line */
} chain;

/* Progress of a search with several chains, every tenth of its moves
 * (plan_search.chain_progress): one line, the first chain's (the calling
 * thread's), over them all: the moves of the chain furthest behind, the
 * best of them all. */
static void chain_progress(plan_search *r, unsigned long tries,
                           unsigned long moves, double best, double t0)
{
    chain *c = r->chain;
    chain_share *s = c->share;
    unsigned long all = 0, lo = tries;
    unsigned bi = 0;
    double b = HUGE_VAL;
    pthread_mutex_lock(&s->mu);
    s->tries[c->index] = tries;
    s->best[c->index] = best;
    for (unsigned i = 0; c->index == 0 && i < s->n; i++) {
        all += s->tries[i];
        if (s->tries[i] < lo)
            lo = s->tries[i];
        if (s->best[i] < b) {
            b = s->best[i];
            bi = i;
        }
    }
    pthread_mutex_unlock(&s->mu);
    if (c->index == 0 && c->user->progress) {
        char buf[256];
        snprintf(buf, sizeof buf, "anneal: %lu of %lu moves (%u chains, "
                 "%lu in all), best %.1f misses/iteration (chain %u), %.1f s",
                 lo, moves, s->n, all, b, bi + 1, cp_now_s() - t0);
        c->user->progress(c->user->progress_ctx, 0, buf);
    }
}

static void chain_msg(void *ctx, int level, const char *msg)
{
    chain *c = ctx;
    if (level == 0)
        snprintf(c->last, sizeof c->last, "%s", msg);
}

static void *chain_main(void *p)
{
    chain *c = p;
    c->cost = plan_anneal(&c->r, c->seed, c->moves, c->t_end);
    return NULL;
}

/* Chain k's seed: the search's for chain 0, else one derived from it and
 * k (splitmix64 of the two). */
static uint64_t chain_seed(uint64_t seed, unsigned k)
{
    if (k == 0)
        return seed;
    uint64_t x = seed ^ (0x9E3779B97F4A7C15ULL * k);
    uint64_t z = cp_rand(&x);
    return z ? z : 1;
}

/* What chain k did in one search. */
static void chain_account(plan_search *r, unsigned k, unsigned long moves,
                          int cut, int won, double misses, double incr)
{
    plan_chain *c = &r->chains[k];
    c->moves += moves;
    c->time_cut += cut != 0;
    c->wins += won != 0;
    c->misses = misses;
    c->incr_misses = incr;
    if (r->nchains < k + 1)
        r->nchains = k + 1;
}

static void chain_free(chain *c)
{
    free(c->r.off);
    plan_layout_free(&c->r.L);
}

/* One chain of one search, in the calling thread (--threads 1). */
static double one_chain(plan_search *r, uint64_t seed, unsigned long moves,
                        double t_end)
{
    unsigned long m0 = r->moves;
    int cut0 = r->time_cut;
    r->time_cut = 0;
    r->search_best = -1;
    double v = plan_anneal(r, seed, moves, t_end);
    if (!r->failed)
        chain_account(r, 0, r->moves - m0, r->time_cut, 1, r->last_misses,
                      r->search_best < 0 ? r->last_misses : r->search_best);
    r->time_cut |= cut0;
    return v;
}

/* The chains' copies of r: chain k's own placement (a copy of r->off),
 * layout and view of the model; the hot units and fast memory of r (which
 * a search does not change) shared, read only. The number made. */
static unsigned make_chains(plan_search *r, chain *cs, unsigned n,
                            chain_share *sh, uint64_t seed,
                            unsigned long moves, double t_end)
{
    size_t nu = r->m->nunits ? r->m->nunits : 1;
    unsigned made = 0;
    for (; made < n; made++) {
        chain *c = &cs[made];
        c->r = *r;
        c->r.L.addr = NULL;
        c->r.L.stub = NULL;
        c->r.L.tg = NULL;
        c->r.L.live = NULL;
        c->r.L.stock_addr = NULL;
        if (!(c->r.off = malloc(nu * sizeof *c->r.off)) ||
            plan_layout_alloc(r->m, &c->r.L) < 0 ||
            plan_model_view(r->m, &c->view) < 0) {
            chain_free(c);
            break;
        }
        memcpy(c->r.off, r->off, nu * sizeof *c->r.off);
        c->r.m = &c->view;
        c->o = *r->o;
        c->o.progress = chain_msg;
        c->o.progress_ctx = c;
        c->r.o = &c->o;
        c->r.err = &c->err;
        c->r.umiss = NULL;
        c->r.own = NULL;
        c->r.nown = 0;
        c->r.evals = 0;
        c->r.moves = 0;
        c->r.time_cut = 0;
        c->r.search_best = -1;
        c->r.chain = c;
        c->r.chain_progress = chain_progress;
        c->user = r->o;
        c->share = sh;
        c->index = made;
        c->seed = chain_seed(seed, made);
        c->moves = moves;
        c->t_end = t_end;
        sh->best[made] = HUGE_VAL;
    }
    return made;
}

double plan_chains(plan_search *r, uint64_t seed, unsigned long moves,
                   double t_end)
{
    unsigned n = r->o->threads;
    if (n > PLAN_MAX_THREADS)
        n = PLAN_MAX_THREADS;
    if (r->failed || !moves)
        return plan_anneal(r, seed, moves, t_end);
    if (n <= 1)
        return one_chain(r, seed, moves, t_end);
    double t0 = cp_now_s();
    size_t nu = r->m->nunits ? r->m->nunits : 1;
    chain *cs = calloc(n, sizeof *cs);
    chain_share sh;
    memset(&sh, 0, sizeof sh);
    sh.n = n;
    unsigned made = cs ? make_chains(r, cs, n, &sh, seed, moves, t_end) : 0;
    if (made < n || pthread_mutex_init(&sh.mu, NULL) != 0) {
        for (unsigned i = 0; i < made; i++)
            chain_free(&cs[i]);
        free(cs);
        r->failed = 1;
        cp_seterr(r->err, "out of memory (%u annealing chains)", n);
        return HUGE_VAL;
    }
    pthread_t th[PLAN_MAX_THREADS];
    int started[PLAN_MAX_THREADS] = {0};
    for (unsigned i = 1; i < n; i++)
        started[i] = pthread_create(&th[i], NULL, chain_main, &cs[i]) == 0;
    chain_main(&cs[0]);
    for (unsigned i = 1; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            chain_main(&cs[i]); /* no thread for it: here, after the others */
    }
    pthread_mutex_destroy(&sh.mu);
    plan_model *views[PLAN_MAX_THREADS];
    for (unsigned i = 0; i < n; i++)
        views[i] = &cs[i].view;
    plan_model_views_done(r->m, views, n);
    unsigned win = 0;
    double best = HUGE_VAL;
    char each[160] = "", cut[96] = "";
    size_t le = 0, lc = 0;
    unsigned long smoves = 0;
    for (unsigned i = 0; i < n; i++) {
        const plan_search *cr = &cs[i].r;
        if (cr->failed && !r->failed) {
            r->failed = 1;
            cp_seterr(r->err, "%s", cs[i].err.msg);
        }
        r->moves += cr->moves;
        smoves += cr->moves;
        r->evals += cr->evals;
        r->time_cut |= cr->time_cut;
        if (cs[i].cost < best) {
            best = cs[i].cost;
            win = i;
        }
        plan_note(r, "anneal: chain %u: %s", i + 1, cs[i].last);
        if (le < sizeof each)
            le += (size_t)snprintf(each + le, sizeof each - le, "%s%u: %.1f",
                                   i ? ", " : "", i + 1, cr->last_misses);
        if (cr->time_cut && lc < sizeof cut)
            lc += (size_t)snprintf(cut + lc, sizeof cut - lc, "%s%u",
                                   lc ? ", " : "", i + 1);
    }
    for (unsigned i = 0; i < n && !r->failed; i++) {
        const plan_search *cr = &cs[i].r;
        chain_account(r, i, cr->moves, cr->time_cut, i == win,
                      cr->last_misses,
                      cr->search_best < 0 ? cr->last_misses : cr->search_best);
    }
    if (!r->failed) {
        memcpy(r->off, cs[win].r.off, nu * sizeof *r->off);
        r->block_end = cs[win].r.block_end;
        r->last_misses = cs[win].r.last_misses;
        plan_build(r);
        plan_say(r, "anneal: %u chains, %lu moves in %.1f s%s%s: best %.1f "
                 "misses/iteration from chain %u (%s)", n, smoves,
                 cp_now_s() - t0, lc ? ", paced by --time: chains " : "", cut,
                 cs[win].r.last_misses, win + 1, each);
    }
    for (unsigned i = 0; i < n; i++)
        chain_free(&cs[i]);
    free(cs);
    return r->failed ? HUGE_VAL : best;
}
