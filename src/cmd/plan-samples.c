/* codeplace plan --samples: plans from PC samples, alone (a ranking) or
 * next to a trace (evaluated on it). */
#include "cmd/plan-samples.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/emit.h"
#include "plan/fromsamples.h"
#include "samples/samples.h"
#include "util/jw.h"
#include "util/wfile.h"

static smp *load(const char *path)
{
    cp_err err;
    smp *s = smp_load(path, NULL, &err);
    if (!s)
        cli_error("%s", err.msg);
    return s;
}

static plan_result *run(cli_ctx *ctx, plan_model *m, const smp *s,
                        const plan_samples_args *a, int hotblock,
                        plan_samples_info *info)
{
    (void)ctx;
    plan_samples_opts o = {0};
    o.budget = a->budget;
    o.hotblock = hotblock;
    cp_err err;
    plan_result *r = plan_from_samples(m, s, &o, info, &err);
    if (!r)
        cli_error("%s: %s", a->samples, err.msg);
    return r;
}

typedef struct artefact_args {
    plan_model *m;
    const plan_result *r;
    const plan_emit_info *info;
    const char *path; /* the file being written */
} artefact_args;

static int put_list(FILE *f, void *arg, cp_err *err)
{
    artefact_args *x = arg;
    if (plan_emit_list(f, x->m, x->r, x->info) < 0)
        return cp_seterr(err, "cannot write '%s': %s", x->path,
                         errno ? strerror(errno) : "write error");
    return 0;
}

static int put_layout(FILE *f, void *arg, cp_err *err)
{
    artefact_args *x = arg;
    return plan_emit_layout(f, x->m, x->r, x->info, err);
}

