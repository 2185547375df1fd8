/* codeplace plan: the report, text or JSON (plan-run.c plans). */
#include "cmd/plan.h"

#include <stdio.h>
#include <string.h>

#include "target/target.h"
#include "util/jw.h"

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
    /* What kept the start-up code out of fast memory (docs/plan.md). */
    const plan_boot_counts *bn = &st->boot;
    jw_key(&w, "start_up");
    jw_obj_begin(&w);
    jw_key(&w, "rule");
    jw_str(&w, bn->traces_reached ? "trace" : bn->by_names ? "names" : "none");
    jw_key(&w, "boot_done");
    if (bn->point)
        jw_str(&w, bn->point);
    else
        jw_null(&w);
    jw_key(&w, "traces_reaching_it");
    jw_uint(&w, bn->traces_reached);
    jw_key(&w, "functions");
    jw_uint(&w, bn->traces_reached ? bn->by_trace : bn->by_names);
    jw_key(&w, "not_on_name_list");
    jw_uint(&w, bn->unnamed);
    jw_obj_end(&w);
    jw_key(&w, "results");
    jw_arr_begin(&w);
    for (int k = 0; k < PLAN_AUTO; k++)
        if (st->res[k])
            result_json(&w, st->m, t, &a->c, st->res[k],
                        a->refine ? st->unrefined[k] : -1, NULL);
    if (st->sres)
        result_json(&w, st->m, t, &a->c, st->sres, -1, "samples-hotblock");
    jw_arr_end(&w);
    if (st->zres) {
        /* --for zephyr: the best result as the module builds it, the
         * prediction the list states */
        jw_key(&w, "for_zephyr");
        result_json(&w, st->m, t, &a->c, st->zres,
                    a->refine ? st->zunrefined : -1, NULL);
    }
    jw_obj_end(&w);
    jw_finish(&w);
}

void cmd_plan_render(FILE *out, const cli_ctx *ctx, const plan_args *a,
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
