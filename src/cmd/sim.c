/* codeplace sim: replay a trace through the target's cache model and say
 * how many misses one iteration costs, and why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/context.h"
#include "cli/cli.h"
#include "cli/tgtopt.h"
#include "cmd/commands.h"
#include "image/image.h"
#include "report/heat.h"
#include "target/target.h"
#include "trace/trace.h"
#include "util/jw.h"
#include "util/wfile.h"

enum {
    O_ELF, O_MAP, O_TARGET, O_CACHE, O_AS, O_UNCACHED, O_LAYOUT, O_SEED,
    O_TOP, O_BY, O_SVG, O_DREADS, O_BYCTX, O_NOPT
};

static const cli_opt opts[] = {
    [O_ELF] = {"elf", 'e', "FILE", "the traced firmware, as the ELF argument"},
    [O_MAP] = {"map", 'm', "FILE", "its GNU ld map file: adds libraries"},
    [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target name or file (default: the "
                                    "trace's)"),
    [O_CACHE] = CLI_TGT_OPT_CACHE('c'),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_UNCACHED] = CLI_TGT_OPT_UNCACHED,
    [O_LAYOUT] = {"layout", 'l', "FILE", "simulate with the functions moved "
                  "where this layout puts them (docs/formats/layout.md)"},
    [O_SEED] = {"seed", 0, "N", "seed of the random replacement policy "
                "(default 1)"},
    [O_TOP] = {"top", 0, "N", "functions listed in the text report "
               "(default 20; 0 for all)"},
    [O_BY] = {"by", 0, "TABLE", "--csv rows: iteration (default), function, "
              "library or set"},
    [O_SVG] = {"svg", 0, "FILE", "write the per-set heat map as SVG"},
    [O_DREADS] = {"dreads", 0, "yes|no", "simulate flash data reads (default:"
                  " yes for XIP caches, no for a Cortex-M7 I-cache)"},
    [O_BYCTX] = {"by-context", 0, NULL, "misses per exception context "
                 "(thread, SysTick, PendSV, each IRQ) of a QEMU recorder "
                 "trace, on the stock layout"},
    [O_NOPT] = {0},
};

static int cmd_sim_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_sim = {
    .name = "sim",
    .fn = cmd_sim_fn,
    .summary = "replay a trace through the cache model: misses per "
               "iteration and why",
    .usage = "TRACE [ELF [--map MAP]] [--target NAME|FILE] [--cache SPEC] "
             "[--as NAME] [--layout FILE]",
    .description =
        "Replays the fetches of a trace through a model of the target's cache\n"
        "(set-associative with its replacement policy), a fully associative\n"
        "LRU cache and Belady's optimal policy of the same capacity. Prints,\n"
        "per iteration (cold: the first, after a flush; warm: the others):\n"
        "accesses, hits, misses split into compulsory, capacity and conflict,\n"
        "the ideal bound, the footprint and the estimated cycles; misses per\n"
        "function and library; and how many hot lines map to each set.\n"
        "With --layout the fetches of each placed function move to its new\n"
        "address (or to RAM, where they cost no misses) before simulating.\n\n"
        "example:\n"
        "  codeplace sim run.trace fw.elf --target rp2040\n"
        "  codeplace sim run.trace fw.elf --layout plan.layout --json\n"
        "  codeplace sim run.trace fw.elf --cache 16K,4,8,plru --csv "
        "--by function\n"
        "  codeplace sim an385.trace --target mps2-an385 --as rp2040",
    .opts = opts,
    .globals = CLI_G_ALL,
};

typedef struct simctx {
    const char *trace, *elf, *layout;
    char *ltext; /* the layout file, read once */
    size_t llen;
    const img *im;
    const tgt *t;
    const csim_stream *s;
    const csim_report *r;
    csim_layout_stats lst;
    unsigned top;
} simctx;

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

static void report_text(FILE *o, const simctx *c)
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
static void report_json(FILE *o, const simctx *c)
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
static void report_csv(FILE *o, const simctx *c, int by)
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

