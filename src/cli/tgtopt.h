/* cli: the target options every command shares (--target, --cache, --as,
 * --allow-uncached), resolved in one place, and the check that a trace's
 * code ran from the target's cached memory.
 *
 *   static const cli_opt opts[] = {
 *       [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target (default: the trace's)"),
 *       [O_CACHE] = CLI_TGT_OPT_CACHE(0),
 *       [O_AS] = CLI_TGT_OPT_AS,
 *       [O_UNCACHED] = CLI_TGT_OPT_UNCACHED, ...
 *   };
 *   cli_tgt to = {0};
 *   ... case O_TARGET: to.name = arg; break; (cache, as, allow_uncached)
 *   if ((rc = cli_tgt_resolve(ctx, &to, trace, NULL, 1)) != CLI_OK)
 *       return rc;
 *   ... use &to.t ...
 */
#ifndef CP_CLI_TGTOPT_H
#define CP_CLI_TGTOPT_H

#include <stdint.h>

#include "cli/cli.h"
#include "image/image.h"
#include "target/target.h"
#include "trace/trace.h"

#define CLI_TGT_OPT_TARGET(shrt, help) {"target", shrt, "NAME|FILE", help}
#define CLI_TGT_OPT_CACHE(shrt)                                             \
    {"cache", shrt, "SIZE,WAYS,LINE[,POLICY]",                              \
     "cache geometry instead of the target's, e.g. 16K,2,8,lru"}
#define CLI_TGT_OPT_AS                                                      \
    {"as", 0, "NAME|FILE", "take the cache (geometry, policy, hit and miss " \
     "cycles) and CPI of another target; the memory map stays"}
#define CLI_TGT_OPT_UNCACHED                                                \
    {"allow-uncached", 0, NULL, "go on when no fetch of the trace falls in " \
     "the target's cached memory"}

typedef struct cli_tgt {
    /* Options as given (NULL / 0 when not). */
    const char *name;   /* --target NAME|FILE */
    const char *cache;  /* --cache SPEC */
    const char *as;     /* --as NAME|FILE */
    int allow_uncached; /* --allow-uncached */
    const char *label;  /* names name in errors (default "--target") */
    /* Set by cli_tgt_resolve. */
    const tgt *base;    /* the target as loaded, NULL when none */
    tgt t;              /* base with --as and --cache applied */
    char trace_target[32]; /* what the trace's header names, "" */
} cli_tgt;

/* Resolves the target: --target; else the target the trace names (trace
 * may be NULL); else dflt (a name, or NULL). Then applies --as and
 * --cache. A --target that differs from the trace's is a warning. Returns
 * CLI_OK (o->base is NULL when no target was found and !required), or the
 * exit code after reporting the error. */
int cli_tgt_resolve(cli_ctx *ctx, cli_tgt *o, const char *trace,
                    const char *dflt, int required);

/* Where the instructions of a trace ran, per iteration, against one
 * target's memory map. Feed every record; then cli_tgt_verdict. */
typedef struct cli_tally {
    const tgt *t;
    uint64_t insns, cached;       /* all, and from cached memory */
    uint64_t it_insns, it_cached; /* the current iteration */
    uint64_t iters, low;          /* iterations; those under half cached */
    int marked;
    /* Uncached instructions per memory (index nmems: outside every memory)
     * and the first address seen in each. */
    uint64_t by_mem[TGT_MAX_MEMS + 1];
    uint32_t first_at[TGT_MAX_MEMS + 1];
} cli_tally;

void cli_tally_init(cli_tally *c, const tgt *t);
void cli_tally_add(cli_tally *c, const trc_rec *r);
/* Warns when fewer than half of an iteration's instructions ran from
 * cached memory; fails (returns CLI_FAIL after the error) when none did,
 * unless o->allow_uncached. Returns CLI_OK otherwise. */
int cli_tgt_verdict(cli_ctx *ctx, const cli_tgt *o, cli_tally *c,
                    const char *trace);

/* Whether im can be the image running on t: every load segment (its load
 * and run addresses) inside one memory of t that is not peripherals, the
 * entry point in such a memory, and no Armv7-M/Armv8-M Mainline code for
 * a baseline core (Cortex-M0/M0+/M23). CLI_OK, or CLI_FAIL after an error
 * naming the ELF, the first address that does not fit and the memories. */
int cli_tgt_check_image(cli_ctx *ctx, const tgt *t, const img *im);
/* For a trace of im said to run on t: cli_tgt_check_image, and some of
 * its code in t's cached memory (an image whose code all lies elsewhere,
 * e.g. one built for QEMU's mps2-an500 with its code at 0, i.MX RT1062's
 * ITCM, was built for another memory map). CLI_OK, or CLI_FAIL after an
 * error naming the targets the image fits. */
int cli_tgt_check_traced(cli_ctx *ctx, const tgt *t, const img *im);

#endif
