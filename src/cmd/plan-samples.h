/* codeplace plan --samples: the command side of planning from PC samples
 * (src/plan/fromsamples.c), called from src/cmd/plan-run.c. */
#ifndef CP_CMD_PLAN_SAMPLES_H
#define CP_CMD_PLAN_SAMPLES_H

#include "cli/cli.h"
#include "plan/plan.h"
#include "target/target.h"

typedef struct plan_samples_args {
    const char *samples;  /* the samples file */
    plan_strategy strategy;
    uint32_t budget;
    const char *list, *layout, *emit;
} plan_samples_args;

/* Samples alone: plans, writes the artefacts and the report. Returns the
 * exit code. */
int cmd_plan_samples_only(cli_ctx *ctx, plan_model *m, const tgt *t,
                          const plan_samples_args *a);

/* Samples next to a trace: the samples' plan evaluated on the trace (the
 * trace drives the simulation), with a warning when the samples fall in
 * code the trace never runs. *res gets the result (NULL on failure, which
 * was reported). */
int cmd_plan_samples_candidate(cli_ctx *ctx, plan_model *m,
                               const plan_samples_args *a, plan_result **res);

#endif
