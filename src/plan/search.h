/* Private to src/plan: the state one strategy run shares between the
 * strategies (strategy.c), the RAM selection (select.c), the hot block and
 * colouring (colour.c), the annealing chains (chains.c) and search
 * (anneal.c), and their result (result.c). They call one another one way
 * only: strategy -> chains -> anneal, strategy -> select, and all of them
 * -> colour and search.c (progress lines and the cost of a placement);
 * scripts/circles checks it (tests/cli/t0632-plan-circles.sh). */
#ifndef CP_PLAN_SEARCH_H
#define CP_PLAN_SEARCH_H

#include "plan/plan_int.h"

#include <stddef.h>
#include <stdint.h>

typedef struct plan_search {
    plan_model *m;
    const plan_opts *o;
    unsigned iters;       /* planning iterations */
    uint32_t hot_base;
    plan_layout L;
    double *umiss;
    uint64_t rng;         /* the next search's seed */
    /* Flash placement of hot units: offset in the block or NONE. */
    uint32_t *off;        /* per unit */
    unsigned char *fast;  /* per unit: 1 in fast memory */
    uint32_t block_end;   /* hot block padded to this size (0: none) */
    /* While annealing: per 8 bytes of the block, the unit placed there
     * plus one (0: free), kept with off[]; NULL otherwise. */
    uint32_t *own;
    uint32_t nown;
    size_t *hot;          /* hot unit indices */
    size_t nhot;
    double evals;
    cp_err *err;
    int failed;           /* an evaluation failed: err says why */
    int err_set;          /* err holds the reason already (not out of
                             memory) */
    double deadline;      /* monotonic seconds the search stops at (0: none) */
    unsigned long moves;  /* annealing moves made */
    int time_cut;         /* the deadline stopped a search */
    unsigned fast_cut;    /* RAM selections the deadline stopped */
    double last_misses;   /* misses of the last evaluation (without the
                             stubs' instructions) */
    double search_best;   /* the last search's best, as the incremental
                             evaluation counted it (-1: none) */
    struct plan_chain_run *chain; /* while one of several chains: its own
                                     part (chains.c) */
    /* While one of several chains: shows the annealing's progress over
     * them all (chains.c); NULL: plan_anneal shows its own. */
    void (*chain_progress)(struct plan_search *r, unsigned long tries,
                           unsigned long moves, double best, double t0);
    /* The chains of the searches so far (--threads). */
    plan_chain chains[PLAN_MAX_THREADS];
    unsigned nchains;
} plan_search;

#define NONE PLAN_NONE

static inline uint32_t align8(uint32_t v)
{
    return (v + 7) & ~7u;
}
/* Hot units start on a cache line (and at least their own alignment), so
 * that their lines are the same whatever set they start at. */
static inline uint32_t unit_align(const plan_search *r, size_t u)
{
    uint32_t al = r->m->cache.line > 8 ? r->m->cache.line : 8;
    return r->m->units[u].align > al ? r->m->units[u].align : al;
}

/* The cache lines unit u spans in the hot block (it starts on a line). */
static inline uint32_t unit_lines(const plan_search *r, size_t u)
{
    return (align8(r->m->units[u].size) + r->m->cache.line - 1) >>
           r->m->line_shift;
}

/* The first offset at or after p where hot_base + offset is al-aligned. */
static inline uint32_t align_at(const plan_search *r, uint32_t p, uint32_t al)
{
    uint32_t a = r->hot_base + p;
    return ((a + al - 1) & ~(al - 1)) - r->hot_base;
}

static inline uint32_t colour_of(const plan_search *r, uint32_t off)
{
    return ((r->hot_base + off) >> r->m->line_shift) & (r->m->sets - 1);
}

/* search.c: progress lines (plan_note: a detail shown with -v; plan_say:
 * shown on the terminal unless -q). */
