/* csim: cache models and the analysis of a fetch stream.
 *
 * Three layers:
 *
 * 1. Models over line numbers (an address shifted right by log2(line
 *    bytes)). An access is a line number, optionally or'ed with
 *    CSIM_NOALLOC (looks up, never fills).
 *      csim_cache   set-associative; LRU, FIFO, random (seeded per set),
 *                   tree-PLRU
 *      csim_fa      fully associative LRU of a given number of lines
 *      csim_opt_run Belady's optimal replacement (needs the whole stream)
 *
 * 2. The stream: a trace loaded once into memory as a compact sequence of
 *    (function index, byte offset, length) fetch runs split into
 *    iterations, and a map that says where each function lives (address
 *    and kind of memory). Moving a function is one csim_map_move(); a full
 *    re-simulation walks the runs once (one lookup per line touched), and
 *    csim_eval_sets() re-simulates only some sets (sets are independent
 *    under every policy here, so the misses of the other sets stand).
 *    A walk (csim_walk) is the line accesses of any stream under any
 *    placement, handed over by its owner (a planner's units, stubs and
 *    workloads): csim_eval_walk simulates it whole, the set index
 *    (csim_setidx) move by move. The planner and `sim` run these same
 *    functions.
 *
 * 3. The analysis (csim_analyze): per iteration accesses, hits, misses,
 *    the 3C split, the ideal bound, footprint; per function, per library
 *    and per set figures; estimated cycles.
 *
 * Example: one move, its sets re-simulated (the set index below does this
 * for many moves)
 *
 *     cp_err err;
 *     csim_stream *s = csim_stream_new(im, t, &err);   // im may be NULL
 *     trc_rec r;                                        // from trc_next()
 *     while (trc_next(rd, &r, &err) == 1)
 *         csim_stream_add(s, &r, &err);
 *     csim_stream_finish(s, &err);
 *     csim_map *m = csim_map_new(s);                    // as traced
 *     csim_eval_result base;
 *     csim_eval(s, m, &t->cache, 1, &base, &err);       // warm misses etc.
 *
 *     uint32_t nsets = tgt_cache_sets(&t->cache);
 *     uint64_t *per_set = calloc(nsets, sizeof *per_set);
 *     csim_eval_per_set(s, m, &t->cache, 1, per_set, &err);  // all sets
 *
 *     size_t fn = csim_stream_find(s, "tcp_input");
 *     uint32_t *sets = malloc(nsets * sizeof *sets), n = 0;
 *     n = csim_func_sets(s, m, &t->cache, fn, sets, n);       // sets it leaves
 *     csim_map_move(m, fn, 0x10030000);
 *     n = csim_func_sets(s, m, &t->cache, fn, sets, n);       // and enters
 *     uint64_t *now = calloc(n, sizeof *now);
 *     csim_eval_sets(s, m, &t->cache, 1, sets, n, now, &err);
 *     // new total = old total - sum(per_set[sets[i]]) + sum(now[i])
 *
 * Library code: no printing; failures return -1 / NULL and fill cp_err.
 */
#ifndef CP_CACHE_H
#define CP_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "image/image.h"
#include "target/target.h"
#include "trace/trace.h"
#include "util/util.h"

/* ---- 1. Models over line numbers ---------------------------------- */

/* Or'ed into a line number: look up, never fill. Line numbers are below
 * 2^31 (lines are at least 2 bytes). */
#define CSIM_NOALLOC 0x80000000u
#define CSIM_LINE_MASK 0x7fffffffu

typedef struct csim_cache csim_cache;

/* A set-associative cache with geometry g (size, ways, line, repl; the
 * timing fields are not used). seed drives the random policy: each set
 * has its own generator seeded from (seed, set), so sets stay
 * independent. Returns NULL and fills err on a bad geometry or OOM. */
csim_cache *csim_cache_new(const tgt_cache *g, uint64_t seed, cp_err *err);
void csim_cache_free(csim_cache *c);
/* Empties every set and reseeds the random policy. */
void csim_cache_flush(csim_cache *c);
/* Empties one set and reseeds its generator, exactly as csim_cache_flush
 * leaves it: a set simulated alone after this sees what it sees in a
 * whole-cache run (sets are independent under every policy here). */
