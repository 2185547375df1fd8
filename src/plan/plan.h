/* plan: placement planning. From an image, the evidence of what runs (a
 * trace), a target and a RAM budget, choose where each hot input section
 * goes: into fast memory (SRAM, ITCM), into a hot block at the start of
 * flash at a chosen cache colour, or nowhere (left where the linker puts
 * it). The planner evaluates every candidate layout exactly, by replaying
 * the trace through a model of the target's cache with the moved sections'
 * fetches remapped.
 *
 * The unit a linker can move is an input section, not a symbol: the plan
 * moves sections and names the functions they hold.
 *
 *   plan_model *m = plan_model_new(im, target, &cache, &err);
 *   plan_model_add_trace(m, "run.trace", 40, &err);   // evidence
 *   plan_opts o = plan_opts_default();
 *   o.budget = 16 * 1024;
 *   plan_result *r = plan_run(m, PLAN_AUTO, &o, &err);
 *   ... plan_result_item(r, i), r->misses ...
 *   plan_result_free(r); plan_model_free(m);
 */
#ifndef CP_PLAN_H
#define CP_PLAN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"
#include "target/target.h"
#include "trace/trace.h"
#include "util/util.h"

enum plan_unit_flags {
    PLAN_U_SHARED = 1 << 0,   /* the section holds several functions */
    PLAN_U_GUESSED = 1 << 1,  /* no map: ".text.<name>" assumed */
    PLAN_U_NORAM = 1 << 2,    /* must not move to RAM (startup, excluded) */
    PLAN_U_NOMOVE = 1 << 3,   /* must not move at all */
};

/* A movable unit: one input section in the cached flash window. */
typedef struct plan_unit {
    const char *isec;     /* ".text.vfprintf" */
    const char *archive;  /* "libc.a" or NULL */
    const char *object;   /* "libc_tinystdio_vfprintf.c.o" or NULL */
    const char *name;     /* the first function's name */
    uint32_t addr, size;  /* in the traced image */
    uint32_t align;       /* alignment the linker keeps (guessed) */
    size_t first_func;    /* index into img_func_at() */
    unsigned nfuncs;
    unsigned flags;       /* PLAN_U_* */
    /* Evidence over the planning iterations. */
    uint64_t runs;        /* fetch runs and flash reads inside it */
    uint64_t insns;       /* instructions executed */
    uint64_t bytes_fetched;
} plan_unit;

typedef struct plan_model plan_model;

plan_model *plan_model_new(const img *im, const tgt *t, const tgt_cache *c,
                           cp_err *err);
void plan_model_free(plan_model *m);

/* At most this many workloads (traces) per model. */
#define PLAN_MAX_WORK 16

/* Reads up to max_iters iterations (0: all) of a trace of this image as a
 * workload of weight 1. Fails when the trace names another image (hash)
 * or has no iterations. */
int plan_model_add_trace(plan_model *m, const char *path, unsigned max_iters,
                         cp_err *err);
/* What the one pass over a workload's trace gives besides the model:
 * every record read (up to max_iters iterations, complete ones only) to
 * on_rec (may be NULL: a tally for the target checks), how many, and
 * whether the file was cut short (it is read up to its last block, as sim
 * reads it). */
typedef struct plan_read {
    void (*on_rec)(void *arg, const trc_rec *r);
    void *arg;
    uint64_t records; /* OUT */
    int cut;          /* OUT */
} plan_read;

/* The same with a weight (> 0): plans minimise the weighted mean of the
 * workloads' warm misses per iteration. Each call adds one workload. rd
 * may be NULL. */
int plan_model_add_workload(plan_model *m, const char *path, double weight,
                            unsigned max_iters, plan_read *rd, cp_err *err);
unsigned plan_model_nworkloads(const plan_model *m);
/* The trace (or NULL) and the weight of workload k. */
const char *plan_model_workload(const plan_model *m, unsigned k,
                                double *weight);
/* The iterations workload k holds (0 past the last workload). */
unsigned plan_model_workload_iters(const plan_model *m, unsigned k);
/* Starts a new workload of the given weight: the next
 * plan_model_begin_iteration opens it (the building block of
 * add_workload). Fails past PLAN_MAX_WORK. */
int plan_model_new_workload(plan_model *m, const char *name, double weight,
                            cp_err *err);
