/* codeplace counters: XIP cache hits and misses over a run window and an
 * idle window of the same length, read through a debug probe. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/sweepfile.h"
#include "cli/cli.h"
#include "cli/probeopt.h"
#include "cli/tgtopt.h"
#include "cmd/commands.h"
#include "probe/counters.h"
#include "probe/probe.h"
#include "target/target.h"
#include "util/jw.h"
#include "util/sig.h"

enum {
    O_GDB, O_OPENOCD, O_TARGET, O_CACHE, O_AS, O_WINDOW, O_LOAD, O_EVENTS,
    O_NO_IDLE, O_CTR_BASE, O_CORE, O_TIMEOUT, O_PING, O_COUNT, O_INTERVAL,
    O_ICMP, O_LABEL, O_NOPT
};

static const cli_opt opts[] = {
    CLI_PROBE_OPTS(O_GDB, O_OPENOCD, O_CORE, O_TIMEOUT),
    [O_CACHE] = CLI_TGT_OPT_CACHE(0),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_TARGET] = {"target", 't', "NAME|FILE", "rp2040 or rp2350 (or a file): where the "
                  "counters are and how to flush the cache"},
    [O_WINDOW] = {"window", 0, "SECONDS", "length of each window "
                  "(default 1)"},
    [O_LOAD] = {"load", 0, "CMD", "shell command that drives the workload; "
                "the run window lasts while it runs"},
    [O_EVENTS] = {"events", 0, "N", "events (echoes, requests) in the run "
                  "window: print misses per event"},
    [O_NO_IDLE] = {"no-idle", 0, NULL, "skip the idle window"},
    [O_CTR_BASE] = {"ctr-base", 0, "ADDR", "counter block address (RP2040 "
                    "layout: FLUSH +4, CTR_HIT +0xc, CTR_ACC +0x10)"},
    [O_PING] = {"ping", 0, "HOST[:PORT]", "the load is codeplace bench "
                "latency HOST: UDP echo (port 7 unless given; --icmp for ICMP); "
                "misses per echo answered"},
    [O_COUNT] = {"count", 0, "N", "--ping: echoes to send (default 300)"},
    [O_INTERVAL] = {"interval", 'i', "MS", "--ping: time between echoes "
                    "(default 20)"},
    [O_ICMP] = {"icmp", 0, NULL, "--ping: ICMP echo instead of UDP"},
    [O_LABEL] = {"label", 0, "NAME", "name of the image in the JSON (bench "
                 "compare groups by it)"},
    [O_NOPT] = {0},
};

static int cmd_counters_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_counters = {
    .name = "counters",
    .fn = cmd_counters_fn,
    .summary = "count XIP cache hits and misses through a debug probe",
    .usage = "--target rp2040|rp2350 --gdb HOST[:PORT]|--openocd HOST[:PORT] "
             "[--window S | --load CMD [--events N] | --ping HOST [--count N]]",
    .description =
        "Flushes the XIP cache, zeroes its hit and access counters, lets a\n"
        "window pass, reads them; then does the same for an idle window of\n"
        "equal length. Misses = accesses - hits. The difference run - idle is\n"
        "what the workload costs; with --events N it is divided by N. With\n"
        "--load the run window lasts while CMD runs (e.g. a UDP echo sweep).\n"
        "--ping HOST --count N is the one-line form of --load 'codeplace bench\n"
        "latency HOST --count N --interval 20' --events N, counting the echoes\n"
        "answered; its JSON (with --label) goes to bench compare next to sweep\n"
        "files: misses per echo and echo rate per image.\n"
        "The counters are 32-bit and saturate: a counter at 0xFFFFFFFF is\n"
        "reported as saturated (use a shorter window). An all-stop GDB stub\n"
        "halts the core briefly to zero and to read the counters. See\n"
        "docs/probe.md.\n\n"
        "example:\n"
        "  codeplace counters --target rp2040 --openocd localhost --window 2\n"
        "  codeplace counters --target rp2040 --gdb localhost:3333 \\\n"
        "      --load 'codeplace bench latency 192.168.7.2 --count 1000 -q' --events 1000\n"
        "  codeplace counters --target rp2040 --openocd localhost --ping 192.168.7.2 \\\n"
        "      --count 300 --label stock --json -o stock-ctr.json",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

typedef struct waiter {
    double window;   /* seconds; used when cmd is NULL */
    const char *cmd;
    int cmd_status;
    int capture;     /* keep the command's stdout in out */
    char *out;
} waiter;

