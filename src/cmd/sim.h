/* codeplace sim: what the command's parts share. sim.c parses the
 * command line and simulates, sim-render.c prints the reports. */
#ifndef CP_CMD_SIM_H
#define CP_CMD_SIM_H

#include <stdio.h>

#include "cache/cache.h"
#include "cache/context.h"
#include "image/image.h"
#include "target/target.h"

typedef struct simctx {
    const char *trace, *elf, *layout;
    char *ltext; /* the layout file, read once */
    size_t llen;
    const img *im;
    const tgt *t;
    const csim_stream *s;
    const csim_report *r;
    csim_layout_stats lst;
    unsigned top;
} simctx;

/* The report of c: text, JSON, or CSV rows by 0 iteration, 1 function,
 * 2 library, 3 set. */
void sim_report_text(FILE *o, const simctx *c);
void sim_report_json(FILE *o, const simctx *c);
void sim_report_csv(FILE *o, const simctx *c, int by);
/* --by-context's report of r (text, or JSON when json). */
void sim_report_contexts(FILE *o, int json, const char *trace, const tgt *t,
                         const csim_ctx_report *r);

#endif
