/* codeplace plan: plan and write the artefacts (plan.c parses the
 * command line, plan-render.c reports). */
#include "cmd/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/plan-samples.h"
#include "target/target.h"
#include "util/sig.h"
#include "util/wfile.h"
#include "verify/verify.h"

static void progress(void *c, int level, const char *msg)
{
    cli_ctx *ctx = c;
    if (level == 0)
        cli_info(ctx, "plan: %s", msg);
    else
        cli_debug(ctx, "plan: %s", msg);
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

void cmd_plan_state_free(plan_state *st)
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
    cp_err err;
    for (size_t i = 0; i < img_nwarnings(st->im); i++)
        cli_warn("%s", img_warning(st->im, i));
    if (!a->map) {
        snprintf(st->why, sizeof st->why, "no --map: each function is assumed "
                 "to have its own section (.text.NAME); objects built without "
                 "-ffunction-sections have none, and ld ignores a pattern "
                 "that matches nothing");
        st->unverified = st->why;
        cli_warn("%s: the prediction is unverified", st->why);
    } else if (img_map_check(st->im, &err) < 0) {
        snprintf(st->why, sizeof st->why, "%s", err.msg);
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

/* What each record of a trace feeds besides the model: the target check
 * and the start-up code's rule. */
typedef struct rec_sinks {
    cli_tally *tally;
    plan_boot *boot;
} rec_sinks;

static void on_rec(void *arg, const trc_rec *r)
{
    rec_sinks *k = arg;
    cli_tally_add(k->tally, r);
    plan_boot_rec(k->boot, r);
}

/* The integration whose start-up the plan keeps its fast memory out of:
 * Zephyr with --for zephyr, pico-sdk for its images. */
static plan_integration boot_integration(const plan_args *a,
                                         const plan_model *m)
{
    return a->for_zephyr      ? PLAN_INT_ZEPHYR
           : plan_model_pico(m) ? PLAN_INT_PICO
                                : PLAN_INT_GNU_LD;
}

/* Which rule kept how many functions out of fast memory, said. */
static void say_boot(cli_ctx *ctx, const plan_args *a, plan_integration in,
                     const plan_boot_counts *n)
{
    char more[300] = "";
    if (n->unnamed)
        snprintf(more, sizeof more, "; %zu of them not on the start-up name "
                 "list: %s%s", n->unnamed, n->unnamed_names,
                 n->unnamed > 8 ? ", ..." : "");
    if (n->traces_reached)
        cli_info(ctx, "plan: start-up code stays out of %s: %zu function%s "
                 "fetched before the first entry into %s (in %u of %u "
                 "trace%s)%s", a->t->fast_mem, n->by_trace,
                 n->by_trace == 1 ? "" : "s", n->point, n->traces_reached,
                 n->traces, n->traces == 1 ? "" : "s", more);
    else if (plan_integration_has_boot_names(in)) {
        char why[160];
        if (!n->traces)
            snprintf(why, sizeof why, "no trace");
        else if (!n->point)
            snprintf(why, sizeof why, "the image has no boot-done point");
        else
            snprintf(why, sizeof why, "no trace reaches the first entry into "
                     "%s before its first iteration", n->point);
        cli_info(ctx, "plan: start-up code stays out of %s: %zu function%s "
                 "of %s's start-up name list (%s)", a->t->fast_mem,
                 n->by_names, n->by_names == 1 ? "" : "s",
                 plan_integration_name(in), why);
    }
}

/* Reads every trace into the model, one pass each, with the target check
 * sim makes and the start-up code's rule. 0, or -1 (reported). */
static int load_traces(cli_ctx *ctx, const plan_args *a, plan_model *m,
                       plan_boot_counts *bn)
{
    cp_err err;
    plan_integration in = boot_integration(a, m);
    plan_boot *boot = plan_boot_new(m, in, &err);
    if (!boot) {
        cli_error("%s", err.msg);
        return -1;
    }
    for (int i = 0; i < a->ntraces; i++) {
        cli_info(ctx, "plan: reading %s", a->tpath[i]);
        cli_tally tally;
        cli_tally_init(&tally, &a->to.t);
        rec_sinks sinks = {&tally, boot};
        plan_read rd = {on_rec, &sinks, 0, 0};
        plan_boot_trace_begin(boot);
        if (plan_model_add_workload(m, a->tpath[i], a->tweight[i], a->iters,
                                    &rd, &err) < 0) {
            cli_error("%s", err.msg);
            plan_boot_free(boot);
            return -1;
        }
        plan_boot_trace_end(boot);
        if (rd.cut)
            cli_warn("%s: the recording was cut short; using its %llu "
                     "complete records", a->tpath[i],
                     (unsigned long long)rd.records);
        if (cli_tgt_verdict(ctx, &a->to, &tally, a->tpath[i]) != CLI_OK) {
            plan_boot_free(boot);
            return -1;
        }
    }
    plan_boot_apply(boot, m, in, bn);
    plan_boot_free(boot);
    say_boot(ctx, a, in, bn);
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
    if (!rl || img_map_check(rl, &err) < 0) {
        img_free(rl);
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
    if (st->zres) {
        st->zunrefined = st->zres->misses;
        if (plan_result_refine(st->m, st->zres, &err) < 0) {
            cli_error("%s", err.msg);
            return -1;
        }
    }
    cli_info(ctx, "plan: %ld linker stubs read back from %s", nst, a->refine);
    return 0;
}

/* The image, the map's check and the model with what the options keep
 * where it is. 0, or -1 (reported). */
static int open_model(const plan_args *a, plan_state *st)
{
    cp_err err;
    if (!(st->im = img_open(a->elf, a->map, &err))) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (img_set_build_dir(st->im, a->build_dir) < 0) {
        cli_error("out of memory");
        return -1;
    }
    if (check_map(a, st) < 0)
        return -1;
    plan_model *m = st->m = plan_model_new(st->im, a->t, &a->c, &err);
    if (!m) {
        cli_error("%s", err.msg);
        return -1;
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
    return 0;
}

/* The traces in the model, and what the search will and will not see of
 * them said. 0, or -1 (reported). */
static int read_evidence(cli_ctx *ctx, const plan_args *a, plan_model *m,
                         plan_boot_counts *bn)
{
    if (load_traces(ctx, a, m, bn) < 0)
        return -1;
    plan_model_set_plan_iters(m, a->plan_iters);
    plan_model_set_cache_seed(m, a->cache_seed);
    warn_cold(a, m);
    plan_unplanned un;
    if (plan_model_unplanned(m, &un) < 0) {
        cli_error("out of memory");
        return -1;
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
    return 0;
}

/* Where the linker stubs of the chosen plan come from, said. */
static void say_stubs(cli_ctx *ctx, const plan_args *a, const plan_state *st)
{
    const char *why;
    if (!a->refine && st->best->flash_stubs && !st->best->stub_order)
        cli_warn("the order of the %u linker stubs in flash is a guess (%s): "
                 "the prediction can be off by their misses; relink and plan "
                 "again with --refine-from for the exact figure",
                 st->best->flash_stubs,
                 !plan_model_stub_order(st->m, &why) && why
                     ? why
                     : "a call into fast memory whose stub name its "
                       "relocations do not give");
    else if (!a->refine && st->best->flash_stubs)
        cli_info(ctx, "plan: %u linker stubs in flash, in the order of GNU ld "
                 "2.40's stub table (verify checks it)",
                 st->best->flash_stubs);
}

/* --for zephyr: the part of the chosen plan the module applies becomes
 * the plan. 0, or -1 (reported). */
static int for_zephyr(cli_ctx *ctx, plan_state *st)
{
    cp_err err;
    plan_applied ap;
    if (!(st->zres = plan_result_for(st->m, st->best, PLAN_INT_ZEPHYR, &ap,
                                     &err))) {
        cli_error("%s", err.msg);
        return -1;
    }
    cli_info(ctx, "plan: for Zephyr: %.1f misses per iteration predicted "
             "(%zu sections the list cannot single out left out); the "
             "rest of the text from 0x%08x, after the hot block and the "
             "relocated code's flash copy", st->zres->misses,
             ap.fast_dropped + ap.flash_dropped, st->zres->text_start);
    st->best = st->zres;
    plan_model_hot_own_stubs(st->m, 1);
    return 0;
}

/* The name list, the layout and the snippets of the chosen plan. 0, or -1
 * (reported). */
static int write_artefacts(const plan_args *a, plan_state *st)
{
    cp_err err;
    emit_args ea = {st->m, st->best, &st->info};
    if (a->list && write_file(a->list, "name list", do_list, &ea) < 0)
        return -1;
    if (a->layout && write_file(a->layout, "layout", do_layout, &ea) < 0)
        return -1;
    if (a->emit &&
        plan_emit_snippets(a->emit, st->m, st->best, &st->info, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

int cmd_plan_run(cli_ctx *ctx, const plan_args *a, plan_state *st)
{
    if (open_model(a, st) < 0)
        return CLI_FAIL;
    plan_model *m = st->m;
    plan_samples_args sa = {a->samples, a->strategy, a->budget, a->list,
                            a->layout, a->emit};
    if (!a->ntraces) {
        /* No trace: the integration's name list. */
        plan_integration in = boot_integration(a, m);
        plan_boot_apply(NULL, m, in, &st->boot);
        say_boot(ctx, a, in, &st->boot);
        return cmd_plan_samples_only(ctx, m, a->t, &sa);
    }
    if (read_evidence(ctx, a, m, &st->boot) < 0)
        return CLI_FAIL;
    /* For Zephyr the search sees the hot block's own stubs too. */
    plan_model_hot_own_stubs(m, a->for_zephyr);
    if (run_strategies(ctx, a, st) < 0)
        return CLI_FAIL;
    if (!a->for_zephyr && a->refine && refine(ctx, a, st) < 0)
        return CLI_FAIL;
    say_stubs(ctx, a, st);
    if (a->samples) {
        if (cmd_plan_samples_candidate(ctx, m, &sa, &st->sres) < 0)
            return CLI_FAIL;
        if ((a->strategy == PLAN_AUTO || a->compare) &&
            plan_result_cycles(m, st->sres) <
                plan_result_cycles(m, st->best) - 1e-6)
            st->best = st->sres;
    }
    int from_samples = st->best == st->sres;
    if (a->for_zephyr && for_zephyr(ctx, st) < 0)
        return CLI_FAIL;
    /* The relinked image is the module's build of the Zephyr result. */
    if (a->for_zephyr && a->refine && refine(ctx, a, st) < 0)
        return CLI_FAIL;
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
    if (write_artefacts(a, st) < 0)
        return CLI_FAIL;
    for (size_t i = 0; i < plan_model_nunits(m); i++) {
        const plan_unit *u = plan_model_unit(m, i);
        if ((u->flags & PLAN_U_SHARED) && u->runs)
            cli_debug(ctx, "note: %s shares %s with %u other function(s); "
                      "they move together", u->name, u->isec, u->nfuncs - 1);
    }
    return -1;
}