void csim_cache_flush_set(csim_cache *c, uint32_t set);
uint32_t csim_cache_nsets(const csim_cache *c);
/* One access (a line number, maybe | CSIM_NOALLOC): 1 hit, 0 miss. */
int csim_cache_access(csim_cache *c, uint32_t line);
/* n accesses in order; returns the misses. The fast path (2-way LRU
 * without CSIM_NOALLOC accesses) is branch-free. */
uint64_t csim_cache_run(csim_cache *c, const uint32_t *lines, size_t n);
/* Lines consecutive from first to last inclusive (a fetch run), all
 * allocating or all CSIM_NOALLOC (flag in first). Returns the misses. */
uint64_t csim_cache_span(csim_cache *c, uint32_t first, uint32_t last);

/* A fully associative LRU cache of nlines lines. */
typedef struct csim_fa csim_fa;
csim_fa *csim_fa_new(uint32_t nlines, cp_err *err);
void csim_fa_free(csim_fa *f);
void csim_fa_flush(csim_fa *f);
/* 1 hit, 0 miss; a CSIM_NOALLOC access that misses does not fill. */
int csim_fa_access(csim_fa *f, uint32_t line);

/* A stream of line accesses cut into iterations, as the analysis and
 * csim_opt_run read it. acc[i] is a line number, maybe | CSIM_NOALLOC;
 * fn[i] (optional, may be NULL) the stream function index of the access;
 * iter[k] the index of the first access of iteration k (iter[0] == 0). */
typedef struct csim_seq {
    uint32_t *acc;
    uint32_t *fn;
    size_t n;
    size_t *iter;
    size_t niter;
} csim_seq;

void csim_seq_free(csim_seq *q);

/* Belady's optimal replacement for a fully associative cache of nlines
 * lines that allocates on every miss (CSIM_NOALLOC accesses only look
 * up), over the whole of q (two passes: next-use indices, then the
 * simulation). Adds the misses of iteration k to miss[k] (q->niter
 * entries; may be NULL) and returns the total, or -1 on OOM. */
int64_t csim_opt_run(const csim_seq *q, uint32_t nlines, uint64_t *miss,
                     cp_err *err);

/* Dense ids for the distinct lines of q: id[i] for each access (flag
 * stripped), *nids distinct lines, line_of[id] (malloc'ed by the call;
 * free both). Returns 0 or -1. */
int csim_seq_ids(const csim_seq *q, uint32_t **id, uint32_t **line_of,
                 uint32_t *nids, cp_err *err);

/* ---- 2. The stream ------------------------------------------------- */

typedef struct csim_stream csim_stream;

/* Function kinds in a stream. */
enum csim_fn_flags {
    CSIM_FN_UNKNOWN = 1 << 0, /* code outside every ELF function: a 4 KiB
                                 block named "?0x..." that never moves */
    CSIM_FN_STUB = 1 << 1,    /* a linker stub a layout expects (@stub):
                                 "stub:TARGET", fetched before TARGET when a
                                 direct call from cached flash enters it */
};

/* A long-branch stub GNU ld adds for a direct call (BL / B.W) between
 * cached flash and fast memory: at addr (in the caller's memory), size
 * bytes, insns instructions run per pass, in front of the function
 * starting at target (its traced address). ld makes one stub per symbol
 * name a call's relocation uses, so a function called by two names (an
 * alias) can have two: sites[0..nsites) are then the addresses of the
 * branches (in the traced image) that use this one (nsites 0: every call
 * to target that no other stub names). */
typedef struct csim_stub {
    uint32_t addr, size, insns, target;
    uint32_t *sites;
    size_t nsites;
} csim_stub;

/* Frees st[0..n) and their sites. */
void csim_stubs_free(csim_stub *st, size_t n);

typedef struct csim_fn {
    const char *name;
    uint32_t addr;          /* where it was traced */
    uint32_t size;
    const img_func *f;      /* NULL for unknown blocks */
    unsigned flags;         /* CSIM_FN_* */
} csim_fn;