/* Runs cmd through sh with its stdout in a pipe; returns what it printed
 * (NULL on out of memory), *status its exit status. */
static char *run_capture(const char *cmd, int *status)
{
    int fd[2];
    if (pipe(fd) < 0)
        return NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return NULL;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf && len + 1 >= cap) {
            char *nb = realloc(buf, 2 * cap);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
                cap *= 2;
            }
        }
        char sink[512];
        ssize_t r = buf ? read(fd[0], buf + len, cap - len - 1)
                        : read(fd[0], sink, sizeof sink);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (buf)
            len += (size_t)r;
    }
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (buf)
        buf[len] = 0;
    return buf;
}

static int wait_window(void *arg, double *secs, cp_err *err)
{
    waiter *w = arg;
    double t0 = cp_now_s();
    if (w->cmd && w->capture) {
        free(w->out);
        w->out = run_capture(w->cmd, &w->cmd_status);
        if (!w->out)
            return cp_seterr(err, "cannot run '%s'", w->cmd);
        *secs = cp_now_s() - t0;
        w->window = *secs;
        return 0;
    }
    if (w->cmd) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
            return cp_seterr(err, "cannot start '%s': %s", w->cmd,
                             strerror(errno));
        if (pid == 0) {
            execl("/bin/sh", "sh", "-c", w->cmd, (char *)NULL);
            _exit(127);
        }
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        w->cmd_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        *secs = cp_now_s() - t0;
        w->window = *secs;
        return 0;
    }
    double end = t0 + w->window;
    for (double now; (now = cp_now_s()) < end && !cp_sig_stop;) {
        double d = end - now;
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
    }
    *secs = cp_now_s() - t0;
    return 0;
}

static void json_window(jw *w, const char *name, const probe_ctr_result *r)
{
    jw_key(w, name);
    jw_obj_begin(w);
    jw_key(w, "seconds");
    jw_double(w, r->seconds);
    jw_key(w, "hits");
    jw_uint(w, r->hits);
    jw_key(w, "accesses");
    jw_uint(w, r->accesses);
    jw_key(w, "misses");
    jw_uint(w, r->misses);
    jw_key(w, "saturated");
    jw_bool(w, r->saturated);
    jw_obj_end(w);
}

static void text_window(FILE *o, const char *name, const probe_ctr_result *r)
{
    char b1[32], b2[32], b3[32];
    fprintf(o, "%-6s %8.3f %14s %14s %14s %12.0f%s\n", name, r->seconds,
            cp_commas(b1, r->hits), cp_commas(b2, r->accesses),
            cp_commas(b3, r->misses),
            r->seconds > 0 ? r->misses / r->seconds : 0.0,
            r->saturated ? "  SATURATED" : "");
}

/* The command line, parsed. */
typedef struct ctr_args {
    cli_tgt to;
    cli_probe_args pa;
    const char *load, *ping, *label;
    uint32_t count, interval;
    int icmp, have_count, have_interval;
    double window;
    uint64_t events, base;
    int no_idle, have_window, have_base;
    char pingcmd[1400];
} ctr_args;

/* The figures of the two windows. */
typedef struct ctr_figures {
    probe_ctr_result run, idle;
    double answered, sent, median_us; /* --ping's echoes */
    uint64_t events;
} ctr_figures;

