/* codeplace trace --info: summarise a trace file, or list its records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cmd/trace.h"
#include "trace/trace.h"
#include "util/jw.h"

void trace_print_iters(FILE *o, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(o, "%zu %llu\n", i, (unsigned long long)v[i]);
}

/* ---- --info ---- */

int trace_dump_records(cli_ctx *ctx, const char *path, int partial)
{
    cp_err err;
    trc_reader *r = trc_open_ex(path, TRC_OPEN_CONTEXT |
                                (partial ? TRC_OPEN_PARTIAL : 0), &err);
    if (!r) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    if (cli_out_open(ctx) < 0) {
        trc_close(r);
        return CLI_FAIL;
    }
    trc_rec rec;
    int rc;
    while ((rc = trc_next(r, &rec, &err)) == 1) {
        const char *fl = rec.flags & TRC_F_UNCACHED ? " u"
                         : rec.flags & TRC_F_NOALLOC ? " n" : "";
        if (rec.kind == TRC_FETCH)
            fprintf(ctx->out, "fetch 0x%08x %u %u%s\n", rec.addr, rec.len,
                    rec.ninsn, fl);
        else if (rec.kind == TRC_DREAD)
            fprintf(ctx->out, "read 0x%08x %u%s\n", rec.addr, rec.len, fl);
        else if (rec.kind == TRC_CTX)
            fprintf(ctx->out, "ctx %d\n", (int)rec.addr);
        else
            fprintf(ctx->out, "mark %u\n", rec.addr);
    }
    trc_close(r);
    if (rc < 0) {
        cli_error("%s", err.msg);
        cli_out_close(ctx);
        return CLI_FAIL;
    }
    return cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
}

int trace_info(cli_ctx *ctx, const char *path, int per_iter, int partial)
{
    cp_err err;
    trc_reader *r = trc_open_ex(path, partial ? TRC_OPEN_PARTIAL : 0, &err);
    if (!r) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    uint64_t *it = NULL, cur = 0, pre = 0, uncached = 0;
    size_t nit = 0, cap = 0;
    int in = 0, rc;
    trc_rec rec;
    while ((rc = trc_next(r, &rec, &err)) == 1) {
        if (rec.kind == TRC_MARK) {
            if (in && !cp_grow((void **)&it, &cap, nit + 1, sizeof *it))
                it[nit++] = cur;
            in = 1;
            cur = 0;
        } else if (rec.kind == TRC_FETCH) {
            if (in)
                cur += rec.ninsn;
            else
                pre += rec.ninsn;
            if (rec.flags & TRC_F_UNCACHED)
                uncached += rec.ninsn;
        }
    }
    if (rc < 0) {
        cli_error("%s", err.msg);
        free(it);
        trc_close(r);
        return CLI_FAIL;
    }
    /* The last iteration is complete when the recording ended normally. */
    const trc_totals *t = trc_get_totals(r);
    if (in && !strcmp(t->end, "done") &&
        !cp_grow((void **)&it, &cap, nit + 1, sizeof *it))
        it[nit++] = cur;
    const trc_header *h = trc_get_header(r);
    trc_spread s = trc_spread_of(it, nit);
    /* A recording without marks that ended normally is one stretch. */
    if (!nit && (t->marks || trc_truncated(r) || strcmp(t->end, "done")))
        cli_warn("%s: no complete iteration (ended: %s)", path,
                 trc_truncated(r) ? "truncated" : t->end);
    if (cli_out_open(ctx) < 0) {
        free(it);
        trc_close(r);
        return CLI_FAIL;
    }
    FILE *o = ctx->out;
    uint64_t bytes = trc_offset(r);
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 1);
        jw_obj_begin(&w);
        jw_key(&w, "file"); jw_str(&w, path);
        jw_key(&w, "bytes"); jw_uint(&w, bytes);
        jw_key(&w, "version"); jw_uint(&w, h->version);
        jw_key(&w, "target"); jw_str(&w, h->target);
        jw_key(&w, "cpu"); jw_str(&w, h->cpu);
        jw_key(&w, "elf_hash"); jw_str(&w, h->elf_hash);
        jw_key(&w, "source"); jw_str(&w, h->source);
        jw_key(&w, "end"); jw_str(&w, trc_truncated(r) ? "truncated" : t->end);
        jw_key(&w, "records"); jw_uint(&w, t->records);
        jw_key(&w, "fetch_runs"); jw_uint(&w, t->fetch_runs);
        jw_key(&w, "instructions"); jw_uint(&w, t->insns);
        jw_key(&w, "fetch_bytes"); jw_uint(&w, t->fetch_bytes);
        jw_key(&w, "uncached_instructions"); jw_uint(&w, uncached);
        jw_key(&w, "data_reads"); jw_uint(&w, t->dreads);
        jw_key(&w, "marks"); jw_uint(&w, t->marks);
        jw_key(&w, "iterations"); jw_uint(&w, nit);
        jw_key(&w, "pre_instructions"); jw_uint(&w, pre);
        jw_key(&w, "iteration_instructions");
        jw_obj_begin(&w);
        jw_key(&w, "median"); jw_uint(&w, s.median);
        jw_key(&w, "min"); jw_uint(&w, s.min);
        jw_key(&w, "max"); jw_uint(&w, s.max);
        jw_obj_end(&w);
        jw_key(&w, "bytes_per_instruction");
        jw_double(&w, t->insns ? (double)bytes / (double)t->insns : 0);
        if (per_iter) {
            jw_key(&w, "per_iteration");
            jw_arr_begin(&w);
            for (size_t i = 0; i < nit; i++)
                jw_uint(&w, it[i]);
            jw_arr_end(&w);
        }
        jw_obj_end(&w);
        jw_finish(&w);
    } else if (per_iter) {
        trace_print_iters(o, it, nit);
    } else {
        char b1[32], b2[32], b3[32], b4[32];
        fprintf(o, "trace:        %s (%s bytes, version %u)\n", path,
                cp_commas(b1, bytes), h->version);
        fprintf(o, "source:       %s\n", h->source);
        fprintf(o, "target:       %s (%s)\n", h->target, h->cpu);
        fprintf(o, "elf:          %s\n", h->elf_hash);
        fprintf(o, "ended:        %s\n",
                trc_truncated(r) ? "truncated (read up to the last complete "
                                   "block)" : t->end);
        fprintf(o, "records:      %s\n", cp_commas(b1, t->records));
        fprintf(o, "instructions: %s in %s fetch runs (%s bytes; %s "
                "uncached)\n", cp_commas(b1, t->insns),
                cp_commas(b2, t->fetch_runs), cp_commas(b3, t->fetch_bytes),
                cp_commas(b4, uncached));
        fprintf(o, "flash reads:  %s\n", cp_commas(b1, t->dreads));
        fprintf(o, "iterations:   %zu complete (%s marks; %s instructions "
                "before the first)\n", nit, cp_commas(b1, t->marks),
                cp_commas(b2, pre));
        fprintf(o, "per iteration: median %s, min %s, max %s instructions\n",
                cp_commas(b1, s.median), cp_commas(b2, s.min),
                cp_commas(b3, s.max));
        fprintf(o, "size:         %.3f bytes per instruction\n",
                t->insns ? (double)bytes / (double)t->insns : 0.0);
    }
    free(it);
    trc_close(r);
    return cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
}