/* im (may be NULL: then all code is unknown blocks) and t must outlive the
 * stream. Data reads (TRC_DREAD) go through the cache when the target's
 * cache is unified (RP2040/RP2350 XIP); a Cortex-M7 I-cache sees only
 * fetches: see csim_stream_set_dreads. */
csim_stream *csim_stream_new(const img *im, const tgt *t, cp_err *err);
/* Overrides the default: 1 data reads are simulated, 0 ignored. Call
 * before the first csim_stream_add. */
void csim_stream_set_dreads(csim_stream *s, int on);
/* The stubs of a layout (after csim_stream_finish, before the first map is
 * made; once). The stream holds the direct calls the trace made (a fetch
 * run entering a function's start right after a fetch run that ended with
 * a BL / B.W to it, decoded from the image); each call goes through the
 * stub st[] has for its target and site on each side. Which one, if any,
 * is fetched is decided when a layout is evaluated: the one in cached
 * flash when the caller is in cached flash, the one in fast memory when
 * the caller is where the cache does not see, and the fetch is preceded by
 * the stub's lines (looked up when it is in cached flash) and adds its
 * instructions (csim_analyze). Each stub becomes a function "stub:NAME" of
 * its own, placed at its address. st's sites are not kept. */
int csim_stream_set_stubs(csim_stream *s, const csim_stub *st, size_t n,
                          cp_err *err);
/* Adds one trace record. Records before the first TRC_MARK are the
 * prologue: counted, not simulated (the cache is flushed at the first
 * mark, so iteration 0 is cold). Without any mark the whole trace is one
 * iteration. */
int csim_stream_add(csim_stream *s, const trc_rec *r, cp_err *err);
/* Ends loading; builds the per-function indices. */
int csim_stream_finish(csim_stream *s, cp_err *err);
/* Reads a whole trace file into a stream (trc_open_ex with
 * TRC_OPEN_PARTIAL: a recording cut short loads up to its last block),
 * complete iterations only (trc_next_complete). */
csim_stream *csim_stream_load(const char *trace_path, const img *im,
                              const tgt *t, cp_err *err);

/* What one pass over a trace file gives besides the stream. */
typedef struct csim_load_info {
    trc_header header;
    uint64_t records;      /* complete records read */
    int cut;               /* the file was cut short (no trailer) */
    uint64_t dropped;      /* unfinished iterations left out (0 or 1) */
    uint64_t dropped_recs; /* ... and their records */
    char end[32];          /* how the recording ended (trailer), or "" */
} csim_load_info;

/* How csim_stream_load_ex reads: dreads -1 (the target's default), 0 or 1
 * (csim_stream_set_dreads); on_rec, when not NULL, sees every record in
 * order before the stream does (a tally for the target checks, progress);
 * a negative return stops the load (its message in err). */
typedef struct csim_load_opts {
    int dreads;
    int (*on_rec)(void *arg, const trc_rec *r, cp_err *err);
    void *arg;
} csim_load_opts;

/* csim_stream_load in one pass that also gives the header, the counts and
 * each record to o->on_rec (o may be NULL); info may be NULL. */
csim_stream *csim_stream_load_ex(const char *trace_path, const img *im,
                                 const tgt *t, const csim_load_opts *o,
                                 csim_load_info *info, cp_err *err);
/* Iterations the loader left out: the unfinished last one of an
 * interrupted, limited or cut recording (0 or 1); and whether the file was
 * cut short (no trailer). Set by whoever reads the trace. */
uint64_t csim_stream_dropped(const csim_stream *s);
int csim_stream_cut(const csim_stream *s);
void csim_stream_set_dropped(csim_stream *s, uint64_t iters, int cut);
void csim_stream_free(csim_stream *s);

size_t csim_stream_nfns(const csim_stream *s);
const csim_fn *csim_stream_fn(const csim_stream *s, size_t i);
/* Index of the function named name (or "name@0xADDR" for one of several
 * with the same name), or (size_t)-1. */
size_t csim_stream_find(const csim_stream *s, const char *name);
size_t csim_stream_niters(const csim_stream *s);
/* After finish: 0 when the stream holds at least one complete iteration
 * (a mark, then records up to the next mark or the end), else -1 with an
 * error naming path and why (no marks at all, or only an empty or
 * unfinished iteration): a trace without one has nothing to simulate. */