static int ctr_opt(cli_ctx *ctx, int o, const char *arg, ctr_args *a)
{
    switch (o) {
    case O_GDB:
    case O_OPENOCD:
    case O_CORE:
    case O_TIMEOUT:
        if (cli_probe_take(ctx, &a->pa, opts[o].name, arg) < 0)
            return CLI_USAGE;
        break;
    case O_TARGET: a->to.name = arg; break;
    case O_CACHE: a->to.cache = arg; break;
    case O_AS: a->to.as = arg; break;
    case O_LOAD: a->load = arg; break;
    case O_NO_IDLE: a->no_idle = 1; break;
    case O_PING: a->ping = arg; break;
    case O_ICMP: a->icmp = 1; break;
    case O_LABEL: a->label = arg; break;
    case O_COUNT:
        if (cli_arg_u32(ctx, "count", arg, 0, &a->count) < 0)
            return CLI_USAGE;
        if (a->count < 1 || a->count > 65535)
            return cli_usage_error(ctx, "--count: give 1..65535");
        a->have_count = 1;
        break;
    case O_INTERVAL:
        if (cli_arg_u32(ctx, "interval", arg, 0, &a->interval) < 0)
            return CLI_USAGE;
        if (a->interval < 1 || a->interval > 60000)
            return cli_usage_error(ctx, "--interval: give 1..60000 ms");
        a->have_interval = 1;
        break;
    case O_WINDOW:
        if (cli_arg_double(ctx, "window", arg, &a->window) < 0)
            return CLI_USAGE;
        if (a->window <= 0 || a->window > 86400)
            return cli_usage_error(ctx, "--window: give seconds > 0");
        a->have_window = 1;
        break;
    case O_EVENTS:
        if (cli_arg_u64(ctx, "events", arg, 1, &a->events) < 0)
            return CLI_USAGE;
        if (!a->events)
            return cli_usage_error(ctx, "--events: give N > 0");
        break;
    case O_CTR_BASE:
        if (cp_parse_u64(arg, 0, &a->base) < 0 || a->base > 0xffffffe0ULL)
            return cli_usage_error(ctx, "--ctr-base: '%s' is not an "
                                   "address", arg);
        a->have_base = 1;
        break;
    }
    return CLI_OK;
}

/* --ping: the load is this program's own bench latency. */
static int ping_load(cli_ctx *ctx, ctr_args *a)
{
    char self[1024];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        snprintf(self, sizeof self, "codeplace");
    else
        self[sl] = 0;
    if (strpbrk(a->ping, "'\\ ;&|$`\"") || strchr(self, '\''))
        return cli_usage_error(ctx, "--ping: '%s' is not HOST[:PORT]",
                               a->ping);
    snprintf(a->pingcmd, sizeof a->pingcmd, "'%s' bench latency '%s' "
             "--count %u --interval %u%s --json -q", self, a->ping, a->count,
             a->interval, a->icmp ? " --icmp" : "");
    a->load = a->pingcmd;
    return CLI_OK;
}

/* CLI_OK, the status of a usage error, or cli_next's CLI_HELPED or
 * CLI_ERR. */
static int parse(cli_ctx *ctx, int argc, char **argv, char **pos,
                 ctr_args *a)
{
    const char *arg;
    int rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        if (ctr_opt(ctx, rc, arg, a) != CLI_OK)
            return CLI_USAGE;
    if (rc != CLI_END)
        return rc; /* CLI_HELPED or CLI_ERR */
    if (p.npos)
        return cli_usage_error(ctx, "counters: unexpected argument '%s'",
                               pos[0]);
    if (cli_probe_check(ctx, &a->pa) < 0)
        return CLI_USAGE;
    if (a->load && a->have_window)
        return cli_usage_error(ctx, "counters: --load sets the window; drop "
                               "--window");
    if (a->ping && (a->load || a->have_window || a->events))
        return cli_usage_error(ctx, "counters: --ping is the load and counts "
                               "the echoes: drop --load, --window, --events");
    if (!a->ping && (a->have_count || a->have_interval || a->icmp))
        return cli_usage_error(ctx, "counters: --count, --interval and --icmp "
                               "go with --ping");
    return a->ping ? ping_load(ctx, a) : CLI_OK;
}