/* The seed of the random replacement policy (as sim --seed; default 1). */
void plan_model_set_cache_seed(plan_model *m, uint64_t seed);
/* Testing: every evaluation after the first n fails as out of memory
 * (0: never), so that a failed evaluation can be seen to stop a plan. */
void plan_model_fail_after(plan_model *m, unsigned long n);

/* Building blocks of add_trace, for tests and other evidence sources:
 * start a new iteration, then add what the cache sees in order. */
int plan_model_begin_iteration(plan_model *m);
int plan_model_add_access(plan_model *m, uint32_t addr, uint32_t len,
                          uint32_t ninsn, int uncached);
/* An access through an alias that looks the cache up and never fills it
 * (the RP2040's 0x11000000): addr is its address in the cached window.
 * It moves with no unit (what follows the text moves with the text's
 * size, as .rodata does). */
int plan_model_add_nofill(plan_model *m, uint32_t addr, uint32_t len,
                          uint32_t ninsn);

/* Marks units that must stay (pattern: glob on function or section name;
 * ram_only: may stay in flash but not go to RAM). Returns how many units
 * matched. */
size_t plan_model_exclude(plan_model *m, const char *pattern, int ram_only);

/* Iterations the strategies evaluate candidates on (0: all loaded); the
 * results' figures are always over every loaded iteration. */
void plan_model_set_plan_iters(plan_model *m, unsigned n);

/* Code the strategies do not see: what the iterations after the planning
 * ones run that the planning ones never do (8-byte granules of sections
 * that may move), and how many iterations of its workload cover it all. */
typedef struct plan_unplanned {
    uint64_t bytes;       /* 0: the planning iterations run it all */
    size_t units;         /* sections with such bytes */
    unsigned first;       /* the iteration (in its workload, from 0) that
                             runs the first of them */
    unsigned work;        /* that workload */
    unsigned cover;       /* --plan-iterations that would take them all in */
} plan_unplanned;
/* -1: out of memory. */
int plan_model_unplanned(const plan_model *m, plan_unplanned *out);

size_t plan_model_nunits(const plan_model *m);
/* Instructions per warm iteration of the stock image as traced (the mean
 * over each workload's iterations after its first, weighted as the
 * workloads are): no linker stubs in it. */
double plan_model_insns(const plan_model *m);
/* End of the text section the hot block goes into, in the traced image. */
uint32_t plan_model_text_end(const plan_model *m);
/* Input sections whose alignment could not be read from the object file or
 * archive the map names (paths in a map are relative to where the link
 * ran): their alignment is guessed from their address, and addresses the
 * layout predicts after them may differ from the linker's. */
size_t plan_model_align_guessed(const plan_model *m);
const plan_unit *plan_model_unit(const plan_model *m, size_t i);
unsigned plan_model_niters(const plan_model *m);
/* Unfinished last iterations of interrupted traces, left out. */
unsigned plan_model_dropped(const plan_model *m);
const img *plan_model_image(const plan_model *m);
const tgt_cache *plan_model_cache(const plan_model *m);

typedef enum plan_strategy {
    PLAN_STOCK,     /* the image as linked */
    PLAN_HOTBLOCK,  /* hot sections contiguous, in temporal (call) order */
    PLAN_COLOUR,    /* hot sections at chosen cache colours, with padding */
    PLAN_RAM,       /* RAM selection by misses saved per byte, rest stock */
    PLAN_COMBINED,  /* RAM selection, then colouring of the rest */
    PLAN_RANK,      /* baseline: RAM filled by instructions per byte */
    PLAN_DENSITY,   /* baseline: RAM filled by stock misses per byte */
    PLAN_AUTO,      /* every candidate above; keep the best */
    PLAN_NSTRATEGIES
} plan_strategy;

const char *plan_strategy_name(plan_strategy s);
int plan_strategy_parse(const char *s, plan_strategy *out);

/* The padding the hot block may add unless told (plan_opts_default, and
 * plan's and apply's --pad-limit): room for the search to put sections at
 * the sets it wants; whole cache ways of it are closed again after the
 * search (docs/plan.md). */
#define PLAN_PAD_LIMIT_KIB 64
#define PLAN_PAD_LIMIT (PLAN_PAD_LIMIT_KIB * 1024u)

/* Annealing moves per search unless told (plan_opts_default, plan's
 * --search-moves): what a heavy workload's colouring runs within a minute
 * on one core (docs/BENCHMARKS.md). */