int csim_stream_check_complete(const csim_stream *s, const char *path,
                               cp_err *err);
/* The trace's fetch and read runs (the stubs' runs not counted). */
size_t csim_stream_nruns(const csim_stream *s);
/* Instructions fetched in iteration k (all memories). */
uint64_t csim_stream_iter_insns(const csim_stream *s, size_t k);
/* Instructions of function i over iterations [from, niters); from is 0
 * (all) or 1 (the warm iterations). */
uint64_t csim_stream_fn_insns(const csim_stream *s, size_t i, size_t from);
/* Records before the first mark (not simulated). */
uint64_t csim_stream_prologue(const csim_stream *s);
const tgt *csim_stream_target(const csim_stream *s);

/* Where each function lives. */
typedef enum csim_kind {
    CSIM_CACHED,    /* allocating, cached flash */
    CSIM_NOFILL,    /* non-allocating alias: looks up, never fills */
    CSIM_UNCACHED,  /* SRAM, ITCM, uncached alias: no lookup, no miss */
} csim_kind;

typedef struct csim_map csim_map;
/* Every function where the trace ran it. */
csim_map *csim_map_new(const csim_stream *s);
csim_map *csim_map_copy(const csim_map *m);
void csim_map_free(csim_map *m);
/* Moves function fn to addr; its kind follows the target's memory there
 * (cached flash, non-allocating alias, or uncached). */
void csim_map_move(csim_map *m, size_t fn, uint32_t addr);
/* Moves fn to memory the cache does not see (SRAM, ITCM). */
void csim_map_uncache(csim_map *m, size_t fn);
uint32_t csim_map_addr(const csim_map *m, size_t fn);
csim_kind csim_map_kind(const csim_map *m, size_t fn);

/* Totals of one simulation over iterations [from, niters). */
typedef struct csim_eval_result {
    uint64_t accesses; /* line lookups */
    uint64_t misses;
    uint64_t iters;    /* iterations counted */
} csim_eval_result;

/* Re-simulates the whole stream under m with geometry g (seed 0 for the
 * random policy), counting iterations from `from` on (1: warm only; use 0
 * when the stream has one iteration). */
int csim_eval(const csim_stream *s, const csim_map *m, const tgt_cache *g,
              size_t from, csim_eval_result *out, cp_err *err);
/* Like csim_eval, and adds each set's misses (iterations >= from) to
 * per_set[set] (tgt_cache_sets(g) entries). */
int csim_eval_per_set(const csim_stream *s, const csim_map *m,
                      const tgt_cache *g, size_t from, uint64_t *per_set,
                      cp_err *err);
/* Re-simulates only sets[0..n) and writes their misses (iterations >=
 * from) to miss[0..n). Cost: the runs of the functions that touch those
 * sets under m. Results equal csim_eval_per_set's for the same sets. */
int csim_eval_sets(const csim_stream *s, const csim_map *m,
                   const tgt_cache *g, size_t from, const uint32_t *sets,
                   size_t n, uint64_t *miss, cp_err *err);
/* Adds the sets function fn's fetches touch under m (when cached) to
 * sets[0..n) unless already there; returns the new n. sets must have room
 * for tgt_cache_sets(g) entries. */
size_t csim_func_sets(const csim_stream *s, const csim_map *m,
                      const tgt_cache *g, size_t fn, uint32_t *sets, size_t n);

/* ---- Walks: line accesses under a placement ------------------------ */

/* A walk gives the accesses of a stream seen through a placement, in time
 * order, for csim_eval_walk and the set index: each access is at a time t
 * (times never decrease), touches lines first..last (first may carry
 * CSIM_NOALLOC: looks up, never fills) and belongs to unit `unit` (an
 * index below the units the index was built with; its lines then lie
 * among that unit's) or to none (CSIM_STATIC). Workloads split the time:
 * workload k starts at start[k] with an empty cache, counts its misses
 * from warm[k] on, each one weighing scale[k], and ends where the next one
 * starts. run(arg, only, emit, ctx) calls emit(ctx, ...) for every access
 * (only == CSIM_STATIC) or for unit only's accesses alone, in time order;
 * it returns 0, or -1 when emit did (stopping there). */