/* Where the counters are: the target's, or --ctr-base's. */
static int counter_regs(cli_ctx *ctx, ctr_args *a, probe_ctr_regs *regs)
{
    int rc;
    if ((rc = cli_tgt_resolve(ctx, &a->to, NULL, NULL, 0)) != CLI_OK)
        return rc;
    if (a->to.base) {
        const tgt *t = &a->to.t;
        if (!t->ctr_base)
            return cli_usage_error(ctx, "counters: %s has no cache counters "
                                   "(the Cortex-M7 has none; use the "
                                   "on-target profiler)", t->name);
        regs->base = t->ctr_base;
        regs->hit = t->ctr_hit;
        regs->acc = t->ctr_acc;
        regs->flush = t->ctr_flush;
        regs->flush_kind = t->ctr_flush_by == TGT_FLUSH_REG ? PROBE_FLUSH_REG
                           : t->ctr_flush_by == TGT_FLUSH_SETWAY
                               ? PROBE_FLUSH_RP2350
                               : PROBE_FLUSH_NONE;
    } else if (!a->have_base) {
        return cli_usage_error(ctx, "counters: give --target rp2040|rp2350 "
                               "(or --ctr-base ADDR)");
    }
    if (a->have_base) {
        regs->base = (uint32_t)a->base;
        regs->flush = 0x04;
        regs->hit = 0x0c;
        regs->acc = 0x10;
        regs->flush_kind = PROBE_FLUSH_REG;
    }
    return CLI_OK;
}

/* --ping's echoes, from bench latency's JSON: the events. */
static int ping_figures(const ctr_args *a, const waiter *w, ctr_figures *f)
{
    if (w->cmd_status || nb_extract_figure(w->out, "answered",
                                           &f->answered) < 0 ||
        nb_extract_figure(w->out, "sent", &f->sent) < 0) {
        cli_error("the echoes to %s failed (bench latency exited %d)",
                  a->ping, w->cmd_status);
        return -1;
    }
    nb_extract_figure(w->out, "median_us", &f->median_us);
    if (f->answered < 1) {
        cli_error("%s answered none of the %.0f echoes: no misses per echo",
                  a->ping, f->sent);
        return -1;
    }
    if (f->answered < f->sent)
        cli_warn("%s answered %.0f of %.0f echoes; misses are per echo "
                 "answered", a->ping, f->answered, f->sent);
    f->events = (uint64_t)f->answered;
    return 0;
}

