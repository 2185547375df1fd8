/* codeplace sim: the reports, text, JSON and CSV (sim.c parses the
 * command line and simulates). */
#include "cmd/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/heat.h"
#include "util/jw.h"

static double per_warm(const csim_report *r, uint64_t v)
{
    size_t n = r->niter - r->from;
    return n ? (double)v / (double)n : 0;
}

static int64_t capacity_of(const csim_iter *it)
{
    return (int64_t)it->fa_misses - (int64_t)it->compulsory;
}

static int64_t conflict_of(const csim_iter *it)
{
    return (int64_t)it->misses - (int64_t)it->fa_misses;
}

static const char *fname(const simctx *c, size_t fn)
{
    const csim_fn *f = csim_stream_fn(c->s, fn);
    return f->f ? f->f->pretty : f->name;
}

/* ---- text ---- */

/* v with thousands separators and dec decimals (0 or 1). */
static const char *num(char *buf, double v, int dec)
{
    char ip[32];
    int neg = v < 0;
    double a = fabs(v);
    if (dec) {
        a = floor(a * 10 + 0.5) / 10;
        uint64_t whole = (uint64_t)a;
        unsigned tenth = (unsigned)((a - (double)whole) * 10 + 0.5) % 10;
        snprintf(buf, 48, "%s%s.%u", neg ? "-" : "", cp_commas(ip, whole),
                 tenth);
    } else {
        snprintf(buf, 48, "%s%s", neg ? "-" : "",
                 cp_commas(ip, (uint64_t)(a + 0.5)));
    }
    return buf;
}

static void row(FILE *o, const char *name, double cold, double warm)
{
    char b1[48], b2[48];
    fprintf(o, "  %-22s %14s %16s\n", name, num(b1, cold, 0),
            num(b2, warm, 1));
}

static void why(FILE *o, const simctx *c)
{
    const csim_report *r = c->r;
    const csim_iter *w = &r->warm_sum;
    char b1[48], b2[48], b3[48], b4[48];
    double miss = per_warm(r, w->misses);
    double cap = per_warm(r, (uint64_t)(w->fa_misses - w->compulsory));
    double conf = miss - per_warm(r, w->fa_misses);
    double comp = per_warm(r, w->compulsory);
    double ideal = per_warm(r, w->ideal);
    double fp_bytes = r->footprint_median * r->cache.line;
    fprintf(o, "\nwhy:\n");
    if (miss < 0.5) {
        fprintf(o, "  the warm iterations run from the cache: the footprint "
                   "(%s bytes) fits and no set holds more hot lines than "
                   "ways.\n", num(b1, fp_bytes, 0));
        return;
    }
    if (fp_bytes > r->cache.size && cap <= miss)
        fprintf(o, "  the footprint, %s bytes per iteration, exceeds the "
                   "%s-byte cache: %s capacity misses per iteration (%.0f%%), "
                   "the ones a fully associative LRU cache of that size takes "
                   "too; a layout in cached flash removes them only where it "
                   "leaves a set no more hot lines than ways (the ideal bound "
                   "below is the floor), moving code to RAM removes them.\n",
                num(b1, fp_bytes, 0), num(b2, r->cache.size, 0),
                num(b3, cap, 0), 100 * cap / miss);
    else if (fp_bytes > r->cache.size)
        /* The sets' layout keeps lines a fully associative LRU cache
         * would lose: its capacity misses are more than the misses. */
        fprintf(o, "  the footprint, %s bytes per iteration, exceeds the "
                   "%s-byte cache: a fully associative LRU cache of that "
                   "size would take %s capacity misses per iteration, more "
                   "than the %s this one takes (the layout leaves sets no "
                   "more hot lines than ways where that cache would evict "
                   "them); moving code to RAM removes the rest.\n",
                num(b1, fp_bytes, 0), num(b2, r->cache.size, 0),
                num(b3, cap, 0), num(b4, miss, 0));
    else
        fprintf(o, "  the footprint, %s bytes per iteration, fits the "
                   "%s-byte cache (%s capacity misses per iteration).\n",
                num(b1, fp_bytes, 0), num(b2, r->cache.size, 0),
                num(b3, cap, 0));
    if (conf > 0)
        fprintf(o, "  %s conflict misses per iteration (%.0f%%): %s sets hold "
                   "more hot lines than %u ways; a layout can remove these.\n",
                num(b1, conf, 0), 100 * conf / miss,
                num(b2, r->overfull_sets, 0), r->cache.ways);
    else
        fprintf(o, "  no conflict misses to remove (%s: the set-associative "
                   "cache beats fully associative LRU here).\n",
                num(b1, conf, 0));
    if (comp >= 0.5)
        fprintf(o, "  %s compulsory misses per warm iteration: code first "
                   "run after iteration 0.\n", num(b1, comp, 0));
    fprintf(o, "  ideal bound: %s misses per iteration (Belady, the same "
               "capacity) against %s now.\n", num(b1, ideal, 0),
            num(b2, miss, 0));
}

