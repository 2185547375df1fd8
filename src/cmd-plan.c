/* codeplace plan: choose where the hot code goes, write it in every form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tgtopt.h"
#include "commands.h"
#include "image/image.h"
#include "plan/emit.h"
#include "plan/plan.h"
#include "target/target.h"
#include "util/jw.h"

enum {
    O_ELF, O_MAP, O_TRACE, O_TARGET, O_CACHE, O_AS, O_UNCACHED, O_BUDGET, O_STRATEGY, O_PAD,
    O_EXCLUDE, O_NORAM, O_ITERS, O_PLAN_ITERS, O_SECONDS, O_SEED, O_LIST,
    O_LAYOUT, O_EMIT, O_COMPARE, O_NOPT
};

static const cli_opt opts[] = {
    [O_ELF] = {"elf", 'e', "FILE", "the image to plan, as the ELF argument"},
    [O_MAP] = {"map", 'm', "FILE", "GNU ld map file of the same build (plans "
               "input sections, names archives)"},
    [O_TRACE] = {"trace", 0, "FILE", "the evidence: a trace of this image "
                 "(codeplace trace)"},
    [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target name or file (default: the "
                                    "trace's)"),
    [O_CACHE] = CLI_TGT_OPT_CACHE(0),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_UNCACHED] = CLI_TGT_OPT_UNCACHED,
    [O_BUDGET] = {"budget", 'b', "BYTES", "fast memory (SRAM/ITCM) the plan may "
                  "fill, e.g. 16K (default 0: flash layout only)"},
    [O_STRATEGY] = {"strategy", 0, "NAME", "stock, hotblock, colour, ram, "
                    "combined, rank or auto (default: auto)"},
    [O_PAD] = {"pad-limit", 0, "BYTES", "padding the hot block may add to "
               "flash (default 8K)"},
    [O_EXCLUDE] = {"exclude", 'x', "GLOB", "never move functions or sections "
                   "matching GLOB (repeatable)"},
    [O_NORAM] = {"no-ram", 0, "GLOB", "keep matches out of fast memory "
                 "(repeatable; e.g. busy-wait loops)"},
    [O_ITERS] = {"iterations", 'n', "N", "iterations of the trace to load "
                 "(default 32; 0: all)"},
    [O_PLAN_ITERS] = {"plan-iterations", 0, "N", "iterations each candidate "
                      "is evaluated on while searching (default 3)"},
    [O_SECONDS] = {"search-moves", 0, "N", "local-search moves tried per "
                   "layout (default 40000; each re-simulates the sets it changes)"},
    [O_SEED] = {"seed", 0, "N", "seed of the local search (default 1)"},
    [O_LIST] = {"list", 0, "FILE", "write the name list"},
    [O_LAYOUT] = {"layout", 'l', "FILE", "write the layout file (for "
                  "codeplace sim --layout)"},
    [O_EMIT] = {"emit", 0, "DIR", "write the GNU ld, Zephyr and pico-sdk "
                "snippets into DIR"},
    [O_COMPARE] = {"compare", 0, NULL, "plan with every strategy and print "
                   "them side by side"},
    [O_NOPT] = {0},
};

static int cmd_plan_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_plan = {
    .name = "plan",
    .fn = cmd_plan_fn,
    .summary = "choose functions for SRAM/ITCM and colour the hot code in flash",
    .usage = "ELF --map MAP --trace TRACE [--target NAME|FILE] [--budget BYTES] "
             "[--list FILE] [--emit DIR]",
    .description =
        "Plans in input sections (what a linker can move) and names functions\n"
        "in its output. Every candidate layout is evaluated exactly: the\n"
        "trace is replayed through the target's cache with the moved sections'\n"
        "fetches remapped. Strategies:\n"
        "  hotblock  the hot sections contiguous at the start of .text, in the\n"
        "            order the code first runs\n"
        "  colour    each hot section at a chosen cache set (with padding),\n"
        "            from a temporal relationship graph, then a local search\n"
        "  ram       fast memory filled by re-simulated misses saved per byte\n"
        "  combined  ram, then colour of the rest\n"
        "  rank      baseline: fast memory filled by instructions per byte\n"
        "  auto      all of the above; the one with the fewest misses\n\n"
        "example:\n"
        "  codeplace trace fw.elf --target rp2040 -n 50 -o run.trace\n"
        "  codeplace plan fw.elf --map fw.map --trace run.trace --target rp2040 \\\n"
        "      --budget 16K --list hot.list --emit place/",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

static void progress(void *c, const char *msg)
{
    cli_ctx *ctx = c;
    cli_debug(ctx, "plan: %s", msg);
}

static double cycles(const tgt *t, const tgt_cache *c, double insns,
                     double misses)
{
    return insns * t->cpi + misses * c->miss_cycles;
}

static void row_text(FILE *o, const tgt *t, const tgt_cache *c,
                     const char *name, const plan_result *r)
{
    double cyc = cycles(t, c, r->insns, r->misses);
    double stock = cycles(t, c, r->insns, r->stock_misses);
    fprintf(o, "%-10s %8u %8u %10.1f %10.1f %10.0f %7.2fx\n", name,
            r->fast_bytes, r->pad_bytes, r->misses,
            r->conflict_after, cyc, cyc > 0 ? stock / cyc : 0.0);
}

static void result_json(jw *w, const plan_model *m, const tgt *t,
                        const tgt_cache *c, const plan_result *r)
{
    jw_obj_begin(w);
    jw_key(w, "strategy");
    jw_str(w, plan_strategy_name(r->strategy));
    jw_key(w, "misses_per_iteration");
    jw_double(w, r->misses);
    jw_key(w, "stock_misses_per_iteration");
    jw_double(w, r->stock_misses);
    jw_key(w, "conflict_misses_before");
    jw_double(w, r->conflict_before);
    jw_key(w, "conflict_misses_after");
    jw_double(w, r->conflict_after);
    jw_key(w, "instructions_per_iteration");
    jw_double(w, r->insns);
    jw_key(w, "est_cycles_per_iteration");
    jw_double(w, cycles(t, c, r->insns, r->misses));
    jw_key(w, "stock_est_cycles_per_iteration");
    jw_double(w, cycles(t, c, r->insns, r->stock_misses));
    jw_key(w, "fast_bytes");
    jw_uint(w, r->fast_bytes);
    jw_key(w, "veneers");
    jw_uint(w, r->veneers);
    jw_key(w, "flash_stubs");
    jw_uint(w, r->flash_stubs);
    jw_key(w, "text_end");
    jw_uint(w, r->text_end);
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
        jw_key(w, "stock_misses");
        jw_double(w, it->misses);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
}

static int write_file(const char *path, const char *what,
                      int (*fn)(FILE *, void *), void *arg)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("cannot create '%s': %m", path);
        return -1;
    }
    int rc = fn(f, arg);
    if (fclose(f) != 0 || rc < 0) {
        cli_error("cannot write %s '%s'", what, path);
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
    const char **excl, **noram;
    int nexcl, nnoram, compare;
    const char *elf, *map, *trace, *list, *layout, *emit;
    cli_tgt to;
    const tgt *t; /* &to.t once resolved */
    tgt_cache c;
    plan_strategy strategy;
    uint32_t budget, pad, iters, plan_iters, moves;
    uint64_t seed;
} plan_args;

