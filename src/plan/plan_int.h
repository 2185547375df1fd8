/* Private to src/plan: the model's layout, its evaluation through cache/
 * (plan/walk.c) and the layout builder shared by the strategies. */
#ifndef CP_PLAN_INT_H
#define CP_PLAN_INT_H

#include "cache/cache.h"
#include "plan/plan.h"

#define PLAN_FIXED UINT32_MAX      /* access outside every unit */
#define PLAN_CALL (UINT32_MAX - 1) /* a call: off = target index, len = caller */
#define PLAN_STOCKSTUB (UINT32_MAX - 3) /* a fetch of one of the stock image's
                                          stubs: off = bytes from the first,
                                          len = bytes | (caller unit + 1,
                                          or 0) << 8 */
#define PLAN_NOFILL (UINT32_MAX - 2) /* as PLAN_FIXED, through an alias that
                                        looks the cache up but never fills
                                        it (off: the cached window's address) */
#define PLAN_ADDR_FAST UINT32_MAX  /* unit placed in fast memory */

/* One access of the stream: a run of bytes [off, off + len) inside a unit,
 * or, for unit == PLAN_FIXED or PLAN_NOFILL, at absolute address off. */
typedef struct plan_acc {
    uint32_t unit;
    uint32_t off;
    uint32_t len;
} plan_acc;

/* A branch target: GNU ld makes one stub per symbol name that calls out of
 * range refer to (elf32_arm_stub_name), so a function called by two names
 * (scalbn and its alias ldexp) has two stubs, and a target is an address
 * and the name its callers' relocations use. Without relocations (no map,
 * objects that cannot be read) a target is an address (suffix NULL). */
typedef struct plan_target {
    uint32_t addr, unit;
    const char *sym;    /* the relocations' symbol, or NULL */
    const char *suffix; /* its stub's name after the group id, or NULL */
} plan_target;

/* A direct BL / B.W from one unit to another, at addr: what a relocation
 * names and what a traced call went through (sorted by addr). */
typedef struct plan_site {
    uint32_t addr, caller, target;
    uint32_t seq;       /* when ld meets its relocation (UINT32_MAX: not) */
} plan_site;

/* A call or far jump in the code from unit caller to target (an index
 * into the model's targets). */
typedef struct plan_call {
    uint32_t caller, target;
} plan_call;

/* A workload: the iterations of one trace, with the weight the plan gives
 * it. Each starts with an empty cache (its first iteration is cold) and
 * counts its misses from its second iteration on. */
typedef struct plan_work {
    const char *name;     /* the trace, or NULL */
    double weight;
    unsigned first, n;    /* iterations [first, first + n) */
} plan_work;

/* An output section after the text in flash (plan/after.c): its stock
 * place, its alignment and the gap before it that alignment does not
 * explain. */
typedef struct plan_after {
    const char *name;
    uint32_t addr, end, align;
    uint32_t amin, amax;  /* the alignments that explain its stock place */
    int64_t gap;          /* kept as it is when none does */
    int unexplained;
    int64_t copy_off;     /* load address - run address (0: not a copy) */
    int with_prev;        /* a copy at the previous copy's offset: moves
                             with it */
} plan_after;

struct plan_model {
    const img *im;
    const tgt *t;
    tgt_cache cache;
    unsigned line_shift;
    uint32_t sets;
    cp_pool *pool;

    plan_unit *units;
    size_t nunits;
    size_t align_guessed; /* units whose object file could not be read */
    /* Units of the output section the hot block goes into. */
    const char *text_name;
    uint32_t text_start, text_end;
    plan_after *after;    /* sections after the text in flash, by address */
    size_t nafter;

    plan_acc *acc;
    size_t nacc, cacc;
    size_t *iter_start;   /* iteration i: acc[iter_start[i] .. iter_start[i+1]) */
    unsigned niters;
    unsigned dropped;     /* unfinished iterations left out of the traces */
    size_t nnofill;       /* PLAN_NOFILL accesses (the set index: no LRU
                             shortcut) */
    size_t citer;
    double *iter_insns;   /* instructions per iteration */
    uint32_t last_unit;   /* unit of the last access */
    /* The last fetch run: where it ended and its last unit, for telling
     * direct calls (BL / B.W, which may need a linker stub) from calls
     * through a pointer. */
    uint32_t last_fetch_end, last_fetch_unit;
    plan_work work[PLAN_MAX_WORK];
    unsigned nwork;
    int work_open;        /* the next iteration starts a new workload */
    double work_wsum;     /* sum of the weights */
    uint64_t cache_seed;  /* the random replacement policy's seed */
    /* Testing: evaluations after the first fail_after fail as out of
     * memory (0: never). */
    unsigned long fail_after, nevals;

    /* The stream for set-associative evaluation: each run of accesses to
     * one unit (at least a line smaller than a cache way) reduced to the
     * byte ranges it touches. Such a run touches at most one line per set,
     * so what it does to each set is one line accessed one or more times
     * in a row: a hit after the first access changes no state under LRU,
     * FIFO, random or tree-PLRU, and order across sets does not matter. */
    plan_acc *zacc;
    size_t nzacc;
    size_t *ziter_start;
    int compressed;

    plan_call *calls;
    size_t ncalls, ccalls;
    plan_site *sites;
    size_t nsites, csites;
    plan_target *targets;
    size_t ntargets, ctargets;
    unsigned plan_iters;  /* iterations strategies evaluate on */
    /* Stub addresses read back from a relinked image (per target, 0: not
     * known) and its text end (plan_model_refine_stubs). */
    uint32_t *stub_fixed;
    int text_end_fixed;
    uint32_t relinked_text_end;
    /* GNU ld's order of the stubs of calls from the text section into fast
     * memory (plan/ldstub.c): stub_order says the rule could be applied
     * (else stub_order_why says why not, and stubs go in call order). */
    int stub_order;
    const char *stub_order_why;
    int stub_type;         /* elf32-arm.c's stub type in the names */
    uint32_t *unit_sec_id; /* per unit: its input section's id, or UINT32_MAX */
    uint32_t *call_seq;    /* per call: when ld meets its relocation */
    size_t *tcall_start;   /* per target: its calls are tcall[start[t]..] */
    uint32_t *tcall;
    size_t stub_nc, stub_nt; /* calls and targets when these were made */
    /* The pico-sdk link (plan/picolink.c): pico says the image is one;
     * the hot block starts at hot_start (0: the text section's start,
     * rounded up to 8); the stock image's own stubs in flash (each one's
     * name in ld's table after the group id, NULL when not known) and in
     * fast memory. */
    int pico;
    uint32_t hot_start;
    uint32_t stock_stubs, stock_stub_lo;
    const char **stock_stub_sfx;
    plan_call *stock_calls; /* (unit, stock stub) for each call through one */
    size_t nstock_calls, cstock_calls;
    double (*stock_call_ins)[PLAN_MAX_WORK][2]; /* per stock call: the
                                  instructions its stub ran, as below */
    uint32_t stock_fast_stubs;
    uint32_t *stock_fast_unit; /* per stock fast-memory stub: its target unit
                                  (UINT32_MAX: none) */
    uint32_t *stock_fast_addr; /* ... its address */
    /* ... the instructions the traces ran in it, per workload: in every
     * iteration, and in the workload's first */
    double (*stock_fast_ins)[PLAN_MAX_WORK][2];
    uint32_t veneer_bytes; /* a long-call stub the linker adds */
    /* The hot block is an output section of its own (Zephyr's rom_start):
     * GNU ld gives it its own stubs, after its last input section, for the
     * calls from it into fast memory (plan_result_for, Zephyr). */
    int hot_own_stubs;
    uint32_t veneer_insns; /* instructions one pass through it runs */
};

/* A complete placement: a new address for every unit. */
typedef struct plan_layout {
    uint32_t *addr;       /* per unit, or PLAN_ADDR_FAST */
    int64_t text_delta;   /* shift of the 8-aligned text end */
    /* Where flash reads after the text end go (plan/after.c): per section
     * of m->after its shift, before the first one after_end_delta; the
     * first section whose place is uncertain, or PLAN_NONE. */
    int64_t *after_delta;
    int64_t after_end_delta;
    uint32_t after_uncertain;
    int after_moved;
    /* Stubs for calls from flash into fast memory: GNU ld puts them after
     * the last input section of .text; one per callee. */
    uint32_t *stub;       /* per target: stub address, or 0 */
    uint32_t nstubs;
    int stub_order;       /* the stubs are in ld's order (plan/ldstub.c) */
    /* With hot_own_stubs: the hot block's stubs, per target (0: none), for
     * callers below hot_end. */
    uint32_t *stub_hot;
    uint32_t nstubs_hot, hot_end;
    uint32_t *tg;         /* scratch of plan_layout_make: the targets that
                             get a stub, in stub order (per layout, so that
                             search threads do not share it) */
    unsigned char *live;  /* scratch: the stock image's stubs that stay */
    uint32_t *stock_addr; /* per stock stub: its address (0: where it was,
                             UINT32_MAX: gone, its callers in fast memory) */
} plan_layout;

/* The model of an image's units with no link steps yet (plan/model.c);
 * plan_model_new (plan/link.c) adds them. NULL with err. */
plan_model *plan_model_make(const img *im, const tgt *t, const tgt_cache *c,
                            cp_err *err);
/* The direct calls between units and through the stock image's stubs,
 * after the pico-sdk link is known. -1 when out of memory. */
int plan_model_find_calls(plan_model *m);

/* The sections after the text (plan/after.c): read from the image once
 * the text end is known (-1: out of memory); the shifts of a layout whose
 * text now ends at new_end; where a flash read at base goes. */
int plan_model_after_setup(plan_model *m);
void plan_layout_after(const plan_model *m, plan_layout *L, uint32_t new_end);
uint64_t plan_after_move(const plan_model *m, const plan_layout *L,
                         uint64_t base);
/* Sets res->after_uncertain and the addresses with it from L. */
void plan_result_after(const plan_model *m, const plan_layout *L,
                       plan_result *res);

/* Maps an access to its first and last line under the layout; 0 when the
 * access is not cached (fast memory). A read through a non-allocating
 * alias has CSIM_NOALLOC in *l0 (as csim_cache_span takes it; mask it off
 * to count lines). Shared by the full and the incremental evaluation, so
 * both see the same stream. */
static inline int plan_acc_lines(const plan_model *m, const plan_layout *L,
                                 const plan_acc *a, uint32_t *l0,
                                 uint32_t *l1)
{
    uint64_t base;
    if (a->unit == PLAN_CALL) {
        /* Through a stub when flash code calls into fast memory: the hot
         * block's own when it has them and the caller is in it. */
        if (a->off >= m->ntargets || L->addr[a->len] == PLAN_ADDR_FAST)
            return 0;
        if (L->nstubs_hot && L->addr[a->len] < L->hot_end)
            base = L->stub_hot[a->off];
        else
            base = L->nstubs ? L->stub[a->off] : 0;
        if (!base)
            return 0;
        *l0 = (uint32_t)(base >> m->line_shift);
        *l1 = (uint32_t)((base + m->veneer_bytes - 1) >> m->line_shift);
        return 1;
    }
    if (a->unit == PLAN_STOCKSTUB) {
        /* Where ld put that stub in this layout (plan/picolink.c). */
        uint32_t s = a->off / m->veneer_bytes;
        uint32_t at = s < m->stock_stubs ? L->stock_addr[s] : UINT32_MAX;
        uint32_t caller = a->len >> 8, len = a->len & 0xff;
        if (at == UINT32_MAX ||
            (caller && L->addr[caller - 1] == PLAN_ADDR_FAST))
            return 0; /* gone, or called directly from fast memory now */
        base = at ? (uint64_t)at + a->off % m->veneer_bytes
                  : (uint64_t)m->stock_stub_lo + a->off;
        *l0 = (uint32_t)(base >> m->line_shift);
        *l1 = (uint32_t)((base + len - 1) >> m->line_shift);
        return 1;
    }
    if (a->unit == PLAN_FIXED || a->unit == PLAN_NOFILL) {
        base = a->off;
        if (base >= m->text_end && L->after_moved)
            base = plan_after_move(m, L, base);
        if (a->unit == PLAN_NOFILL) {
            *l0 = (uint32_t)(base >> m->line_shift) | CSIM_NOALLOC;
            *l1 = (uint32_t)((base + a->len - 1) >> m->line_shift);
            return 1;
        }
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

/* Iterations of workload k the evaluation simulates when asked for
 * `iters` (0: all): its first iters ones. */
static inline unsigned plan_work_iters(const plan_model *m, unsigned k,
                                       unsigned iters)
{
    unsigned n = m->work[k].n;
    return iters && iters < n ? iters : n;
}

/* The factor that turns one counted miss of workload k into its share of
 * the weighted mean per warm iteration; the first counted iteration. */
static inline double plan_work_scale(const plan_model *m, unsigned k,
                                     unsigned iters)
{
    unsigned n = plan_work_iters(m, k, iters);
    double counted = n > 1 ? n - 1 : 1;
    return m->work[k].weight / (m->work_wsum * counted);
}

static inline unsigned plan_work_warm(const plan_model *m, unsigned k,
                                      unsigned iters)
{
    return m->work[k].first + (plan_work_iters(m, k, iters) > 1);
}

typedef struct plan_eval_out {
    double misses;        /* per warm iteration (weighted mean over the
                             workloads) */
    double work_misses[PLAN_MAX_WORK]; /* each workload's own figure */
    double accesses;
    double stub_calls;    /* calls through linker stubs per warm iteration */
    double *unit_misses;  /* per unit per warm iteration, if not NULL */
} plan_eval_out;

/* late[u] (nunits bytes) = 1 for each unit with code that only the
 * iterations past the first iters (0: all) of each workload run
 * (plan_model_unplanned's sections): a search on those iterations does
 * not see where that code goes. Returns how many, or -1 (out of memory). */
long plan_model_late_units(const plan_model *m, unsigned iters,
                           unsigned char *late);

/* Builds the compressed stream (idempotent; after the evidence is in). */
int plan_model_compress(plan_model *m);

/* Thread safety: a model is read by evaluations and written only by
 * compression and by the count of evaluations (plan_model_fail_after). A
 * search thread evaluates through its own view: a copy of the struct that
 * shares the compressed evidence (read only while views are in use), with
 * its own count, starting at m's. Nothing to free; fails only on OOM
 * (compression). plan_model_views_done adds what the views of one batch
 * (made from m as it is now) counted to m's count. */
int plan_model_view(plan_model *m, plan_model *view);
void plan_model_views_done(plan_model *m, plan_model *const *views,
                           unsigned n);

/* Simulates the first iters iterations (0: all) of each workload under the
 * layout through the target's cache (its replacement policy, seeded with
 * the model's cache seed): the cache is empty at each workload's start,
 * whose first iteration is not counted unless it is the only one. Returns
 * 0, or -1 with err filled (out of memory). */
int plan_eval(const plan_model *m, const plan_layout *L, unsigned iters,
              plan_eval_out *out, cp_err *err);
/* The same through a fully associative LRU cache of equal capacity: the
 * weighted misses per warm iteration in *misses. */
int plan_eval_fa(const plan_model *m, const plan_layout *L, unsigned iters,
                 double *misses, cp_err *err);
/* The set index (cache/'s csim_setidx) of layout L for the moves of the
 * units hot[0..nhot) (index unit k is unit hot[k]; their starts must be
 * line aligned), over the first iters iterations of each workload, as
 * plan_eval counts them. The index reads L only while it is built: moves
 * are by whole lines (csim_setidx_try, remove, undo), never a reload.
 * NULL with err on failure. */
csim_setidx *plan_setidx_new(const plan_model *m, const plan_layout *L,
                             const size_t *hot, size_t nhot, unsigned iters,
                             cp_err *err);


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

/* Whether im is a pico-sdk image (its .boot2 and __logical_binary_start),
 * with *hot_start the __codeplace_hot_start of the script codeplace_apply()
 * derives, or 0. */
int plan_model_is_pico(const img *im, uint32_t *hot_start);
/* For a pico-sdk image: the hot block's start after the start-up sections
 * (which stay), the end of the code and stubs of .text, and the stock
 * image's own stubs (plan/picolink.c). Nothing for another image. -1 when
 * out of memory. */
int plan_model_pico_link(plan_model *m);
/* Whether codeplace_apply() can move unit u of a pico-sdk build to SRAM
 * (it renames the section of the one link input that defines u's first
 * name, when that is code of an object or archive on the link line). */
int plan_pico_can_rename(const plan_model *m, const plan_unit *u);
/* The stock image's stubs in fast memory that stay with r: those whose
 * target r does not move to fast memory too. */
uint32_t plan_stock_fast_stubs(const plan_model *m, const plan_result *r);
/* Counts ninsn instructions of a fetch run at addr outside the cached
 * memory when it is one of the stock image's stubs in fast memory. */
void plan_stock_fast_count(plan_model *m, uint32_t addr, uint32_t ninsn);
/* Counts ninsn instructions run in stock flash stub `stub` called from
 * unit caller. */
void plan_stock_stub_count(plan_model *m, uint32_t stub, uint32_t caller,
                           uint32_t ninsn);
/* The instructions per warm iteration of the stock image's stubs that r
 * no longer runs: those in fast memory whose target r moves there too,
 * and the passes through flash ones of calls whose caller r moves to fast
 * memory. */
double plan_stock_fast_saved(const plan_model *m, const plan_result *r);
/* The bucket of ld's stub table that the stub named suffix (after the
 * group id) of the group of unit group_unit falls in; UINT64_MAX when the
 * group's id is not known. */
uint64_t plan_ldstub_bucket(const plan_model *m, uint32_t group_unit,
                            const char *suffix);
/* Lays out the stubs of calls from flash into fast memory (tg[], n, in
 * ld's order when L->stub_order) from base on, together with the stock
 * image's own stubs that stay, in the order of ld's table when that can be
 * worked out (else the new ones first; L->stub_order is cleared): sets
 * L->stub[] and L->stock_addr[]. Returns how many stubs there are. */
uint32_t plan_place_stubs(const plan_model *m, uint32_t group,
                          const unsigned char *fast, const uint32_t *tg,
                          size_t n, uint32_t base, plan_layout *L);
/* live[s] = whether stock stub s stays with the units fast[u] in fast
 * memory (a caller of it stays in flash); returns how many stay. */
uint32_t plan_stock_stubs_live(const plan_model *m, const unsigned char *fast,
                               unsigned char *live);

/* The call site at addr (a direct BL / B.W between units), or NULL. */
const plan_site *plan_model_site_at(const plan_model *m, uint32_t addr);
/* Adds the call (caller, target t) unless it is there; -1 on OOM. */
int plan_model_add_call(plan_model *m, uint32_t caller, uint32_t t);

/* Works out the names ld will give the stubs of the model's targets and
 * the section ids of its units (plan/ldstub.c); sets stub_order. A
 * function called by several names gets a target per name (the sites and
 * calls follow). -1 only when out of memory. */
int plan_ldstub_setup(plan_model *m);
/* Orders the n targets tg[] as ld lays out the stubs of the calls to them
 * from flash (from_fast 0) or from fast memory (1), after the input section
 * of unit group_unit, with the units fast[u] in fast memory; 0, or -1 when
 * the rule does not apply (tg left in its order). */
int plan_ldstub_sort(const plan_model *m, uint32_t group_unit,
                     const unsigned char *fast, int from_fast, uint32_t *tg,
                     size_t n);
/* Closes the gaps of whole cache ways in a hot block (hot_off and fast as
 * for plan_layout_make; block_end 0 or the padded end): each section, in
 * block order, moves to the lowest free offset a whole number of ways
 * (the cache size over its ways) below where it is, and what follows the
 * block moves down by whole ways as far as the sections allow (block_end
 * is set to its new start when anything moved). No line changes its set,
 * so the misses of the moved code under every replacement policy stay the
 * same (code that stays at its stock address may share lines with it
 * differently: evaluate). Afterwards no gap between two sections is a way
 * or more. *removed: the bytes what follows the block moved down. -1 when
 * out of memory (nothing changed). */
int plan_close_way_gaps(const plan_model *m, uint32_t *hot_off,
                        const unsigned char *fast, uint32_t *block_end,
                        uint32_t *removed);

/* Puts the stubs where a relinked image had them (plan_model_refine_stubs),
 * with what follows the text section moved to where it went: after
 * plan_layout_make / plan_layout_build. Nothing when none was read. */
void plan_layout_fix_stubs(const plan_model *m, plan_layout *L);
/* The layout of result r as the linker will make it (allocated, built
 * from r's items, the stubs where a relinked image had them): 0, or -1
 * (out of memory; nothing to free). plan_layout_free it. */
int plan_layout_of(const plan_model *m, const plan_result *r, plan_layout *L);

#endif