void sim_report_text(FILE *o, const simctx *c)
{
    const csim_report *r = c->r;
    const csim_iter *c0 = &r->iter[0], *w = &r->warm_sum;
    char b1[48], b2[48], b3[48];
    fprintf(o, "trace:      %s (%zu complete iterations%s; %s records "
               "before the first mark)\n", c->trace, r->niter,
            csim_stream_dropped(c->s) ? ", 1 unfinished dropped" : "",
            cp_commas(b1, csim_stream_prologue(c->s)));
    if (c->elf)
        fprintf(o, "image:      %s\n", c->elf);
    fprintf(o, "target:     %s: %s-byte cache, %u-way, %u-byte lines, %s sets, "
               "%s; miss %u cycles, cpi %.2f, %.0f MHz\n", c->t->name,
            cp_commas(b2, r->cache.size), r->cache.ways, r->cache.line,
            cp_commas(b3, r->nsets), tgt_repl_name(r->cache.repl), r->cache.miss_cycles,
            r->cpi, r->clock_hz / 1e6);
    if (c->layout)
        fprintf(o, "layout:     %s (%zu placed: %zu at addresses, %zu "
                   "coloured, %zu in RAM; %zu not in the image)\n", c->layout,
                c->lst.placed, c->lst.to_flash, c->lst.coloured, c->lst.to_ram,
                c->lst.missing);
    const char *wl = r->from ? "warm (mean)" : "(one iteration)";
    fprintf(o, "\nper iteration %25s %16s\n", "cold", wl);
    const csim_iter *cw = w;
    double nw = (double)(r->niter - r->from);
    row(o, "instructions", (double)c0->insns, cw->insns / nw);
    row(o, "line accesses", (double)c0->accesses, cw->accesses / nw);
    row(o, "hits", (double)(c0->accesses - c0->misses),
        (double)(cw->accesses - cw->misses) / nw);
    row(o, "misses", (double)c0->misses, cw->misses / nw);
    row(o, "  compulsory", (double)c0->compulsory, cw->compulsory / nw);
    row(o, "  capacity", (double)capacity_of(c0),
        (double)(cw->fa_misses - cw->compulsory) / nw);
    row(o, "  conflict", (double)conflict_of(c0),
        ((double)cw->misses - (double)cw->fa_misses) / nw);
    row(o, "ideal bound", (double)c0->ideal, cw->ideal / nw);
    row(o, "footprint (lines)", c0->footprint, cw->footprint / nw);
    row(o, "footprint (bytes)", (double)c0->footprint * r->cache.line,
        cw->footprint / nw * r->cache.line);
    row(o, "est. cycles", c0->cycles, cw->cycles / nw);
    fprintf(o, "  %-22s %14.2f %16.2f\n", "est. time (us)",
            c0->cycles / r->clock_hz * 1e6, cw->cycles / nw / r->clock_hz * 1e6);
    if (r->from)
        fprintf(o, "warm misses: median %s, min %s, max %s, sd %.1f over %zu "
                   "iterations\n", num(b1, r->warm_median, 1),
                num(b2, (double)r->warm_min, 0), num(b3, (double)r->warm_max, 0),
                r->warm_sd, r->niter - r->from);
    fprintf(o, "capacity: %s lines (%s bytes); distinct lines over the trace: "
               "%s\n", cp_commas(b1, r->nsets * r->cache.ways),
            cp_commas(b2, r->cache.size), cp_commas(b3, r->distinct_lines));
    why(o, c);

    uint64_t tot = w->misses;
    unsigned n = c->top && c->top < r->nfstat ? c->top : (unsigned)r->nfstat;
    fprintf(o, "\nfunctions (%s per iteration; %u of %zu by misses):\n",
            r->from ? "warm" : "all", n, r->nfstat);
    fprintf(o, "  %-32s %7s %12s %10s %11s %6s\n", "function", "bytes",
            "instructions", "misses", "misses/byte", "share");
    for (unsigned i = 0; i < n; i++) {
        const csim_fstat *f = &r->fstat[i];
        const csim_fn *fn = csim_stream_fn(c->s, f->fn);
        double m = (double)f->misses / nw;
        fprintf(o, "  %-32s %7u %12.1f %10.1f %11.3f %5.1f%%\n", fname(c, f->fn),
                fn->size, (double)f->insns / nw, m, m / fn->size,
                tot ? 100.0 * (double)f->misses / (double)tot : 0);
    }
    fprintf(o, "\nlibraries (%s per iteration):\n", r->from ? "warm" : "all");
    fprintf(o, "  %-32s %9s %12s %10s %6s\n", "library", "functions",
            "instructions", "misses", "share");
    for (size_t i = 0; i < r->nlstat; i++) {
        const csim_lstat *l = &r->lstat[i];
        fprintf(o, "  %-32s %9zu %12.1f %10.1f %5.1f%%\n", l->name, l->funcs,
                (double)l->insns / nw, (double)l->misses / nw,
                tot ? 100.0 * (double)l->misses / (double)tot : 0);
    }
    fprintf(o, "\nsets: %s hot lines (touched in at least half the warm "
               "iterations); %s of %s sets hold more than %u\n",
            cp_commas(b1, r->hot_lines), cp_commas(b2, r->overfull_sets),
            cp_commas(b3, r->nsets), r->cache.ways);
    fprintf(o, "hot lines per set ('.' none, '*' ten or more):\n");
    rep_heat_text(o, r, 64);
}