#define PLAN_SEARCH_MOVES 20000

/* Passes of the descent after each annealing search unless told
 * (plan's --descent-passes): each tries every hot unit at every start
 * colour (docs/plan.md). */
#define PLAN_DESCENT_PASSES 1

/* The part of a search's time the annealing may use when a descent
 * follows; the descent has the rest, and what the annealing leaves. At
 * the defaults an idle core anneals the demo in 3.3 s and makes one
 * descent pass in about 3 s, the heavy workload in 13.3 s and 15 s
 * (docs/BENCHMARKS.md). */
#define PLAN_ANNEAL_PART 0.5

/* At most this many annealing chains per search (plan_opts.threads), or
 * threads sharing the tries of a descent (plan_opts.jobs). */
#define PLAN_MAX_THREADS 8
/* The default of plan_opts.jobs: the 2 cores the planner is meant for. */
#define PLAN_JOBS 2

typedef struct plan_opts {
    uint32_t budget;        /* bytes of fast memory to fill (0: flash only) */
    uint32_t pad_limit;     /* bytes of padding the flash block may add
                               beyond its sections' sizes rounded up to 8 */
    uint32_t veneer_bytes;  /* bytes one long-call veneer costs */
    unsigned search_moves;  /* annealing moves per search (a plan runs up to
                               three searches) */
    unsigned descent_passes;/* passes of the descent after each search
                               (0: none) */
    double time_limit;      /* seconds one plan_run may take, counted from
                               t_start (0: no limit): its searches share it
                               and stop early, the RAM selection stops
                               picking, and the result says so */
    double t_start;         /* monotonic seconds (cp_now_s) the limit counts
                               from, e.g. when the command started so that
                               reading the evidence counts (0: the call of
                               plan_run) */
    uint64_t seed;
    /* Annealing chains per search, each in its own thread (1 or 0: one
     * chain, in the calling thread; at most PLAN_MAX_THREADS): every chain
     * starts from the same placement, chain 0 with the seed's sequence and
     * chain k with a sequence derived from it and k, and the best final
     * placement wins (a tie: the lowest k). With a move budget and no time
     * limit the result depends on the seed and the number of chains only. */
    unsigned threads;
    /* Threads that share the tries of the descent and of the late
     * sections' pass, each unit at every start colour (1 or 0: the calling
     * thread alone; at most PLAN_MAX_THREADS). The plan does not depend on
     * it. Not inside a chain of several (--threads): those run their
     * descents side by side already. */
    unsigned jobs;
    int verbose;            /* progress callback use */
    /* Progress: level 0 for what a terminal shows (the searches'
     * progress), 1 for details. */
    void (*progress)(void *ctx, int level, const char *msg);
    void *progress_ctx;
    /* When set (by a signal handler), the search stops early: the result
     * is then not a finished plan. May be NULL. */
    volatile sig_atomic_t *stop;
    /* When not NULL, a combined run also leaves here the plan of its
     * first search, which is the colour strategy's (the same start, seed
     * and moves; only the share of a time limit differs): running every
     * strategy, auto and compare take colour from there rather than make
     * that search twice. The caller frees it, also when the run then
     * fails. */
    struct plan_result **colour_out;
} plan_opts;

plan_opts plan_opts_default(const tgt *t);

/* Where a unit goes. */
typedef enum plan_region {
    PLAN_IN_PLACE = 0, /* where the linker puts it (after the hot block) */
    PLAN_FLASH_HOT,    /* in the hot block at offset `offset` */
    PLAN_FAST,         /* in fast memory (SRAM/ITCM) */
} plan_region;

typedef struct plan_item {
    size_t unit;          /* index into the model's units */
    plan_region region;
    uint32_t offset;      /* PLAN_FLASH_HOT: byte offset in the hot block;
                             PLAN_FAST: offset in the fast block */
    uint32_t colour;      /* start set of the unit in the hot block */
    double misses;        /* misses attributed to it before the move */
    double saved;         /* PLAN_FAST: misses per iteration the move saved */
    double samples;       /* PC samples in it, when planned from samples */
} plan_item;

/* One annealing chain over a plan's searches: chain k of each search. */
typedef struct plan_chain {
    unsigned long moves;  /* moves it made */
    unsigned time_cut;    /* searches the time limit stopped it in */
    unsigned wins;        /* searches whose result it gave */
    /* Its result in the last search: misses per warm iteration on the
     * planning iterations, evaluated in full, and as the search's
     * incremental evaluation counted them (the two agree). */
    double misses, incr_misses;
} plan_chain;