#define CSIM_STATIC ((size_t)-1)
#define CSIM_MAX_WORK 16
typedef int (*csim_emit_fn)(void *ctx, uint32_t t, uint32_t first,
                            uint32_t last, size_t unit);
typedef struct csim_walk {
    int (*run)(void *arg, size_t only, csim_emit_fn emit, void *ctx);
    void *arg;
    unsigned nwork;
    uint32_t start[CSIM_MAX_WORK], warm[CSIM_MAX_WORK];
    double scale[CSIM_MAX_WORK];
    int nofill;       /* some accesses carry CSIM_NOALLOC */
    void (*drop)(void *arg); /* when not NULL: frees arg with the index */
} csim_walk;

/* What one simulation of a walk gives. */
typedef struct csim_walk_eval {
    double misses;    /* sum over workloads of counted misses * scale */
    double accesses;  /* line lookups, counted and weighted alike */
    uint64_t work_misses[CSIM_MAX_WORK]; /* each workload's counted misses */
} csim_walk_eval;

/* Simulates walk w through the cache of geometry g (seed drives the
 * random policy), or, with fa, through a fully associative LRU cache of
 * the same capacity (then accesses and unit_misses stay 0). When
 * unit_misses is not NULL, each unit below nunits gets its misses times
 * its workload's scale added. 0, or -1 with err (out of memory). */
int csim_eval_walk(const tgt_cache *g, uint64_t seed, int fa,
                   const csim_walk *w, double *unit_misses, size_t nunits,
                   csim_walk_eval *out, cp_err *err);

/* ---- The set index: many moves, each re-simulating its sets --------- */

/* The set index of a walk: one time-ordered list of accesses per line of
 * each unit and per set for the rest. A move of a unit by whole lines
 * re-simulates only the sets its lines leave and enter (sets are
 * independent under every policy here), so it costs the accesses of those
 * sets, not the whole stream; under LRU a set's cold part is skipped (its
 * last distinct lines stand for it) and a move can be given up once it is
 * sure to pass a limit. Misses are weighted by the walk's workloads
 * (csim_walk_eval.misses). */
typedef struct csim_setidx csim_setidx;

/* Unit k's lines start at first_line[k] and span nlines[k] (its accesses
 * must lie there and must fill: no CSIM_NOALLOC); the index keeps a copy
 * of w (its arg must outlive the index). NULL with err on failure. */
csim_setidx *csim_setidx_build(const tgt_cache *g, uint64_t seed,
                               const csim_walk *w, size_t nunits,
                               const uint32_t *first_line,
                               const uint32_t *nlines, cp_err *err);
void csim_setidx_free(csim_setidx *x);
/* The weighted misses now. */
double csim_setidx_total(const csim_setidx *x);
/* Moves unit k to start at address addr (line aligned) and unit k2 (!= k;
 * SIZE_MAX: none) to addr2 at once, re-simulating the sets either touches
 * once, into *total. Given up once the total is sure to pass limit (only
 * under LRU; HUGE_VAL: never): *total is then above limit but not the
 * total (undo the change). A set a move of one unit alone only leaves is
 * simulated once per state of the set: the unit's next moves from there
 * (undone in between) take that figure. 0, or -1 with err (out of memory:
 * the index is then unusable). */
int csim_setidx_try(csim_setidx *x, size_t k, uint32_t addr, size_t k2,
                    uint32_t addr2, double limit, double *total, cp_err *err);
/* Takes unit k out (it goes where the cache does not see it), into
 * *total. csim_setidx_undo() puts it back. */
int csim_setidx_remove(csim_setidx *x, size_t k, double *total, cp_err *err);
/* Undoes the last try or remove (one level). */
void csim_setidx_undo(csim_setidx *x);
/* Reads unit k's accesses from the walk again (they changed: the unit now
 * spans nlines from first_line; 0 lines when it left the cache), and
 * re-simulates the sets it left and entered. Not undone by undo. */
int csim_setidx_reload(csim_setidx *x, size_t k, uint32_t first_line,
                       uint32_t nlines, cp_err *err);
