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
#include "cmd/sim.h"
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
    if (cli_out_open(ctx) < 0) {
        csim_ctx_report_free(&r);
        return CLI_FAIL;
    }
    sim_report_contexts(ctx->out, ctx->json, trace, t, &r);
    csim_ctx_report_free(&r);
    return cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
}
/* The command line, parsed. */
typedef struct sim_args {
    simctx c;
    const char *map, *svg;
    cli_tgt to;
    uint64_t seed;
    int by, dreads, by_ctx;
} sim_args;

static int parse_by(cli_ctx *ctx, const char *arg, int *by)
{
    if (!strcmp(arg, "iteration") || !strcmp(arg, "iter"))
        *by = 0;
    else if (!strcmp(arg, "function"))
        *by = 1;
    else if (!strcmp(arg, "library"))
        *by = 2;
    else if (!strcmp(arg, "set"))
        *by = 3;
    else
        return cli_usage_error(ctx, "--by: '%s' is not iteration, "
                               "function, library or set", arg);
    return CLI_OK;
}

/* CLI_OK, the status of a usage error, or cli_next's CLI_HELPED or
 * CLI_ERR. */
static int parse(cli_ctx *ctx, int argc, char **argv, char **pos,
                 sim_args *a)
{
    const char *arg;
    int rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_ELF: a->c.elf = arg; break;
        case O_MAP: a->map = arg; break;
        case O_TARGET: a->to.name = arg; break;
        case O_CACHE: a->to.cache = arg; break;
        case O_AS: a->to.as = arg; break;
        case O_UNCACHED: a->to.allow_uncached = 1; break;
        case O_LAYOUT: a->c.layout = arg; break;
        case O_SVG: a->svg = arg; break;
        case O_SEED:
            if (cli_arg_u64(ctx, "--seed", arg, 0, &a->seed) < 0)
                return CLI_USAGE;
            break;
        case O_TOP: {
            uint32_t v;
            if (cli_arg_u32(ctx, "--top", arg, 0, &v) < 0)
                return CLI_USAGE;
            a->c.top = v;
            break;
        }
        case O_BY:
            if (parse_by(ctx, arg, &a->by) != CLI_OK)
                return CLI_USAGE;
            break;
        case O_BYCTX: a->by_ctx = 1; break;
        case O_DREADS:
            if (!strcmp(arg, "yes"))
                a->dreads = 1;
            else if (!strcmp(arg, "no"))
                a->dreads = 0;
            else
                return cli_usage_error(ctx, "--dreads: '%s' is not yes or no",
                                       arg);
            break;
        }
    }
    if (rc != CLI_END)
        return rc; /* CLI_HELPED or CLI_ERR */
    if (cli_elf_arg(ctx, pos, &p.npos, a->c.elf, 0, &a->c.elf) < 0)
        return CLI_USAGE;
    if (p.npos != 1)
        return cli_usage_error(ctx, "sim: give one trace file (and the ELF)");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "sim: --json and --csv exclude each other");
    if (a->map && !a->c.elf)
        return cli_usage_error(ctx, "sim: --map goes with the ELF");
    if (a->c.layout && !a->c.elf)
        return cli_usage_error(ctx, "sim: --layout needs the ELF (it names "
                               "functions)");
    a->c.trace = pos[0];
    return CLI_OK;
}

