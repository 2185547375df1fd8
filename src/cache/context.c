/* csim: misses by exception context (see context.h). */
#include "cache/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "trace/trace.h"

typedef struct acc {
    csim_ctx_row *rows; /* cold and warm kept apart: warm first */
    size_t n, cap;
} acc;

static csim_ctx_row *row_of(acc *a, uint32_t ctx, cp_err *err)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->rows[i].ctx == ctx)
            return &a->rows[i];
    if (cp_grow((void **)&a->rows, &a->cap, a->n + 1, sizeof *a->rows)) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    csim_ctx_row *r = &a->rows[a->n++];
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    return r;
}

static int cmp_row(const void *a, const void *b)
{
    uint32_t x = ((const csim_ctx_row *)a)->ctx;
    uint32_t y = ((const csim_ctx_row *)b)->ctx;
    return x < y ? -1 : x > y;
}

/* The lines [*first, *last] an access touches, with CSIM_NOALLOC; 0 when
 * it does not go through the cache (as the stream and map decide). */
static int lines_of(const tgt *t, unsigned ls, const trc_rec *r,
                    uint32_t *first, uint32_t *last)
{
    uint32_t a = r->kind == TRC_FETCH ? r->addr & ~1u : r->addr;
    tgt_via v = tgt_line_span(t, a, r->len, ls, first, last);
    if (v == TGT_VIA_NONE || (v == TGT_VIA_CACHE && (r->flags & TRC_F_UNCACHED)))
        return 0;
    if (v == TGT_VIA_NOFILL)
        *first |= CSIM_NOALLOC;
    return 1;
}

int csim_by_context(const char *trace_path, const tgt *t, const tgt_cache *g,
                    int dreads, uint64_t seed, csim_ctx_report *out,
                    cp_err *err)
{
    memset(out, 0, sizeof *out);
    if (dreads < 0)
        dreads = !t->icache_only;
    csim_cache *c = csim_cache_new(g, seed, err);
    if (!c)
        return -1;
    trc_reader *rd = trc_open_ex(trace_path,
                                 TRC_OPEN_PARTIAL | TRC_OPEN_CONTEXT, err);
    if (!rd) {
        csim_cache_free(c);
        return -1;
    }
    unsigned ls = 0;
    while ((1u << ls) < g->line)
        ls++;
    /* Per iteration: rows of the current one are folded into warm totals
     * when it ends, so a trailing empty iteration can be dropped. */
    acc warm = {0}, cur = {0};
    uint32_t ctx = TRC_CTX_THREAD;
    size_t niter = 0;
    uint64_t cur_insns = 0, cur_recs = 0, switches = 0, cur_sw = 0;
    int rc, marked = 0;
    trc_rec r;
    while ((rc = trc_next(rd, &r, err)) == 1) {
        if (r.kind == TRC_CTX) {
            ctx = r.addr;
            if (marked)
                cur_sw++;
            continue;
        }
        if (r.kind == TRC_MARK) {
            if (marked && niter >= 2) {
                for (size_t i = 0; i < cur.n; i++) {
                    csim_ctx_row *w = row_of(&warm, cur.rows[i].ctx, err);
                    if (!w) {
                        rc = -1;
                        break;
                    }
                    w->insns += cur.rows[i].insns;
                    w->accesses += cur.rows[i].accesses;
                    w->misses += cur.rows[i].misses;
                }
                if (rc < 0)
                    break;
                switches += cur_sw;
            }
            cur.n = 0;
            cur_insns = cur_recs = cur_sw = 0;
            marked = 1;
            niter++;
            continue;
        }
        if (!marked || (r.kind == TRC_DREAD && !dreads))
            continue;
        if (r.kind != TRC_FETCH && r.kind != TRC_DREAD)
            continue;
        csim_ctx_row *row = row_of(&cur, ctx, err);
        if (!row) {
            rc = -1;
            break;
        }
        cur_recs++;
        if (r.kind == TRC_FETCH) {
            row->insns += r.ninsn;
            cur_insns += r.ninsn;
        }
        uint32_t first, last;
        if (!lines_of(t, ls, &r, &first, &last))
            continue;
        row->accesses += (last - (first & CSIM_LINE_MASK)) + 1;
        row->misses += csim_cache_span(c, first, last);
    }
    if (rc == 0) {
        /* The last iteration, unless it is an empty trailing mark. */
        int empty = niter > 1 && !cur_recs;
        if (empty)
            niter--;
        else if (marked && niter >= 2) {
            for (size_t i = 0; i < cur.n && rc == 0; i++) {
                csim_ctx_row *w = row_of(&warm, cur.rows[i].ctx, err);
                if (!w) {
                    rc = -1;
                    break;
                }
                w->insns += cur.rows[i].insns;
                w->accesses += cur.rows[i].accesses;
                w->misses += cur.rows[i].misses;
            }
            switches += cur_sw;
        }
        if (!marked)
            rc = cp_seterr(err, "'%s': no iteration marks", trace_path);
    }
    (void)cur_insns;
    trc_close(rd);
    csim_cache_free(c);
    free(cur.rows);
    if (rc < 0) {
        free(warm.rows);
        return -1;
    }
    qsort(warm.rows, warm.n, sizeof *warm.rows, cmp_row);
    out->rows = warm.rows;
    out->n = warm.n;
    out->niter = niter;
    out->from = niter > 1 ? 1 : 0;
    out->switches = switches;
    return 0;
}

void csim_ctx_report_free(csim_ctx_report *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}

const char *csim_ctx_name(uint32_t ctx, char *buf, size_t cap)
{
    switch (ctx) {
    case TRC_CTX_THREAD: return "thread";
    case TRC_CTX_NMI: return "NMI";
    case TRC_CTX_HARDFAULT: return "HardFault";
    case 4: return "MemManage";
    case 5: return "BusFault";
    case 6: return "UsageFault";
    case TRC_CTX_SVCALL: return "SVCall";
    case 12: return "DebugMonitor";
    case TRC_CTX_PENDSV: return "PendSV";
    case TRC_CTX_SYSTICK: return "SysTick";
    case 0xffffffffu: return "shared handler";
    }
    if (ctx >= TRC_CTX_IRQ0)
        snprintf(buf, cap, "IRQ %u", ctx - TRC_CTX_IRQ0);
    else
        snprintf(buf, cap, "exception %u", ctx);
    return buf;
}