/* Set s's weighted misses now. */
double csim_setidx_set_total(const csim_setidx *x, uint32_t s);
/* A set drawn with probability growing with the square of its misses from
 * a uniform r in [0, 1), and a unit with a line in it chosen by salt (or
 * SIZE_MAX when none). */
size_t csim_setidx_pick(const csim_setidx *x, double r, uint64_t salt);
/* The misses now counted in the sets unit k's used lines would occupy if
 * it started at addr. */
double csim_setidx_misses_at(const csim_setidx *x, size_t k, uint32_t addr);

/* The set index of a stream under a map (every function a unit; seed 0
 * for the random policy; misses count iterations >= from): moving a
 * function re-reads its accesses, and, when it crosses between cached and
 * uncached memory of a stream with stubs, the stubs' too. A function in a
 * non-allocating alias stays where it is. Undo a move by moving back. */
csim_setidx *csim_setidx_new(const csim_stream *s, const csim_map *m,
                             const tgt_cache *g, size_t from, cp_err *err);
/* Moves fn to addr (as csim_map_move) / to memory the cache does not see;
 * returns the new total misses, or -1 with err. */
int64_t csim_setidx_move(csim_setidx *x, size_t fn, uint32_t addr,
                         cp_err *err);
int64_t csim_setidx_uncache(csim_setidx *x, size_t fn, cp_err *err);
uint64_t csim_setidx_misses(const csim_setidx *x);
uint64_t csim_setidx_set_misses(const csim_setidx *x, uint32_t set);
/* The index's own map (where every function is now); NULL for an index
 * built from a walk. */
const csim_map *csim_setidx_map(const csim_setidx *x);

/* The line-access stream of s under m (cached and non-allocating fetches;
 * uncached ones cost nothing and are left out), with fn[] filled. */
int csim_expand(const csim_stream *s, const csim_map *m, const tgt_cache *g,
                csim_seq *out, cp_err *err);

/* ---- Layout files (docs/formats/layout.md) ------------------------- */

/* One line of a layout file as the reader gives it: its shape checked,
 * nothing looked up. */
typedef enum csim_layout_kind {
    CSIM_LAYOUT_COMMENT, /* "# ..." after the header */
    CSIM_LAYOUT_ENTRY,   /* NAME REGION PLACE SIZE REASON... */
    CSIM_LAYOUT_SHIFT,   /* @shift 0xFROM DELTA */
    CSIM_LAYOUT_STUB,    /* @stub 0xADDR SIZE INSNS TARGET (version 2) */
} csim_layout_kind;

typedef struct csim_layout_line {
    csim_layout_kind kind;
    unsigned line;    /* its number in the file, from 1 */
    unsigned version; /* the header's: 1 to 3 */
    const char *text; /* a comment: the line from its '#' */
    const char *name, *region, *place; /* an entry (place as written) */
    uint32_t size;
    uint32_t shift_from; /* @shift */
    long long shift_by;
    uint32_t stub_addr, stub_bytes, stub_insns; /* @stub */
    const char *stub_target; /* as written: NAME or NAME@0xADDR */
    const char *stub_from;   /* "from:0xSITE,..." (version 3), or NULL */
} csim_layout_line;

/* Called for each line after the header: 0 to go on, -1 with err set to
 * stop with that error, or a positive value to stop there. */
typedef int (*csim_layout_fn)(void *ctx, const csim_layout_line *l,
                              cp_err *err);

/* The one layout reader: checks the header ("# codeplace layout 1" or 2)
 * and the shape of every line of text (len bytes; path names it in
 * errors, "PATH:LINE: ..."), calls fn for each line that is not blank, in
 * order; the strings live until fn returns. Returns 0, -1 with err set
 * (the reader's error or fn's), or what positive value fn stopped with. */
int csim_layout_read(const char *path, const char *text, size_t len,
                     csim_layout_fn fn, void *ctx, cp_err *err);

typedef struct csim_layout_stats {
    size_t placed;   /* entries applied */
    size_t to_flash, to_ram, coloured;
    size_t shifted;  /* moved by an @shift line */
    size_t missing;  /* names not in the image (skipped) */
    size_t stubs;    /* @stub lines */
    char first_missing[128];
} csim_layout_stats;

