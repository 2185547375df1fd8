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
    /* Stubs (csim_stream_set_stubs): their functions, targets, and the
     * last fetch run (end address, function) for finding direct calls. */
    csim_stub *stubs;
    size_t nstubs, stub_fn0;
    uint8_t *fast;
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