/* ---- JSON ---- */

static void json_iter(jw *w, const csim_iter *it, uint32_t line)
{
    jw_obj_begin(w);
    jw_key(w, "instructions");
    jw_uint(w, it->insns);
    jw_key(w, "accesses");
    jw_uint(w, it->accesses);
    jw_key(w, "hits");
    jw_uint(w, it->accesses - it->misses);
    jw_key(w, "misses");
    jw_uint(w, it->misses);
    jw_key(w, "compulsory");
    jw_uint(w, it->compulsory);
    jw_key(w, "capacity");
    jw_int(w, capacity_of(it));
    jw_key(w, "conflict");
    jw_int(w, conflict_of(it));
    jw_key(w, "fully_associative");
    jw_uint(w, it->fa_misses);
    jw_key(w, "ideal");
    jw_uint(w, it->ideal);
    jw_key(w, "footprint_lines");
    jw_uint(w, it->footprint);
    jw_key(w, "footprint_bytes");
    jw_uint(w, (uint64_t)it->footprint * line);
    jw_key(w, "cycles");
    jw_double(w, it->cycles);
    jw_obj_end(w);
}

/* Functions, libraries and sets: "misses" (and "instructions", "accesses")
 * are sums over the warm iterations, "*_per_iteration" their mean. */
