/* codeplace trace ELF: the report of a recording on the virtual board
 * (trace.c records). */
#include "cmd/trace.h"

#include <stdio.h>
#include <string.h>

#include "util/jw.h"

/* Harness mode: what the functions returned in r0 (for void functions,
 * whatever the code left there). */
static void print_returns(FILE *o, const run_opts *ro, const emu_stats *st)
{
    fprintf(o, "returns:      ");
    if (ro->init)
        fprintf(o, "%s 0x%08x; ", ro->init, st->init_ret);
    if (!st->ret_mismatches)
        fprintf(o, "%s %u in every iteration\n", ro->iter, ro->expect);
    else
        fprintf(o, "%s not %u in %llu of %llu iterations (first: iteration "
                "%llu, 0x%08x)\n", ro->iter, ro->expect,
                (unsigned long long)st->ret_mismatches,
                (unsigned long long)st->iterations,
                (unsigned long long)st->first_mismatch,
                st->first_mismatch_ret);
}

/* Unmodelled register reads, per register. */
static void report_unmod(FILE *o, emu *e, int json, jw *w)
{
    emu_unmod u[8];
    uint64_t total;
    size_t nregs, n = emu_unmodelled(e, u, 8, &total, &nregs);
    char b1[32];
    if (json) {
        jw_key(w, "unmodelled_reads"); jw_uint(w, total);
        jw_key(w, "unmodelled");
        jw_arr_begin(w);
        for (size_t i = 0; i < n; i++) {
            jw_obj_begin(w);
            jw_key(w, "register"); jw_str(w, u[i].name);
            jw_key(w, "address"); jw_uint(w, u[i].addr);
            jw_key(w, "reads"); jw_uint(w, u[i].reads);
            jw_obj_end(w);
        }
        jw_arr_end(w);
        return;
    }
    if (!total)
        return;
    fprintf(o, "unmodelled:   %s read%s of %zu register%s (the last value "
            "written, else 0)%s\n", cp_commas(b1, total),
            total == 1 ? "" : "s", nregs, nregs == 1 ? "" : "s", nregs > n ? "; the most read:" : ":");
    for (size_t i = 0; i < n; i++)
        fprintf(o, "              %-24s 0x%08x %s\n", u[i].name, u[i].addr,
                cp_commas(b1, u[i].reads));
}

void trace_report_run(cli_ctx *ctx, const run_opts *ro, emu *e,
                      const emu_stats *st, const trc_totals *tot,
                      uint64_t bytes, double secs, const char *result_line)
{
    FILE *o = stdout;
    trc_spread s = trc_spread_of(st->iter_insns, st->iterations);
    char b1[32], b2[32], b3[32];
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 1);
        jw_obj_begin(&w);
        jw_key(&w, "trace"); jw_str(&w, ro->count_each ? NULL : ctx->out_path);
        jw_key(&w, "mode"); jw_str(&w, ro->iter ? "harness" : "free-run");
        jw_key(&w, "end"); jw_str(&w, emu_end_name(st->end));
        jw_key(&w, "iterations"); jw_uint(&w, st->iterations);
        jw_key(&w, "instructions"); jw_uint(&w, st->insns);
        jw_key(&w, "pre_instructions"); jw_uint(&w, st->pre_insns);
        jw_key(&w, "uncached_instructions"); jw_uint(&w, st->uncached_insns);
        jw_key(&w, "iteration_instructions");
        jw_obj_begin(&w);
        jw_key(&w, "median"); jw_uint(&w, s.median);
        jw_key(&w, "min"); jw_uint(&w, s.min);
        jw_key(&w, "max"); jw_uint(&w, s.max);
        jw_obj_end(&w);
        jw_key(&w, "fetch_runs"); jw_uint(&w, tot ? tot->fetch_runs : 0);
        jw_key(&w, "data_reads"); jw_uint(&w, st->dreads);
        jw_key(&w, "periph_reads"); jw_uint(&w, st->periph_reads);
        jw_key(&w, "periph_writes"); jw_uint(&w, st->periph_writes);
        report_unmod(o, e, 1, &w);
        jw_key(&w, "bytes"); jw_uint(&w, bytes);
        jw_key(&w, "seconds"); jw_double(&w, secs);
        if (ro->per_iter) {
            jw_key(&w, "per_iteration");
            jw_arr_begin(&w);
            for (size_t i = 0; i < st->iterations; i++)
                jw_uint(&w, st->iter_insns[i]);
            jw_arr_end(&w);
        }
        if (ro->result) {
            jw_key(&w, "result");
            jw_str(&w, result_line);
        }
        if (ro->iter) {
            jw_key(&w, "returns");
            jw_obj_begin(&w);
            if (ro->init) {
                jw_key(&w, "init"); jw_uint(&w, st->init_ret);
            }
            jw_key(&w, "expected"); jw_uint(&w, ro->expect);
            jw_key(&w, "mismatches"); jw_uint(&w, st->ret_mismatches);
            if (st->ret_mismatches) {
                jw_key(&w, "first_iteration"); jw_uint(&w, st->first_mismatch);
                jw_key(&w, "first_value"); jw_uint(&w, st->first_mismatch_ret);
            }
            jw_obj_end(&w);
        }
        jw_obj_end(&w);
        jw_finish(&w);
        return;
    }
    if (ro->per_iter) {
        trace_print_iters(o, st->iter_insns, st->iterations);
        return;
    }
    if (!ro->count_each)
        fprintf(o, "trace:        %s (%s bytes, %.3f bytes per instruction)\n",
                ctx->out_path, cp_commas(b1, bytes),
                st->insns ? (double)bytes / (double)st->insns : 0.0);
    fprintf(o, "mode:         %s\n", ro->iter ? "harness" : "free-run");
    fprintf(o, "iterations:   %llu (per iteration: median %s, min %s, ",
            (unsigned long long)st->iterations, cp_commas(b1, s.median),
            cp_commas(b2, s.min));
    fprintf(o, "max %s instructions)\n", cp_commas(b3, s.max));
    fprintf(o, "instructions: %s (%s before the first iteration, %s "
            "uncached)\n", cp_commas(b1, st->insns),
            cp_commas(b2, st->pre_insns), cp_commas(b3, st->uncached_insns));
    if (!ro->count_each)
        fprintf(o, "fetch runs:   %s\n", cp_commas(b1, tot->fetch_runs));
    fprintf(o, "flash reads:  %s\n", cp_commas(b1, st->dreads));
    if (st->unplaced_reads)
        fprintf(o, "unplaced:     %s reads placed at their block's end\n",
                cp_commas(b1, st->unplaced_reads));
    fprintf(o, "peripherals:  %s reads, %s writes\n",
            cp_commas(b1, st->periph_reads), cp_commas(b2, st->periph_writes));
    report_unmod(o, e, 0, NULL);
    if (result_line)
        fprintf(o, "result:       %s\n", result_line);
    if (ro->iter && st->iterations)
        print_returns(o, ro, st);
    fprintf(o, "ended:        %s\n", emu_end_name(st->end));
}
