/* What every phase of a strategy run shares (search.h): its progress lines
 * and the cost of the placement it holds, by exact re-simulation. */
#include "plan/search.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static void vnote(const plan_search *r, int level, const char *fmt, va_list ap)
{
    if (!r->o->progress)
        return;
    char buf[256];
    vsnprintf(buf, sizeof buf, fmt, ap);
    r->o->progress(r->o->progress_ctx, level, buf);
}

/* A detail (shown with -v). */
void plan_note(const plan_search *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(r, 1, fmt, ap);
    va_end(ap);
}

/* Progress (shown on the terminal unless -q). */
void plan_say(const plan_search *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(r, 0, fmt, ap);
    va_end(ap);
}
/* Builds r->L from r->off and r->fast. */
void plan_build(plan_search *r)
{
    plan_layout_make(r->m, r->off, r->fast, r->hot_base, r->block_end, &r->L);
}

/* The cost a strategy minimises, in misses: the misses plus the
 * instructions that calls through linker stubs add, weighed by what a miss
 * costs (the estimated cycles per iteration, divided by the miss cost). */
static double cost_on(plan_search *r, double *umiss, unsigned iters)
{
    if (r->failed)
        return HUGE_VAL;
    plan_build(r);
    plan_eval_out out = {0};
    out.unit_misses = umiss;
    if (plan_eval(r->m, &r->L, iters, &out, r->err) < 0) {
        r->failed = 1;
        return HUGE_VAL;
    }
    r->evals++;
    r->last_misses = out.misses;
    const plan_model *m = r->m;
    double per_call = m->t->cpi * m->veneer_insns /
                      (m->cache.miss_cycles ? m->cache.miss_cycles : 1);
    return out.misses + out.stub_calls * per_call;
}

/* On the planning iterations (what searches compare). */
double plan_cost(plan_search *r, int per_unit)
{
    return cost_on(r, per_unit ? r->umiss : NULL, r->iters);
}

/* On every iteration (what the result reports). */
double plan_cost_all(plan_search *r)
{
    return cost_on(r, NULL, 0);
}

double plan_cost_all_units(plan_search *r, double *umiss)
{
    return cost_on(r, umiss, 0);
}
