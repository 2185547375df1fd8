/* Incremental evaluation for the local search: sets of a set-associative
 * cache are independent, so moving one hot unit only changes the misses
 * of the sets it leaves and enters. The stream is split once into one
 * time-ordered list per line of each moving unit and one list per set for
 * everything that stays; a set is re-simulated by merging the lists of the
 * units that occupy it with its static list. Valid while only the hot
 * units' start lines change (the hot block keeps its end, fast memory
 * keeps its contents). */
#ifndef CP_PLAN_INCR_H
#define CP_PLAN_INCR_H

#include "plan/plan_int.h"

typedef struct plan_incr plan_incr;

/* hot[0..nhot) are the units that may move; L is the current layout (their
 * starts must be line-aligned); the first iters iterations (0: all) of
 * each workload are simulated, as plan_eval does, through the target's
 * cache model (every replacement policy). NULL with err on failure. */
plan_incr *plan_incr_new(const plan_model *m, const plan_layout *L,
                         const size_t *hot, size_t nhot, unsigned iters,
                         cp_err *err);
void plan_incr_free(plan_incr *x);
/* Misses per warm iteration of the current placement. */
double plan_incr_total(const plan_incr *x);
/* Moves hot unit k (index into hot[]) to start at address addr (line
 * aligned); returns the new total, or -1 (out of memory: the state is
 * then unusable). plan_incr_undo() restores the last move. */
double plan_incr_move(plan_incr *x, size_t k, uint32_t addr);
/* Moves unit k to addr and unit k2 (!= k; SIZE_MAX: none) to addr2 at
 * once (a swap), re-simulating the sets either touches once; undone
 * together. */
double plan_incr_move2(plan_incr *x, size_t k, uint32_t addr, size_t k2,
                       uint32_t addr2);
/* The same, given up once the total is sure to pass limit: then the
 * figure returned is above limit but not the total (undo the change).
 * Only under LRU (other policies: always the total); HUGE_VAL: never.
 * A set a move of one unit alone only leaves is simulated once for the
 * state it is in: the unit's next moves from there (undone in between)
 * take that figure. */
double plan_incr_try2(plan_incr *x, size_t k, uint32_t addr, size_t k2,
                      uint32_t addr2, double limit);
void plan_incr_undo(plan_incr *x);
/* Takes unit k out of the stream (it goes where the cache does not see
 * it: fast memory), re-simulating the sets its used lines leave; returns
 * the new total, or -1 (out of memory). plan_incr_undo() puts it back.
 * Only that unit's accesses change: what else such a move shifts (linker
 * stubs, code and data after it) is not in this figure. */
double plan_incr_remove(plan_incr *x, size_t k);
/* A set with many misses, drawn with probability growing with them from a
 * uniform r in [0, 1); and a hot unit (index into hot[]) with a line in
 * that set, or SIZE_MAX. */
size_t plan_incr_pick(const plan_incr *x, double r, uint64_t salt);
/* The misses now counted in the sets hot unit k's used lines would
 * occupy if it started at addr. */
double plan_incr_misses_at(const plan_incr *x, size_t k, uint32_t addr);

#endif
