/* codeplace report: where the samples fall, per function, library and
 * section; text, CSV, JSON, folded stacks, speedscope, SVG and HTML. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cli/cli.h"
#include "cli/tgtopt.h"
#include "cmd/commands.h"
#include "image/image.h"
#include "report/profile.h"
#include "report/report.h"
#include "samples/samples.h"
#include "target/target.h"
#include "trace/trace.h"
#include "util/wfile.h"

enum {
    O_ELF, O_MAP, O_TRACE, O_TARGET, O_CACHE, O_AS, O_UNCACHED, O_TOP, O_SORT, O_LIB, O_FUNC, O_ALL,
    O_BY, O_FOLDED, O_SPEEDSCOPE, O_SVG, O_HTML, O_NOPT
};

static const cli_opt opts[] = {
    [O_ELF] = {"elf", 'e', "FILE", "the firmware the samples were taken from, "
               "as the ELF argument"},
    [O_MAP] = {"map", 'm', "FILE", "its GNU ld map file: libraries (archives) "
               "and input sections"},
    [O_TRACE] = {"trace", 0, "FILE", "a trace of the same build: adds cache "
                 "misses per function, replayed through the target's cache"},
    [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target name or file: names memories"
                                    " in rows outside the image (ROM, SRAM) "
                                    "and sets the cache (default: the "
                                    "trace's, else the samples')"),
    [O_CACHE] = CLI_TGT_OPT_CACHE(0),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_UNCACHED] = CLI_TGT_OPT_UNCACHED,
    [O_TOP] = {"top", 0, "N", "show the first N functions (default 20 in "
               "text, all in CSV/JSON; 0: all)"},
    [O_SORT] = {"sort", 's', "KEY", "samples (default), density (samples per "
                "byte), size, name, addr, misses, miss-density"},
    [O_LIB] = {"lib", 0, "GLOB", "only functions of libraries matching GLOB "
               "(e.g. 'liblwip*')"},
    [O_FUNC] = {"func", 0, "GLOB", "only functions whose name (or an alias) "
                "matches GLOB"},
    [O_ALL] = {"all", 'a', NULL, "also list functions without samples"},
    [O_BY] = {"by", 0, "TABLE", "the table --csv writes: func (default), "
              "lib, section"},
    [O_FOLDED] = {"folded", 0, NULL, "write folded stacks (library;function "
                  "count) for flame-graph tools"},
    [O_SPEEDSCOPE] = {"speedscope", 0, NULL, "write a speedscope JSON "
                      "profile"},
    [O_SVG] = {"svg", 0, "FILE", "also write an SVG plot: samples per library "
               "and the top functions"},
    [O_HTML] = {"html", 0, "FILE", "also write one self-contained HTML page: "
                "summary, plots, tables"},
    [O_NOPT] = {0},
};

static int cmd_report_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_report = {
    .name = "report",
    .fn = cmd_report_fn,
    .summary = "where the time goes: samples per function, library and "
               "section; plots and an HTML page",
    .usage = "SAMPLES ELF [--map MAP] [--trace TRACE] [options]",
    .description =
        "Attributes PC samples to the functions of an ELF and prints, per\n"
        "function: samples, share, size and samples per byte; then the sums\n"
        "per library (the archive the map file names) and per output section.\n"
        "SAMPLES is a samples file (docs/formats/samples.md), an OpenOCD\n"
        "`profile` gmon.out or an on-target profiler dump; the kind is\n"
        "recognised from the contents. Samples in no function keep rows of\n"
        "their own: (halted) for 0xffffffff, (no function in SECTION), (memory\n"
        "NAME) with --target, (outside the image). Shares are of all samples,\n"
        "also when --lib or --func filter the table.\n\n"
        "With --trace (a trace of the same build, `codeplace trace`), the\n"
        "trace is replayed through the target's cache (--target, or the\n"
        "trace's or samples' header) and misses and misses per byte of its warm\n"
        "iterations are added per function, library and section.\n\n"
        "example:\n"
        "  codeplace report samples.txt fw.elf --map fw.map --top 10\n"
        "  codeplace report gmon.out fw.elf --map fw.map --lib 'libgcc*'\n"
        "  codeplace report samples.txt fw.elf --map fw.map --csv --by lib\n"
        "  codeplace report samples.txt fw.elf --map fw.map --html report.html",
    .opts = opts,
    .globals = CLI_G_ALL,
};

static int is_target_file(const char *spec)
{
    size_t n = strlen(spec);
    return strchr(spec, '/') || (n > 7 && !strcmp(spec + n - 7, ".target"));
}

/* Replays the trace through the target's cache (src/cache) and attaches
 * the misses of the warm iterations to the profile. desc gets a
 * description of what was counted. */