/* ---- loading ---- */

/* What the one pass over the trace feeds besides the stream. */
typedef struct load_pass {
    cli_ctx *ctx;
    cli_tally *tally;
    uint64_t n;
} load_pass;

static int on_rec(void *arg, const trc_rec *r, cp_err *err)
{
    (void)err;
    load_pass *p = arg;
    if (p->tally)
        cli_tally_add(p->tally, r);
    if (++p->n % 50000000 == 0)
        cli_info(p->ctx, "read %llu million records",
                 (unsigned long long)(p->n / 1000000));
    return 0;
}

static csim_stream *load(cli_ctx *ctx, const char *path, const img *im,
                         const tgt *t, int dreads, cli_tally *tally)
{
    cp_err err;
    load_pass p = {ctx, tally, 0};
    csim_load_opts o = {dreads, on_rec, &p};
    csim_load_info info;
    csim_stream *s = csim_stream_load_ex(path, im, t, &o, &info, &err);
    if (!s) {
        cli_error("%s", err.msg);
        return NULL;
    }
    if (info.cut)
        cli_warn("%s: the recording was cut short; using its %llu complete "
                 "records", path, (unsigned long long)info.records);
    if (info.dropped)
        cli_warn("%s: the recording ended (%s) inside its last "
                 "iteration: %llu unfinished iteration dropped (%llu "
                 "records), complete iterations only", path,
                 info.cut ? "cut short" : info.end,
                 (unsigned long long)info.dropped,
                 (unsigned long long)info.dropped_recs);
    return s;
}

/* A trace of another image than the ELF: its functions may be misnamed
 * (a warning); with a layout, which moves the ELF's functions, an error
 * (returns -1). */
static int check_hash(const char *trace, const img *im, const char *layout)
{
    cp_err err;
    trc_reader *rd = trc_open_ex(trace, TRC_OPEN_PARTIAL, &err);
    if (!rd)
        return 0;
    const trc_header *h = trc_get_header(rd);
    int rc = 0;
    if (h->elf_hash[0] && strcmp(h->elf_hash, img_hash(im))) {
        if (layout) {
            cli_error("%s was recorded from another image (%s; %s is %s): "
                      "layout %s moves that image's functions, not the "
                      "traced ones (trace the image the layout is for)",
                      trace, h->elf_hash, img_path(im), img_hash(im), layout);
            rc = -1;
        } else {
            cli_warn("%s was recorded from another image (%s; %s is %s): "
                     "functions may be misnamed", trace, h->elf_hash,
                     img_path(im), img_hash(im));
        }
    }
    trc_close(rd);
    return rc;
}

/* A layout codeplace plan wrote for another image than the ELF: its
 * addresses follow that image's sections, not these. */
static int check_layout_image(const char *layout, const char *text,
                              size_t len, const img *im)
{
    char h[96];
    if (csim_layout_image_text(text, len, h, sizeof h) &&
        strcmp(h, img_hash(im))) {
        cli_error("%s was planned for another image (%s; %s is %s): its "
                  "addresses follow that image's sections (plan again, or "
                  "carry its name list over with codeplace apply)", layout, h,
                  img_path(im), img_hash(im));
        return -1;
    }
    return 0;
}

