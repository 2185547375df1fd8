/* Threads sharing the tries of one unit's start colours (plan/pool.h). */
#include "plan/pool.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

enum { JOB_NONE, JOB_TRY, JOB_APPLY, JOB_QUIT };

/* One thread's part: its copy of the evaluation and what it found. */
typedef struct share {
    csim_setidx *x;
    uint32_t bi;
    double bv;
    int failed;
    cp_err err;     /* why it failed */
    pthread_t th;
    struct plan_pool *pool;
    unsigned index; /* 1.. (the caller is share 0) */
} share;

struct plan_pool {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned n, started; /* helpers, helpers running */
    unsigned long gen;   /* jobs handed out */
    unsigned pending;    /* helpers still on the current job */
    int job;
    /* The job. */
    size_t k;
    uint32_t base, addr, ncand;
    const uint32_t *cand;
    double cur, total;
    share s[PLAN_MAX_THREADS];
};

/* The candidates i = j, j + step, ... on x, each to beat the best so far
 * (from cur) by more than rounding. */
static void run_tries(csim_setidx *x, size_t k, uint32_t base,
                      const uint32_t *cand, uint32_t ncand, unsigned j,
                      unsigned step, double cur, share *out)
{
    out->bi = UINT32_MAX;
    out->bv = cur;
    out->failed = 0;
    for (uint32_t i = j; i < ncand; i += step) {
        double win = out->bv - 1e-9 * (1 + fabs(out->bv));
        double v;
        int rc = csim_setidx_try(x, k, base + cand[i], SIZE_MAX, 0, win, &v,
                                 &out->err);
        csim_setidx_undo(x);
        if (rc < 0) {
            out->failed = 1;
            return;
        }
        if (v < win) {
            out->bv = v;
            out->bi = i;
        }
    }
}

static void *share_main(void *arg)
{
    share *s = arg;
    plan_pool *p = s->pool;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen)
            pthread_cond_wait(&p->go, &p->mu);
        seen = p->gen;
        int job = p->job;
        pthread_mutex_unlock(&p->mu);
        if (job == JOB_QUIT)
            return NULL;
        if (job == JOB_TRY) {
            run_tries(s->x, p->k, p->base, p->cand, p->ncand, s->index,
                      p->n + 1, p->cur, s);
        } else if (job == JOB_APPLY) {
            double v;
            s->failed = csim_setidx_try(s->x, p->k, p->addr, SIZE_MAX, 0,
                                        HUGE_VAL, &v, &s->err) < 0 ? 1
                      : fabs(v - p->total) > 1e-6 * (1 + fabs(p->total)) ? 2
                      : 0;
        }
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* Hands job to every helper (the caller then does its own part). */
static void start(plan_pool *p, int job)
{
    pthread_mutex_lock(&p->mu);
    p->job = job;
    p->pending = p->started;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
}

static void wait_all(plan_pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->pending)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

plan_pool *plan_pool_new(const plan_model *m, const plan_layout *L,
                         const size_t *hot, size_t nhot, unsigned iters,
                         unsigned n, double total, cp_err *err)
{
    if (n < 1 || n >= PLAN_MAX_THREADS) {
        cp_seterr(err, "%u helper threads: give 1 to %d", n,
                  PLAN_MAX_THREADS - 1);
        return NULL;
    }
    plan_pool *p = calloc(1, sizeof *p);
    if (!p) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->n = n;
    for (unsigned j = 1; j <= n; j++) {
        share *s = &p->s[j];
        s->pool = p;
        s->index = j;
        if (!(s->x = plan_setidx_new(m, L, hot, nhot, iters, err))) {
            plan_pool_free(p);
            return NULL;
        }
        double t = csim_setidx_total(s->x);
        if (fabs(t - total) > 1e-6 * (1 + fabs(total))) {
            cp_seterr(err, "internal: a copy of the set index "
                      "counts %.3f misses where the search has %.3f", t,
                      total);
            plan_pool_free(p);
            return NULL;
        }
    }
    for (unsigned j = 1; j <= n; j++) {
        if (pthread_create(&p->s[j].th, NULL, share_main, &p->s[j]) != 0) {
            cp_seterr(err, "cannot start a thread");
            plan_pool_free(p);
            return NULL;
        }
        p->started = j;
    }
    return p;
}

void plan_pool_free(plan_pool *p)
{
    if (!p)
        return;
    if (p->started) {
        start(p, JOB_QUIT);
        for (unsigned j = 1; j <= p->started; j++)
            pthread_join(p->s[j].th, NULL);
    }
    for (unsigned j = 1; j <= p->n; j++)
        csim_setidx_free(p->s[j].x);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p);
}

int plan_pool_best(plan_pool *p, csim_setidx *x, size_t k, uint32_t base,
                   const uint32_t *cand, uint32_t ncand, double cur,
                   uint32_t *bi, double *bv, cp_err *err)
{
    if (!p) {
        share one;
        run_tries(x, k, base, cand, ncand, 0, 1, cur, &one);
        if (one.failed)
            return cp_seterr(err, "%s", one.err.msg);
        *bi = one.bi;
        *bv = one.bv;
        return 0;
    }
    p->k = k;
    p->base = base;
    p->cand = cand;
    p->ncand = ncand;
    p->cur = cur;
    start(p, JOB_TRY);
    run_tries(x, k, base, cand, ncand, 0, p->n + 1, cur, &p->s[0]);
    wait_all(p);
    /* Each part's best beat cur by more than rounding; of those, the one
     * that beats the others the same way, taken in candidate order (so a
     * tie goes to the lowest index, as one thread trying them in turn
     * would). */
    *bi = UINT32_MAX;
    *bv = cur;
    uint32_t done[PLAN_MAX_THREADS];
    unsigned nd = 0;
    for (unsigned j = 0; j <= p->n; j++) {
        if (p->s[j].failed)
            return cp_seterr(err, "%s", p->s[j].err.msg);
        if (p->s[j].bi != UINT32_MAX)
            done[nd++] = j;
    }
    for (unsigned a = 1; a < nd; a++) /* by index, few entries */
        for (unsigned b = a; b > 0 && p->s[done[b - 1]].bi > p->s[done[b]].bi; b--) {
            uint32_t t = done[b];
            done[b] = done[b - 1];
            done[b - 1] = t;
        }
    for (unsigned a = 0; a < nd; a++) {
        const share *s = &p->s[done[a]];
        if (s->bv < *bv - 1e-9 * (1 + fabs(*bv))) {
            *bv = s->bv;
            *bi = s->bi;
        }
    }
    return 0;
}

int plan_pool_apply(plan_pool *p, size_t k, uint32_t addr, double total,
                    cp_err *err)
{
    p->k = k;
    p->addr = addr;
    p->total = total;
    start(p, JOB_APPLY);
    wait_all(p);
    for (unsigned j = 1; j <= p->n; j++) {
        if (p->s[j].failed == 1)
            return cp_seterr(err, "%s", p->s[j].err.msg);
        if (p->s[j].failed == 2)
            return cp_seterr(err, "internal: a copy of the set index "
                             "disagrees with the search after a move "
                             "(thread %u)", j);
    }
    return 0;
}