static int tally_rec(void *arg, const trc_rec *r, cp_err *err)
{
    (void)err;
    cli_tally_add(arg, r);
    return 0;
}

/* One pass over the trace: the stream, the image check, the target
 * check (as sim makes them). */
static int trace_misses(cli_ctx *ctx, rep_profile *prof, const img *im,
                        const char *elf, const cli_tgt *to, const char *trace,
                        char *desc, size_t ndesc)
{
    cp_err err;
    const tgt *tg = &to->t;
    cli_tally tally;
    cli_tally_init(&tally, tg);
    csim_load_opts o = {-1, tally_rec, &tally};
    csim_load_info info;
    csim_stream *s = csim_stream_load_ex(trace, im, tg, &o, &info, &err);
    if (!s) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (info.header.elf_hash[0] && strcmp(info.header.elf_hash, img_hash(im)))
        cli_warn("%s was recorded from image %s, but %s is %s: misses "
                 "may not match", trace, info.header.elf_hash, elf,
                 img_hash(im));
    if (cli_tgt_verdict(ctx, to, &tally, trace) != CLI_OK) {
        csim_stream_free(s);
        return -1;
    }
    if (csim_stream_cut(s))
        cli_warn("%s: the recording was cut short; using its complete "
                 "blocks", trace);
    if (csim_stream_dropped(s))
        cli_warn("%s: the recording ended inside its last iteration: 1 "
                 "unfinished iteration dropped, complete iterations only",
                 trace);
    csim_map *m = csim_map_new(s);
    csim_report r;
    memset(&r, 0, sizeof r);
    rep_miss *mm = NULL;
    int rc = -1;
    if (!m) {
        cli_error("out of memory");
        goto out;
    }
    cli_info(ctx, "replaying %s through the %s cache...", trace, tg->name);
    if (csim_analyze(s, m, &tg->cache, 1, &r, &err) < 0) {
        cli_error("%s: %s", trace, err.msg);
        goto out;
    }
    mm = calloc(r.nfstat + 1, sizeof *mm);
    if (!mm) {
        cli_error("out of memory");
        goto out;
    }
    for (size_t i = 0; i < r.nfstat; i++) {
        const csim_fn *fn = csim_stream_fn(s, r.fstat[i].fn);
        mm[i].f = fn->f;
        mm[i].name = fn->f ? NULL : "(code outside the image's functions)";
        mm[i].misses = r.fstat[i].misses;
    }
    if (rep_prof_set_misses(prof, mm, r.nfstat, &err) < 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    prof->miss_iters = r.niter - r.from;
    char b[32], which[96];
    if (r.from >= r.niter || r.niter < 2) {
        cli_warn("%s: %zu complete iteration%s: no warm iteration, the "
                 "misses are those of a cold cache", trace, r.niter,
                 r.niter == 1 ? "" : "s");
        snprintf(which, sizeof which, "%zu complete iteration%s, no warm "
                 "iteration (cold misses)", r.niter, r.niter == 1 ? "" : "s");
    } else {
        snprintf(which, sizeof which, "warm iterations %zu..%zu", r.from,
                 r.niter - 1);
    }
    snprintf(desc, ndesc, "the %s cache (%s bytes, %u-way, %u-byte lines, "
             "%s), %s of %s", tg->name,
             cp_commas(b, tg->cache.size), (unsigned)tg->cache.ways,
             (unsigned)tg->cache.line, tgt_repl_name(tg->cache.repl), which,
             trace);
    rc = 0;
out:
    free(mm);
    csim_report_free(&r);
    csim_map_free(m);
    csim_stream_free(s);
    return rc;
}

/* Writes one extra output file with fn; reports errors. */
static int write_file(const char *path, rep_profile *p, const rep_view *v,
                      int (*fn)(FILE *, rep_profile *, const rep_view *,
                                cp_err *))
{
    cp_wfile w;
    cp_err err;
    if (cp_wfile_open(&w, path, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (fn(w.f, p, v, &err) < 0) {
        cp_wfile_abort(&w);
        cli_error("cannot write '%s': %s", path, err.msg);
        return -1;
    }
    if (cp_wfile_commit(&w, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

/* The trace's misses onto the profile, through the target's cache.
 * Returns CLI_OK or the exit code (reported). */
static int attach_trace(cli_ctx *ctx, rep_profile *prof, const img *im,
                        const char *elf, const cli_tgt *to, const char *trace,
                        char *desc, size_t ndesc)
{
    if (trace_misses(ctx, prof, im, elf, to, trace, desc, ndesc) < 0)
        return CLI_FAIL;
    return CLI_OK;
}

/* --lib GLOB must match a library of the image: a pattern that matches
 * none would give an empty table that reads as "no samples there".
 * Returns 0, or reports the error, naming the libraries, and -1. */
static int check_lib_glob(const rep_profile *prof, const char *glob)
{
    for (size_t i = 0; i < prof->nrows; i++)
        if (prof->rows[i].library && cp_glob(glob, prof->rows[i].library))
            return 0;
    char have[256] = "";
    size_t n = 0;
    for (size_t i = 0; i < prof->nrows && n < sizeof have; i++) {
        const char *lib = prof->rows[i].library;
        size_t j = 0;
        while (lib && j < i && (!prof->rows[j].library ||
                                strcmp(prof->rows[j].library, lib)))
            j++;
        if (lib && j == i)
            n += (size_t)snprintf(have + n, sizeof have - n, "%s%s",
                                  n ? ", " : "", lib);
    }
    cli_error("--lib '%s' matches no library of the image (its libraries: "
              "%s)", glob, n ? have : "none");
    return -1;
}

/* The plots and pages (--svg, --html), then the report in the chosen
 * format. Returns the exit code. */
static int render(cli_ctx *ctx, rep_profile *prof, const rep_view *v,
                  rep_table table, int folded, int speedscope,
                  const char *svg, const char *html)
{
    cp_err err;
    int status = CLI_OK;
    if (svg && write_file(svg, prof, v, rep_write_svg) < 0)
        status = CLI_FAIL;
    if (html && write_file(html, prof, v, rep_write_html) < 0)
        status = CLI_FAIL;
    if (status != CLI_OK || cli_out_open(ctx) < 0)
        return CLI_FAIL;
    int wrc;
    if (ctx->json)
        wrc = rep_write_json(ctx->out, prof, v, &err);
    else if (ctx->csv)
        wrc = rep_write_csv(ctx->out, prof, v, table, &err);
    else if (folded)
        wrc = rep_write_folded(ctx->out, prof, v, &err);
    else if (speedscope)
        wrc = rep_write_speedscope(ctx->out, prof, v, &err);
    else
        wrc = rep_write_text(ctx->out, prof, v, &err);
    if (wrc < 0) {
        cli_error("cannot write the report: %s", err.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* The command line, parsed. */
typedef struct rep_args {
    const char *elf, *map, *trace, *svg, *html, *by;
    cli_tgt to;
    int folded, speedscope, top_set;
    uint64_t top;
    rep_view v;
    rep_table table;
} rep_args;

static int rep_opt(cli_ctx *ctx, int o, const char *arg, rep_args *a)
{
    switch (o) {
    case O_ELF: a->elf = arg; break;
    case O_MAP: a->map = arg; break;
    case O_TRACE: a->trace = arg; break;
    case O_TARGET: a->to.name = arg; break;
    case O_CACHE: a->to.cache = arg; break;
    case O_AS: a->to.as = arg; break;
    case O_UNCACHED: a->to.allow_uncached = 1; break;
    case O_TOP:
        if (cli_arg_u64(ctx, "--top", arg, 0, &a->top) < 0)
            return CLI_USAGE;
        a->top_set = 1;
        break;
    case O_SORT:
        if (rep_sort_parse(arg, &a->v.sort) < 0)
            return cli_usage_error(ctx, "--sort: '%s' is not samples, "
                                   "density, size, name, addr, misses or "
                                   "miss-density", arg);
        break;
    case O_LIB: a->v.lib_glob = arg; break;
    case O_FUNC: a->v.func_glob = arg; break;
    case O_ALL: a->v.all = 1; break;
    case O_BY: a->by = arg; break;
    case O_FOLDED: a->folded = 1; break;
    case O_SPEEDSCOPE: a->speedscope = 1; break;
    case O_SVG: a->svg = arg; break;
    case O_HTML: a->html = arg; break;
    }
    return CLI_OK;
}

/* CLI_OK, the status of a usage error, or cli_next's CLI_HELPED or
 * CLI_ERR. */
static int parse(cli_ctx *ctx, int argc, char **argv, char **pos,
                 rep_args *a)
{
    const char *arg;
    int rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        if (rep_opt(ctx, rc, arg, a) != CLI_OK)
            return CLI_USAGE;
    if (rc != CLI_END)
        return rc; /* CLI_HELPED or CLI_ERR */
    if (cli_elf_arg(ctx, pos, &p.npos, a->elf, 0, &a->elf) < 0)
        return CLI_USAGE;
    if (!a->elf)
        return cli_usage_error(ctx, "report: give the ELF the samples come "
                               "from");
    if (p.npos != 1)
        return cli_usage_error(ctx, "report: give one samples file");
    if (ctx->json + ctx->csv + a->folded + a->speedscope > 1)
        return cli_usage_error(ctx, "report: choose one of --json, --csv, "
                               "--folded, --speedscope");
    if ((a->v.sort == REP_SORT_MISSES || a->v.sort == REP_SORT_MISS_DENSITY) &&
        !a->trace)
        return cli_usage_error(ctx, "--sort %s needs the misses: give "
                               "--trace", a->v.sort == REP_SORT_MISSES
                                              ? "misses" : "miss-density");
    if (!strcmp(a->by, "func"))
        a->table = REP_TABLE_FUNCS;
    else if (!strcmp(a->by, "lib"))
        a->table = REP_TABLE_LIBS;
    else if (!strcmp(a->by, "section"))
        a->table = REP_TABLE_SECS;
    else
        return cli_usage_error(ctx, "--by: '%s' is not func, lib or section",
                               a->by);
    /* A named target is checked before any file is read. */
    if (a->to.name && !is_target_file(a->to.name) && !tgt_find(a->to.name))
        return cli_usage_error(ctx, "--target: no target '%s' (see "
                               "'codeplace target')", a->to.name);
    if (!a->top_set && (ctx->json || ctx->csv || a->folded || a->speedscope))
        a->top = 0;
    a->v.top = (size_t)a->top;
    return CLI_OK;
}

/* The samples and the image, with what they say about each other. */
static int open_inputs(const rep_args *a, const char *path, smp **sp,
                       smp_kind *kind, img **imp)
{
    cp_err err;
    smp *s = smp_load(path, kind, &err);
    if (!s) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    img *im = img_open(a->elf, a->map, &err);
    if (!im || img_map_check(im, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        smp_free(s);
        return CLI_FAIL;
    }
    for (size_t i = 0; i < img_nwarnings(im); i++)
        cli_warn("%s", img_warning(im, i));
    if (s->elf[0] && strcmp(s->elf, img_hash(im)))
        cli_warn("%s was sampled from image %s, but %s is %s: functions may "
                 "not match", path, s->elf, a->elf, img_hash(im));
    *sp = s;
    *imp = im;
    return CLI_OK;
}

/* The profile's view: where its figures come from. */
static void view_sources(rep_args *a, const char *path, const smp *s,
                         smp_kind kind, const tgt *tg)
{
    rep_view *v = &a->v;
    v->samples_path = path;
    v->image_path = a->elf;
    v->map_path = a->map;
    v->trace_path = a->trace;
    v->source = s->source[0] ? s->source : smp_kind_name(kind);
    v->target = tg ? tg->name : NULL;
    v->rate_hz = s->rate_hz;
    v->duration_s = s->duration_s;
    v->dropped = s->dropped;
    v->misses_note = "no --trace given";
}

/* The profile of the samples, and the misses of --trace. */
static int profile(cli_ctx *ctx, rep_args *a, const char *path, smp *s,
                   smp_kind kind, img *im)
{
    cp_err err;
    int rc;
    /* The target: --target, else the trace's, else the samples'. */
    if ((rc = cli_tgt_resolve(ctx, &a->to, a->trace, s->target, 0)) != CLI_OK)
        return rc;
    const tgt *tg = a->to.base ? &a->to.t : NULL;
    if (a->trace && !tg) {
        cli_error("%s: the trace names no target; give --target for the "
                  "cache geometry", a->trace);
        return CLI_USAGE;
    }
    rep_profile *prof = rep_prof_build(im, s, tg, &err);
    if (!prof) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    view_sources(a, path, s, kind, tg);
    char cache_desc[512];
    if (a->trace) {
        int trc = attach_trace(ctx, prof, im, a->elf, &a->to, a->trace,
                               cache_desc, sizeof cache_desc);
        if (trc != CLI_OK) {
            rep_prof_free(prof);
            return trc;
        }
        a->v.cache_desc = cache_desc;
        a->v.misses_note = NULL;
    }
    if (prof->halted)
        cli_info(ctx, "%llu samples were taken while the core was halted "
                 "(0xffffffff); they have a row of their own",
                 (unsigned long long)prof->halted);
    int status = a->v.lib_glob && check_lib_glob(prof, a->v.lib_glob) < 0
                     ? CLI_FAIL
                     : render(ctx, prof, &a->v, a->table, a->folded,
                              a->speedscope, a->svg, a->html);
    rep_prof_free(prof);
    return status;
}

static int cmd_report_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    rep_args a = {.by = "func", .top = 20, .v = {.sort = REP_SORT_SAMPLES}};
    int rc = parse(ctx, argc, argv, pos, &a);
    if (rc != CLI_OK)
        return rc < 0 ? cli_parse_exit(rc) : rc;
    smp_kind kind;
    smp *s;
    img *im;
    if ((rc = open_inputs(&a, pos[0], &s, &kind, &im)) != CLI_OK)
        return rc;
    rc = profile(ctx, &a, pos[0], s, kind, im);
    img_free(im);
    smp_free(s);
    return rc;
}
