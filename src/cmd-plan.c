/* codeplace plan: choose where the hot code goes, write it in every form. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/planopt.h"
#include "cli/tgtopt.h"
#include "cmd-plan-samples.h"
#include "commands.h"
#include "image/image.h"
#include "plan/emit.h"
#include "plan/plan.h"
#include "target/target.h"
#include "util/jw.h"
#include "util/sig.h"
#include "util/wfile.h"
#include "verify/verify.h"

enum {
    O_ELF, O_MAP, O_TRACE, O_TARGET, O_CACHE, O_AS, O_UNCACHED, O_BUDGET, O_STRATEGY,
    O_PAD, O_EXCLUDE, O_NORAM, O_ITERS, O_PLAN_ITERS, O_MOVES, O_DESCENT,
    O_TIME, O_SEED,
    O_THREADS,    O_JOBS, O_CACHE_SEED, O_LIST, O_LAYOUT, O_EMIT, O_COMPARE, O_REFINE, O_REFINE_MAP,
    O_UNVERIFIED, O_SAMPLES, O_FOR,
    O_NOPT
};

static const cli_opt opts[] = {
    [O_ELF] = {"elf", 'e', "FILE", "the image to plan, as the ELF argument"},
    [O_MAP] = {"map", 'm', "FILE", "GNU ld map file of the same build (plans "
               "input sections, names archives)"},
    [O_TRACE] = {"trace", 0, "FILE[:WEIGHT]", "the evidence: a trace of "
                 "this image (codeplace trace); repeat for several workloads, "
                 "each weighted (default 1)"},
    [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target name or file (default: the "
                                    "first trace's)"),
    [O_CACHE] = CLI_TGT_OPT_CACHE(0),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_UNCACHED] = CLI_TGT_OPT_UNCACHED,
    [O_BUDGET] = {"budget", 'b', "BYTES", "fast memory (SRAM/ITCM) the plan may "
                  "fill, e.g. 16K (default 0: flash layout only)"},
    [O_STRATEGY] = {"strategy", 0, "NAME", "stock, hotblock, colour, ram, "
                    "combined, rank, density or auto (default: auto)"},
    [O_PAD] = CLI_PLAN_OPT_PAD("padding the hot block may add to flash"),
    [O_EXCLUDE] = {"exclude", 'x', "GLOB", "never move functions or sections "
                   "matching GLOB (repeatable)"},
    [O_NORAM] = {"no-ram", 0, "GLOB", "keep matches out of fast memory "
                 "(repeatable; e.g. a polling loop the samples overrate)"},
    [O_ITERS] = {"iterations", 'n', "N", "iterations of the trace to load "
                 "(default 32; 0: all)"},
    [O_PLAN_ITERS] = {"plan-iterations", 0, "N", "iterations each candidate "
                      "is evaluated on while searching (default 3)"},
    [O_MOVES] = {"search-moves", 0, "N", "annealing moves per search (default "
                 CLI_PLAN_STR(PLAN_SEARCH_MOVES) "; each re-simulates the "
                 "sets it changes)"},
    [O_DESCENT] = {"descent-passes", 0, "N", "passes of the descent after "
                   "each annealing search: every hot section tried at every "
                   "start colour, the best kept (default "
                   CLI_PLAN_STR(PLAN_DESCENT_PASSES) "; 0: none)"},
    [O_TIME] = {"time", 0, "SECONDS", "wall-clock limit of the whole plan "
                "from the command's start, reading the evidence included "
                "(default 60; 0: none); a search that would not make its "
                "moves in it cools with the clock and stops early (the "
                "annealing in the first half of its part, the descent in the "
                "rest), a RAM selection stops picking, and both are reported"},
    [O_SEED] = {"seed", 0, "N", "seed of the search (default 1): the same "
                "inputs and seed give the same plan"},
    [O_THREADS] = {"threads", 0, "N", "annealing chains per search, each in "
                   "its own thread, the best one kept (default 1; 2 is "
                   "opt-in: on a busy machine it was as often worse under "
                   "--time); the same inputs, seed and N give the same plan"},
    [O_JOBS] = {"jobs", 'j', "N", "threads that share the descent's tries "
                "(each section at every start colour) and the late sections' "
                "pass (default 2; 1: one thread); the plan is the same for "
                "any N"},
    [O_CACHE_SEED] = {"cache-seed", 0, "N", "seed of the random replacement "
                      "policy, as codeplace sim --seed (default 1)"},
    [O_LIST] = {"list", 0, "FILE", "write the name list"},
    [O_LAYOUT] = {"layout", 'l', "FILE", "write the layout file (for "
                  "codeplace sim --layout)"},
    [O_EMIT] = {"emit", 0, "DIR", "write the GNU ld, Zephyr and pico-sdk "
                "snippets into DIR"},
    [O_COMPARE] = {"compare", 0, NULL, "plan with every strategy and print "
                   "them side by side"},
    [O_REFINE] = {"refine-from", 0, "ELF", "the image relinked with this plan: "
                   "read the linker's stub addresses back from it and predict "
                   "again (an error unless every placed function is where "
                   "this plan puts it)"},
    [O_REFINE_MAP] = {"refine-map", 0, "FILE", "GNU ld map file of the "
                      "--refine-from image"},
    [O_UNVERIFIED] = {"unverified", 0, NULL, "plan even when the map "
                      "disagrees with the ELF (the prediction is marked "
                      "unverified)"},
    [O_SAMPLES] = {"samples", 0, "FILE", "PC samples of this image "
                   "(codeplace record): alone, a ranking by samples per byte "
                   "(no prediction); with --trace, one more candidate, "
                   "evaluated on the trace"},
    [O_FOR] = {"for", 0, "BUILD", "the build that applies the plan: gnu-ld "
               "(default: the GNU ld snippets of --emit) or zephyr (the "
               "codeplace Zephyr module: the list, the layout and the "
               "prediction are for that build; docs/zephyr.md)"},
    [O_NOPT] = {0},
};

static int cmd_plan_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_plan = {
    .name = "plan",
    .fn = cmd_plan_fn,
    .summary = "choose functions for SRAM/ITCM and colour the hot code in flash",
    .usage = "ELF --map MAP --trace TRACE|--samples SAMPLES [--target NAME|FILE] "
             "[--budget BYTES] [--list FILE] [--emit DIR]",
    .description =
        "Plans in input sections (what a linker can move) and names functions\n"
        "in its output. Every candidate layout is evaluated exactly: the\n"
        "trace is replayed through the target's cache with the moved sections'\n"
        "fetches remapped. Strategies:\n"
        "  hotblock  the hot sections contiguous at the start of .text, in the\n"
        "            order the code first runs\n"
        "  colour    each hot section at a chosen cache set (with padding),\n"
        "            from a temporal relationship graph, then simulated\n"
        "            annealing on exact re-simulation\n"
        "  ram       fast memory filled by re-simulated misses saved per byte\n"
        "  combined  colour, ram on that layout, colour of the rest again\n"
        "  rank      baseline: fast memory filled by instructions per byte\n"
        "  density   baseline: fast memory filled by stock misses per byte\n"
        "  auto      all of the above; the one with the fewest misses\n\n"
        "With --samples instead of --trace (PC samples from a board): fast\n"
        "memory by samples per byte, tight loops (busy-waits, copy loops:\n"
        "samples in a short backward branch) left out, flash as linked.\n"
        "--strategy hotblock (the default with no --budget) also gathers the\n"
        "hottest of the rest, up to one cache size, at the start of flash in\n"
        "link order: from samples alone that can add misses as well as\n"
        "remove them. That is a ranking, not a prediction: no miss figure\n"
        "is printed; measure before and after with codeplace counters. With\n"
        "both, the samples' hot block plan is one more candidate, simulated\n"
        "on the trace.\n\n"
        "example:\n"
        "  codeplace trace fw.elf --target rp2040 -n 50 -o run.trace\n"
        "  codeplace plan fw.elf --map fw.map --trace run.trace --target rp2040 \\\n"
        "      --budget 16K --list hot.list --emit place/",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

static void progress(void *c, int level, const char *msg)
{
    cli_ctx *ctx = c;
    if (level == 0)
        cli_info(ctx, "plan: %s", msg);
    else
        cli_debug(ctx, "plan: %s", msg);
}

/* "FILE" or "FILE:WEIGHT" (a positive number after the last colon). */
static int parse_trace_arg(cli_ctx *ctx, const char *arg, char *path,
                           size_t cap, double *weight)
{
    const char *colon = strrchr(arg, ':');
    *weight = 1;
    size_t n = strlen(arg);
    if (colon && colon[1]) {
        char *end;
        double w = strtod(colon + 1, &end);
        if (*end == 0) {
            if (!(w > 0) || w > 1e6)
                return cli_usage_error(ctx, "--trace %s: the weight must be a "
                                       "positive number", arg), -1;
            *weight = w;
            n = (size_t)(colon - arg);
        }
    }
    if (n == 0 || n >= cap)
        return cli_usage_error(ctx, "--trace '%s': no file name", arg), -1;
    memcpy(path, arg, n);
    path[n] = 0;
    return 0;
}