void plan_note(const plan_search *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void plan_say(const plan_search *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Builds r->L from r->off and r->fast. */
void plan_build(plan_search *r);
/* The cost a strategy minimises on the planning iterations (per_unit: fill
 * r->umiss); on every iteration. HUGE_VAL once an evaluation failed. */
double plan_cost(plan_search *r, int per_unit);
double plan_cost_all(plan_search *r);
/* plan_cost_all, filling umiss (one per unit) with each unit's misses
 * there. */
double plan_cost_all_units(plan_search *r, double *umiss);

/* colour.c */
int plan_find_hot(plan_search *r);
int plan_is_free(const plan_search *r, uint32_t p, uint32_t size, size_t skip);
uint32_t plan_find_slot(const plan_search *r, size_t u, uint32_t c, uint32_t limit);
uint32_t plan_block_limit(const plan_search *r);
uint32_t plan_placed_end(const plan_search *r);
void plan_place_hotblock(plan_search *r);
int plan_place_colour(plan_search *r);

/* select.c: the RAM selection. */
typedef struct plan_vstate {
    unsigned char *target; /* per target: a stub in fast memory */
} plan_vstate;

/* Placement state, to keep the better of two. */
typedef struct plan_snap {
    uint32_t *off;
    unsigned char *fast, *target;
    uint32_t block_end;
} plan_snap;

/* Bytes of fast memory used: the units there and their stubs. */
uint32_t plan_fast_used(plan_search *r, const plan_vstate *vs);
/* Greedy by re-simulated misses saved per byte, starting at cost cur,
 * within share of the time left; returns the cost on the planning
 * iterations (HUGE_VAL once an evaluation failed). */
double plan_select_fast(plan_search *r, double cur, plan_vstate *vs,
                        double share);
/* The baselines: by instructions per byte; by the stock layout's misses
 * per byte (stock_umiss). */
double plan_select_rank(plan_search *r, plan_vstate *vs);
double plan_select_density(plan_search *r, plan_vstate *vs,
                           const double *stock_umiss);
int plan_snap_take(const plan_search *r, const plan_vstate *vs, plan_snap *sn);
void plan_snap_put(plan_search *r, plan_vstate *vs, const plan_snap *sn);
void plan_snap_free(plan_snap *sn);
/* Keeps the current placement if no worse on every iteration than start,
 * else start (what: the strategy, for the note). */
void plan_keep_better(plan_search *r, plan_vstate *vs, const plan_snap *start,
                      const char *what);
/* Every unit back where the linker put it, no stub counted. */
void plan_reset_to_stock(plan_search *r, plan_vstate *vs);
/* The density and rank plans are the result if better on every
 * iteration. */
void plan_baseline_net(plan_search *r, plan_vstate *vs,
                       const double *stock_umiss);
/* What the budget has left, filled by the misses saved on every
 * iteration, one section at a time while one lowers that cost. */
void plan_fill_late(plan_search *r, plan_vstate *vs);

/* result.c: the result of the placement r holds, for strategy s; each
 * item's misses from stock_umiss (or 0), the fast memory's stubs from vs
 * (NULL: none). NULL with r->err set on failure. */
plan_result *plan_result_make(plan_search *r, plan_strategy s,
                              const double *stock_umiss,
                              const plan_vstate *vs);

/* anneal.c: simulated annealing of the hot units' start offsets from the
 * placement in r->off (the result goes there too), with the random
 * sequence of seed, at most moves moves, stopping at monotonic time t_end
 * (0: no limit). Returns the cost on the planning iterations. */
double plan_anneal(plan_search *r, uint64_t seed, unsigned long moves,
                   double t_end);

/* chains.c: one search of r->o->threads annealing chains (plan_anneal),
 * chain 0 in the calling thread with the sequence of seed and the others
 * in their own threads, each on its own copy of the search state and its
 * own view of the model; the best final placement (a tie: the lowest
 * chain) goes to r->off, and r->chains counts what each did. Returns the
 * cost on the planning iterations. */
double plan_chains(plan_search *r, uint64_t seed, unsigned long moves,
                   double t_end);

#endif