typedef struct plan_result {
    plan_strategy strategy;
    uint32_t hot_base;    /* address the hot block starts at */
    uint32_t hot_bytes;   /* size of the hot block, padding included */
    uint32_t block_end;   /* the block is padded to this size (0: none) */
    uint32_t pad_bytes;   /* padding inside it: hot_bytes less the
                             sections' sizes rounded up to 8 (what
                             pad_limit bounds) */
    uint32_t fast_bytes;  /* fast memory used, veneers included */
    uint32_t veneers;     /* long-call stubs in fast memory */
    uint32_t flash_stubs; /* long-call stubs in flash (calls into fast) */
    int stub_order;       /* they are in GNU ld's order (plan/ldstub.c) */
    uint32_t text_end;    /* predicted end of the text section */
    /* The first section after the text in flash whose new place the
     * linker script may make other than predicted (an ALIGN or `. =` its
     * stock gap does not pin down), its stock address, and the stock
     * text end; NULL when every one is sure (plan/after.c). */
    const char *after_uncertain;
    uint32_t after_uncertain_addr, stock_text_end;
    uint32_t text_start;  /* for Zephyr (plan_result_for): where the rest
                             of the text starts, after the hot block and
                             the flash copy of the relocated code; 0 when
                             it follows the hot block */
    /* Predicted warm misses per iteration (mean over planning iterations
     * after the first) and the image's stock figure on the same trace. */
    double misses, stock_misses;
    double conflict_before, conflict_after; /* misses above fully assoc. */
    double insns;         /* instructions per iteration (mean) */
    unsigned nwork;       /* workloads, and each one's predicted and stock
                             warm misses per iteration */
    double work_misses[PLAN_MAX_WORK], work_stock[PLAN_MAX_WORK];
    unsigned long moves;  /* annealing moves made, every chain's */
    int time_cut;         /* the time limit stopped a search before its
                             moves were done: the plan may differ between
                             runs */
    unsigned fast_cut;    /* RAM selections the time limit stopped before
                             they were done (they keep what they chose) */
    unsigned nchains;     /* chains per search (0: no search ran) */
    plan_chain chains[PLAN_MAX_THREADS];
    plan_item *items;     /* placed units: fast first, then hot by offset */
    size_t nitems;
} plan_result;

plan_result *plan_run(plan_model *m, plan_strategy s, const plan_opts *o,
                      cp_err *err);
void plan_result_free(plan_result *r);

/* When every strategy runs in turn (auto, compare) with this budget,
 * whether s runs on its own: not one that needs fast memory without a
 * budget, nor colour with one (combined's first search is its plan:
 * plan_opts.colour_out). */
int plan_runs_alone(plan_strategy s, uint32_t budget);
/* Of the results of every strategy (all[k]: strategy k's, or NULL), the
 * index of the one with the fewest estimated cycles, the earlier strategy
 * on a tie (within 1e-6 cycles); -1 when there is none. */
int plan_best_of(const plan_model *m, plan_result *const all[PLAN_AUTO]);
/* When every strategy runs in turn (auto, compare) with this budget under
 * one time limit: the part of the time left when s starts that s gets
 * (those after it get theirs of what it leaves). 0 for the strategies
 * without a search or a RAM selection: they take no time of their own. */
double plan_time_share(plan_strategy s, uint32_t budget);
/* The time limit (seconds) s gets when it starts with `left` seconds to
 * the deadline of the whole run: its share of them, or all of them when
 * its share is 0, and never 0 (which would mean no limit). */
double plan_time_for(plan_strategy s, uint32_t budget, double left);

/* Estimated cycles per iteration: instructions times the target's cycles
 * per instruction, plus misses times its miss cost. What strategies and
 * auto minimise. */
double plan_result_cycles(const plan_model *m, const plan_result *r);

/* Reads the long-branch stubs GNU ld made from an image relinked with a
 * plan (its __NAME_veneer symbols in cached flash, one per target) and the
 * end of its text section: later layouts of the model put the stubs of
 * those targets there instead of where the model predicts them (the order
 * ld lays its stubs out in is its hash table's). Returns the number of
 * stubs found, or -1 (err filled) when the image is not one of this model's
 * target. */
