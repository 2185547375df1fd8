/* codeplace plan: what the command's parts share. plan.c parses the
 * command line, plan-run.c plans and writes the artefacts,
 * plan-render.c prints the report. */
#ifndef CP_CMD_PLAN_H
#define CP_CMD_PLAN_H

#include <stdio.h>

#include "cli/cli.h"
#include "cli/tgtopt.h"
#include "image/image.h"
#include "plan/emit.h"
#include "plan/plan.h"

/* What the command line asks for (parse_args fills it). */
typedef struct plan_args {
    const char **excl, **noram, **traces;
    int nexcl, nnoram, ntraces, compare, allow_unverified;
    const char *elf, *map, *list, *layout, *emit;
    const char *build_dir; /* --build-dir, or NULL */
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
    double zunrefined;                  /* zres's before --refine-from */
    char why[512];
    const char *unverified; /* why the prediction is unverified, or NULL */
    plan_emit_info info;
    plan_boot_counts boot;  /* what kept the start-up out of fast memory */
} plan_state;

/* Loads the image and the traces, plans, writes the artefacts. Returns -1
 * when the text or JSON report is to be rendered, else the exit code
 * (reported; a plan from samples alone reports itself). */
int cmd_plan_run(cli_ctx *ctx, const plan_args *a, plan_state *st);
void cmd_plan_state_free(plan_state *st);
/* The report of a run, text or JSON (ctx->json). */
void cmd_plan_render(FILE *out, const cli_ctx *ctx, const plan_args *a,
                     const plan_state *st);

#endif