/* The run window (while the load runs), then the idle one. */
static int measure(cli_ctx *ctx, const ctr_args *a, probe *pr,
                   const probe_ctr_regs *regs, waiter *w, ctr_figures *f)
{
    cp_err err;
    cli_info(ctx, "run window%s%s", a->load ? " while running: " : "",
             a->load ? a->load : "");
    if (probe_ctr_window(pr, regs, wait_window, w, &f->run, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (cp_sig_stop) {
        cli_error("interrupted by %s during the run window: no figures",
                  cp_sig_name(cp_sig_last()));
        return -1;
    }
    if (a->ping) {
        if (ping_figures(a, w, f) < 0)
            return -1;
    } else if (a->load && w->cmd_status)
        cli_warn("the load command exited with status %d", w->cmd_status);
    if (!a->no_idle) {
        w->cmd = NULL;
        cli_info(ctx, "idle window (%.3f s)", w->window);
        if (probe_ctr_window(pr, regs, wait_window, w, &f->idle, &err) < 0) {
            cli_error("%s", err.msg);
            return -1;
        }
        if (cp_sig_stop) {
            cli_error("interrupted by %s during the idle window: no figures",
                      cp_sig_name(cp_sig_last()));
            return -1;
        }
    }
    if (f->run.accesses == 0 && !f->run.saturated) {
        /* 0 misses of 0 accesses is no cache figure: the counters did not
         * count. CTR_ACC counts every XIP access, hit or not, noncacheable
         * ones included (RP2040 datasheet 2.6, XIP_CTRL register CTR_ACC),
         * and code running from flash makes some in any window. */
        cli_error("the run window counted 0 cache accesses in %.3f s: the "
                  "counters at 0x%08x did not count (is the code running "
                  "from the cached flash window, is the cache enabled, and "
                  "is the target or --ctr-base right?); no miss figures",
                  f->run.seconds, regs->base);
        return -1;
    }
    return 0;
}

static void report_json(FILE *o, const ctr_args *a, uint32_t base,
                        const ctr_figures *f, int sat, long long delta)
{
    jw j;
    jw_init(&j, o, 1);
    jw_obj_begin(&j);
    jw_key(&j, "kind");
    jw_str(&j, "codeplace counters 1");
    jw_key(&j, "label");
    jw_str(&j, a->label);
    jw_key(&j, "base");
    jw_uint(&j, base);
    json_window(&j, "run", &f->run);
    if (!a->no_idle)
        json_window(&j, "idle", &f->idle);
    jw_key(&j, "misses_over_idle");
    if (sat)
        jw_null(&j);
    else
        jw_int(&j, delta);
    jw_key(&j, "events");
    jw_uint(&j, f->events);
    jw_key(&j, "misses_per_event");
    if (f->events && !sat)
        jw_double(&j, (double)delta / (double)f->events);
    else
        jw_null(&j);
    if (a->ping) {
        jw_key(&j, "ping");
        jw_obj_begin(&j);
        jw_key(&j, "peer");
        jw_str(&j, a->ping);
        jw_key(&j, "protocol");
        jw_str(&j, a->icmp ? "icmp" : "udp");
        jw_key(&j, "interval_ms");
        jw_uint(&j, a->interval);
        jw_key(&j, "sent");
        jw_uint(&j, (uint64_t)f->sent);
        jw_key(&j, "answered");
        jw_uint(&j, (uint64_t)f->answered);
        jw_key(&j, "median_us");
        if (isnan(f->median_us))
            jw_null(&j);
        else
            jw_double(&j, f->median_us);
        jw_obj_end(&j);
        jw_key(&j, "misses_per_echo");
        if (sat)
            jw_null(&j);
        else
            jw_double(&j, (double)delta / f->answered);
        jw_key(&j, "echo_rate_hz");
        jw_double(&j, f->run.seconds > 0 ? f->answered / f->run.seconds : 0);
    }
    jw_obj_end(&j);
    jw_finish(&j);
}

static void report_text(FILE *o, const ctr_args *a, const ctr_figures *f,
                        int sat, long long delta)
{
    fprintf(o, "%-6s %8s %14s %14s %14s %12s\n", "window", "seconds",
            "hits", "accesses", "misses", "misses/s");
    text_window(o, "run", &f->run);
    if (!a->no_idle)
        text_window(o, "idle", &f->idle);
    if (!a->no_idle && !sat)
        fprintf(o, "run - idle: %lld misses\n", delta);
    if (a->ping)
        fprintf(o, "echoes: %.0f of %.0f answered by %s in %.3f s "
                "(%.1f/s), median round trip %.0f us\n", f->answered,
                f->sent, a->ping, f->run.seconds, f->run.seconds > 0
                ? f->answered / f->run.seconds : 0.0, f->median_us);
    if (f->events && !sat)
        fprintf(o, "misses per %s: %.1f (%llu %s)\n",
                a->ping ? "echo" : "event", (double)delta / (double)f->events,
                (unsigned long long)f->events, a->ping ? "echoes" : "events");
}

static int cmd_counters_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    ctr_args a = {.count = 300, .interval = 20, .window = 1.0};
    int rc = parse(ctx, argc, argv, pos, &a);
    if (rc != CLI_OK)
        return rc < 0 ? cli_parse_exit(rc) : rc;
    probe_ctr_regs regs = {0};
    if ((rc = counter_regs(ctx, &a, &regs)) != CLI_OK)
        return rc;
    probe *pr = cli_probe_open(ctx, &a.pa);
    if (!pr)
        return CLI_FAIL;
    int status = CLI_FAIL;
    waiter w = {.window = a.window, .cmd = a.load, .capture = a.ping != NULL};
    ctr_figures f = {.median_us = NAN, .events = a.events};
    cp_sig_catch(); /* Ctrl-C, SIGTERM, SIGHUP: end the window, no figures */
    if (measure(ctx, &a, pr, &regs, &w, &f) < 0 || cli_out_open(ctx) < 0)
        goto done;
    int sat = f.run.saturated || (!a.no_idle && f.idle.saturated);
    long long delta = (long long)f.run.misses -
                      (a.no_idle ? 0 : (long long)f.idle.misses);
    if (ctx->json)
        report_json(ctx->out, &a, regs.base, &f, sat, delta);
    else
        report_text(ctx->out, &a, &f, sat, delta);
    if (sat)
        cli_warn("a 32-bit counter saturated at 0xFFFFFFFF: the counts are "
                 "lower bounds; use a shorter --window");
    else if (!a.no_idle && delta < 0)
        cli_warn("the idle window missed more than the run window: what the "
                 "load costs is below the noise of the idle work");
    status = CLI_OK;
done:
    cp_sig_restore();
    free(w.out);
    probe_close(pr);
    return status;
}
