/* codeplace bench: network benchmarks run from the host. A group of nested
 * commands, one file each (src/cmd/bench-NAME.c); src/cli dispatches them
 * and generates `codeplace help bench` from this table. */
#include "cmd/bench.h"

#include <math.h>
#include <string.h>

#include "cmd/commands.h"
#include "util/sig.h"

static void on_alarm(int sig)
{
    (void)sig;
    cp_sig_stop = 1;
}

void bench_stop_on(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

void bench_catch_stop(void)
{
    cp_sig_catch(); /* SIGINT, SIGTERM, SIGHUP (util/sig.h) */
    signal(SIGPIPE, SIG_IGN);
}

int bench_arg_seconds(cli_ctx *ctx, const char *opt, const char *s, double *v)
{
    if (cli_arg_double(ctx, opt, s, v) < 0)
        return -1;
    if (*v < 0) {
        cli_usage_error(ctx, "option '--%s': %s is negative", opt, s);
        return -1;
    }
    return 0;
}

void bench_csv_num(FILE *o, double v)
{
    if (isfinite(v))
        fprintf(o, ",%.3f", v);
    else
        fputs(",", o);
}

void bench_json_num(jw *w, const char *key, double v)
{
    jw_key(w, key);
    jw_double(w, v);
}

static const cli_cmd *const bench_cmds[] = {
    &cmd_bench_udp, &cmd_bench_latency, &cmd_bench_sink, &cmd_bench_usbmon,
    &cmd_bench_compare, &cmd_bench_echo, NULL,
};

const cli_cmd cmd_bench = {
    .name = "bench",
    .summary = "network benchmarks from the host: UDP sweep, latency, TCP sink, "
               "usbmon, compare",
    .usage = "SUBCOMMAND [options]",
    .description =
        "example:\n"
        "  codeplace bench udp 192.168.7.2 --rates 500:3000:500 --passes 3 --svg sweep.svg",
    .subs = bench_cmds,
};
