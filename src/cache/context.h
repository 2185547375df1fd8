/* csim: misses split by exception context. Replays a trace's fetches (and
 * flash data reads, as sim does) on the stock layout through one
 * set-associative model, and charges every access to the exception
 * context that made it (TRC_CTX records of a version 2 trace: thread mode,
 * SysTick, PendSV, each IRQ). Iterations as csim_analyze counts them: from
 * MARK 0 on, every mark starts one (a trailing empty one does not), the
 * first is cold, the others warm. */
#ifndef CP_CACHE_CONTEXT_H
#define CP_CACHE_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "target/target.h"
#include "util/util.h"

typedef struct csim_ctx_row {
    uint32_t ctx;       /* TRC_CTX_THREAD or the exception number */
    uint64_t insns;     /* warm iterations, summed */
    uint64_t accesses;  /* cache line lookups */
    uint64_t misses;
} csim_ctx_row;

typedef struct csim_ctx_report {
    csim_ctx_row *rows; /* by ctx, ascending */
    size_t n;
    size_t niter, from; /* iterations; the first warm one */
    uint64_t switches;  /* TRC_CTX records in the iterations */
} csim_ctx_report;

/* dreads: simulate flash data reads (0/1; -1: the target's default). */
int csim_by_context(const char *trace_path, const tgt *t, const tgt_cache *g,
                    int dreads, uint64_t seed, csim_ctx_report *out,
                    cp_err *err);
void csim_ctx_report_free(csim_ctx_report *r);
/* "thread", "NMI", "HardFault", "SVCall", "PendSV", "SysTick", "IRQ 3",
 * "exception 5", "shared handler". */
const char *csim_ctx_name(uint32_t ctx, char *buf, size_t cap);

#endif