/* What a run made (run_plan fills it; plan_state_free frees it). */
typedef struct plan_state {
    img *im;
    plan_model *m;
    plan_result *res[PLAN_NSTRATEGIES];
    plan_result *best;
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
        case O_TRACE: a->trace = arg; break;
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
                                       "rank, auto", arg);
            break;
        case O_PAD:
            if (cli_arg_u32(ctx, "pad-limit", arg, 1, &a->pad) < 0)
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
        case O_SECONDS:
            if (cli_arg_u32(ctx, "search-moves", arg, 0, &a->moves) < 0)
                return CLI_USAGE;
            break;
        case O_SEED:
            if (cli_arg_u64(ctx, "seed", arg, 0, &a->seed) < 0)
                return CLI_USAGE;
            break;
        case O_LIST: a->list = arg; break;
        case O_LAYOUT: a->layout = arg; break;
        case O_EMIT: a->emit = arg; break;
        case O_COMPARE: a->compare = 1; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (cli_elf_arg(ctx, pos, &p.npos, a->elf, 1, &a->elf) < 0)
        return CLI_USAGE;
    if (!a->elf || p.npos)
        return cli_usage_error(ctx, "plan: give one ELF file");
    if (!a->trace)
        return cli_usage_error(ctx, "plan: --trace is required (record one "
                               "with 'codeplace trace')");
    if ((rc = cli_tgt_resolve(ctx, &a->to, a->trace, NULL, 1)) != CLI_OK)
        return rc;
    a->t = &a->to.t;
    a->c = a->t->cache;
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
    plan_model_free(st->m);
    img_free(st->im);
}

/* Loads the image and the trace, plans, writes the artefacts. 0 or -1
 * (reported). */
