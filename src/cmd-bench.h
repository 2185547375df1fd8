/* What the bench subcommands (src/cmd-bench-*.c) share: stopping on Ctrl-C
 * or SIGTERM while keeping what was measured, and their argument helpers. */
#ifndef CP_CMD_BENCH_H
#define CP_CMD_BENCH_H

#include <signal.h>
#include <stdio.h>

#include "cli/cli.h"
#include "util/jw.h"

/* Set by SIGINT and SIGTERM once bench_catch_stop has run. */
extern volatile sig_atomic_t bench_stop;
/* Installs the handlers, ignores SIGPIPE and clears bench_stop. */
void bench_catch_stop(void);
/* Makes sig (SIGALRM for a duration) set bench_stop too. */
void bench_stop_on(int sig);

/* A non-negative number of seconds (or milliseconds) for option opt;
 * prints a usage error and returns -1 when s is not one. */
int bench_arg_seconds(cli_ctx *ctx, const char *opt, const char *s, double *v);

/* ",v" with three decimals, or "," alone when v is not finite. */
void bench_csv_num(FILE *o, double v);

/* "key": v, null when v is not finite. */
void bench_json_num(jw *w, const char *key, double v);

#endif
