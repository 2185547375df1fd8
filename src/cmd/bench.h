/* What the bench subcommands (src/cmd/bench-*.c) share: stopping on Ctrl-C,
 * SIGTERM or SIGHUP while keeping what was measured, and their argument helpers. */
#ifndef CP_CMD_BENCH_H
#define CP_CMD_BENCH_H

#include <signal.h>
#include <stdio.h>

#include "cli/cli.h"
#include "util/jw.h"
#include "util/sig.h"

/* Installs the stop handlers (SIGINT, SIGTERM, SIGHUP: util/sig.h, which
 * sets cp_sig_stop) and ignores SIGPIPE. */
void bench_catch_stop(void);
/* Makes sig (SIGALRM for a duration) set cp_sig_stop too. */
void bench_stop_on(int sig);

/* A non-negative number of seconds (or milliseconds) for option opt;
 * prints a usage error and returns -1 when s is not one. */
int bench_arg_seconds(cli_ctx *ctx, const char *opt, const char *s, double *v);

/* ",v" with three decimals, or "," alone when v is not finite. */
void bench_csv_num(FILE *o, double v);

/* "key": v, null when v is not finite. */
void bench_json_num(jw *w, const char *key, double v);

#endif