void sim_report_json(FILE *o, const simctx *c)
{
    const csim_report *r = c->r;
    double nw = r->niter > r->from ? (double)(r->niter - r->from) : 1;
    jw w;
    jw_init(&w, o, 1);
    jw_obj_begin(&w);
    jw_key(&w, "trace");
    jw_str(&w, c->trace);
    jw_key(&w, "elf");
    jw_str(&w, c->elf);
    jw_key(&w, "layout");
    jw_str(&w, c->layout);
    jw_key(&w, "target");
    jw_str(&w, c->t->name);
    jw_key(&w, "cache");
    jw_obj_begin(&w);
    jw_key(&w, "size");
    jw_uint(&w, r->cache.size);
    jw_key(&w, "ways");
    jw_uint(&w, r->cache.ways);
    jw_key(&w, "line");
    jw_uint(&w, r->cache.line);
    jw_key(&w, "sets");
    jw_uint(&w, r->nsets);
    jw_key(&w, "policy");
    jw_str(&w, tgt_repl_name(r->cache.repl));
    jw_key(&w, "miss_cycles");
    jw_uint(&w, r->cache.miss_cycles);
    jw_obj_end(&w);
    jw_key(&w, "cpi");
    jw_double(&w, r->cpi);
    jw_key(&w, "clock_hz");
    jw_uint(&w, r->clock_hz);
    jw_key(&w, "prologue_records");
    jw_uint(&w, csim_stream_prologue(c->s));
    jw_key(&w, "dropped_iterations");
    jw_uint(&w, csim_stream_dropped(c->s));
    jw_key(&w, "iterations");
    jw_arr_begin(&w);
    for (size_t k = 0; k < r->niter; k++)
        json_iter(&w, &r->iter[k], r->cache.line);
    jw_arr_end(&w);
    jw_key(&w, "cold");
    json_iter(&w, &r->iter[0], r->cache.line);
    jw_key(&w, "warm");
    jw_obj_begin(&w);
    jw_key(&w, "iterations");
    jw_uint(&w, r->niter - r->from);
    jw_key(&w, "misses_median");
    jw_double(&w, r->warm_median);
    jw_key(&w, "misses_mean");
    jw_double(&w, r->warm_mean);
    jw_key(&w, "misses_sd");
    jw_double(&w, r->warm_sd);
    jw_key(&w, "misses_min");
    jw_uint(&w, r->warm_min);
    jw_key(&w, "misses_max");
    jw_uint(&w, r->warm_max);
    jw_key(&w, "footprint_median");
    jw_double(&w, r->footprint_median);
    jw_key(&w, "sum");
    json_iter(&w, &r->warm_sum, r->cache.line);
    jw_obj_end(&w);
    jw_key(&w, "distinct_lines");
    jw_uint(&w, r->distinct_lines);
    jw_key(&w, "hot_lines");
    jw_uint(&w, r->hot_lines);
    jw_key(&w, "overfull_sets");
    jw_uint(&w, r->overfull_sets);
    jw_key(&w, "uncached_instructions");
    jw_uint(&w, r->uncached_insns);
    jw_key(&w, "functions");
    jw_arr_begin(&w);
    for (size_t i = 0; i < r->nfstat; i++) {
        const csim_fstat *f = &r->fstat[i];
        const csim_fn *fn = csim_stream_fn(c->s, f->fn);
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, fn->name);
        jw_key(&w, "demangled");
        jw_str(&w, fname(c, f->fn));
        jw_key(&w, "addr");
        jw_uint(&w, fn->addr);
        jw_key(&w, "size");
        jw_uint(&w, fn->size);
        jw_key(&w, "instructions");
        jw_uint(&w, f->insns);
        jw_key(&w, "accesses");
        jw_uint(&w, f->accesses);
        jw_key(&w, "misses");
        jw_uint(&w, f->misses);
        jw_key(&w, "instructions_per_iteration");
        jw_double(&w, (double)f->insns / nw);
        jw_key(&w, "misses_per_iteration");
        jw_double(&w, (double)f->misses / nw);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "libraries");
    jw_arr_begin(&w);
    for (size_t i = 0; i < r->nlstat; i++) {
        const csim_lstat *l = &r->lstat[i];
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, l->name);
        jw_key(&w, "functions");
        jw_uint(&w, l->funcs);
        jw_key(&w, "bytes");
        jw_uint(&w, l->bytes);
        jw_key(&w, "instructions");
        jw_uint(&w, l->insns);
        jw_key(&w, "misses");
        jw_uint(&w, l->misses);
        jw_key(&w, "misses_per_iteration");
        jw_double(&w, (double)l->misses / nw);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "sets");
    jw_arr_begin(&w);
    for (uint32_t s = 0; s < r->nsets; s++) {
        jw_obj_begin(&w);
        jw_key(&w, "hot");
        jw_uint(&w, r->sstat[s].hot);
        jw_key(&w, "lines");
        jw_double(&w, r->sstat[s].lines);
        jw_key(&w, "misses");
        jw_uint(&w, r->sstat[s].misses);
        jw_key(&w, "misses_per_iteration");
        jw_double(&w, (double)r->sstat[s].misses / nw);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
}

/* ---- CSV ---- */

static void csv_name(FILE *o, const char *s)
{
    if (strpbrk(s, ",\"\n")) {
        fputc('"', o);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', o);
            fputc(*s, o);
        }
        fputc('"', o);
    } else {
        fputs(s, o);
    }
}

/* The function, library and set tables are per warm iteration (mean over
 * the warm iterations; the one iteration when there is no warm one), as in
 * the text report; their column names say so. */
