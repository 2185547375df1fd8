/* codeplace plan: choose where the hot code goes, write it in every form.
 * This file: the options and the command line; plan-run.c plans,
 * plan-render.c reports. */
#include "cmd/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/planopt.h"
#include "cmd/commands.h"
#include "target/target.h"
#include "util/sig.h"

enum {
    O_ELF, O_MAP, O_BUILD_DIR, O_TRACE, O_TARGET, O_CACHE, O_AS, O_UNCACHED, O_BUDGET, O_STRATEGY,
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
    [O_BUILD_DIR] = {"build-dir", 0, "DIR", "the directory the link ran in, "
                     "which the map's relative paths of object files are "
                     "relative to (default: the current directory, else the "
                     "map's or the nearest parent of it that has them)"},
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
        "  codeplace trace fw.elf --target rp2040 --mark codeplace_mark -n 50 -o run.trace\n"
        "  codeplace plan fw.elf --map fw.map --trace run.trace --target rp2040 \\\n"
        "      --budget 16K --list hot.list --emit place/",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

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
                               "(%s bytes at 0x%08x)", cp_commas(b, budget),
                               t->name, f->name, cp_commas(s, f->size),
                               f->base);
    }
    return CLI_OK;
}

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
        case O_BUILD_DIR: a->build_dir = arg; break;
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
    if (a->build_dir && !a->map)
        return cli_usage_error(ctx, "plan: --build-dir goes with --map (the "
                               "map's paths are relative to it)");
    struct stat sb;
    if (a->build_dir && (stat(a->build_dir, &sb) < 0 || !S_ISDIR(sb.st_mode)))
        return cli_usage_error(ctx, "plan: --build-dir: '%s' is not a "
                               "directory", a->build_dir);
    if (a->budget && (rc = check_budget(ctx, a->t, a->budget)) != CLI_OK)
        return rc;
    if (a->compare && (a->list || a->layout || a->emit))
        return cli_usage_error(ctx, "plan: --compare writes no artefacts; "
                               "plan one strategy for --list/--layout/--emit");
    return -1;
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
    int status = cmd_plan_run(ctx, &a, &st);
    if (status < 0) {
        status = CLI_FAIL;
        if (cli_out_open(ctx) == 0) {
            cmd_plan_render(ctx->out, ctx, &a, &st);
            status = CLI_OK;
        }
    }
    cp_sig_restore();
    cmd_plan_state_free(&st);
    return status;
}