/* --by-context: its own pass over the trace, and its own report. */
static int by_context(cli_ctx *ctx, const char *trace, const tgt *t,
                      const tgt_cache *g, int dreads, uint64_t seed)
{
    cp_err err;
    csim_ctx_report r;
    if (csim_by_context(trace, t, g, dreads, seed, &r, &err) < 0) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    trc_reader *rd = trc_open_ex(trace, TRC_OPEN_PARTIAL, &err);
    unsigned ver = rd ? trc_get_header(rd)->version : 0;
    trc_close(rd);
    if (ver < 2 || (r.n <= 1 && !r.switches))
        cli_warn("%s: the trace holds no exception contexts (record with "
                 "trace --qemu); everything is charged to thread mode", trace);
    size_t warm = r.niter - r.from;
    uint64_t tm = 0, ti = 0, ta = 0;
    for (size_t i = 0; i < r.n; i++) {
        tm += r.rows[i].misses;
        ti += r.rows[i].insns;
        ta += r.rows[i].accesses;
    }
    if (cli_out_open(ctx) < 0) {
        csim_ctx_report_free(&r);
        return CLI_FAIL;
    }
    FILE *o = ctx->out;
    double w = warm ? (double)warm : 1.0;
    char nb[32];
    if (ctx->json) {
        jw j;
        jw_init(&j, o, 1);
        jw_obj_begin(&j);
        jw_key(&j, "trace"); jw_str(&j, trace);
        jw_key(&j, "target"); jw_str(&j, t->name);
        jw_key(&j, "iterations"); jw_uint(&j, r.niter);
        jw_key(&j, "warm_iterations"); jw_uint(&j, warm);
        jw_key(&j, "context_switches"); jw_uint(&j, r.switches);
        jw_key(&j, "contexts");
        jw_arr_begin(&j);
        for (size_t i = 0; i < r.n; i++) {
            const csim_ctx_row *x = &r.rows[i];
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
                (double)r.switches / w);
        fprintf(o, "%-16s %14s %12s %12s %7s\n", "context", "instructions",
                "accesses", "misses", "share");
        for (size_t i = 0; i < r.n; i++) {
            const csim_ctx_row *x = &r.rows[i];
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
    csim_ctx_report_free(&r);
    return cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
}

static int cmd_sim_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *arg, *map = NULL, *svg = NULL;
    int by_ctx = 0;
    cli_tgt to = {0};
    simctx c = {0};
    c.top = 20;
    uint64_t seed = 1;
    int by = 0, dreads = -1, rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_ELF: c.elf = arg; break;
        case O_MAP: map = arg; break;
        case O_TARGET: to.name = arg; break;
        case O_CACHE: to.cache = arg; break;
        case O_AS: to.as = arg; break;
        case O_UNCACHED: to.allow_uncached = 1; break;
        case O_LAYOUT: c.layout = arg; break;
        case O_SVG: svg = arg; break;
        case O_SEED:
            if (cli_arg_u64(ctx, "--seed", arg, 0, &seed) < 0)
                return CLI_USAGE;
            break;
        case O_TOP: {
            uint32_t v;
            if (cli_arg_u32(ctx, "--top", arg, 0, &v) < 0)
                return CLI_USAGE;
            c.top = v;
            break;
        }
        case O_BY:
            if (!strcmp(arg, "iteration") || !strcmp(arg, "iter"))
                by = 0;
            else if (!strcmp(arg, "function"))
                by = 1;
            else if (!strcmp(arg, "library"))
                by = 2;
            else if (!strcmp(arg, "set"))
                by = 3;
            else
                return cli_usage_error(ctx, "--by: '%s' is not iteration, "
                                       "function, library or set", arg);
            break;
        case O_BYCTX: by_ctx = 1; break;
        case O_DREADS:
            if (!strcmp(arg, "yes"))
                dreads = 1;
            else if (!strcmp(arg, "no"))
                dreads = 0;
            else
                return cli_usage_error(ctx, "--dreads: '%s' is not yes or no",
                                       arg);
            break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (cli_elf_arg(ctx, pos, &p.npos, c.elf, 0, &c.elf) < 0)
        return CLI_USAGE;
    if (p.npos != 1)
        return cli_usage_error(ctx, "sim: give one trace file (and the ELF)");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "sim: --json and --csv exclude each other");
    if (map && !c.elf)
        return cli_usage_error(ctx, "sim: --map goes with the ELF");
    if (c.layout && !c.elf)
        return cli_usage_error(ctx, "sim: --layout needs the ELF (it names "
                               "functions)");
    c.trace = pos[0];
    if ((rc = cli_tgt_resolve(ctx, &to, c.trace, NULL, 1)) != CLI_OK)
        return rc;
    c.t = &to.t;
    tgt_cache g = c.t->cache;
    cp_err err;
    if (by_ctx) {
        if (c.layout || ctx->csv)
            return cli_usage_error(ctx, "sim: --by-context excludes --layout "
                                   "and --csv");
        return by_context(ctx, c.trace, c.t, &g, dreads, seed);
    }

    img *im = NULL;
    if (c.elf) {
        im = img_open(c.elf, map, &err);
        if (!im || img_map_check(im, &err) < 0) {
            cli_error("%s", err.msg);
            img_free(im);
            return CLI_FAIL;
        }
        if (c.layout && cp_read_file(c.layout, &c.ltext, &c.llen, &err) < 0) {
            cli_error("%s", err.msg);
            img_free(im);
            return CLI_FAIL;
        }
        if (check_hash(c.trace, im, c.layout) < 0 ||
            (c.layout &&
             check_layout_image(c.layout, c.ltext, c.llen, im) < 0)) {
            free(c.ltext);
            img_free(im);
            return CLI_FAIL;
        }
    }
    c.im = im;
    int status = CLI_FAIL;
    csim_map *m = NULL;
    csim_report r = {0};
    cli_tally tally;
    cli_tally_init(&tally, c.t);
    csim_stream *s = load(ctx, c.trace, im, c.t, dreads, &tally);
    if (!s || cli_tgt_verdict(ctx, &to, &tally, c.trace) != CLI_OK)
        goto out;
    c.s = s;
    if (c.layout) {
        /* The layout's linker stubs: the direct calls the trace made go
         * through them when the layout puts caller and callee on
         * different sides (decided when the layout is evaluated). */
        csim_stub *stubs = NULL;
        size_t nstubs = 0;
        if (csim_layout_stubs_text(c.layout, c.ltext, c.llen, s, &stubs,
                                   &nstubs, &err) < 0 ||
            csim_stream_set_stubs(s, stubs, nstubs, &err) < 0) {
            csim_stubs_free(stubs, nstubs);
            cli_error("%s", err.msg);
            goto out;
        }
        csim_stubs_free(stubs, nstubs);
    }
    m = csim_map_new(s);
    if (!m) {
        cli_error("out of memory");
        goto out;
    }
    if (c.layout) {
        if (csim_layout_apply_text(c.layout, c.ltext, c.llen, s, m, &g,
                                   &c.lst, &err) < 0) {
            cli_error("%s", err.msg);
            goto out;
        }
        if (c.lst.missing)
            cli_warn("%s: %zu functions are not in %s (first: %s); skipped",
                     c.layout, c.lst.missing, c.elf, c.lst.first_missing);
    }
    cli_info(ctx, "simulating %zu iterations (%zu fetch runs)",
             csim_stream_niters(s), csim_stream_nruns(s));
    if (csim_analyze(s, m, &g, seed, &r, &err) < 0) {
        cli_error("%s: %s", c.trace, err.msg);
        goto out;
    }
    c.r = &r;
    if (svg) {
        cp_wfile wf;
        char title[256];
        snprintf(title, sizeof title, "%s: hot lines per cache set (%s)",
                 cp_basename(c.trace), c.t->name);
        if (cp_wfile_open(&wf, svg, &err) < 0) {
            cli_error("%s", err.msg);
            goto out;
        }
        cp_err herr = {{0}};
        if (rep_heat_svg(wf.f, &r, title, &herr) < 0) {
            cp_wfile_abort(&wf);
            cli_error("cannot write '%s'%s%s", svg, herr.msg[0] ? ": " : "",
                      herr.msg);
            goto out;
        }
        if (cp_wfile_commit(&wf, &err) < 0) {
            cli_error("%s", err.msg);
            goto out;
        }
    }
    if (cli_out_open(ctx) < 0)
        goto out;
    if (ctx->json)
        report_json(ctx->out, &c);
    else if (ctx->csv)
        report_csv(ctx->out, &c, by);
    else
        report_text(ctx->out, &c);
    status = cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
out:
    csim_report_free(&r);
    csim_map_free(m);
    csim_stream_free(s);
    free(c.ltext);
    img_free(im);
    return status;
}