/* The name list and layout are written whole or not at all (util/wfile). */
static int write_artefacts(plan_model *m, const plan_result *r,
                           const plan_samples_args *a,
                           const plan_emit_info *info)
{
    cp_err err;
    artefact_args x = {m, r, info, a->list};
    errno = 0;
    if (a->list && cp_wfile_write(a->list, put_list, &x, &err) < 0) {
        cli_error("name list: %s", err.msg);
        return -1;
    }
    x.path = a->layout;
    if (a->layout && cp_wfile_write(a->layout, put_layout, &x, &err) < 0) {
        cli_error("layout: %s", err.msg);
        return -1;
    }
    if (a->emit && plan_emit_snippets(a->emit, m, r, info, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

static const char *unit_name(const plan_model *m, size_t u)
{
    return plan_model_unit(m, u)->name;
}

static double share(double a, double b)
{
    return b > 0 ? 100.0 * a / b : 0;
}

/* What the report of a plan from samples alone shows. */
typedef struct samples_report {
    const plan_model *m;
    const tgt *t;
    const plan_samples_args *a;
    const plan_result *r;
    const plan_samples_info *info;
    const char *sname, *note;
    int hotblock;
    double in_fast, in_hot; /* samples in fast memory, in the hot block */
    size_t nfast, nhot;     /* their sections */
} samples_report;

static void render_json(FILE *o, const samples_report *x)
{
    jw w;
    jw_init(&w, o, 1);
    jw_obj_begin(&w);
    jw_key(&w, "image");
    jw_str(&w, img_path(plan_model_image(x->m)));
    jw_key(&w, "target");
    jw_str(&w, x->t->name);
    jw_key(&w, "budget");
    jw_uint(&w, x->a->budget);
    jw_key(&w, "evidence");
    jw_str(&w, "samples");
    jw_key(&w, "prediction");
    jw_bool(&w, 0);
    jw_key(&w, "note");
    jw_str(&w, x->note);
    jw_key(&w, "samples");
    jw_obj_begin(&w);
    jw_key(&w, "file");
    jw_str(&w, x->a->samples);
    jw_key(&w, "total");
    jw_uint(&w, x->info->total);
    jw_key(&w, "in_cached_code");
    jw_uint(&w, x->info->in_units);
    jw_key(&w, "halted");
    jw_uint(&w, x->info->halted);
    jw_key(&w, "sections");
    jw_uint(&w, x->info->sampled_units);
    jw_obj_end(&w);
    jw_key(&w, "busy_wait");
    jw_arr_begin(&w);
    for (size_t i = 0; i < x->info->nspin; i++) {
        const plan_spin *sp = &x->info->spin[i];
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, unit_name(x->m, sp->unit));
        jw_key(&w, "loop");
        jw_uint(&w, sp->loop);
        jw_key(&w, "loop_end");
        jw_uint(&w, sp->loop_end);
        jw_key(&w, "samples");
        jw_uint(&w, sp->samples);
        jw_key(&w, "loop_samples");
        jw_uint(&w, sp->loop_samples);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "best");
    jw_str(&w, x->sname);
    jw_key(&w, "results");
    jw_arr_begin(&w);
    jw_obj_begin(&w);
    jw_key(&w, "strategy");
    jw_str(&w, x->sname);
    jw_key(&w, "misses_per_iteration");
    jw_null(&w);
    jw_key(&w, "fast_bytes");
    jw_uint(&w, x->r->fast_bytes);
    jw_key(&w, "veneers");
    jw_uint(&w, x->r->veneers);
    jw_key(&w, "hot_bytes");
    jw_uint(&w, x->r->hot_bytes);
    jw_key(&w, "pad_bytes");
    jw_uint(&w, x->r->pad_bytes);
    jw_key(&w, "flash_left_bytes");
    jw_uint(&w, x->info->left_bytes);
    jw_key(&w, "fast_samples_share");
    jw_double(&w, x->info->in_units ? x->in_fast / x->info->in_units : 0);
    jw_key(&w, "items");
    jw_arr_begin(&w);
    for (size_t i = 0; i < x->r->nitems; i++) {
        const plan_item *it = &x->r->items[i];
        const plan_unit *u = plan_model_unit(x->m, it->unit);
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, u->name);
        jw_key(&w, "section");
        jw_str(&w, u->isec);
        jw_key(&w, "region");
        jw_str(&w, it->region == PLAN_FAST ? x->t->fast_mem : "flash");
        jw_key(&w, "offset");
        jw_uint(&w, it->offset);
        jw_key(&w, "size");
        jw_uint(&w, u->size);
        jw_key(&w, "samples");
        jw_uint(&w, (uint64_t)it->samples);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
}

static void render_text(FILE *o, const samples_report *x)
{
    char b1[32], b2[32];
    fprintf(o, "image %s, target %s, budget %u bytes of %s\n",
            img_path(plan_model_image(x->m)), x->t->name, x->a->budget,
            x->t->fast_mem);
    fprintf(o, "samples: %s, %s in cached code (%.1f%%) in %zu sections\n",
            cp_commas(b1, x->info->total), cp_commas(b2, x->info->in_units),
            share((double)x->info->in_units, (double)x->info->total),
            x->info->sampled_units);
    fprintf(o, "note: %s\n", x->note);
    if (x->info->nspin) {
        fprintf(o, "\ntight loops (busy-waits, copy and compare loops), kept out "
                "of %s: a short backward branch holds their samples, "
                "and they run from the cache after the first pass:\n",
                x->t->fast_mem);
        for (size_t i = 0; i < x->info->nspin; i++) {
            const plan_spin *sp = &x->info->spin[i];
            fprintf(o, "  %-32s 0x%08x-0x%08x %s of %s samples\n",
                    unit_name(x->m, sp->unit), sp->loop, sp->loop_end,
                    cp_commas(b1, sp->loop_samples),
                    cp_commas(b2, sp->samples));
        }
    }
    fprintf(o, "\n%-18s %9s %10s %9s\n", "place", "sections", "bytes",
            "samples");
    fprintf(o, "%-18s %9zu %10u %8.1f%%\n", x->t->fast_mem, x->nfast,
            x->r->fast_bytes, share(x->in_fast, (double)x->info->in_units));
    if (x->hotblock) {
        fprintf(o, "%-18s %9zu %10u %8.1f%%\n", "flash hot block", x->nhot,
                x->r->hot_bytes, share(x->in_hot, (double)x->info->in_units));
        if (x->info->left_units)
            fprintf(o, "%-18s %9zu %10llu %8.1f%%   (past one cache "
                    "size: an order from samples could as well add "
                    "misses)\n", "flash, as linked", x->info->left_units,
                    (unsigned long long)x->info->left_bytes,
                    share((double)x->info->left_samples,
                          (double)x->info->in_units));
    }
    fprintf(o, "\nchosen: %s (by samples per byte%s; %u veneers)\n",
            x->sname, x->hotblock ? ", the hottest of the rest gathered in "
            "flash" : "",
            x->r->veneers);
}

int cmd_plan_samples_only(cli_ctx *ctx, plan_model *m, const tgt *t,
                          const plan_samples_args *a)
{
    /* By default fast memory only, flash as linked: a flash order from
     * samples alone moved the demo's misses by -15 % to +14 % (docs/plan.md),
     * and nothing here can tell which. With no fast memory the hot block is
     * all there is to plan, and it is said to be a guess. */
    int hotblock;
    switch (a->strategy) {
    case PLAN_AUTO: hotblock = !a->budget; break;
    case PLAN_HOTBLOCK: hotblock = 1; break;
    case PLAN_RANK: hotblock = 0; break;
    default:
        return cli_usage_error(ctx, "plan: --strategy %s needs a trace "
                               "(--trace); from samples alone: hotblock or "
                               "rank", plan_strategy_name(a->strategy));
    }
    if (!hotblock && !a->budget)
        return cli_usage_error(ctx, "plan: --strategy rank fills fast memory: "
                               "give --budget");
    smp *s = load(a->samples);
    if (!s)
        return CLI_FAIL;
    if (s->target[0] && strcmp(s->target, t->name))
        cli_warn("%s was recorded with target '%s', planning for '%s'",
                 a->samples, s->target, t->name);
    plan_samples_info info;
    plan_result *r = run(ctx, m, s, a, hotblock, &info);
    int status = CLI_FAIL;
    if (!r)
        goto out;
    if (hotblock)
        cli_warn("the flash hot block is ordered from samples alone: that can "
                 "add misses as well as remove them; measure it on the board "
                 "(codeplace counters) or plan from a trace");
    const char *sname = hotblock ? "samples-hotblock" : "samples-rank";
    plan_emit_info ei = {.t = t, .strategy = sname, .budget = a->budget,
                         .from_samples = 1, .no_prediction = 1,
                         .basis = "ranked from PC samples, not simulated "
                                  "(measure misses before and after)"};
    if (write_artefacts(m, r, a, &ei) < 0)
        goto out;
    samples_report x = {.m = m, .t = t, .a = a, .r = r, .info = &info,
                        .sname = sname, .hotblock = hotblock};
    for (size_t i = 0; i < r->nitems; i++) {
        const plan_item *it = &r->items[i];
        if (it->region == PLAN_FAST) {
            x.in_fast += it->samples;
            x.nfast++;
        } else {
            x.in_hot += it->samples;
            x.nhot++;
        }
    }
    if (info.halted)
        cli_warn("%.1f%% of the samples were taken with the core halted "
                 "(0xffffffff)", share((double)info.halted, (double)info.total));
    if (cli_out_open(ctx) < 0)
        goto out;
    x.note = "a plan from PC samples alone is a ranking, not a "
             "prediction: no miss figure without a trace or "
             "counters; measure misses per iteration on the board "
             "before and after (codeplace counters --load)";
    if (ctx->json)
        render_json(ctx->out, &x);
    else
        render_text(ctx->out, &x);
    status = CLI_OK;
out:
    plan_result_free(r);
    plan_samples_info_free(&info);
    smp_free(s);
    return status;
}

int cmd_plan_samples_candidate(cli_ctx *ctx, plan_model *m,
                               const plan_samples_args *a, plan_result **res)
{
    *res = NULL;
    smp *s = load(a->samples);
    if (!s)
        return -1;
    plan_samples_info info;
    plan_result *r = run(ctx, m, s, a, 1, &info);
    if (r && info.in_units) {
        double un = share((double)info.untraced, (double)info.in_units);
        if (un > 5)
            cli_warn("%.1f%% of the samples in %s fall in code the trace "
                     "never runs: the trace is not the workload the samples "
                     "saw", un, a->samples);
        for (size_t i = 0; i < info.nspin; i++)
            cli_info(ctx, "samples: tight loop in %s (%llu of %llu "
                     "samples), kept out of fast memory",
                     unit_name(m, info.spin[i].unit),
                     (unsigned long long)info.spin[i].loop_samples,
                     (unsigned long long)info.spin[i].samples);
    }
    plan_samples_info_free(&info);
    smp_free(s);
    *res = r;
    return r ? 0 : -1;
}
