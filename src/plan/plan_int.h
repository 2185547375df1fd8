/* Private to src/plan: the model's layout, the cache evaluator and the
 * layout builder shared by the strategies. */
#ifndef CP_PLAN_INT_H
#define CP_PLAN_INT_H

#include "plan/plan.h"

#define PLAN_FIXED UINT32_MAX      /* access outside every unit */
#define PLAN_CALL (UINT32_MAX - 1) /* a call: off = target index, len = caller */
#define PLAN_ADDR_FAST UINT32_MAX  /* unit placed in fast memory */

/* One access of the stream: a run of bytes [off, off + len) inside a unit,
 * or, for unit == PLAN_FIXED, at absolute address off. */
typedef struct plan_acc {
    uint32_t unit;
    uint32_t off;
    uint32_t len;
} plan_acc;

/* A branch target: the linker makes one stub per target symbol that is out
 * of range, so targets are counted by address, not by unit. */
typedef struct plan_target {
    uint32_t addr, unit;
} plan_target;

/* A call or far jump in the code from unit caller to target (an index
 * into the model's targets). */
typedef struct plan_call {
    uint32_t caller, target;
} plan_call;

struct plan_model {
    const img *im;
    const tgt *t;
    tgt_cache cache;
    unsigned line_shift;
    uint32_t sets;
    cp_pool *pool;

    plan_unit *units;
    size_t nunits;
    /* Units of the output section the hot block goes into. */
    const char *text_name;
    uint32_t text_start, text_end;

    plan_acc *acc;
    size_t nacc, cacc;
    size_t *iter_start;   /* iteration i: acc[iter_start[i] .. iter_start[i+1]) */
    unsigned niters;
    unsigned dropped;     /* unfinished iterations left out of the traces */
    size_t citer;
    double *iter_insns;   /* instructions per iteration */
    uint32_t last_unit;   /* for call detection */

    /* The stream for set-associative evaluation: each run of accesses to
     * one unit (no larger than a cache way) reduced to the byte ranges it
     * touches. In a set-associative LRU cache such a run touches at most
     * one line per set, so order inside it does not change the outcome. */
    plan_acc *zacc;
    size_t nzacc;
    size_t *ziter_start;
    int compressed;

    plan_call *calls;
    size_t ncalls, ccalls;
    plan_target *targets;
    size_t ntargets, ctargets;
    unsigned plan_iters;  /* iterations strategies evaluate on */
    uint32_t veneer_bytes; /* a long-call stub the linker adds */
    uint32_t veneer_insns; /* instructions one pass through it runs */
};

/* A complete placement: a new address for every unit. */
typedef struct plan_layout {
    uint32_t *addr;       /* per unit, or PLAN_ADDR_FAST */
    int64_t text_delta;   /* shift of flash accesses after the text end */
    /* Stubs for calls from flash into fast memory: GNU ld puts them after
     * the last input section of .text; one per callee. */
    uint32_t *stub;       /* per target: stub address, or 0 */
    uint32_t nstubs;
} plan_layout;

/* Maps an access to its first and last line under the layout; 0 when the
 * access is not cached (fast memory). Shared by the full and the
 * incremental evaluation, so both see the same stream. */
static inline int plan_acc_lines(const plan_model *m, const plan_layout *L,
                                 const plan_acc *a, uint32_t *l0,
                                 uint32_t *l1)
{
    uint64_t base;
    if (a->unit == PLAN_CALL) {
        /* Through a stub when flash code calls into fast memory. */
        if (!L->nstubs || a->off >= m->ntargets || !L->stub[a->off] ||
            L->addr[a->len] == PLAN_ADDR_FAST)
            return 0;
        base = L->stub[a->off];
        *l0 = (uint32_t)(base >> m->line_shift);
        *l1 = (uint32_t)((base + m->veneer_bytes - 1) >> m->line_shift);
        return 1;
    }
    if (a->unit == PLAN_FIXED) {
        base = a->off;
        if (base >= m->text_end && L->text_delta)
            base = (uint64_t)((int64_t)base + L->text_delta);
    } else {
        uint32_t b = L->addr[a->unit];
        if (b == PLAN_ADDR_FAST)
            return 0;
        base = (uint64_t)b + a->off;
    }
    *l0 = (uint32_t)(base >> m->line_shift);
    *l1 = (uint32_t)((base + a->len - 1) >> m->line_shift);
    return 1;
}

typedef struct plan_eval_out {
    double misses;        /* per warm iteration (mean) */
    double accesses;
    double stub_calls;    /* calls through linker stubs per warm iteration */
    double *unit_misses;  /* per unit per warm iteration, if not NULL */
} plan_eval_out;

/* Builds the compressed stream (idempotent; after the evidence is in). */
int plan_model_compress(plan_model *m);

/* Simulates iterations [0, iters) (0: all the model has) of the layout
 * through the set-associative cache; misses of iteration 0 are not counted
 * unless it is the only one. */
void plan_eval(const plan_model *m, const plan_layout *L, unsigned iters,
               plan_eval_out *out);
/* The same through a fully associative LRU cache of equal capacity. */
double plan_eval_fa(const plan_model *m, const plan_layout *L, unsigned iters);

/* Layout as the linker makes it: units in fast memory (fast[u]) leave
 * flash; hot units at hot_base + hot_off[u] (PLAN_NONE: not hot); the rest
 * of the text section packed after the hot block (which ends no earlier
 * than hot_base + block_end) in link order; stubs for calls from flash into
 * fast memory after that. */
#define PLAN_NONE UINT32_MAX
void plan_layout_make(const plan_model *m, const uint32_t *hot_off,
                      const unsigned char *fast, uint32_t hot_base,
                      uint32_t block_end, plan_layout *L);
/* The same from a result's items. */
int plan_layout_build(const plan_model *m, const plan_item *items,
                      size_t nitems, uint32_t hot_base, uint32_t block_end,
                      plan_layout *L, uint32_t *hot_bytes);
void plan_layout_stock(const plan_model *m, plan_layout *L);
int plan_layout_alloc(const plan_model *m, plan_layout *L);
void plan_layout_free(plan_layout *L);

uint32_t plan_hot_base(const plan_model *m);

#endif
