/* csim internals shared by stream.c, eval.c, layout.c and analyze.c. */
#ifndef CP_CACHE_STREAM_INT_H
#define CP_CACHE_STREAM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

#define NONE ((size_t)-1)

/* A run packed in 64 bits: offset (30 bits), length - 1 (12 bits), flags
 * (2 bits), function index (20 bits). */
#define MAX_LEN 4096u
#define MAX_FNS (1u << 20)
enum { RUN_DREAD = 1, RUN_UNC = 2 };
/* A stub's run (its function is one of the stream's stubs): the offset
 * field holds the calling function, the flags the side the stub serves
 * (calls from cached flash, or from memory the cache does not see); the
 * map decides at evaluation whether the call went through it. */
enum { STUB_FROM_FLASH = 1, STUB_FROM_FAST = 2 };

/* A direct call in the trace (a fetch run entering a function's start
 * right after a fetch run that ended with a BL / B.W to it): the run it
 * precedes, the branch's address, the calling function. */
typedef struct csim_call {
    size_t run;
    uint32_t site;
    uint32_t caller;
} csim_call;

static inline uint64_t run_pack(size_t fn, uint32_t off, uint32_t len,
                                unsigned fl)
{
    return (uint64_t)fn << 44 | (uint64_t)(fl & 3) << 42 |
           (uint64_t)(len - 1) << 30 | (off & 0x3fffffffu);
}
static inline size_t run_fn(uint64_t r) { return (size_t)(r >> 44); }
static inline unsigned run_flags(uint64_t r) { return (unsigned)(r >> 42) & 3; }
static inline uint32_t run_len(uint64_t r)
{
    return (uint32_t)((r >> 30) & 0xfff) + 1;
}
static inline uint32_t run_off(uint64_t r) { return (uint32_t)r & 0x3fffffffu; }

struct csim_stream {
    const img *im;
    const tgt *t;
    int dreads, marked, finished;
    uint64_t dropped;     /* csim_stream_set_dropped */
    int cut;
    csim_fn *fns;
    size_t nfns, capf, nimg;
    uint64_t *run;
    size_t nruns, capr;
    size_t *iter; /* niter + 1 entries: first run of each iteration, end */
    size_t niter, capi, capi2;
    uint64_t *iter_insns;
    uint64_t *fn_insns, *fn_insns0; /* all iterations; iteration 0 */
    size_t capfi;
    uint64_t prologue;
    uint32_t *fn_runs; /* run indices grouped by function */
    size_t *fn_start;  /* nfns + 1 */
    size_t last_fn;
    /* Direct calls (found while loading: the last fetch run's end address
     * and function), and the stubs (csim_stream_set_stubs): their
     * functions are stub_fn0 .. stub_fn0 + nstubs - 1 (stub_fn0 NONE when
     * there are none). */
    csim_call *calls;
    size_t ncalls, capc;
    csim_stub *stubs;
    size_t nstubs, stub_fn0;
    size_t nstub_runs; /* runs of stubs among the runs */
    uint32_t last_fetch_end;
    size_t last_fetch_fn;
    uint32_t *blk_ht;  /* unknown blocks: fn index + 1 */
    size_t blk_hs, nblk;
    cp_pool *pool;
};

struct csim_map {
    const csim_stream *s;
    size_t n;
    uint32_t *addr;  /* where the function is */
    uint32_t *base;  /* the address its lines are looked up by */
    uint8_t *kind;   /* csim_kind */
    uint8_t *moved;  /* ignore the trace's uncached flag once moved */
};

/* Whether stub run r (fn >= stub_fn0) is taken under m: its caller is on
 * the side it serves. */
static inline int stub_taken(const csim_map *m, uint64_t r)
{
    int fast = m->kind[run_off(r)] == CSIM_UNCACHED;
    return fast == (run_flags(r) == STUB_FROM_FAST);
}

/* The lines run r touches under m (*first with CSIM_NOALLOC when it looks
 * up without filling): 0 when it costs nothing. A stub's run costs
 * something only when its caller is on the side the stub serves. */
static inline int run_lines(const csim_map *m, uint64_t r, unsigned ls,
                            uint32_t *first, uint32_t *last)
{
    size_t fn = run_fn(r);
    unsigned k = m->kind[fn];
    if (k == CSIM_UNCACHED)
        return 0;
    if (fn >= m->s->stub_fn0) {
        if (!stub_taken(m, r))
            return 0;
        *first = (m->base[fn] >> ls) | (k == CSIM_NOFILL ? CSIM_NOALLOC : 0);
        *last = (m->base[fn] + run_len(r) - 1) >> ls;
        return 1;
    }
    if ((run_flags(r) & RUN_UNC) && !m->moved[fn])
        return 0;
    uint32_t a = m->base[fn] + run_off(r);
    *first = (a >> ls) | (k == CSIM_NOFILL ? CSIM_NOALLOC : 0);
    *last = (a + run_len(r) - 1) >> ls;
    return 1;
}

static inline unsigned log2u(uint32_t v)
{
    unsigned n = 0;
    while (v > 1) {
        v >>= 1;
        n++;
    }
    return n;
}

#endif