/* The ELF, and the layout's text checked against it. */
static int open_image(const sim_args *a, simctx *c, img **imp)
{
    cp_err err;
    img *im = img_open(c->elf, a->map, &err);
    if (!im || img_map_check(im, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    if (c->layout && cp_read_file(c->layout, &c->ltext, &c->llen, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    if (check_hash(c->trace, im, c->layout) < 0 ||
        (c->layout &&
         check_layout_image(c->layout, c->ltext, c->llen, im) < 0)) {
        img_free(im);
        return CLI_FAIL;
    }
    *imp = im;
    return CLI_OK;
}

/* The layout's linker stubs: the direct calls the trace made go through
 * them when the layout puts caller and callee on different sides (decided
 * when the layout is evaluated). */
static int set_stubs(const simctx *c, csim_stream *s)
{
    cp_err err;
    csim_stub *stubs = NULL;
    size_t nstubs = 0;
    if (csim_layout_stubs_text(c->layout, c->ltext, c->llen, s, &stubs,
                               &nstubs, &err) < 0 ||
        csim_stream_set_stubs(s, stubs, nstubs, &err) < 0) {
        csim_stubs_free(stubs, nstubs);
        cli_error("%s", err.msg);
        return -1;
    }
    csim_stubs_free(stubs, nstubs);
    return 0;
}

/* The layout's placements into m. */
static int apply_layout(simctx *c, const csim_stream *s, csim_map *m,
                        tgt_cache *g)
{
    cp_err err;
    if (csim_layout_apply_text(c->layout, c->ltext, c->llen, s, m, g,
                               &c->lst, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (c->lst.missing)
        cli_warn("%s: %zu functions are not in %s (first: %s); skipped",
                 c->layout, c->lst.missing, c->elf, c->lst.first_missing);
    return 0;
}

/* --svg: the per-set heat map. */
static int write_svg(const char *svg, const simctx *c)
{
    cp_err err;
    cp_wfile wf;
    char title[256];
    snprintf(title, sizeof title, "%s: hot lines per cache set (%s)",
             cp_basename(c->trace), c->t->name);
    if (cp_wfile_open(&wf, svg, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    cp_err herr = {{0}};
    if (rep_heat_svg(wf.f, c->r, title, &herr) < 0) {
        cp_wfile_abort(&wf);
        cli_error("cannot write '%s'%s%s", svg, herr.msg[0] ? ": " : "",
                  herr.msg);
        return -1;
    }
    if (cp_wfile_commit(&wf, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

/* Loads the trace once, moves what the layout moves, simulates and
 * reports. */
static int simulate(cli_ctx *ctx, sim_args *a, tgt_cache *g)
{
    cp_err err;
    simctx *c = &a->c;
    int status = CLI_FAIL;
    csim_map *m = NULL;
    csim_report r = {0};
    cli_tally tally;
    cli_tally_init(&tally, c->t);
    csim_stream *s = load(ctx, c->trace, c->im, c->t, a->dreads, &tally);
    if (!s || cli_tgt_verdict(ctx, &a->to, &tally, c->trace) != CLI_OK)
        goto out;
    c->s = s;
    if (c->layout && set_stubs(c, s) < 0)
        goto out;
    m = csim_map_new(s);
    if (!m) {
        cli_error("out of memory");
        goto out;
    }
    if (c->layout && apply_layout(c, s, m, g) < 0)
        goto out;
    cli_info(ctx, "simulating %zu iterations (%zu fetch runs)",
             csim_stream_niters(s), csim_stream_nruns(s));
    if (csim_analyze(s, m, g, a->seed, &r, &err) < 0) {
        cli_error("%s: %s", c->trace, err.msg);
        goto out;
    }
    c->r = &r;
    if (a->svg && write_svg(a->svg, c) < 0)
        goto out;
    if (cli_out_open(ctx) < 0)
        goto out;
    if (ctx->json)
        sim_report_json(ctx->out, c);
    else if (ctx->csv)
        sim_report_csv(ctx->out, c, a->by);
    else
        sim_report_text(ctx->out, c);
    status = cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
out:
    csim_report_free(&r);
    csim_map_free(m);
    csim_stream_free(s);
    return status;
}

static int cmd_sim_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    sim_args a = {.c.top = 20, .seed = 1, .dreads = -1};
    int rc = parse(ctx, argc, argv, pos, &a);
    if (rc != CLI_OK)
        return rc < 0 ? cli_parse_exit(rc) : rc;
    simctx *c = &a.c;
    if ((rc = cli_tgt_resolve(ctx, &a.to, c->trace, NULL, 1)) != CLI_OK)
        return rc;
    c->t = &a.to.t;
    tgt_cache g = c->t->cache;
    if (a.by_ctx) {
        if (c->layout || ctx->csv)
            return cli_usage_error(ctx, "sim: --by-context excludes --layout "
                                   "and --csv");
        return by_context(ctx, c->trace, c->t, &g, a.dreads, a.seed);
    }
    img *im = NULL;
    if (c->elf && open_image(&a, c, &im) != CLI_OK) {
        free(c->ltext);
        return CLI_FAIL;
    }
    c->im = im;
    int status = simulate(ctx, &a, &g);
    free(c->ltext);
    img_free(im);
    return status;
}