static int run_plan(cli_ctx *ctx, const plan_args *a, plan_state *st)
{
    cp_err err;
    if (!(st->im = img_open(a->elf, a->map, &err))) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (!a->map)
        cli_warn("no --map: assuming each function has its own section "
                 "(.text.NAME, -ffunction-sections)");
    plan_model *m = st->m = plan_model_new(st->im, a->t, &a->c, &err);
    if (!m) {
        cli_error("%s", err.msg);
        return -1;
    }
    for (int i = 0; i < a->nexcl; i++)
        if (!plan_model_exclude(m, a->excl[i], 0))
            cli_warn("--exclude '%s' matches nothing", a->excl[i]);
    for (int i = 0; i < a->nnoram; i++)
        if (!plan_model_exclude(m, a->noram[i], 1))
            cli_warn("--no-ram '%s' matches nothing", a->noram[i]);
    cli_info(ctx, "plan: reading %s", a->trace);
    if (plan_model_add_trace(m, a->trace, a->iters, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (cli_tgt_check_trace(ctx, &a->to, a->trace, a->iters) != CLI_OK)
        return -1;
    plan_model_set_plan_iters(m, a->plan_iters);
    plan_opts o = plan_opts_default(a->t);
    o.budget = a->budget;
    o.pad_limit = a->pad;
    o.search_moves = a->moves;
    o.seed = a->seed;
    o.progress = progress;
    o.progress_ctx = ctx;

    for (int k = 0; k < PLAN_AUTO; k++) {
        if (!a->compare && a->strategy != PLAN_AUTO && k != (int)a->strategy)
            continue;
        if (a->strategy == PLAN_AUTO || a->compare) {
            if ((k == PLAN_RAM || k == PLAN_COMBINED || k == PLAN_RANK) &&
                a->budget == 0)
                continue;
            cli_info(ctx, "plan: %s ...", plan_strategy_name((plan_strategy)k));
        }
        st->res[k] = plan_run(m, (plan_strategy)k, &o, &err);
        if (!st->res[k]) {
            cli_error("%s", err.msg);
            return -1;
        }
        if (!st->best || plan_result_cycles(m, st->res[k]) <
                             plan_result_cycles(m, st->best) - 1e-6)
            st->best = st->res[k];
    }
    plan_emit_info info = {a->t, plan_strategy_name(st->best->strategy),
                           a->budget};
    emit_args ea = {m, st->best, &info};
    if (a->list && write_file(a->list, "name list", do_list, &ea) < 0)
        return -1;
    if (a->layout && write_file(a->layout, "layout", do_layout, &ea) < 0)
        return -1;
    if (a->emit && plan_emit_snippets(a->emit, m, st->best, &info, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    for (size_t i = 0; i < plan_model_nunits(m); i++) {
        const plan_unit *u = plan_model_unit(m, i);
        if ((u->flags & PLAN_U_SHARED) && u->runs)
            cli_debug(ctx, "note: %s shares %s with %u other function(s); "
                      "they move together", u->name, u->isec, u->nfuncs - 1);
    }
    return 0;
}

static void render(FILE *out, const cli_ctx *ctx, const plan_args *a,
                   const plan_state *st)
{
    const tgt *t = a->t;
    const plan_result *best = st->best;
    if (ctx->json) {
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
        jw_str(&w, plan_strategy_name(best->strategy));
        jw_key(&w, "results");
        jw_arr_begin(&w);
        for (int k = 0; k < PLAN_AUTO; k++)
            if (st->res[k])
                result_json(&w, st->m, t, &a->c, st->res[k]);
        jw_arr_end(&w);
        jw_obj_end(&w);
        jw_finish(&w);
        return;
    }
    fprintf(out, "image %s, target %s, %u iterations, budget %u bytes of "
            "%s\n", img_path(st->im), t->name, plan_model_niters(st->m),
            a->budget, t->fast_mem);
    fprintf(out, "stock: %.1f misses per iteration (%.1f above a fully "
            "associative cache), %.0f instructions\n\n",
            best->stock_misses, best->conflict_before, best->insns);
    fprintf(out, "%-10s %8s %8s %10s %10s %10s %8s\n", "strategy",
            "fast", "padding", "misses", "conflict", "est.cycles",
            "speedup");
    for (int k = 0; k < PLAN_AUTO; k++)
        if (st->res[k])
            row_text(out, t, &a->c, plan_strategy_name((plan_strategy)k),
                     st->res[k]);
    fprintf(out, "\nchosen: %s (%zu sections placed: ",
            plan_strategy_name(best->strategy), best->nitems);
    size_t nf = 0;
    for (size_t i = 0; i < best->nitems; i++)
        nf += best->items[i].region == PLAN_FAST;
    fprintf(out, "%zu in %s, %zu in the hot block)\n", nf, t->fast_mem,
            best->nitems - nf);
}

static int cmd_plan_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *excl[argc], *noram[argc];
    plan_args a = {.excl = excl, .noram = noram, .strategy = PLAN_AUTO,
                   .pad = 8192, .iters = 32, .plan_iters = 3, .moves = 40000,
                   .seed = 1};
    int rc = parse_args(ctx, argc, argv, pos, &a);
    if (rc >= 0)
        return rc;
    plan_state st = {0};
    int status = CLI_FAIL;
    if (run_plan(ctx, &a, &st) == 0 && cli_out_open(ctx) == 0) {
        render(ctx->out, ctx, &a, &st);
        status = CLI_OK;
    }
    plan_state_free(&st);
    return status;
}