void sim_report_csv(FILE *o, const simctx *c, int by)
{
    const csim_report *r = c->r;
    double nw = (double)(r->niter - r->from);
    if (nw < 1)
        nw = 1;
    if (by == 0) {
        fputs("iteration,instructions,accesses,hits,misses,compulsory,capacity,"
              "conflict,ideal,footprint_lines,cycles\n", o);
        for (size_t k = 0; k < r->niter; k++) {
            const csim_iter *it = &r->iter[k];
            fprintf(o, "%zu,%llu,%llu,%llu,%llu,%llu,%lld,%lld,%llu,%u,%.1f\n",
                    k, (unsigned long long)it->insns,
                    (unsigned long long)it->accesses,
                    (unsigned long long)(it->accesses - it->misses),
                    (unsigned long long)it->misses,
                    (unsigned long long)it->compulsory,
                    (long long)capacity_of(it), (long long)conflict_of(it),
                    (unsigned long long)it->ideal, it->footprint, it->cycles);
        }
    } else if (by == 1) {
        fputs("function,addr,size,instructions_per_iteration,"
              "accesses_per_iteration,misses_per_iteration,"
              "misses_per_byte_per_iteration\n", o);
        for (size_t i = 0; i < r->nfstat; i++) {
            const csim_fstat *f = &r->fstat[i];
            const csim_fn *fn = csim_stream_fn(c->s, f->fn);
            double m = (double)f->misses / nw;
            csv_name(o, fname(c, f->fn));
            fprintf(o, ",0x%08x,%u,%.3f,%.3f,%.3f,", fn->addr, fn->size,
                    (double)f->insns / nw, (double)f->accesses / nw, m);
            if (fn->size)
                fprintf(o, "%.6f", m / fn->size);
            fputc('\n', o);
        }
    } else if (by == 2) {
        fputs("library,functions,bytes,instructions_per_iteration,"
              "misses_per_iteration\n", o);
        for (size_t i = 0; i < r->nlstat; i++) {
            const csim_lstat *l = &r->lstat[i];
            csv_name(o, l->name);
            fprintf(o, ",%zu,%llu,%.3f,%.3f\n", l->funcs,
                    (unsigned long long)l->bytes, (double)l->insns / nw,
                    (double)l->misses / nw);
        }
    } else {
        fputs("set,hot_lines,lines_per_iteration,misses_per_iteration\n", o);
        for (uint32_t s = 0; s < r->nsets; s++)
            fprintf(o, "%u,%u,%.2f,%.3f\n", s, r->sstat[s].hot,
                    r->sstat[s].lines, (double)r->sstat[s].misses / nw);
    }
}

/* ---- --by-context ---- */

/* --by-context's report: per warm iteration, each context's share. */
void sim_report_contexts(FILE *o, int json, const char *trace, const tgt *t,
                         const csim_ctx_report *r)
{
    size_t warm = r->niter - r->from;
    uint64_t tm = 0, ti = 0, ta = 0;
    for (size_t i = 0; i < r->n; i++) {
        tm += r->rows[i].misses;
        ti += r->rows[i].insns;
        ta += r->rows[i].accesses;
    }
    double w = warm ? (double)warm : 1.0;
    char nb[32];
    if (json) {
        jw j;
        jw_init(&j, o, 1);
        jw_obj_begin(&j);
        jw_key(&j, "trace"); jw_str(&j, trace);
        jw_key(&j, "target"); jw_str(&j, t->name);
        jw_key(&j, "iterations"); jw_uint(&j, r->niter);
        jw_key(&j, "warm_iterations"); jw_uint(&j, warm);
        jw_key(&j, "context_switches"); jw_uint(&j, r->switches);
        jw_key(&j, "contexts");
        jw_arr_begin(&j);
        for (size_t i = 0; i < r->n; i++) {
            const csim_ctx_row *x = &r->rows[i];
            jw_obj_begin(&j);
            jw_key(&j, "context"); jw_uint(&j, x->ctx);
            jw_key(&j, "name"); jw_str(&j, csim_ctx_name(x->ctx, nb, sizeof nb));
            jw_key(&j, "instructions"); jw_uint(&j, x->insns);
            jw_key(&j, "accesses"); jw_uint(&j, x->accesses);
            jw_key(&j, "misses"); jw_uint(&j, x->misses);
            jw_obj_end(&j);
        }
        jw_arr_end(&j);
        jw_key(&j, "misses"); jw_uint(&j, tm);
        jw_obj_end(&j);
        jw_finish(&j);
    } else {
        fprintf(o, "%s on %s: %zu warm iterations, %.1f context switches "
                "per iteration; per warm iteration:\n", trace, t->name, warm,
                (double)r->switches / w);
        fprintf(o, "%-16s %14s %12s %12s %7s\n", "context", "instructions",
                "accesses", "misses", "share");
        for (size_t i = 0; i < r->n; i++) {
            const csim_ctx_row *x = &r->rows[i];
            fprintf(o, "%-16s %14.1f %12.1f %12.1f %6.1f%%\n",
                    csim_ctx_name(x->ctx, nb, sizeof nb),
                    (double)x->insns / w, (double)x->accesses / w,
                    (double)x->misses / w,
                    tm ? 100.0 * (double)x->misses / (double)tm : 0.0);
        }
        fprintf(o, "%-16s %14.1f %12.1f %12.1f %6.1f%%\n", "total",
                (double)ti / w, (double)ta / w, (double)tm / w,
                tm ? 100.0 : 0.0);
    }
}
