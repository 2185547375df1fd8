/* cli: the planner options plan and apply share, with one default.
 *
 *   static const cli_opt opts[] = {
 *       [O_PAD] = CLI_PLAN_OPT_PAD("padding the hot block may add to flash"),
 *   ...
 *   uint32_t pad = PLAN_PAD_LIMIT;
 *   ... case O_PAD: if (cli_plan_pad_arg(ctx, arg, &pad) < 0) return CLI_USAGE;
 */
#ifndef CP_CLI_PLANOPT_H
#define CP_CLI_PLANOPT_H

#include <stdint.h>

#include "cli/cli.h"
#include "plan/plan.h"

#define CLI_PLAN_STR_(x) #x
#define CLI_PLAN_STR(x) CLI_PLAN_STR_(x)

/* --pad-limit BYTES; help: what the padding is for (the default is
 * appended). */
#define CLI_PLAN_OPT_PAD(help)                                              \
    {"pad-limit", 0, "BYTES", help " (bytes beyond the sections' sizes "   \
     "rounded up to 8; default " CLI_PLAN_STR(PLAN_PAD_LIMIT_KIB) "K)"}

/* Parses --pad-limit's argument (a size, e.g. 64K); -1 after reporting a
 * usage error. */
static inline int cli_plan_pad_arg(cli_ctx *ctx, const char *arg, uint32_t *out)
{
    return cli_arg_u32(ctx, "pad-limit", arg, 1, out);
}

#endif