/* After a stop signal: no artefact of an unfinished search is written. */
static int stopped(void)
{
    if (!cp_sig_stop)
        return 0;
    cli_error("interrupted by %s: the search did not finish; nothing written",
              cp_sig_name(cp_sig_last()));
    return 1;
}

static double cycles(const tgt *t, const tgt_cache *c, double insns,
                     double misses)
{
    return insns * t->cpi + misses * c->miss_cycles;
}

static void row_text(FILE *o, const plan_model *m, const tgt *t,
                     const tgt_cache *c, const char *name,
                     const plan_result *r)
{
    double cyc = cycles(t, c, r->insns, r->misses);
    double stock = cycles(t, c, plan_model_insns(m), r->stock_misses);
    char conflict[32] = "-"; /* not simulated for the samples' plan */
    if (strncmp(name, "samples", 7))
        snprintf(conflict, sizeof conflict, "%.1f", r->conflict_after);
    fprintf(o, "%-10s %8u %8u %10.1f %10s %10.0f %7.2fx\n", name,
            r->fast_bytes, r->pad_bytes, r->misses, conflict, cyc,
            cyc > 0 ? stock / cyc : 0.0);
}

static void result_json(jw *w, const plan_model *m, const tgt *t,
                        const tgt_cache *c, const plan_result *r,
                        double unrefined, const char *name)
{
    int sampled = name != NULL; /* the samples' plan: no 3C split */
    jw_obj_begin(w);
    jw_key(w, "strategy");
    jw_str(w, name ? name : plan_strategy_name(r->strategy));
    jw_key(w, "misses_per_iteration");
    jw_double(w, r->misses);
    if (unrefined >= 0) {
        /* --refine-from: the prediction before the stubs were read back */
        jw_key(w, "misses_before_refine");
        jw_double(w, unrefined);
    }
    jw_key(w, "stock_misses_per_iteration");
    jw_double(w, r->stock_misses);
    jw_key(w, "conflict_misses_before");
    if (sampled)
        jw_null(w);
    else
        jw_double(w, r->conflict_before);
    jw_key(w, "conflict_misses_after");
    if (sampled)
        jw_null(w);
    else
        jw_double(w, r->conflict_after);
    jw_key(w, "instructions_per_iteration");
    jw_double(w, r->insns);
    jw_key(w, "search_moves");
    jw_uint(w, r->moves);
    jw_key(w, "stopped_by_time");
    jw_bool(w, r->time_cut);
    jw_key(w, "fast_selections_stopped_by_time");
    jw_uint(w, r->fast_cut);
    /* The annealing chains of its searches (--threads). */
    jw_key(w, "chains");
    jw_arr_begin(w);
    for (unsigned k = 0; k < r->nchains; k++) {
        const plan_chain *ch = &r->chains[k];
        jw_obj_begin(w);
        jw_key(w, "moves");
        jw_uint(w, ch->moves);
        jw_key(w, "searches_stopped_by_time");
        jw_uint(w, ch->time_cut);
        jw_key(w, "searches_won");
        jw_uint(w, ch->wins);
        jw_key(w, "last_misses_per_iteration");
        jw_double(w, ch->misses);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_key(w, "workloads");
    jw_arr_begin(w);
    for (unsigned k = 0; k < r->nwork; k++) {
        double wt;
        const char *wname = plan_model_workload(m, k, &wt);
        jw_obj_begin(w);
        jw_key(w, "trace");
        jw_str(w, wname);
        jw_key(w, "weight");
        jw_double(w, wt);
        jw_key(w, "misses_per_iteration");
        jw_double(w, r->work_misses[k]);
        jw_key(w, "stock_misses_per_iteration");
        jw_double(w, r->work_stock[k]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_key(w, "est_cycles_per_iteration");
    jw_double(w, cycles(t, c, r->insns, r->misses));
    jw_key(w, "stock_instructions_per_iteration");
    jw_double(w, plan_model_insns(m));
    jw_key(w, "stock_est_cycles_per_iteration");
    jw_double(w, cycles(t, c, plan_model_insns(m), r->stock_misses));
    jw_key(w, "fast_bytes");
    jw_uint(w, r->fast_bytes);
    jw_key(w, "veneers");
    jw_uint(w, r->veneers);
    jw_key(w, "flash_stubs");
    jw_uint(w, r->flash_stubs);
    /* Where the prediction puts them: read back from a relinked image, in
     * GNU ld's order (plan/ldstub.c), or in the order of the calls. */
    jw_key(w, "stub_order");
    jw_str(w, unrefined >= 0 ? "relinked" : r->stub_order ? "ld" : "guess");
    jw_key(w, "text_end");
    jw_uint(w, r->text_end);
    /* the section after the text whose move is uncertain, or null */
    jw_key(w, "after_text_uncertain");
    if (r->after_uncertain)
        jw_str(w, r->after_uncertain);
    else
        jw_null(w);
    jw_key(w, "hot_base");
    jw_uint(w, r->hot_base);
    jw_key(w, "hot_bytes");
    jw_uint(w, r->hot_bytes);
    jw_key(w, "pad_bytes");
    jw_uint(w, r->pad_bytes);
    jw_key(w, "items");
    jw_arr_begin(w);
    for (size_t i = 0; i < r->nitems; i++) {
        const plan_item *it = &r->items[i];
        const plan_unit *u = plan_model_unit(m, it->unit);
        jw_obj_begin(w);
        jw_key(w, "name");
        jw_str(w, u->name);
        jw_key(w, "section");
        jw_str(w, u->isec);
        jw_key(w, "archive");
        jw_str(w, u->archive);
        jw_key(w, "object");
        jw_str(w, u->object);
        jw_key(w, "region");
        jw_str(w, it->region == PLAN_FAST ? t->fast_mem : "flash");
        jw_key(w, "offset");
        jw_uint(w, it->offset);
        if (it->region == PLAN_FLASH_HOT) {
            jw_key(w, "set");
            jw_uint(w, it->colour);
        }
        jw_key(w, "size");
        jw_uint(w, u->size);
        jw_key(w, sampled ? "samples" : "stock_misses");
        jw_double(w, sampled ? it->samples : it->misses);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
}

static int write_file(const char *path, const char *what,
                      int (*fn)(FILE *, void *), void *arg)
{
    cp_wfile w;
    cp_err err;
    if (cp_wfile_open(&w, path, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    errno = 0;
    if (fn(w.f, arg) < 0) {
        int e = errno;
        cp_wfile_abort(&w);
        cli_error("cannot write %s '%s': %s", what, path,
                  e ? strerror(e) : "write error");
        return -1;
    }
    if (cp_wfile_commit(&w, &err) < 0) {
        cli_error("%s %s", what, err.msg);
        return -1;
    }
    return 0;
}

typedef struct emit_args {
    const plan_model *m;
    const plan_result *r;
    const plan_emit_info *info;
} emit_args;

static int do_list(FILE *f, void *a)
{
    emit_args *e = a;
    return plan_emit_list(f, e->m, e->r, e->info);
}

static int do_layout(FILE *f, void *a)
{
    emit_args *e = a;
    cp_err err;
    int rc = plan_emit_layout(f, e->m, e->r, e->info, &err);
    if (rc < 0)
        cli_error("%s", err.msg);
    return rc;
}

/* The budget must fit the fast memory plans fill. */
static int check_budget(cli_ctx *ctx, const tgt *t, uint32_t budget)
{
    const tgt_mem *f = tgt_mem_named(t, t->fast_mem);
    if (!f)
        return cli_usage_error(ctx, "--budget: target %s has no fast memory "
                               "'%s'", t->name, t->fast_mem);
    if (budget > f->size) {
        char b[32], s[32];
        return cli_usage_error(ctx, "--budget %s bytes does not fit %s's %s "
                               "(%s bytes at 0x%08x)", cli_commas(b, budget),
                               t->name, f->name, cli_commas(s, f->size),
                               f->base);
    }
    return CLI_OK;
}

/* What the command line asks for (parse_args fills it). */
typedef struct plan_args {
    const char **excl, **noram, **traces;
    int nexcl, nnoram, ntraces, compare, allow_unverified;
    const char *elf, *map, *list, *layout, *emit;
    int for_zephyr; /* --for zephyr */
    const char *refine, *refine_map, *samples;
    char (*tpath)[1024]; /* the traces' files and weights */
    double *tweight;
    cli_tgt to;
    const tgt *t; /* &to.t once resolved */
    tgt_cache c;
    plan_strategy strategy;
    uint32_t budget, pad, iters, plan_iters, moves, descent;
    uint32_t threads; /* 0: the default (one chain) */
    uint32_t jobs;    /* 0: the default (PLAN_JOBS) */
    uint64_t seed, cache_seed;
    double time_limit;
    double t_start;       /* when the command started (cp_now_s) */
} plan_args;

/* What a run made (run_plan fills it; plan_state_free frees it). */
typedef struct plan_state {
    img *im;
    plan_model *m;
    plan_result *res[PLAN_NSTRATEGIES];
    plan_result *sres; /* the samples' plan next to a trace, or NULL */
    plan_result *best;
    plan_result *zres; /* best as the Zephyr module applies it (--for) */
    double unrefined[PLAN_NSTRATEGIES]; /* misses before --refine-from */
    char why[512];
    const char *unverified; /* why the prediction is unverified, or NULL */
    plan_emit_info info;
} plan_state;

/* Returns -1 when the arguments are good, else the exit code. */
static int parse_args(cli_ctx *ctx, int argc, char **argv, char **pos,
                      plan_args *a)
{
    const char *arg;
    int rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_ELF: a->elf = arg; break;
        case O_MAP: a->map = arg; break;
        case O_TRACE: a->traces[a->ntraces++] = arg; break;
        case O_TARGET: a->to.name = arg; break;
        case O_CACHE: a->to.cache = arg; break;
        case O_AS: a->to.as = arg; break;
        case O_UNCACHED: a->to.allow_uncached = 1; break;
        case O_BUDGET:
            if (cli_arg_u32(ctx, "budget", arg, 1, &a->budget) < 0)
                return CLI_USAGE;
            break;
        case O_STRATEGY:
            if (plan_strategy_parse(arg, &a->strategy) < 0)
                return cli_usage_error(ctx, "--strategy: '%s' is not one of "
                                       "stock, hotblock, colour, ram, combined, "
                                       "rank, density, auto", arg);
            break;
        case O_PAD:
            if (cli_plan_pad_arg(ctx, arg, &a->pad) < 0)
                return CLI_USAGE;
            break;
        case O_EXCLUDE: a->excl[a->nexcl++] = arg; break;
        case O_NORAM: a->noram[a->nnoram++] = arg; break;
        case O_ITERS:
            if (cli_arg_u32(ctx, "iterations", arg, 0, &a->iters) < 0)
                return CLI_USAGE;
            break;
        case O_PLAN_ITERS:
            if (cli_arg_u32(ctx, "plan-iterations", arg, 0, &a->plan_iters) < 0)
                return CLI_USAGE;
            break;
        case O_MOVES:
            if (cli_arg_u32(ctx, "search-moves", arg, 0, &a->moves) < 0)
                return CLI_USAGE;
            break;
        case O_DESCENT:
            if (cli_arg_u32(ctx, "descent-passes", arg, 0, &a->descent) < 0)
                return CLI_USAGE;
            break;
        case O_TIME:
            if (cli_arg_double(ctx, "time", arg, &a->time_limit) < 0)
                return CLI_USAGE;
            if (a->time_limit < 0)
                return cli_usage_error(ctx, "--time %s: not a number of seconds",
                                       arg);
            break;
        case O_SEED:
            if (cli_arg_u64(ctx, "seed", arg, 0, &a->seed) < 0)
                return CLI_USAGE;
            break;
        case O_THREADS:
            if (cli_arg_u32(ctx, "threads", arg, 0, &a->threads) < 0)
                return CLI_USAGE;
            if (a->threads < 1 || a->threads > PLAN_MAX_THREADS)
                return cli_usage_error(ctx, "--threads %s: give 1 to %d",
                                       arg, PLAN_MAX_THREADS);
            break;
        case O_JOBS:
            if (cli_arg_u32(ctx, "jobs", arg, 0, &a->jobs) < 0)
                return CLI_USAGE;
            if (a->jobs < 1 || a->jobs > PLAN_MAX_THREADS)
                return cli_usage_error(ctx, "--jobs %s: give 1 to %d", arg,
                                       PLAN_MAX_THREADS);
            break;
        case O_CACHE_SEED:
            if (cli_arg_u64(ctx, "cache-seed", arg, 0, &a->cache_seed) < 0)
                return CLI_USAGE;
            break;
        case O_LIST: a->list = arg; break;
        case O_LAYOUT: a->layout = arg; break;
        case O_EMIT: a->emit = arg; break;
        case O_FOR:
            if (strcmp(arg, "zephyr") && strcmp(arg, "gnu-ld"))
                return cli_usage_error(ctx, "plan: --for: '%s' is not a "
                                       "build (gnu-ld or zephyr)", arg);
            a->for_zephyr = !strcmp(arg, "zephyr");
            break;
        case O_COMPARE: a->compare = 1; break;
        case O_REFINE: a->refine = arg; break;
        case O_REFINE_MAP: a->refine_map = arg; break;
        case O_UNVERIFIED: a->allow_unverified = 1; break;
        case O_SAMPLES: a->samples = arg; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (cli_elf_arg(ctx, pos, &p.npos, a->elf, 1, &a->elf) < 0)
        return CLI_USAGE;
    if (!a->elf || p.npos)
        return cli_usage_error(ctx, "plan: give one ELF file");
    if (!a->ntraces && !a->samples)
        return cli_usage_error(ctx, "plan: give --trace (record one with "
                               "'codeplace trace') or --samples (codeplace "
                               "record)");
    if (!a->ntraces && a->compare)
        return cli_usage_error(ctx, "plan: --compare needs --trace");
    if (a->ntraces > PLAN_MAX_WORK)
        return cli_usage_error(ctx, "plan: at most %d traces", PLAN_MAX_WORK);
    for (int i = 0; i < a->ntraces; i++)
        if (parse_trace_arg(ctx, a->traces[i], a->tpath[i],
                            sizeof a->tpath[i], &a->tweight[i]) < 0)
            return CLI_USAGE;
    if ((rc = cli_tgt_resolve(ctx, &a->to, a->ntraces ? a->tpath[0] : NULL,
                              NULL, 1)) != CLI_OK)
        return rc;
    a->t = &a->to.t;
    a->c = a->t->cache;
    if (a->refine_map && !a->refine)
        return cli_usage_error(ctx, "plan: --refine-map goes with --refine-from");
    if (a->budget && (rc = check_budget(ctx, a->t, a->budget)) != CLI_OK)
        return rc;
    if (a->compare && (a->list || a->layout || a->emit))
        return cli_usage_error(ctx, "plan: --compare writes no artefacts; "
                               "plan one strategy for --list/--layout/--emit");
    return -1;
}

static void plan_state_free(plan_state *st)
{
    for (int k = 0; k < PLAN_NSTRATEGIES; k++)
        plan_result_free(st->res[k]);
    plan_result_free(st->sres);
    plan_result_free(st->zres);
    plan_model_free(st->m);
    img_free(st->im);
}

/* The map and the ELF must agree, or nothing says that the sections the
 * plan moves exist (docs/plan.md). 0, or -1 (reported). */
static int check_map(const plan_args *a, plan_state *st)
{
    for (size_t i = 0; i < img_nwarnings(st->im); i++)
        cli_warn("%s", img_warning(st->im, i));
    if (!a->map) {
        snprintf(st->why, sizeof st->why, "no --map: each function is assumed "
                 "to have its own section (.text.NAME); objects built without "
                 "-ffunction-sections have none, and ld ignores a pattern "
                 "that matches nothing");
        st->unverified = st->why;
        cli_warn("%s: the prediction is unverified", st->why);
    } else if (img_map_unplaced(st->im)) {
        snprintf(st->why, sizeof st->why, "the map '%s' disagrees with '%s': "
                 "%zu function(s) lie in no input section it lists (a map of "
                 "another build, or cut short)", a->map, a->elf,
                 img_map_unplaced(st->im));
        st->unverified = st->why;
        if (!a->allow_unverified) {
            cli_error("%s; give the map of this build (or --unverified to "
                      "plan anyway)", st->why);
            return -1;
        }
        cli_warn("%s: the prediction is unverified", st->why);
    }
    return 0;
}

static void tally_rec(void *arg, const trc_rec *r)
{
    cli_tally_add(arg, r);
}

/* Reads every trace into the model, one pass each, with the target check
 * sim makes. 0, or -1 (reported). */
static int load_traces(cli_ctx *ctx, const plan_args *a, plan_model *m)
{
    cp_err err;
    for (int i = 0; i < a->ntraces; i++) {
        cli_info(ctx, "plan: reading %s", a->tpath[i]);
        cli_tally tally;
        cli_tally_init(&tally, &a->to.t);
        plan_read rd = {tally_rec, &tally, 0, 0};
        if (plan_model_add_workload(m, a->tpath[i], a->tweight[i], a->iters,
                                    &rd, &err) < 0) {
            cli_error("%s", err.msg);
            return -1;
        }
        if (rd.cut)
            cli_warn("%s: the recording was cut short; using its %llu "
                     "complete records", a->tpath[i],
                     (unsigned long long)rd.records);
        if (cli_tgt_verdict(ctx, &a->to, &tally, a->tpath[i]) != CLI_OK)
            return -1;
    }
    if (plan_model_dropped(m) == 1 && a->ntraces == 1)
        cli_warn("%s: the recording ended inside its last iteration: 1 "
                 "unfinished iteration dropped, complete iterations only",
                 a->tpath[0]);
    else if (plan_model_dropped(m))
        cli_warn("%u recordings ended inside their last iteration: %u "
                 "unfinished iterations dropped, complete iterations only",
                 plan_model_dropped(m), plan_model_dropped(m));
    return 0;
}

/* "chains 1 and 2 of 2", "chain 2 of 3": the chains --time stopped in
 * some search. */
static void cut_chains(const plan_result *r, char *buf, size_t cap)
{
    unsigned n = 0, k = 0;
    for (unsigned i = 0; i < r->nchains; i++)
        n += r->chains[i].time_cut > 0;
    size_t l = (size_t)snprintf(buf, cap, "chain%s", n == 1 ? "" : "s");
    for (unsigned i = 0; i < r->nchains && l < cap; i++) {
        if (!r->chains[i].time_cut)
            continue;
        k++;
        l += (size_t)snprintf(buf + l, cap - l, "%s%u",
                              k == 1 ? " " : k == n ? " and " : ", ", i + 1);
    }
    if (l < cap)
        snprintf(buf + l, cap - l, " of %u", r->nchains);
}

/* Runs the strategies asked for; st->best is the one with the fewest
 * cycles. 0, or -1 (reported). */
static int run_strategies(cli_ctx *ctx, const plan_args *a, plan_state *st)
{
    plan_model *m = st->m;
    cp_err err;
    plan_opts o = plan_opts_default(a->t);
    o.budget = a->budget;
    o.pad_limit = a->pad;
    o.search_moves = a->moves;
    o.descent_passes = a->descent;
    o.time_limit = a->time_limit;
    o.t_start = a->t_start; /* set-up counts */
    o.seed = a->seed;
    o.threads = a->threads ? a->threads : 1;
    o.jobs = a->jobs ? a->jobs : PLAN_JOBS;
    o.progress = progress;
    o.progress_ctx = ctx;
    o.stop = &cp_sig_stop;
    int all = a->compare || a->strategy == PLAN_AUTO;
    for (int k = 0; k < PLAN_AUTO; k++) {
        if (!all && k != (int)a->strategy)
            continue;
        plan_opts ok = o;
        if (all) {
            if (!plan_runs_alone((plan_strategy)k, a->budget))
                continue; /* colour with a budget: combined's first search */
            if (k == PLAN_COMBINED) {
                ok.colour_out = &st->res[PLAN_COLOUR];
                cli_info(ctx, "plan: combined (its first search: colour) ...");
            } else {
                cli_info(ctx, "plan: %s ...", plan_strategy_name((plan_strategy)k));
            }
            if (a->time_limit > 0) {
                /* Its part of what is left of the whole run's limit. */
                double now = cp_now_s();
                ok.t_start = now;
                ok.time_limit = plan_time_for((plan_strategy)k, a->budget,
                                              a->t_start + a->time_limit - now);
            }
        }
        st->res[k] = plan_run(m, (plan_strategy)k, &ok, &err);
        if (stopped())
            return -1;
        if (!st->res[k]) {
            cli_error("%s", err.msg);
            return -1;
        }
    }
    /* On a tie the earlier strategy (colour before combined when combined
     * gave both). */
    int bk = plan_best_of(m, st->res);
    st->best = bk < 0 ? NULL : st->res[bk];
    for (int k = 0; k < PLAN_AUTO; k++) {
        const plan_result *r = st->res[k];
        if (r && r->fast_cut)
            cli_warn("%s: --time %g stopped %s before %s done (%s the "
                     "sections chosen): the plan may differ from run to run "
                     "(--time 0 makes it repeatable)",
                     plan_strategy_name((plan_strategy)k), a->time_limit,
                     r->fast_cut > 1 ? "both RAM selections" : "the RAM selection",
                     r->fast_cut > 1 ? "they were" : "it was",
                     r->fast_cut > 1 ? "each keeps" : "it keeps");
        if (!r || !r->time_cut)
            continue;
        char who[160] = "";
        if (r->nchains > 1)
            cut_chains(r, who, sizeof who);
        cli_warn("%s: --time %g paced the search%s%s (%lu moves made%s): "
                 "the plan may differ from run to run (--time 0 makes it "
                 "repeatable)", plan_strategy_name((plan_strategy)k),
                 a->time_limit, *who ? " in " : "", who, r->moves,
                 r->nchains > 1 ? " in all" : "");
    }
    return 0;
}

/* The figures are per warm iteration, the first of each workload
 * simulated but not counted, except where a workload (or what the search
 * simulates of it) has one iteration only: then that cold run is what is
 * counted, compulsory misses and all. Said, not refused. */
static void warn_cold(const plan_args *a, const plan_model *m)
{
    int search_cold = 0;
    for (unsigned k = 0; k < plan_model_nworkloads(m); k++) {
        unsigned n = plan_model_workload_iters(m, k);
        if (n == 1)
            cli_warn("%s: 1 complete iteration: no warm iteration, the "
                     "misses are those of a cold cache (every line's first "
                     "fetch one), not of the warm iterations a plan is for; "
                     "trace 3 or more (codeplace trace -n)", a->tpath[k]);
        else if (a->plan_iters == 1)
            search_cold = 1;
    }
    if (search_cold)
        cli_warn("--plan-iterations 1: the search counts the first "
                 "iteration, a cold cache, while the plan's figures are of "
                 "the warm ones; 2 or more let it count warm iterations");
}

/* Is rl this run's chosen plan relinked (every function the plan places
 * where the plan puts it, as verify checks)? 0, or -1 (reported): the
 * stubs and the text's end read from another image would give a figure of
 * nothing that exists. */
static int refine_check(const plan_args *a, const plan_state *st,
                        const img *rl)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        cli_error("out of memory");
        return -1;
    }
    plan_emit_info info = {.t = a->t,
                           .strategy = plan_strategy_name(st->best->strategy),
                           .budget = a->budget};
    cp_err err;
    int rc = plan_emit_layout(f, st->m, st->best, &info, &err);
    if (fclose(f) != 0 && rc == 0)
        rc = cp_seterr(&err, "out of memory");
    vfy_result vr;
    memset(&vr, 0, sizeof vr);
    if (rc == 0)
        rc = vfy_run_text("the plan's layout", text, len, rl, a->t, NULL, &vr,
                          &err);
    free(text);
    if (rc < 0) {
        cli_error("--refine-from: %s", err.msg);
        vfy_result_free(&vr);
        return -1;
    }
    if (vr.placed_ok < vr.placed) {
        const vfy_diff *d = NULL;
        for (size_t i = 0; i < vr.ndiffs && !d; i++)
            if (vr.diffs[i].kind == VFY_MISSING || vr.diffs[i].kind == VFY_MOVED ||
                vr.diffs[i].kind == VFY_REGION)
                d = &vr.diffs[i];
        cli_error("%s is not this plan relinked: %zu of the %zu functions it "
                  "places are elsewhere%s%s%s%s%s; relink with this plan's "
                  "snippets, or plan again with the options (and --time 0) "
                  "the relinked plan was made with", a->refine,
                  vr.placed - vr.placed_ok, vr.placed, d ? " (first: " : "",
                  d ? d->what : "", d ? ": " : "", d ? d->detail : "",
                  d ? ")" : "");
        vfy_result_free(&vr);
        return -1;
    }
    vfy_result_free(&vr);
    return 0;
}

/* --refine-from: predicts again with the stubs where GNU ld really put
 * them. 0, or -1 (reported). */
static int refine(cli_ctx *ctx, const plan_args *a, plan_state *st)
{
    cp_err err;
    img *rl = img_open(a->refine, a->refine_map, &err);
    if (!rl) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (refine_check(a, st, rl) < 0) {
        img_free(rl);
        return -1;
    }
    long nst = plan_model_refine_stubs(st->m, rl, &err);
    img_free(rl);
    if (nst < 0) {
        cli_error("%s: %s", a->refine, err.msg);
        return -1;
    }
    if (nst == 0 && st->best->flash_stubs)
        cli_warn("%s has none of the plan's %u linker stubs: is it the "
                 "image relinked with this plan?", a->refine,
                 st->best->flash_stubs);
    for (int k = 0; k < PLAN_NSTRATEGIES; k++) {
        if (!st->res[k])
            continue;
        st->unrefined[k] = st->res[k]->misses;
        if (plan_result_refine(st->m, st->res[k], &err) < 0) {
            cli_error("%s", err.msg);
            return -1;
        }
    }
    cli_info(ctx, "plan: %ld linker stubs read back from %s", nst, a->refine);
    return 0;
}

/* Loads the image and the traces, plans, writes the artefacts. Returns -1
 * when the text or JSON report is to be rendered, else the exit code
 * (reported; a plan from samples alone reports itself). */
static int run_plan(cli_ctx *ctx, const plan_args *a, plan_state *st)
{
    cp_err err;
    if (!(st->im = img_open(a->elf, a->map, &err))) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    if (check_map(a, st) < 0)
        return CLI_FAIL;
    plan_model *m = st->m = plan_model_new(st->im, a->t, &a->c, &err);
    if (!m) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    if (plan_model_align_guessed(m))
        cli_warn("%zu of %zu sections: their object files (named in %s, "
                 "relative to where the link ran) cannot be read from here; "
                 "their alignment is guessed and planned addresses may differ "
                 "from the linker's", plan_model_align_guessed(m),
                 plan_model_nunits(m), a->map ? a->map : a->elf);
    for (int i = 0; i < a->nexcl; i++)
        if (!plan_model_exclude(m, a->excl[i], 0))
            cli_warn("--exclude '%s' matches nothing", a->excl[i]);
    for (int i = 0; i < a->nnoram; i++)
        if (!plan_model_exclude(m, a->noram[i], 1))
            cli_warn("--no-ram '%s' matches nothing", a->noram[i]);
    /* Zephyr's start-up clears .bss and copies the relocated code to RAM
     * (z_bss_zero, z_data_copy in kernel/init.c) through z_early_memset
     * and z_early_memcpy, which call memset and memcpy: code in RAM is not
     * there yet while they run, so none of them may go there. */
    static const char *const zephyr_boot[] = {
        "memset", "memcpy", "z_early_memset", "z_early_memcpy",
        "z_bss_zero", "z_data_copy", "z_arm_prep_c", "z_prep_c"};
    for (size_t i = 0; a->for_zephyr && i < sizeof zephyr_boot / sizeof *zephyr_boot; i++)
        plan_model_exclude(m, zephyr_boot[i], 1);
    plan_samples_args sa = {a->samples, a->strategy, a->budget, a->list,
                            a->layout, a->emit};
    if (!a->ntraces)
        return cmd_plan_samples_only(ctx, m, a->t, &sa);
    if (load_traces(ctx, a, m) < 0)
        return CLI_FAIL;
    plan_model_set_plan_iters(m, a->plan_iters);
    plan_model_set_cache_seed(m, a->cache_seed);
    warn_cold(a, m);
    plan_unplanned un;
    if (plan_model_unplanned(m, &un) < 0) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    if (un.bytes)
        cli_info(ctx, "plan: %llu bytes of code in %zu sections run only in "
                 "iterations the search does not simulate (the first in "
                 "iteration %u of %s, counting from 0): the annealing places "
                 "them after its descent, with one pass over every iteration, "
                 "the other steps blind; the figures count them; "
                 "--plan-iterations %u "
                 "takes them in (each move costs more)",
                 (unsigned long long)un.bytes, un.units, un.first,
                 a->tpath[un.work], un.cover);
    /* Testing: make evaluations fail after the first N. */
    const char *fail = getenv("CODEPLACE_PLAN_FAIL_AFTER");
    if (fail && *fail)
        plan_model_fail_after(m, strtoul(fail, NULL, 10));
    /* For Zephyr the search sees the hot block's own stubs too. */
    plan_model_hot_own_stubs(m, a->for_zephyr);
    if (run_strategies(ctx, a, st) < 0)
        return CLI_FAIL;
    if (a->refine && refine(ctx, a, st) < 0)
        return CLI_FAIL;
    const char *why;
    if (!a->refine && st->best->flash_stubs && !st->best->stub_order)
        cli_warn("the order of the %u linker stubs in flash is a guess (%s): "
                 "the prediction can be off by their misses; relink and plan "
                 "again with --refine-from for the exact figure",
                 st->best->flash_stubs,
                 !plan_model_stub_order(m, &why) && why
                     ? why
                     : "a call into fast memory whose stub name its "
                       "relocations do not give");
    else if (!a->refine && st->best->flash_stubs)
        cli_info(ctx, "plan: %u linker stubs in flash, in the order of GNU ld "
                 "2.40's stub table (verify checks it)",
                 st->best->flash_stubs);
    if (a->samples) {
        if (cmd_plan_samples_candidate(ctx, m, &sa, &st->sres) < 0)
            return CLI_FAIL;
        if ((a->strategy == PLAN_AUTO || a->compare) &&
            plan_result_cycles(m, st->sres) <
                plan_result_cycles(m, st->best) - 1e-6)
            st->best = st->sres;
    }
    int from_samples = st->best == st->sres;
    if (a->for_zephyr) {
        plan_applied ap;
        if (!(st->zres = plan_result_for(m, st->best, PLAN_INT_ZEPHYR, &ap,
                                         &err))) {
            cli_error("%s", err.msg);
            return CLI_FAIL;
        }
        cli_info(ctx, "plan: for Zephyr: %.1f misses per iteration predicted "
                 "(%zu sections the list cannot single out left out); the "
                 "rest of the text from 0x%08x, after the hot block and the "
                 "relocated code's flash copy", st->zres->misses,
                 ap.fast_dropped + ap.flash_dropped, st->zres->text_start);
        st->best = st->zres;
        plan_model_hot_own_stubs(m, 1);
    }
    if (st->best->after_uncertain)
        cli_warn("%s: the text ends at 0x%08x; the linker script puts "
                 "section '%s' (0x%08x) after a gap its alignment does not "
                 "explain: where it and what follows go when the text "
                 "changes size is a guess, and the prediction of the flash "
                 "reads past the text may be off",
                 img_path(plan_model_image(m)), st->best->stock_text_end,
                 st->best->after_uncertain, st->best->after_uncertain_addr);
    st->info = (plan_emit_info){
        .t = a->t,
        .strategy = from_samples ? "samples-hotblock"
                                 : plan_strategy_name(st->best->strategy),
        .budget = a->budget, .unverified = st->unverified,
        .from_samples = from_samples};
    emit_args ea = {m, st->best, &st->info};
    if (a->list && write_file(a->list, "name list", do_list, &ea) < 0)
        return CLI_FAIL;
    if (a->layout && write_file(a->layout, "layout", do_layout, &ea) < 0)
        return CLI_FAIL;
    if (a->emit &&
        plan_emit_snippets(a->emit, m, st->best, &st->info, &err) < 0) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    for (size_t i = 0; i < plan_model_nunits(m); i++) {
        const plan_unit *u = plan_model_unit(m, i);
        if ((u->flags & PLAN_U_SHARED) && u->runs)
            cli_debug(ctx, "note: %s shares %s with %u other function(s); "
                      "they move together", u->name, u->isec, u->nfuncs - 1);
    }
    return -1;
}

static void render_json(FILE *out, const plan_args *a, const plan_state *st)
{
    const tgt *t = a->t;
    jw w;
    jw_init(&w, out, 1);
    jw_obj_begin(&w);
    jw_key(&w, "image");
    jw_str(&w, img_path(st->im));
    jw_key(&w, "target");
    jw_str(&w, t->name);
    jw_key(&w, "budget");
    jw_uint(&w, a->budget);
    jw_key(&w, "iterations");
    jw_uint(&w, plan_model_niters(st->m));
    jw_key(&w, "best");
    jw_str(&w, st->info.strategy);
    jw_key(&w, "verified");
    jw_bool(&w, !st->unverified);
    if (st->unverified) {
        jw_key(&w, "unverified_because");
        jw_str(&w, st->unverified);
    }
    jw_key(&w, "results");
    jw_arr_begin(&w);
    for (int k = 0; k < PLAN_AUTO; k++)
        if (st->res[k])
            result_json(&w, st->m, t, &a->c, st->res[k],
                        a->refine ? st->unrefined[k] : -1, NULL);
    if (st->sres)
        result_json(&w, st->m, t, &a->c, st->sres, -1, "samples-hotblock");
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
}

static void render(FILE *out, const cli_ctx *ctx, const plan_args *a,
                   const plan_state *st)
{
    const tgt *t = a->t;
    const plan_model *m = st->m;
    const plan_result *best = st->best;
    if (ctx->json) {
        render_json(out, a, st);
        return;
    }
    fprintf(out, "image %s, target %s, %u iterations, budget %u bytes of "
            "%s\n", img_path(st->im), t->name, plan_model_niters(m),
            a->budget, t->fast_mem);
    fprintf(out, "stock: %.1f misses per iteration (%.1f above a fully "
            "associative cache), %.0f instructions\n\n",
            best->stock_misses, best->conflict_before, plan_model_insns(m));
    fprintf(out, "%-10s %8s %8s %10s %10s %10s %8s\n", "strategy",
            "fast", "padding", "misses", "conflict", "est.cycles",
            "speedup");
    for (int k = 0; k < PLAN_AUTO; k++)
        if (st->res[k])
            row_text(out, m, t, &a->c, plan_strategy_name((plan_strategy)k),
                     st->res[k]);
    if (st->sres)
        row_text(out, m, t, &a->c, "samples-hotblock", st->sres);
    fprintf(out, "\nchosen: %s (%zu sections placed: ", st->info.strategy,
            best->nitems);
    size_t nf = 0;
    for (size_t i = 0; i < best->nitems; i++)
        nf += best->items[i].region == PLAN_FAST;
    fprintf(out, "%zu in %s, %zu in the hot block)\n", nf, t->fast_mem,
            best->nitems - nf);
    if (plan_model_nworkloads(m) > 1) {
        fprintf(out, "\nworkloads (warm misses per iteration):\n");
        fprintf(out, "%-32s %7s %10s %10s\n", "trace", "weight", "stock",
                best->strategy == PLAN_STOCK ? "stock" : "planned");
        for (unsigned k = 0; k < best->nwork; k++) {
            double wt;
            const char *name = plan_model_workload(m, k, &wt);
            fprintf(out, "%-32s %7.2f %10.1f %10.1f\n", name ? name : "-",
                    wt, best->work_stock[k], best->work_misses[k]);
        }
    }
    if (st->unverified)
        fprintf(out, "UNVERIFIED prediction: %s\n", st->unverified);
}

static int cmd_plan_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *excl[argc], *noram[argc], *traces[argc];
    char tpath[PLAN_MAX_WORK][1024];
    double tweight[PLAN_MAX_WORK];
    plan_args a = {.excl = excl, .noram = noram, .traces = traces,
                   .tpath = tpath, .tweight = tweight,
                   .strategy = PLAN_AUTO, .pad = PLAN_PAD_LIMIT, .iters = 32,
                   .plan_iters = 3, .moves = PLAN_SEARCH_MOVES,
                   .descent = PLAN_DESCENT_PASSES, .time_limit = 60,
                   .seed = 1, .cache_seed = 1};
    a.t_start = cp_now_s(); /* --time counts from here */
    int rc = parse_args(ctx, argc, argv, pos, &a);
    if (rc >= 0)
        return rc;
    cp_sig_catch(); /* Ctrl-C, SIGTERM, SIGHUP: stop, write nothing */
    plan_state st = {0};
    int status = run_plan(ctx, &a, &st);
    if (status < 0) {
        status = CLI_FAIL;
        if (cli_out_open(ctx) == 0) {
            render(ctx->out, ctx, &a, &st);
            status = CLI_OK;
        }
    }
    cp_sig_restore();
    plan_state_free(&st);
    return status;
}
