/* Threads that share the tries of one hot unit at every start colour (the
 * descent after the annealing and the pass over the late sections): each
 * helper holds its own copy of the set index (csim_setidx), kept in step
 * with the caller's by applying every move the caller keeps. The result is
 * the same whatever the number of threads: the tries are exact, and the
 * best of them is chosen by a fixed rule (the one that beats the total
 * most, the lowest candidate on a tie). */
#ifndef CP_PLAN_POOL_H
#define CP_PLAN_POOL_H

#include "plan/plan_int.h"

#include <stddef.h>
#include <stdint.h>

typedef struct plan_pool plan_pool;

/* n helper threads (1 to PLAN_MAX_THREADS - 1), each with a set index
 * built as plan_setidx_new builds one from L, hot, nhot and
 * iters; total: the figure the caller's evaluation has now, which each
 * copy must reproduce. NULL with err on failure. */
plan_pool *plan_pool_new(const plan_model *m, const plan_layout *L,
                         const size_t *hot, size_t nhot, unsigned iters,
                         unsigned n, double total, cp_err *err);
void plan_pool_free(plan_pool *p);
/* Tries hot unit k at base + cand[i] for every i, split between the
 * caller (on x) and the helpers (each on its copy), each try given up
 * once it cannot beat the best its thread has: *bi is the index of the
 * candidate that lowers the total cur most (by more than rounding; the
 * lowest index among equals), *bv its total; *bi = UINT32_MAX when none
 * lowers it. With no pool (NULL) the caller tries them all in turn, the
 * same choice. 0, or -1 (err says why). */
int plan_pool_best(plan_pool *p, csim_setidx *x, size_t k, uint32_t base,
                   const uint32_t *cand, uint32_t ncand, double cur,
                   uint32_t *bi, double *bv, cp_err *err);
/* Moves hot unit k to addr in every copy (the caller moves it in its
 * own); each must then have total, the caller's figure. 0, or -1 (out of
 * memory, or a copy that disagrees: err says which). */
int plan_pool_apply(plan_pool *p, size_t k, uint32_t addr, double total,
                    cp_err *err);

#endif