/* Reads a layout file and applies it to m: each entry moves its function
 * to the address, the colour (start set; placed at a fresh line-aligned
 * address past the image whose set is the colour) or the RAM region
 * given. Errors name the file and line. */
int csim_layout_apply(const char *path, const csim_stream *s, csim_map *m,
                      const tgt_cache *g, csim_layout_stats *st, cp_err *err);
/* The @stub lines of a layout file's text in memory (len bytes;
 * docs/formats/layout.md): *out (*n entries; NULL when none; free with
 * csim_stubs_free), targets resolved by name in s. A target not in the
 * image is an error naming the file (path) and line. */
int csim_layout_stubs_text(const char *path, const char *text, size_t len,
                           const csim_stream *s, csim_stub **out, size_t *n,
                           cp_err *err);
/* csim_layout_apply from text in memory (len bytes); path names it in
 * errors. */
int csim_layout_apply_text(const char *path, const char *text, size_t len,
                           const csim_stream *s, csim_map *m,
                           const tgt_cache *g, csim_layout_stats *st,
                           cp_err *err);

/* The image hash the header of a layout file's text (len bytes) names
 * (`# target: T  image: H`, as codeplace plan writes it) into out (n
 * bytes): 1, or 0 when the header names none (a layout written by hand). */
int csim_layout_image_text(const char *text, size_t len, char *out, size_t n);

/* ---- 3. The analysis ---------------------------------------------- */

typedef struct csim_iter {
    uint64_t insns;       /* instructions (all memories) */
    uint64_t accesses;    /* line lookups through the cache */
    uint64_t misses;      /* set-associative, the target's policy */
    uint64_t fa_misses;   /* fully associative LRU, same capacity */
    uint64_t compulsory;  /* misses of an infinite cache (first touch) */
    uint64_t ideal;       /* Belady, same capacity */
    uint32_t footprint;   /* distinct lines touched */
    double cycles;        /* insns * cpi + misses * miss_cycles */
} csim_iter;
/* capacity = fa_misses - compulsory; conflict = misses - fa_misses (may be
 * negative: LRU can lose to a set-associative cache on a cyclic pass). */

typedef struct csim_fstat {
    size_t fn;            /* stream function index */
    uint64_t insns, accesses, misses; /* over the counted iterations */
} csim_fstat;

typedef struct csim_lstat {
    const char *name;     /* archive, "(objects)", "(no map)", "(unknown)" */
    size_t funcs;         /* functions with fetches */
    uint64_t bytes, insns, misses;
} csim_lstat;

typedef struct csim_sstat {
    uint32_t hot;         /* hot lines mapping to the set */
    double lines;         /* mean distinct lines per counted iteration */
    uint64_t misses;      /* over the counted iterations */
} csim_sstat;

typedef struct csim_report {
    tgt_cache cache;
    uint32_t nsets, line_shift;
    double cpi;
    uint32_t clock_hz;
    size_t niter;
    csim_iter *iter;        /* niter */
    size_t from;            /* first counted (warm) iteration: 1, or 0 when
                               there is only one */
    /* Warm summary over iterations [from, niter). */
    double warm_median, warm_mean, warm_sd;
    uint64_t warm_min, warm_max;
    csim_iter warm_sum;     /* sums over the warm iterations */
    double footprint_median;
    uint64_t distinct_lines; /* over all iterations */
    size_t nfstat;           /* functions with fetches, by misses down */
    csim_fstat *fstat;
    size_t nlstat;
    csim_lstat *lstat;       /* by misses down */
    csim_sstat *sstat;       /* nsets */
    uint32_t overfull_sets;  /* sets with more hot lines than ways */
    uint32_t hot_lines;
    uint64_t uncached_insns; /* warm, fetched from uncached memory */
} csim_report;

/* Simulates s under m with geometry g (all four models) and fills r.
 * seed drives the random policy. */
int csim_analyze(const csim_stream *s, const csim_map *m, const tgt_cache *g,
                 uint64_t seed, csim_report *r, cp_err *err);
void csim_report_free(csim_report *r);

#endif
