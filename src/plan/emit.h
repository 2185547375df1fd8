/* plan emitters: the forms a plan is written in. The name list is the
 * portable artefact (function names by region); the layout file feeds
 * `codeplace sim --layout`; the GNU ld, Zephyr and pico-sdk snippets apply
 * the plan at link time. Each writer returns 0 or -1 with err set. */
#ifndef CP_PLAN_EMIT_H
#define CP_PLAN_EMIT_H

#include <stdio.h>

#include "plan/plan.h"

/* A budget that was not given, and how the headers write it
 * ("budget: not given"; apply reads it back as no budget). */
#define PLAN_BUDGET_NONE UINT32_MAX
#define PLAN_BUDGET_NONE_TEXT "not given"

typedef struct plan_emit_info {
    const tgt *t;
    const char *strategy;
    uint32_t budget;   /* PLAN_BUDGET_NONE: not given (a name list
                          applied without a budget line or --budget) */
    /* Why the prediction cannot be checked against the image (no map, a
     * map that disagrees with the ELF), or NULL. */
    const char *unverified;
    int from_samples;  /* items weighed by PC samples: comments give them */
    int no_prediction; /* not simulated: no miss figure ... */
    const char *basis; /* ... and what the plan rests on instead */
} plan_emit_info;

/* Name list (docs/formats/namelist.md). */
int plan_emit_list(FILE *f, const plan_model *m, const plan_result *r,
                   const plan_emit_info *info);
/* Layout file (docs/formats/layout.md): every function whose address the
 * plan changes, hot or shifted. */
int plan_emit_layout(FILE *f, const plan_model *m, const plan_result *r,
                     const plan_emit_info *info, cp_err *err);
/* The linker-script pattern that selects unit u ("*libc.a:x.o(.text.f)"). */
int plan_unit_pattern(const plan_unit *u, char *buf, size_t n);
/* Writes into dir: codeplace_flash.ld and codeplace_ram.ld (GNU ld,
 * INCLUDEd by the firmware's script; docs/firmware.md), codeplace.list (the
 * name list), codeplace.cmake (Zephyr: applies the list through the
 * codeplace module) and codeplace_pico.cmake (pico-sdk). The Zephyr and
 * pico-sdk fragments state the prediction of what they apply
 * (plan_result_for), not the full plan's. */
int plan_emit_snippets(const char *dir, plan_model *m,
                       const plan_result *r, const plan_emit_info *info,
                       cp_err *err);

#endif