long plan_model_refine_stubs(plan_model *m, const img *relinked, cp_err *err);
/* Whether the model lays the stubs of calls from flash into fast memory out
 * in the order GNU ld 2.40 will (1), or in the order of the calls, a guess
 * (0, *why says what it lacked). */
int plan_model_stub_order(const plan_model *m, const char **why);
/* Predicts r again with the stubs read back: updates r->misses and
 * r->conflict_after. Returns 0, or -1 on OOM. */
int plan_result_refine(plan_model *m, plan_result *r, cp_err *err);

/* Evaluates a result on the model again (e.g. on more iterations). */
double plan_result_eval(plan_model *m, const plan_result *r);

/* The integrations that apply a plan, and what each can apply of it
 * (src/plan/integration.c says why). */
typedef enum plan_integration {
    PLAN_INT_GNU_LD,  /* the emitted snippets: all of it */
    PLAN_INT_ZEPHYR,  /* all of it that a name list selects exactly; the
                         rest of the text after the relocated code's
                         flash copy (text_start) */
    PLAN_INT_PICO,    /* all of the flash group; the fast group but for
                         what is not on the link line (-l libraries) and
                         names several functions have */
} plan_integration;

typedef struct plan_applied {
    size_t fast_dropped;  /* fast-memory placements left out */
    size_t flash_dropped; /* hot-block placements left out */
} plan_applied;

const char *plan_integration_name(plan_integration in);
/* Keeps out of fast memory, in m, what runs before the integration's
 * start-up has copied the relocated code there (Zephyr: the .bss clearing
 * and the copy itself, and the memset and memcpy they call). */
void plan_integration_boot(plan_model *m, plan_integration in);
/* The functions whose first entry ends the integration's start-up (its
 * relocated code is in fast memory then), in order of preference,
 * NULL-terminated, or NULL: Zephyr z_cstart, pico-sdk runtime_init then
 * main (plan/boot.c). */
const char *const *plan_integration_boot_points(plan_integration in);
/* 1 when the integration has a name list of start-up functions, and when
 * f is on it. */
int plan_integration_has_boot_names(plan_integration in);
int plan_integration_boot_named(plan_integration in, const img_func *f);

/* Start-up code from the traces (plan/boot.c): the functions a trace
 * fetched before the integration's boot-done point stay out of fast
 * memory; without a trace that reaches it, the integration's name list
 * (plan_integration_boot). Fed record by record in the plan's one pass
 * over each trace: plan_boot_trace_begin, plan_boot_rec for each record
 * (plan_read's on_rec), plan_boot_trace_end. */
typedef struct plan_boot plan_boot;
typedef struct plan_boot_counts {
    const char *point;     /* the boot-done point, or NULL (none here) */
    unsigned traces;       /* traces read */
    unsigned traces_reached; /* whose records before the first mark reach
                                the point */
    size_t by_trace;       /* functions kept out by the traces' rule */
    size_t unnamed;        /* of them, not on the name list */
    char unnamed_names[200]; /* the first few of those, ", "-separated */
    size_t by_names;       /* functions kept out by the name list (when no
                              trace reached the point) */
} plan_boot_counts;
plan_boot *plan_boot_new(const plan_model *m, plan_integration in,
                         cp_err *err);
void plan_boot_trace_begin(plan_boot *b);
void plan_boot_rec(plan_boot *b, const trc_rec *r);
void plan_boot_trace_end(plan_boot *b);
/* Keeps the start-up code out of fast memory in m (b may be NULL: the
 * name list) and says by which rule in *out (may be NULL). */
void plan_boot_apply(plan_boot *b, plan_model *m, plan_integration in,
                     plan_boot_counts *out);
void plan_boot_free(plan_boot *b);
/* 1 for a pico-sdk image (memmap_default.ld's shape: plan/picolink.c). */
int plan_model_pico(const plan_model *m);

/* Layouts of m give the hot block its own linker stubs (a Zephyr build:
 * rom_start is an output section of its own); plan_result_for(ZEPHYR)
 * evaluates with it on, the layout of its result must be written with it
 * on. */
void plan_model_hot_own_stubs(plan_model *m, int on);
/* The part of r that integration applies, re-evaluated on the model: misses
 * is its prediction. Free with plan_result_free; NULL on OOM. */
plan_result *plan_result_for(plan_model *m, const plan_result *r,
                             plan_integration in, plan_applied *ap,
                             cp_err *err);

#endif
