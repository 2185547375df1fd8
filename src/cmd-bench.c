/* codeplace bench: network benchmarks run from the host. A nested table of
 * subcommands (udp, latency, sink, usbmon, compare, echo); each has its own
 * option table, and `codeplace help bench` lists them. */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/ctrfile.h"
#include "bench/net.h"
#include "bench/ping.h"
#include "bench/sink.h"
#include "bench/stats.h"
#include "bench/sweepfile.h"
#include "bench/udp.h"
#include "bench/usbmon.h"
#include "cli/cli.h"
#include "commands.h"
#include "report/svg.h"
#include "util/jw.h"
#include "util/sig.h"
#include "util/wfile.h"

/* ---- stop on Ctrl-C / SIGTERM, keeping what was measured ---- */

static void on_alarm(int sig)
{
    (void)sig;
    cp_sig_stop = 1;
}

static void catch_stop(void)
{
    cp_sig_catch(); /* SIGINT, SIGTERM, SIGHUP (util/sig.h) */
    signal(SIGPIPE, SIG_IGN);
}

static int arg_seconds(cli_ctx *ctx, const char *opt, const char *s, double *v)
{
    if (cli_arg_double(ctx, opt, s, v) < 0)
        return -1;
    if (*v < 0) {
        cli_usage_error(ctx, "option '--%s': %s is negative", opt, s);
        return -1;
    }
    return 0;
}

static void json_num_or_null(jw *w, const char *key, double v)
{
    jw_key(w, key);
    jw_double(w, v);
}

/* ==== bench udp ==== */

enum { U_RATES, U_STEP, U_PASSES, U_SIZE, U_TIMEOUT, U_SPIN, U_GAP, U_LABEL,
       U_SVG, U_RT, U_NOPT };

static const cli_opt udp_opts[] = {
    [U_RATES] = {"rates", 'r', "SPEC", "request rates per second: START:STOP:STEP "
                 "or R1,R2,... (default 100:1000:100, at most 100000)"},
    [U_STEP] = {"step", 't', "SECONDS", "duration of each rate step (default 1)"},
    [U_PASSES] = {"passes", 'n', "N", "run the whole sweep N times (default 1)"},
    [U_SIZE] = {"size", 's', "BYTES", "UDP payload bytes, 24..65507 (default 32)"},
    [U_TIMEOUT] = {"timeout", 'w', "MS", "a reply later than this is late "
                   "(default 200)"},
    [U_SPIN] = {"spin", 0, "US", "spin this long before each send deadline "
                "instead of sleeping (default 30)"},
    [U_GAP] = {"gap", 0, "MS", "pause between steps (default 0)"},
    [U_LABEL] = {"label", 'l', "NAME", "name of what was measured (an image), "
                 "kept in the output for bench compare"},
    [U_SVG] = {"svg", 0, "FILE", "also draw reply rate against request rate, "
               "one line per pass"},
    [U_RT] = {"realtime", 0, NULL, "pace from a SCHED_FIFO thread (root): "
              "fewer skipped slots on a busy host"},
    [U_NOPT] = {0},
};

static int bench_udp_fn(cli_ctx *ctx, int argc, char **argv);

static const cli_cmd bench_udp = {
    .name = "bench udp",
    .fn = bench_udp_fn,
    .summary = "UDP echo rate sweep: reply rate, loss and RTT per request rate",
    .usage = "HOST[:PORT] [--rates START:STOP:STEP] [--passes N] [--svg FILE]",
    .description =
        "Sends requests to a UDP echo service at fixed rates, one rate per step,\n"
        "paced on absolute deadlines; a stalled sender skips slots instead of\n"
        "catching up with a burst. Every payload carries a sequence number and\n"
        "its send time; replies are matched by sequence and counted as answered,\n"
        "late, duplicated, reordered or lost. Per pass it reports the highest rate\n"
        "at which every request sent was answered and the peak reply rate, and their\n"
        "mean +- SD over the passes. The port defaults to 7. Rows are written as\n"
        "steps finish; Ctrl-C stops and keeps the finished steps (exit 1).\n\n"
        "example:\n"
        "  codeplace bench udp 192.168.7.2:7 --rates 50:3000:50 --passes 3 \\\n"
        "      --label stock --csv -o stock.csv --svg stock.svg",
    .opts = udp_opts,
    .globals = CLI_G_ALL,
};

typedef struct udp_run {
    cli_ctx *ctx;
    nb_udp_step *steps;
    size_t n, cap;
    size_t nrates;
    unsigned passes;
    int oom;
} udp_run;

static void udp_text_header(FILE *o)
{
    fprintf(o, "%4s %9s %9s %9s %10s %10s %9s %6s %5s %5s %5s %6s %9s %9s\n",
            "pass", "rate/s", "requested", "sent", "achieved/s", "replies/s",
            "answered", "lost", "late", "dup", "reord", "loss%", "rtt_med_us",
            "rtt_p99_us");
}

static void udp_text_row(FILE *o, const nb_udp_step *s)
{
    fprintf(o, "%4u %9.0f %9llu %9llu %10.1f %10.1f %9llu %6llu %5llu %5llu "
            "%5llu %6.2f %9.1f %9.1f\n", s->pass, s->rate,
            (unsigned long long)s->requested, (unsigned long long)s->sent,
            s->achieved_rate, s->reply_rate, (unsigned long long)s->answered,
            (unsigned long long)s->lost, (unsigned long long)s->late,
            (unsigned long long)s->duplicated, (unsigned long long)s->reordered,
            s->loss_pct, s->rtt_median_us, s->rtt_p99_us);
}

static const char *const csv_cols =
    "pass,step,rate,requested,sent,skipped,sent_late,send_errors,answered,"
    "lost,late,duplicated,reordered,stray,achieved_rate,reply_rate,loss_pct,"
    "rtt_median_us,rtt_p99_us,rtt_min_us,rtt_max_us";

static void csv_num(FILE *o, double v)
{
    if (isfinite(v))
        fprintf(o, ",%.3f", v);
    else
        fputs(",", o);
}

static void udp_csv_row(FILE *o, const nb_udp_step *s)
{
    fprintf(o, "%u,%u,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
            "%llu", s->pass, s->index, s->rate,
            (unsigned long long)s->requested, (unsigned long long)s->sent,
            (unsigned long long)s->skipped, (unsigned long long)s->sent_late,
            (unsigned long long)s->send_errors,
            (unsigned long long)s->answered, (unsigned long long)s->lost,
            (unsigned long long)s->late, (unsigned long long)s->duplicated,
            (unsigned long long)s->reordered, (unsigned long long)s->stray);
    csv_num(o, s->achieved_rate);
    csv_num(o, s->reply_rate);
    csv_num(o, s->loss_pct);
    csv_num(o, s->rtt_median_us);
    csv_num(o, s->rtt_p99_us);
    csv_num(o, s->rtt_min_us);
    csv_num(o, s->rtt_max_us);
    fputc('\n', o);
}

static void udp_on_step(void *arg, const nb_udp_step *st)
{
    udp_run *r = arg;
    cli_ctx *ctx = r->ctx;
    if (cp_grow((void **)&r->steps, &r->cap, r->n + 1, sizeof *r->steps) < 0) {
        r->oom = 1;
        return;
    }
    r->steps[r->n++] = *st;
    if (ctx->csv)
        udp_csv_row(ctx->out, st);
    else if (!ctx->json)
        udp_text_row(ctx->out, st);
    fflush(ctx->out);
    cli_info(ctx, "pass %u/%u step %u/%zu: %.0f/s sent %llu answered %llu "
             "lost %llu late %llu, rtt median %.0f us", st->pass, r->passes,
             st->index + 1, r->nrates, st->rate, (unsigned long long)st->sent,
             (unsigned long long)st->answered, (unsigned long long)st->lost,
             (unsigned long long)st->late, st->rtt_median_us);
}

static void udp_json(FILE *o, const udp_run *r, const char *peer,
                     const char *label, const nb_udp_cfg *cfg,
                     const nb_udp_pass *ps, size_t np, int interrupted)
{
    jw w;
    jw_init(&w, o, 1);
    jw_obj_begin(&w);
    jw_key(&w, "format");
    jw_str(&w, "codeplace-sweep");
    jw_key(&w, "version");
    jw_int(&w, 1);
    jw_key(&w, "label");
    jw_str(&w, label);
    jw_key(&w, "peer");
    jw_str(&w, peer);
    jw_key(&w, "size");
    jw_uint(&w, cfg->size);
    json_num_or_null(&w, "step_s", cfg->step_s);
    json_num_or_null(&w, "timeout_s", cfg->timeout_s);
    jw_key(&w, "interrupted");
    jw_bool(&w, interrupted);
    jw_key(&w, "steps");
    jw_arr_begin(&w);
    for (size_t i = 0; i < r->n; i++) {
        const nb_udp_step *s = &r->steps[i];
        jw_obj_begin(&w);
        jw_key(&w, "pass"); jw_uint(&w, s->pass);
        jw_key(&w, "step"); jw_uint(&w, s->index);
        json_num_or_null(&w, "rate", s->rate);
        jw_key(&w, "requested"); jw_uint(&w, s->requested);
        jw_key(&w, "sent"); jw_uint(&w, s->sent);
        jw_key(&w, "skipped"); jw_uint(&w, s->skipped);
        jw_key(&w, "sent_late"); jw_uint(&w, s->sent_late);
        jw_key(&w, "send_errors"); jw_uint(&w, s->send_errors);
        jw_key(&w, "answered"); jw_uint(&w, s->answered);
        jw_key(&w, "lost"); jw_uint(&w, s->lost);
        jw_key(&w, "late"); jw_uint(&w, s->late);
        jw_key(&w, "duplicated"); jw_uint(&w, s->duplicated);
        jw_key(&w, "reordered"); jw_uint(&w, s->reordered);
        jw_key(&w, "stray"); jw_uint(&w, s->stray);
        json_num_or_null(&w, "achieved_rate", s->achieved_rate);
        json_num_or_null(&w, "reply_rate", s->reply_rate);
        json_num_or_null(&w, "loss_pct", s->loss_pct);
        json_num_or_null(&w, "rtt_median_us", s->rtt_median_us);
        json_num_or_null(&w, "rtt_p99_us", s->rtt_p99_us);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "passes");
    jw_arr_begin(&w);
    double a[256], p[256];
    size_t k = 0;
    for (size_t i = 0; i < np; i++) {
        jw_obj_begin(&w);
        jw_key(&w, "pass");
        jw_uint(&w, ps[i].pass);
        json_num_or_null(&w, "all_answered_rate", ps[i].all_answered_rate);
        json_num_or_null(&w, "peak_reply_rate", ps[i].peak_reply_rate);
        jw_obj_end(&w);
        if (k < 256) {
            a[k] = ps[i].all_answered_rate;
            p[k++] = ps[i].peak_reply_rate;
        }
    }
    jw_arr_end(&w);
    jw_key(&w, "summary");
    jw_obj_begin(&w);
    jw_key(&w, "passes");
    jw_uint(&w, k);
    json_num_or_null(&w, "all_answered_rate_mean", nb_mean(a, k));
    json_num_or_null(&w, "all_answered_rate_sd", nb_sd(a, k));
    json_num_or_null(&w, "peak_reply_rate_mean", nb_mean(p, k));
    json_num_or_null(&w, "peak_reply_rate_sd", nb_sd(p, k));
    jw_obj_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
}

/* Reply rate against request rate, one line per pass, and the requested
 * rate itself as a dashed reference (y = x). */
static int udp_svg(const char *path, const udp_run *r, const char *label)
{
    cp_wfile wf;
    cp_err werr;
    if (cp_wfile_open(&wf, path, &werr) < 0) {
        cli_error("%s", werr.msg);
        return -1;
    }
    FILE *f = wf.f;
    enum { MAXS = 16 };
    rep_svg_series s[MAXS + 1];
    char names[MAXS][32];
    double *x = malloc((r->n + 1) * sizeof *x), *y = malloc((r->n + 1) * sizeof *y);
    size_t ns = 0, used = 0;
    if (!x || !y) {
        free(x);
        free(y);
        cp_wfile_abort(&wf);
        cli_error("out of memory");
        return -1;
    }
    for (unsigned p = 1; p <= r->passes && ns < MAXS; p++) {
        size_t start = used;
        for (size_t i = 0; i < r->n; i++)
            if (r->steps[i].pass == p) {
                x[used] = r->steps[i].rate;
                y[used++] = r->steps[i].reply_rate;
            }
        if (used == start)
            continue;
        snprintf(names[ns], sizeof names[ns], "pass %u", p);
        s[ns] = (rep_svg_series){.name = names[ns], .x = x + start,
                                 .y = y + start, .n = used - start,
                                 .markers = 1};
        ns++;
    }
    /* The requested rate: what a device that answers everything reaches. */
    if (ns)
        s[ns++] = (rep_svg_series){.name = "requested", .x = s[0].x,
                                   .y = s[0].x, .n = s[0].n, .color = "#bbbbbb"};
    char title[160];
    snprintf(title, sizeof title, "UDP echo: reply rate against request rate%s%s",
             label && *label ? " - " : "", label && *label ? label : "");
    rep_svg_chart c = {.title = title, .xlabel = "requests per second",
                       .ylabel = "replies per second", .cls = "sweep"};
    cp_err err;
    rep_svg *sv = rep_svg_begin(f, 720, 440, title);
    int rc = -1;
    if (sv) {
        rep_svg_xy(sv, &(rep_svg_box){0, 0, 720, 440}, s, ns, &c);
        rc = rep_svg_end(sv, &err);
    }
    free(x);
    free(y);
    if (rc < 0) {
        cp_wfile_abort(&wf);
        cli_error("cannot write '%s'", path);
        return -1;
    }
    if (cp_wfile_commit(&wf, &werr) < 0) {
        cli_error("%s", werr.msg);
        return -1;
    }
    return 0;
}

static int bench_udp_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg, *rates_s = "100:1000:100", *label = NULL, *svg = NULL;
    double step = 1, timeout_ms = 200, spin = 30, gap_ms = 0;
    uint32_t passes = 1, size = 32;
    int rc, realtime = 0;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case U_RATES: rates_s = arg; break;
        case U_STEP: if (arg_seconds(ctx, "step", arg, &step) < 0) return CLI_USAGE; break;
        case U_PASSES: if (cli_arg_u32(ctx, "passes", arg, 0, &passes) < 0) return CLI_USAGE; break;
        case U_SIZE: if (cli_arg_u32(ctx, "size", arg, 0, &size) < 0) return CLI_USAGE; break;
        case U_TIMEOUT: if (arg_seconds(ctx, "timeout", arg, &timeout_ms) < 0) return CLI_USAGE; break;
        case U_SPIN: if (arg_seconds(ctx, "spin", arg, &spin) < 0) return CLI_USAGE; break;
        case U_GAP: if (arg_seconds(ctx, "gap", arg, &gap_ms) < 0) return CLI_USAGE; break;
        case U_LABEL: label = arg; break;
        case U_SVG: svg = arg; break;
        case U_RT: realtime = 1; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos != 1)
        return cli_usage_error(ctx, "bench udp: give one HOST[:PORT]");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "bench udp: --json and --csv exclude each other");
    if (passes == 0 || passes > 1000)
        return cli_usage_error(ctx, "option '--passes': give 1..1000");
    if (size < NB_UDP_HDR || size > NB_UDP_MAX_SIZE)
        return cli_usage_error(ctx, "option '--size': give %d..%d bytes",
                               NB_UDP_HDR, NB_UDP_MAX_SIZE);
    if (!(step > 0) || step > 3600)
        return cli_usage_error(ctx, "option '--step': give a duration in (0, 3600] s");
    cp_err err;
    double *rates;
    size_t nrates;
    if (nb_parse_rates(rates_s, &rates, &nrates, &err) < 0)
        return cli_usage_error(ctx, "option '--rates': %s", err.msg);
    nb_udp_cfg cfg = {.rates = rates, .nrates = nrates, .step_s = step,
                      .passes = passes, .size = size,
                      .timeout_s = timeout_ms / 1000.0, .spin_us = spin,
                      .gap_s = gap_ms / 1000.0, .stop = &cp_sig_stop,
                      .on_step = udp_on_step, .realtime = realtime};
    for (size_t i = 0; i < nrates; i++)
        if (rates[i] * step > 50e6) {
            free(rates);
            return cli_usage_error(ctx, "bench udp: %g/s for %g s is too many "
                                   "requests in one step", rates[i], step);
        }
    if (nb_resolve(pos[0], 7, SOCK_DGRAM, &cfg.peer, &cfg.peerlen, &err) < 0) {
        free(rates);
        cli_error("bench udp: %s", err.msg);
        return CLI_FAIL;
    }
    char peer[80];
    nb_addr_str(&cfg.peer, peer, sizeof peer);
    if (cli_out_open(ctx) < 0) {
        free(rates);
        return CLI_FAIL;
    }
    udp_run run = {.ctx = ctx, .nrates = nrates, .passes = passes};
    cfg.arg = &run;
    if (ctx->csv) {
        fprintf(ctx->out, "# codeplace sweep 1\n# label: %s\n# peer: %s\n"
                "# size: %u\n# step_s: %g\n# timeout_s: %g\n%s\n",
                label ? label : "", peer, size, step, cfg.timeout_s, csv_cols);
    } else if (!ctx->json) {
        fprintf(ctx->out, "UDP echo sweep to %s: %zu rates x %u passes, %g s "
                "per step, %u-byte payload\n", peer, nrates, passes, step, size);
        udp_text_header(ctx->out);
    }
    fflush(ctx->out);
    catch_stop();
    int interrupted = 0;
    rc = nb_udp_sweep(&cfg, &interrupted, &err);
    free(rates);
    if (rc < 0) {
        cli_error("bench udp: %s: %s", peer, err.msg);
        free(run.steps);
        return CLI_FAIL;
    }
    if (run.oom) {
        cli_error("bench udp: out of memory");
        free(run.steps);
        return CLI_FAIL;
    }
    nb_udp_pass ps[1000];
    size_t np = nb_udp_summarize(run.steps, run.n, ps, 1000);
    if (ctx->json) {
        udp_json(ctx->out, &run, peer, label, &cfg, ps, np, interrupted);
    } else if (!ctx->csv) {
        double a[1000], pk[1000];
        for (size_t i = 0; i < np; i++) {
            fprintf(ctx->out, "pass %u: every request answered up to %.0f/s, "
                    "peak reply rate %.1f/s\n", ps[i].pass,
                    ps[i].all_answered_rate, ps[i].peak_reply_rate);
            a[i] = ps[i].all_answered_rate;
            pk[i] = ps[i].peak_reply_rate;
        }
        if (np)
            fprintf(ctx->out, "over %zu pass%s: all answered up to %.0f +- %.0f/s, "
                    "peak reply rate %.1f +- %.1f/s\n", np, np == 1 ? "" : "es",
                    nb_mean(a, np), nb_sd(a, np), nb_mean(pk, np), nb_sd(pk, np));
    }
    if (svg && run.n && udp_svg(svg, &run, label) < 0)
        rc = -1;
    if (interrupted)
        cli_warn("bench udp: interrupted; %zu finished step%s written", run.n,
                 run.n == 1 ? "" : "s");
    free(run.steps);
    return rc < 0 || interrupted ? CLI_FAIL : CLI_OK;
}

/* ==== bench latency ==== */

enum { L_ICMP, L_COUNT, L_INTERVAL, L_SIZE, L_TIMEOUT, L_BINS, L_NOPT };

static const cli_opt lat_opts[] = {
    [L_ICMP] = {"icmp", 'I', NULL, "ICMP echo (ping socket, or raw socket as "
                "root) instead of UDP echo"},
    [L_COUNT] = {"count", 'c', "N", "probes (default 100)"},
    [L_INTERVAL] = {"interval", 'i', "MS", "time between probes (default 10)"},
    [L_SIZE] = {"size", 's', "BYTES", "payload bytes (default 32; ICMP >= 24, UDP >= 24)"},
    [L_TIMEOUT] = {"timeout", 'w', "MS", "a reply later than this is late "
                   "(default 1000)"},
    [L_BINS] = {"bins", 0, "N", "histogram bins (default 10)"},
    [L_NOPT] = {0},
};

static int bench_latency_fn(cli_ctx *ctx, int argc, char **argv);

static const cli_cmd bench_latency = {
    .name = "bench latency",
    .fn = bench_latency_fn,
    .summary = "round-trip times: UDP echo or ICMP echo, with a histogram",
    .usage = "HOST[:PORT] [--icmp] [--count N] [--interval MS]",
    .description =
        "Sends N probes at a fixed interval (absolute deadlines) and prints the\n"
        "minimum, median, p90, p99 and maximum round trip and a histogram. UDP\n"
        "probes go to an echo service (port 7 unless given); --icmp sends ICMP\n"
        "echo requests through a ping socket when net.ipv4.ping_group_range\n"
        "allows it, through a raw socket as root otherwise. --csv writes one\n"
        "row per answered probe.\n\n"
        "example:\n"
        "  codeplace bench latency 192.168.7.2 --icmp --count 1000 --interval 2",
    .opts = lat_opts,
    .globals = CLI_G_ALL,
};

typedef struct rtt_sink {
    double *v;
    size_t n;
    int oom;
} rtt_sink;

typedef struct lat_pair {
    nb_udp_step st;
    rtt_sink rs;
} lat_pair;

static void lat_on_rtts(void *arg, const nb_udp_step *st, const double *r,
                        size_t n)
{
    rtt_sink *s = &((lat_pair *)arg)->rs;
    (void)st;
    s->v = malloc((n ? n : 1) * sizeof *s->v);
    if (!s->v) {
        s->oom = 1;
        return;
    }
    memcpy(s->v, r, n * sizeof *r);
    s->n = n;
}

static void lat_on_step(void *arg, const nb_udp_step *st)
{
    ((lat_pair *)arg)->st = *st;
}

typedef struct lat_result {
    const char *proto, *kind;
    uint64_t sent, answered, lost, late, duplicated, reordered;
    double *rtt;
    size_t n;
    int interrupted;
} lat_result;

static void lat_report(cli_ctx *ctx, const char *peer, const lat_result *r,
                       unsigned count, double interval_ms, uint32_t bins)
{
    nb_summary s;
    nb_summarize(r->rtt, r->n, &s);
    double lo = s.min, hi = s.max;
    if (!(hi > lo))
        hi = lo + 1;
    uint64_t *h = calloc(bins, sizeof *h);
    if (h && r->n)
        nb_histogram(r->rtt, r->n, lo, hi + (hi - lo) * 1e-9, bins, h);
    FILE *o = ctx->out;
    double w = (hi - lo) / bins;
    if (ctx->csv) {
        fputs("probe,rtt_us\n", o);
        for (size_t i = 0; i < r->n; i++)
            fprintf(o, "%zu,%.3f\n", i, r->rtt[i]);
    } else if (ctx->json) {
        jw j;
        jw_init(&j, o, 1);
        jw_obj_begin(&j);
        jw_key(&j, "peer"); jw_str(&j, peer);
        jw_key(&j, "protocol"); jw_str(&j, r->proto);
        jw_key(&j, "socket"); jw_str(&j, r->kind);
        jw_key(&j, "probes"); jw_uint(&j, count);
        json_num_or_null(&j, "interval_ms", interval_ms);
        jw_key(&j, "sent"); jw_uint(&j, r->sent);
        jw_key(&j, "answered"); jw_uint(&j, r->answered);
        jw_key(&j, "lost"); jw_uint(&j, r->lost);
        jw_key(&j, "late"); jw_uint(&j, r->late);
        jw_key(&j, "duplicated"); jw_uint(&j, r->duplicated);
        jw_key(&j, "reordered"); jw_uint(&j, r->reordered);
        jw_key(&j, "interrupted"); jw_bool(&j, r->interrupted);
        json_num_or_null(&j, "min_us", s.min);
        json_num_or_null(&j, "median_us", s.median);
        json_num_or_null(&j, "p90_us", s.p90);
        json_num_or_null(&j, "p99_us", s.p99);
        json_num_or_null(&j, "max_us", s.max);
        json_num_or_null(&j, "mean_us", s.mean);
        json_num_or_null(&j, "sd_us", s.sd);
        jw_key(&j, "histogram");
        jw_arr_begin(&j);
        for (uint32_t b = 0; h && r->n && b < bins; b++) {
            jw_obj_begin(&j);
            json_num_or_null(&j, "from_us", lo + w * b);
            json_num_or_null(&j, "to_us", lo + w * (b + 1));
            jw_key(&j, "count");
            jw_uint(&j, h[b]);
            jw_obj_end(&j);
        }
        jw_arr_end(&j);
        jw_obj_end(&j);
        jw_finish(&j);
    } else {
        fprintf(o, "latency to %s (%s, %s): %u probes, %g ms apart\n", peer,
                r->proto, r->kind, count, interval_ms);
        fprintf(o, "sent %llu, answered %llu, lost %llu, late %llu, "
                "duplicated %llu, reordered %llu\n",
                (unsigned long long)r->sent, (unsigned long long)r->answered,
                (unsigned long long)r->lost, (unsigned long long)r->late,
                (unsigned long long)r->duplicated,
                (unsigned long long)r->reordered);
        if (r->n) {
            fprintf(o, "rtt us: min %.1f  median %.1f  p90 %.1f  p99 %.1f  "
                    "max %.1f  (mean %.1f, sd %.1f)\n", s.min, s.median,
                    s.p90, s.p99, s.max, s.mean, s.sd);
            uint64_t top = 1;
            for (uint32_t b = 0; h && b < bins; b++)
                if (h[b] > top)
                    top = h[b];
            for (uint32_t b = 0; h && b < bins; b++) {
                int bar = (int)(40.0 * (double)h[b] / (double)top + 0.5);
                fprintf(o, "  %10.1f - %10.1f us |%-40.*s %llu\n", lo + w * b,
                        lo + w * (b + 1), bar,
                        "########################################",
                        (unsigned long long)h[b]);
            }
        }
    }
    free(h);
}

static int bench_latency_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg;
    int icmp = 0, rc;
    uint32_t count = 100, size = 32, bins = 10;
    double interval = 10, timeout = 1000;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case L_ICMP: icmp = 1; break;
        case L_COUNT: if (cli_arg_u32(ctx, "count", arg, 0, &count) < 0) return CLI_USAGE; break;
        case L_INTERVAL: if (arg_seconds(ctx, "interval", arg, &interval) < 0) return CLI_USAGE; break;
        case L_SIZE: if (cli_arg_u32(ctx, "size", arg, 0, &size) < 0) return CLI_USAGE; break;
        case L_TIMEOUT: if (arg_seconds(ctx, "timeout", arg, &timeout) < 0) return CLI_USAGE; break;
        case L_BINS: if (cli_arg_u32(ctx, "bins", arg, 0, &bins) < 0) return CLI_USAGE; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos != 1)
        return cli_usage_error(ctx, "bench latency: give one HOST[:PORT]");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "bench latency: --json and --csv exclude each other");
    if (count == 0 || count > 65535)
        return cli_usage_error(ctx, "option '--count': give 1..65535");
    if (!(interval >= 0.01) || interval > 60000)
        return cli_usage_error(ctx, "option '--interval': give 0.01..60000 ms");
    if (bins == 0 || bins > 1000)
        return cli_usage_error(ctx, "option '--bins': give 1..1000");
    if (size < 24 || size > 65000)
        return cli_usage_error(ctx, "option '--size': give 24..65000 bytes");
    cp_err err;
    struct sockaddr_storage addr;
    socklen_t alen;
    if (nb_resolve(pos[0], 7, SOCK_DGRAM, &addr, &alen, &err) < 0) {
        cli_error("bench latency: %s", err.msg);
        return CLI_FAIL;
    }
    char peer[80];
    if (icmp)
        ((struct sockaddr_in *)&addr)->sin_port = 0;
    nb_addr_str(&addr, peer, sizeof peer);
    if (icmp) {
        char *c = strrchr(peer, ':');
        if (c && addr.ss_family == AF_INET)
            *c = 0;
    }
    catch_stop();
    lat_result r = {0};
    if (icmp) {
        nb_ping_cfg pc = {.peer = addr, .peerlen = alen, .count = count,
                          .interval_s = interval / 1000.0, .size = size,
                          .timeout_s = timeout / 1000.0, .stop = &cp_sig_stop};
        nb_ping_result pr;
        if (nb_ping(&pc, &pr, &err) < 0) {
            cli_error("bench latency: %s: %s", peer, err.msg);
            return CLI_FAIL;
        }
        r = (lat_result){"icmp", pr.socket_kind, pr.sent, pr.answered,
                         pr.lost, pr.late, pr.duplicated, 0, pr.rtt_us,
                         pr.nrtt, pr.interrupted};
    } else {
        double rate = 1000.0 / interval;
        if (rate > NB_UDP_MAX_RATE)
            return cli_usage_error(ctx, "option '--interval': at least %g ms",
                                   1000.0 / NB_UDP_MAX_RATE);
        lat_pair pair;
        memset(&pair, 0, sizeof pair);
        nb_udp_cfg uc = {.peer = addr, .peerlen = alen, .rates = &rate,
                         .nrates = 1, .step_s = count / rate, .passes = 1,
                         .size = size, .timeout_s = timeout / 1000.0,
                         .spin_us = 30, .stop = &cp_sig_stop,
                         .on_step = lat_on_step, .arg = &pair,
                         .on_rtts = lat_on_rtts};
        int interrupted = 0;
        if (nb_udp_sweep(&uc, &interrupted, &err) < 0) {
            cli_error("bench latency: %s: %s", peer, err.msg);
            return CLI_FAIL;
        }
        if (pair.rs.oom) {
            cli_error("bench latency: out of memory");
            return CLI_FAIL;
        }
        const nb_udp_step *st = &pair.st;
        r = (lat_result){"udp", "udp socket", st->sent, st->answered,
                         st->lost, st->late, st->duplicated, st->reordered,
                         pair.rs.v, pair.rs.n, interrupted};
    }
    if (cli_out_open(ctx) < 0) {
        free(r.rtt);
        return CLI_FAIL;
    }
    lat_report(ctx, peer, &r, count, interval, bins);
    free(r.rtt);
    if (r.interrupted)
        cli_warn("bench latency: interrupted");
    return r.interrupted ? CLI_FAIL : CLI_OK;
}

/* ==== bench sink ==== */

enum { K_LISTEN, K_INTERVAL, K_DURATION, K_IDLE, K_CONNS, K_PERCONN, K_NOPT };

static const cli_opt sink_opts[] = {
    [K_LISTEN] = {"listen", 'L', "ADDR:PORT", "where to listen (default "
                  "0.0.0.0:5001; port 0 picks a free one)"},
    [K_INTERVAL] = {"interval", 'i', "SECONDS", "report every interval "
                    "(default 1)"},
    [K_DURATION] = {"duration", 't', "SECONDS", "stop after this long "
                    "(default: until Ctrl-C)"},
    [K_IDLE] = {"idle", 0, "SECONDS", "close connections silent this long "
                "(default 10; 0 never)"},
    [K_CONNS] = {"conns", 'n', "N", "stop once N connections have closed"},
    [K_PERCONN] = {"per-conn", 0, NULL, "also report every connection in "
                   "every interval"},
    [K_NOPT] = {0},
};

static int bench_sink_fn(cli_ctx *ctx, int argc, char **argv);

static const cli_cmd bench_sink = {
    .name = "bench sink",
    .fn = bench_sink_fn,
    .summary = "TCP sink: bytes and Mbit/s per connection and per interval",
    .usage = "[--listen ADDR:PORT] [--duration S] [--json]",
    .description =
        "Accepts any number of TCP connections at once on one epoll loop (a new\n"
        "connection never waits behind an old one), reads and discards what they\n"
        "send, and reports as it goes: each connection's open and close (bytes,\n"
        "seconds, Mbit/s, why it closed: eof, reset, idle, half-open, stopped),\n"
        "and per interval the bytes and Mbit/s of all connections. A connection\n"
        "that sent data and then nothing for --idle seconds is closed as idle; one\n"
        "that never sent a byte, or whose peer vanished (TCP keepalive), as\n"
        "half-open. --json writes one JSON object per line.\n\n"
        "example:\n"
        "  codeplace bench sink --listen 0.0.0.0:5001 --duration 30 --json -o sink.jsonl",
    .opts = sink_opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

static const char *const sink_kinds[] = {"listen", "open", "interval",
                                         "conn-interval", "close", "summary"};

static void sink_event(void *arg, const nb_sink_event *e)
{
    cli_ctx *ctx = arg;
    FILE *o = ctx->out;
    char b1[32];
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 0);
        jw_obj_begin(&w);
        jw_key(&w, "event");
        jw_str(&w, sink_kinds[e->kind]);
        jw_key(&w, "t");
        jw_double(&w, round(e->t * 1e6) / 1e6);
        switch (e->kind) {
        case NB_SINK_LISTEN:
            jw_key(&w, "addr"); jw_str(&w, e->addr);
            break;
        case NB_SINK_OPEN:
            jw_key(&w, "conn"); jw_uint(&w, e->conn);
            jw_key(&w, "addr"); jw_str(&w, e->addr);
            jw_key(&w, "active"); jw_uint(&w, e->active);
            break;
        case NB_SINK_CONN_INTERVAL:
            jw_key(&w, "conn"); jw_uint(&w, e->conn);
            jw_key(&w, "addr"); jw_str(&w, e->addr);
            jw_key(&w, "bytes"); jw_uint(&w, e->bytes);
            jw_key(&w, "secs"); jw_double(&w, e->secs);
            jw_key(&w, "mbps"); jw_double(&w, e->mbps);
            break;
        case NB_SINK_INTERVAL:
            jw_key(&w, "bytes"); jw_uint(&w, e->bytes);
            jw_key(&w, "secs"); jw_double(&w, e->secs);
            jw_key(&w, "mbps"); jw_double(&w, e->mbps);
            jw_key(&w, "active"); jw_uint(&w, e->active);
            jw_key(&w, "moving"); jw_uint(&w, e->conns_moving);
            jw_key(&w, "opened"); jw_uint(&w, e->opened);
            jw_key(&w, "closed"); jw_uint(&w, e->closed);
            break;
        case NB_SINK_CLOSE:
            jw_key(&w, "conn"); jw_uint(&w, e->conn);
            jw_key(&w, "addr"); jw_str(&w, e->addr);
            jw_key(&w, "bytes"); jw_uint(&w, e->bytes);
            jw_key(&w, "secs"); jw_double(&w, e->secs);
            jw_key(&w, "mbps"); jw_double(&w, e->mbps);
            jw_key(&w, "reason"); jw_str(&w, e->reason);
            break;
        case NB_SINK_SUMMARY:
            jw_key(&w, "bytes"); jw_uint(&w, e->bytes);
            jw_key(&w, "secs"); jw_double(&w, e->secs);
            jw_key(&w, "mbps"); jw_double(&w, e->mbps);
            jw_key(&w, "opened"); jw_uint(&w, e->opened);
            jw_key(&w, "closed"); jw_uint(&w, e->closed);
            jw_key(&w, "peak"); jw_uint(&w, e->peak);
            jw_key(&w, "idle"); jw_uint(&w, e->idle);
            jw_key(&w, "half_open"); jw_uint(&w, e->half_open);
            break;
        }
        jw_obj_end(&w);
        jw_finish(&w);
    } else {
        switch (e->kind) {
        case NB_SINK_LISTEN:
            fprintf(o, "listening on %s\n", e->addr);
            break;
        case NB_SINK_OPEN:
            fprintf(o, "%9.3f open  #%llu %s (%u active)\n", e->t,
                    (unsigned long long)e->conn, e->addr, e->active);
            break;
        case NB_SINK_CONN_INTERVAL:
            fprintf(o, "%9.3f       #%llu %s bytes %s  %.2f Mbit/s\n", e->t,
                    (unsigned long long)e->conn, e->addr,
                    cli_commas(b1, e->bytes), e->mbps);
            break;
        case NB_SINK_INTERVAL:
            fprintf(o, "%9.3f interval %.3f s: bytes %s  %.2f Mbit/s  %u "
                    "active, %u moving\n", e->t, e->secs,
                    cli_commas(b1, e->bytes), e->mbps, e->active,
                    e->conns_moving);
            break;
        case NB_SINK_CLOSE:
            fprintf(o, "%9.3f close #%llu %s: bytes %s in %.3f s, %.2f "
                    "Mbit/s (%s)\n", e->t, (unsigned long long)e->conn,
                    e->addr, cli_commas(b1, e->bytes), e->secs, e->mbps,
                    e->reason);
            break;
        case NB_SINK_SUMMARY:
            fprintf(o, "total: bytes %s in %.3f s, %.2f Mbit/s; %llu "
                    "connections (%llu closed, peak %u at once, %llu idle, "
                    "%llu half-open)\n", cli_commas(b1, e->bytes), e->secs,
                    e->mbps, (unsigned long long)e->opened,
                    (unsigned long long)e->closed, e->peak,
                    (unsigned long long)e->idle,
                    (unsigned long long)e->half_open);
            break;
        }
    }
    fflush(o);
}

static int bench_sink_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg, *listen_s = "0.0.0.0:5001";
    double interval = 1, duration = 0, idle = 10;
    uint64_t conns = 0;
    int per_conn = 0, rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case K_LISTEN: listen_s = arg; break;
        case K_INTERVAL: if (arg_seconds(ctx, "interval", arg, &interval) < 0) return CLI_USAGE; break;
        case K_DURATION: if (arg_seconds(ctx, "duration", arg, &duration) < 0) return CLI_USAGE; break;
        case K_IDLE: if (arg_seconds(ctx, "idle", arg, &idle) < 0) return CLI_USAGE; break;
        case K_CONNS: if (cli_arg_u64(ctx, "conns", arg, 0, &conns) < 0) return CLI_USAGE; break;
        case K_PERCONN: per_conn = 1; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos)
        return cli_usage_error(ctx, "bench sink: no arguments besides options");
    if (!(interval >= 0.01))
        return cli_usage_error(ctx, "option '--interval': at least 0.01 s");
    nb_sink_cfg cfg = {.interval_s = interval, .duration_s = duration,
                       .idle_s = idle, .max_conns = conns,
                       .per_conn = per_conn, .stop = &cp_sig_stop,
                       .on_event = sink_event, .arg = ctx};
    cp_err err;
    if (nb_resolve_listen(listen_s, 5001, SOCK_STREAM, &cfg.addr, &cfg.addrlen,
                   &err) < 0)
        return cli_usage_error(ctx, "option '--listen': %s", err.msg);
    if (cli_out_open_stream(ctx) < 0)
        return CLI_FAIL;
    catch_stop();
    if (nb_sink_run(&cfg, &err) < 0) {
        cli_error("bench sink: %s", err.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* ==== bench echo ==== */

enum { E_LISTEN, E_DURATION, E_NOPT };

static const cli_opt echo_opts[] = {
    [E_LISTEN] = {"listen", 'L', "ADDR:PORT", "where to listen (default "
                  "0.0.0.0:7)"},
    [E_DURATION] = {"duration", 't', "SECONDS", "stop after this long "
                    "(default: until Ctrl-C)"},
    [E_NOPT] = {0},
};

static int bench_echo_fn(cli_ctx *ctx, int argc, char **argv);

static const cli_cmd bench_echo = {
    .name = "bench echo",
    .fn = bench_echo_fn,
    .summary = "a UDP echo service (recvmmsg/sendmmsg) to calibrate a sweep",
    .usage = "[--listen ADDR:PORT] [--duration S]",
    .description =
        "Echoes every UDP datagram back to its sender, in batches. Run it on the\n"
        "host or on another machine to see what the sweep itself can reach.\n\n"
        "example:\n"
        "  codeplace bench echo --listen 127.0.0.1:9007 &\n"
        "  codeplace bench udp 127.0.0.1:9007 --rates 10000:100000:10000",
    .opts = echo_opts,
    .globals = CLI_G_VERB,
};

static int bench_echo_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg, *listen_s = "0.0.0.0:7";
    double duration = 0;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case E_LISTEN: listen_s = arg; break;
        case E_DURATION: if (arg_seconds(ctx, "duration", arg, &duration) < 0) return CLI_USAGE; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos)
        return cli_usage_error(ctx, "bench echo: no arguments besides options");
    cp_err err;
    struct sockaddr_storage a;
    socklen_t al;
    if (nb_resolve_listen(listen_s, 7, SOCK_DGRAM, &a, &al, &err) < 0)
        return cli_usage_error(ctx, "option '--listen': %s", err.msg);
    int fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int big = 4 << 20;
    char buf[80];
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, al) < 0) {
        cli_error("bench echo: cannot listen on %s: %s",
                  nb_addr_str(&a, buf, sizeof buf), strerror(errno));
        if (fd >= 0)
            close(fd);
        return CLI_FAIL;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    catch_stop();
    if (duration > 0)
        alarm((unsigned)ceil(duration));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    socklen_t sl = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &sl);
    cli_info(ctx, "echoing on %s", nb_addr_str(&a, buf, sizeof buf));
    uint64_t n = 0;
    rc = nb_udp_echo_serve(fd, &cp_sig_stop, &n, &err);
    close(fd);
    cli_info(ctx, "echoed %llu datagrams", (unsigned long long)n);
    if (rc < 0) {
        cli_error("bench echo: %s", err.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* ==== bench usbmon ==== */

enum { M_LIVE, M_DURATION, M_BUS, M_DEVICE, M_PORT, M_MODE, M_NOPT };

static const cli_opt usb_opts[] = {
    [M_LIVE] = {"live", 0, "IFACE", "capture live on a usbmon interface "
                "(usbmon0 = all buses, usbmonN = bus N; root)"},
    [M_DURATION] = {"duration", 't', "SECONDS", "with --live: how long "
                    "(default 10)"},
    [M_BUS] = {"bus", 0, "N", "only this USB bus"},
    [M_DEVICE] = {"device", 'd', "N", "only this device address"},
    [M_PORT] = {"port", 'p', "PORT", "only UDP echoes to or from PORT (pcap "
                "input; ICMP is then ignored)"},
    [M_MODE] = {"mode", 0, "MODE", "auto (default), ecm (one frame per "
                "transfer) or ncm (NTB16)"},
    [M_NOPT] = {0},
};

static int bench_usbmon_fn(cli_ctx *ctx, int argc, char **argv);

static const cli_cmd bench_usbmon = {
    .name = "bench usbmon",
    .fn = bench_usbmon_fn,
    .summary = "per-echo time of a USB network device from a usbmon capture",
    .usage = "CAPTURE | --live usbmonN [--duration S] [--port PORT]",
    .description =
        "Reads a capture of the host's USB traffic: pcap or pcapng of Linux\n"
        "usbmon (link types 189 and 220, either byte order) or the usbmon text\n"
        "format, or captures live. Pairs each request's bulk OUT transfer with\n"
        "the bulk IN transfer that carries its reply (ICMP echo, or UDP with the\n"
        "same payload), for CDC-ECM (one frame per transfer) and CDC-NCM (NTB16,\n"
        "several datagrams per transfer). Per echo: device time (OUT completed to\n"
        "reply IN completed), bus time (OUT submitted to completed) and host time\n"
        "(reply to the next request, when the traffic is one echo at a time).\n"
        "The text format keeps only 32 bytes of data: there transfers are paired\n"
        "first in, first out. --csv writes one row per echo.\n\n"
        "example:\n"
        "  tcpdump -i usbmon1 -w ping.pcap & ping -c 100 192.168.7.2; kill %1\n"
        "  codeplace bench usbmon ping.pcap --device 5",
    .opts = usb_opts,
    .globals = CLI_G_ALL,
};

typedef struct usb_part {
    const char *name;
    double *v;
    size_t n;
    nb_summary s;
} usb_part;

static int bench_usbmon_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg, *live = NULL;
    double duration = 10;
    uint32_t bus = 0, dev = 0, port = 0;
    int have_bus = 0, have_dev = 0, mode = NB_USB_AUTO, rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case M_LIVE: live = arg; break;
        case M_DURATION: if (arg_seconds(ctx, "duration", arg, &duration) < 0) return CLI_USAGE; break;
        case M_BUS: if (cli_arg_u32(ctx, "bus", arg, 0, &bus) < 0) return CLI_USAGE; have_bus = 1; break;
        case M_DEVICE: if (cli_arg_u32(ctx, "device", arg, 0, &dev) < 0) return CLI_USAGE; have_dev = 1; break;
        case M_PORT:
            if (cli_arg_u32(ctx, "port", arg, 0, &port) < 0) return CLI_USAGE;
            if (port == 0 || port > 65535)
                return cli_usage_error(ctx, "option '--port': give 1..65535");
            break;
        case M_MODE:
            if (!strcmp(arg, "auto")) mode = NB_USB_AUTO;
            else if (!strcmp(arg, "ecm")) mode = NB_USB_ECM;
            else if (!strcmp(arg, "ncm")) mode = NB_USB_NCM;
            else return cli_usage_error(ctx, "option '--mode': '%s' is not auto, ecm or ncm", arg);
            break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if ((p.npos != 1) == !live || p.npos > 1)
        return cli_usage_error(ctx, "bench usbmon: give one capture file or --live IFACE");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "bench usbmon: --json and --csv exclude each other");
    nb_usbmon_cfg cfg = {.bus = have_bus ? (int)bus : -1,
                         .dev = have_dev ? (int)dev : -1, .port = port,
                         .mode = mode};
    nb_usbmon *u = nb_usbmon_new(&cfg);
    if (!u) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    cp_err err;
    const char *src = live ? live : pos[0];
    if (live) {
        catch_stop();
        cli_info(ctx, "capturing on %s for %g s", live, duration);
        rc = nb_usbmon_live(u, live, duration, &cp_sig_stop, &err);
    } else {
        rc = nb_usbmon_read(u, pos[0], &err);
    }
    if (rc < 0) {
        cli_error("bench usbmon: %s", err.msg);
        nb_usbmon_free(u);
        return CLI_FAIL;
    }
    size_t n;
    nb_usbmon_echoes(u, &n);
    const nb_usbmon_counts *c = nb_usbmon_counts_of(u);
    usb_part parts[3] = {{"device", NULL, 0, {0}}, {"bus", NULL, 0, {0}},
                         {"host", NULL, 0, {0}}};
    for (int k = 0; k < 3; k++) {
        parts[k].v = malloc((n ? n : 1) * sizeof(double));
        if (!parts[k].v) {
            for (int j = 0; j < k; j++)
                free(parts[j].v);
            nb_usbmon_free(u);
            cli_error("out of memory");
            return CLI_FAIL;
        }
    }
    if (cli_out_open(ctx) < 0)
        rc = -1;
    if (rc == 0 && ctx->csv)
        fputs("echo,out_submit_ns,out_done_ns,in_done_ns,device_us,bus_us,host_us\n",
              ctx->out);
    const nb_usb_echo *ech = nb_usbmon_echoes(u, &n);
    for (size_t i = 0; i < n; i++) {
        double e, h, b, d;
        nb_usbmon_split(u, i, &e, &h, &b, &d);
        parts[0].v[parts[0].n++] = d;
        parts[1].v[parts[1].n++] = b;
        if (isfinite(h))
            parts[2].v[parts[2].n++] = h;
        if (rc == 0 && ctx->csv) {
            fprintf(ctx->out, "%zu,%llu,%llu,%llu,%.3f,%.3f", i,
                    (unsigned long long)ech[i].out_s,
                    (unsigned long long)ech[i].out_c,
                    (unsigned long long)ech[i].in_c, d, b);
            csv_num(ctx->out, h);
            fputc('\n', ctx->out);
        }
    }
    for (int k = 0; k < 3; k++)
        nb_summarize(parts[k].v, parts[k].n, &parts[k].s);
    const char *fmt = c->text ? "usbmon text" : c->dlt == NB_DLT_USB_LINUX
                                ? "pcap, DLT_USB_LINUX (189)"
                                : "pcap, DLT_USB_LINUX_MMAPPED (220)";
    if (rc == 0 && ctx->json) {
        jw w;
        jw_init(&w, ctx->out, 1);
        jw_obj_begin(&w);
        jw_key(&w, "capture"); jw_str(&w, src);
        jw_key(&w, "format"); jw_str(&w, fmt);
        jw_key(&w, "pairing"); jw_str(&w, c->text ? "fifo" : "payload");
        jw_key(&w, "class"); jw_str(&w, c->ncm ? "ncm" : "ecm");
        jw_key(&w, "events"); jw_uint(&w, c->events);
        jw_key(&w, "bulk_out"); jw_uint(&w, c->bulk_out);
        jw_key(&w, "bulk_in"); jw_uint(&w, c->bulk_in);
        jw_key(&w, "frames_out"); jw_uint(&w, c->frames_out);
        jw_key(&w, "frames_in"); jw_uint(&w, c->frames_in);
        jw_key(&w, "ncm_blocks"); jw_uint(&w, c->ncm_blocks);
        jw_key(&w, "bad_ntb"); jw_uint(&w, c->bad_ntb);
        jw_key(&w, "requests"); jw_uint(&w, c->requests);
        jw_key(&w, "echoes"); jw_uint(&w, c->echoes);
        jw_key(&w, "unanswered"); jw_uint(&w, c->unanswered);
        for (int k = 0; k < 3; k++) {
            jw_key(&w, parts[k].name);
            jw_obj_begin(&w);
            jw_key(&w, "n"); jw_uint(&w, parts[k].s.n);
            json_num_or_null(&w, "median_us", parts[k].s.median);
            json_num_or_null(&w, "p10_us", parts[k].s.p10);
            json_num_or_null(&w, "p90_us", parts[k].s.p90);
            json_num_or_null(&w, "min_us", parts[k].s.min);
            json_num_or_null(&w, "max_us", parts[k].s.max);
            json_num_or_null(&w, "mean_us", parts[k].s.mean);
            json_num_or_null(&w, "sd_us", parts[k].s.sd);
            jw_obj_end(&w);
        }
        jw_obj_end(&w);
        jw_finish(&w);
    } else if (rc == 0 && !ctx->csv) {
        FILE *o = ctx->out;
        fprintf(o, "capture:   %s (%s)\n", src, fmt);
        fprintf(o, "transfers: %llu bulk OUT, %llu bulk IN; frames %llu out, "
                "%llu in%s\n", (unsigned long long)c->bulk_out,
                (unsigned long long)c->bulk_in,
                (unsigned long long)c->frames_out,
                (unsigned long long)c->frames_in,
                c->ncm ? " (CDC-NCM)" : c->text ? "" : " (CDC-ECM)");
        if (c->bad_ntb)
            fprintf(o, "warning:   %llu malformed NTBs skipped\n",
                    (unsigned long long)c->bad_ntb);
        fprintf(o, "echoes:    %llu paired%s, %llu requests unanswered\n",
                (unsigned long long)c->echoes,
                c->text ? " first in, first out (text keeps 32 bytes)" : " by payload",
                (unsigned long long)c->unanswered);
        double sum = 0;
        for (int k = 0; k < 3; k++)
            if (isfinite(parts[k].s.median))
                sum += parts[k].s.median;
        fprintf(o, "\n%-8s %8s %10s %10s %10s %10s %7s\n", "part", "n",
                "median_us", "p10_us", "p90_us", "max_us", "share");
        for (int k = 0; k < 3; k++) {
            const nb_summary *s = &parts[k].s;
            fprintf(o, "%-8s %8zu %10.1f %10.1f %10.1f %10.1f %6.1f%%\n",
                    parts[k].name, s->n, s->median, s->p10, s->p90, s->max,
                    sum > 0 && isfinite(s->median) ? 100 * s->median / sum : NAN);
        }
        fputs("\ndevice: OUT transfer done -> reply IN transfer done\n"
              "bus:    OUT transfer submitted -> done\n"
              "host:   reply IN done -> next OUT submitted (one echo at a time)\n", o);
    }
    for (int k = 0; k < 3; k++)
        free(parts[k].v);
    nb_usbmon_free(u);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}

/* ==== bench compare ==== */

enum { C_RUN, C_N, C_METRIC, C_LEVEL, C_ITERS, C_SVG, C_NOPT };

static const cli_opt cmp_opts[] = {
    [C_RUN] = {"run", 'r', "NAME=COMMAND", "a configuration: a shell command "
               "that prints the figure (repeatable)"},
    [C_N] = {"times", 'n', "N", "runs of each configuration (default 5)"},
    [C_METRIC] = {"metric", 'm', "KEY", "take the figure from '\"KEY\": NUMBER' "
                  "in the output (the last one); default: the last number"},
    [C_LEVEL] = {"level", 0, "P", "confidence level (default 0.95)"},
    [C_ITERS] = {"iters", 0, "N", "bootstrap resamples (default 4000)"},
    [C_SVG] = {"svg", 0, "FILE", "with result files: a bar chart of the peak "
               "reply rate, mean +- SD"},
    [C_NOPT] = {0},
};

static int bench_compare_fn(cli_ctx *ctx, int argc, char **argv);

static const cli_cmd bench_compare = {
    .name = "bench compare",
    .fn = bench_compare_fn,
    .summary = "compare configurations (interleaved runs) or earlier sweep results",
    .usage = "--run A=CMD --run B=CMD [-n N] | SWEEP.csv... [--svg FILE]",
    .description =
        "With --run: runs the configurations interleaved (A B C A B C ...), each\n"
        "N times, so that drift hits all alike; prints each one's median with a\n"
        "bootstrap confidence interval and, for each against the first, the\n"
        "interval of the difference of medians: when it holds 0 the difference\n"
        "is inside the noise. With files: reads CSV results of bench udp and\n"
        "prints per label (image) the peak reply rate and the all-answered rate,\n"
        "mean +- SD over the passes. JSON files of codeplace counters --ping\n"
        "--label L join them: misses per echo and echo rate per label, next\n"
        "to the peak reply rate of the sweeps of the same label.\n\n"
        "example:\n"
        "  codeplace bench compare -n 5 \\\n"
        "      --run 'stock=codeplace bench udp dev:7 --rates 2000 --json -q' \\\n"
        "      --run 'placed=codeplace bench udp dev:7 --rates 2000 --json -q' \\\n"
        "      --metric peak_reply_rate_mean\n"
        "  codeplace bench compare stock.csv placed.csv --svg peak.svg",
    .opts = cmp_opts,
    .globals = CLI_G_ALL,
};

static char *run_capture(const char *cmd, int *status)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + len, 1, cap - len - 1, f);
        if (r == 0)
            break;
        len += r;
    }
    *status = pclose(f);
    if (buf)
        buf[len] = 0;
    return buf;
}

typedef struct group {
    char name[64];
    double *v;      /* run figures, or per-pass peak reply rates */
    double *all;    /* per-pass all-answered rates (files) */
    size_t n, cap, capall;
} group;

/* Counters results (codeplace counters --json) per label. */
typedef struct ctr_group {
    char name[64];
    double *mpe, *rate; /* misses per echo, echo rate per file */
    size_t n, cap, capr;
} ctr_group;

static double median_of(const double *v, size_t n)
{
    nb_summary s;
    nb_summarize(v, n, &s);
    return s.median;
}

/* Misses per echo and echo rate per image, with the peak reply rate of
 * the sweeps of the same label when there are any. */
static void print_counters(cli_ctx *ctx, jw *w, const ctr_group *c, size_t nc,
                           const group *g, size_t ng)
{
    FILE *o = ctx->out;
    if (!ctx->json && !ctx->csv)
        fprintf(o, "%s%-16s %4s %16s %14s %18s\n", ng ? "\n" : "", "name",
                "n", "misses/echo", "echoes/s", "peak reply rate");
    else if (ctx->json) {
        jw_key(w, "counters");
        jw_arr_begin(w);
    }
    for (size_t i = 0; i < nc; i++) {
        double peak = NAN;
        for (size_t k = 0; k < ng; k++)
            if (!strcmp(g[k].name, c[i].name) && g[k].n)
                peak = median_of(g[k].v, g[k].n);
        double m = median_of(c[i].mpe, c[i].n), r = median_of(c[i].rate, c[i].n);
        if (ctx->json) {
            jw_obj_begin(w);
            jw_key(w, "name"); jw_str(w, c[i].name);
            jw_key(w, "n"); jw_uint(w, c[i].n);
            json_num_or_null(w, "misses_per_echo_median", m);
            json_num_or_null(w, "echo_rate_median", r);
            json_num_or_null(w, "peak_reply_rate_median", peak);
            jw_obj_end(w);
        } else if (!ctx->csv) {
            char pk[32] = "-", rt[32] = "-";
            if (!isnan(peak))
                snprintf(pk, sizeof pk, "%.0f", peak);
            if (!isnan(r))
                snprintf(rt, sizeof rt, "%.1f", r);
            fprintf(o, "%-16s %4zu %16.1f %14s %18s\n", c[i].name, c[i].n, m,
                    rt, pk);
        }
    }
    if (ctx->json)
        jw_arr_end(w);
    else if (!ctx->csv)
        for (size_t i = 1; i < nc; i++) {
            double a = median_of(c[0].mpe, c[0].n), b = median_of(c[i].mpe, c[i].n);
            fprintf(o, "%s - %s: %+.1f misses per echo (%+.1f%%)\n", c[i].name,
                    c[0].name, b - a, a != 0 ? 100 * (b - a) / a : NAN);
        }
}

static void print_groups(cli_ctx *ctx, group *g, size_t ng, double level,
                         uint32_t iters, int files, const ctr_group *cg,
                         size_t ncg)
{
    FILE *o = ctx->out;
    jw w;
    if (ctx->json) {
        jw_init(&w, o, 1);
        jw_obj_begin(&w);
        jw_key(&w, "level");
        jw_double(&w, level);
        jw_key(&w, "configs");
        jw_arr_begin(&w);
    } else if (ctx->csv) {
        fputs("name,n,median,ci_lo,ci_hi,mean,sd,diff_median,diff_lo,diff_hi,"
              "inside_noise\n", o);
    } else {
        fprintf(o, "%-16s %4s %12s %27s %12s %10s%s\n", "name", "n",
                files ? "peak median" : "median",
                files ? "CI" : "CI", "mean", "sd",
                files ? "   all-answered mean +- sd" : "");
    }
    double base = NAN;
    for (size_t i = 0; i < ng; i++) {
        nb_summary s;
        nb_summarize(g[i].v, g[i].n, &s);
        double lo, hi, dlo = NAN, dhi = NAN, d = NAN;
        nb_boot_median(g[i].v, g[i].n, iters, level, 1 + i, &lo, &hi);
        if (i == 0)
            base = s.median;
        else {
            d = s.median - base;
            nb_boot_median_diff(g[0].v, g[0].n, g[i].v, g[i].n, iters, level,
                                77 + i, &dlo, &dhi);
        }
        int noise = i > 0 && dlo <= 0 && dhi >= 0;
        if (ctx->json) {
            jw_obj_begin(&w);
            jw_key(&w, "name"); jw_str(&w, g[i].name);
            jw_key(&w, "n"); jw_uint(&w, g[i].n);
            jw_key(&w, "values");
            jw_arr_begin(&w);
            for (size_t k = 0; k < g[i].n; k++)
                jw_double(&w, g[i].v[k]);
            jw_arr_end(&w);
            json_num_or_null(&w, "median", s.median);
            json_num_or_null(&w, "ci_lo", lo);
            json_num_or_null(&w, "ci_hi", hi);
            json_num_or_null(&w, "mean", s.mean);
            json_num_or_null(&w, "sd", s.sd);
            if (files) {
                json_num_or_null(&w, "all_answered_mean", nb_mean(g[i].all, g[i].n));
                json_num_or_null(&w, "all_answered_sd", nb_sd(g[i].all, g[i].n));
            }
            if (i > 0) {
                json_num_or_null(&w, "diff_median", d);
                json_num_or_null(&w, "diff_lo", dlo);
                json_num_or_null(&w, "diff_hi", dhi);
                jw_key(&w, "inside_noise");
                jw_bool(&w, noise);
            }
            jw_obj_end(&w);
        } else if (ctx->csv) {
            fprintf(o, "%s,%zu", g[i].name, g[i].n);
            csv_num(o, s.median);
            csv_num(o, lo);
            csv_num(o, hi);
            csv_num(o, s.mean);
            csv_num(o, s.sd);
            csv_num(o, d);
            csv_num(o, dlo);
            csv_num(o, dhi);
            fprintf(o, ",%s\n", i == 0 ? "" : noise ? "yes" : "no");
        } else {
            char ci[64];
            snprintf(ci, sizeof ci, "[%.6g, %.6g]", lo, hi);
            fprintf(o, "%-16s %4zu %12.6g %27s %12.6g %10.3g", g[i].name,
                    g[i].n, s.median, ci, s.mean, s.sd);
            if (files)
                fprintf(o, "   %.0f +- %.0f", nb_mean(g[i].all, g[i].n),
                        nb_sd(g[i].all, g[i].n));
            fputc('\n', o);
        }
    }
    if (ctx->json) {
        jw_arr_end(&w);
        if (ncg)
            print_counters(ctx, &w, cg, ncg, g, ng);
        jw_obj_end(&w);
        jw_finish(&w);
    } else if (!ctx->csv) {
        for (size_t i = 1; i < ng; i++) {
            double lo, hi;
            nb_summary a, b;
            nb_summarize(g[0].v, g[0].n, &a);
            nb_summarize(g[i].v, g[i].n, &b);
            nb_boot_median_diff(g[0].v, g[0].n, g[i].v, g[i].n, iters, level,
                                77 + i, &lo, &hi);
            double d = b.median - a.median;
            fprintf(o, "%s - %s: %+.6g (%+.1f%%), %.0f%% CI [%.6g, %.6g]: %s\n",
                    g[i].name, g[0].name, d,
                    a.median != 0 ? 100 * d / a.median : NAN, level * 100, lo,
                    hi, lo <= 0 && hi >= 0 ? "inside the noise"
                                           : d > 0 ? "higher" : "lower");
        }
    }
    if (!ctx->json && !ctx->csv && ncg)
        print_counters(ctx, NULL, cg, ncg, g, ng);
}

static int grow_push(double **v, size_t *cap, size_t n, double x)
{
    if (cp_grow((void **)v, cap, n + 1, sizeof **v) < 0)
        return -1;
    (*v)[n] = x;
    return 0;
}

/* Reads a bench udp CSV and adds its per-pass summaries to the group of
 * its label (the file name when it has none). */
static int read_sweep_csv(const char *path, group **gs, size_t *ng,
                          size_t *gcap, cp_err *err)
{
    nb_sweep_file sf;
    if (nb_sweep_read(path, &sf, err) < 0)
        return -1;
    const char *label = sf.label[0] ? sf.label : cp_basename(path);
    nb_udp_pass ps[1000];
    size_t np = nb_udp_summarize(sf.steps, sf.n, ps, 1000);
    size_t gi = 0;
    int rc = -1;
    while (gi < *ng && strcmp((*gs)[gi].name, label))
        gi++;
    if (gi == *ng) {
        if (cp_grow((void **)gs, gcap, *ng + 1, sizeof **gs) < 0) {
            cp_seterr(err, "out of memory");
            goto out;
        }
        memset(&(*gs)[gi], 0, sizeof **gs);
        snprintf((*gs)[gi].name, sizeof (*gs)[gi].name, "%s", label);
        (*ng)++;
    }
    group *g = &(*gs)[gi];
    for (size_t i = 0; i < np; i++) {
        if (grow_push(&g->v, &g->cap, g->n, ps[i].peak_reply_rate) < 0 ||
            grow_push(&g->all, &g->capall, g->n, ps[i].all_answered_rate) < 0) {
            cp_seterr(err, "out of memory");
            goto out;
        }
        g->n++;
    }
    rc = 0;
out:
    nb_sweep_free(&sf);
    return rc;
}

/* A counters JSON file: 1 when path is one and was added to the group of
 * its label (the file name without one), -1 on an error, 0 when path is
 * something else (a sweep CSV). */
static int read_counters_json(const char *path, ctr_group **cs, size_t *nc,
                              size_t *cap, cp_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0; /* read_sweep_csv names the problem */
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    if (!nb_ctr_is_counters(buf))
        return 0;
    nb_ctr_file cf;
    if (nb_ctr_parse(buf, path, &cf, err) < 0)
        return -1;
    const char *label = cf.label[0] ? cf.label : cp_basename(path);
    size_t i = 0;
    while (i < *nc && strcmp((*cs)[i].name, label))
        i++;
    if (i == *nc) {
        if (cp_grow((void **)cs, cap, *nc + 1, sizeof **cs) < 0)
            return cp_seterr(err, "out of memory");
        memset(&(*cs)[i], 0, sizeof **cs);
        snprintf((*cs)[i].name, sizeof (*cs)[i].name, "%s", label);
        (*nc)++;
    }
    ctr_group *c = &(*cs)[i];
    if (grow_push(&c->mpe, &c->cap, c->n, cf.misses_per_echo) < 0 ||
        grow_push(&c->rate, &c->capr, c->n, cf.echo_rate_hz) < 0)
        return cp_seterr(err, "out of memory");
    c->n++;
    return 1;
}

static void print_counters_only(cli_ctx *ctx, const ctr_group *cg, size_t ncg)
{
    jw w;
    if (ctx->json) {
        jw_init(&w, ctx->out, 1);
        jw_obj_begin(&w);
    }
    print_counters(ctx, &w, cg, ncg, NULL, 0);
    if (ctx->json) {
        jw_obj_end(&w);
        jw_finish(&w);
    }
}

/* Peak reply rate per image: mean with +- SD error bars. */
static int compare_svg(const char *path, const group *g, size_t ng)
{
    cp_wfile wf;
    cp_err werr;
    if (cp_wfile_open(&wf, path, &werr) < 0) {
        cli_error("%s", werr.msg);
        return -1;
    }
    FILE *f = wf.f;
    rep_svg_bar *bars = calloc(ng ? ng : 1, sizeof *bars);
    int rc = -1;
    if (bars) {
        for (size_t i = 0; i < ng; i++) {
            double m = nb_mean(g[i].v, g[i].n), sd = nb_sd(g[i].v, g[i].n);
            bars[i] = (rep_svg_bar){.label = g[i].name, .value = m,
                                    .err_lo = m - sd, .err_hi = m + sd,
                                    .color = rep_svg_color(i)};
        }
        const char *title = "Peak UDP echo reply rate (mean +- SD over passes)";
        rep_svg_chart c = {.title = title, .ylabel = "replies per second",
                           .value_labels = 1, .cls = "compare"};
        cp_err err;
        rep_svg *sv = rep_svg_begin(f, 640, 400, title);
        if (sv) {
            rep_svg_vbars(sv, &(rep_svg_box){0, 0, 640, 400}, bars, ng, &c);
            rc = rep_svg_end(sv, &err);
        }
    }
    free(bars);
    if (rc < 0) {
        cp_wfile_abort(&wf);
        cli_error("cannot write '%s'", path);
        return -1;
    }
    if (cp_wfile_commit(&wf, &werr) < 0) {
        cli_error("%s", werr.msg);
        return -1;
    }
    return 0;
}

static int bench_compare_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    const char *runs[argc > 0 ? argc : 1];
    size_t nruns = 0;
    cli_parser p;
    const char *arg, *metric = NULL, *svg = NULL;
    uint32_t times = 5, iters = 4000;
    double level = 0.95;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case C_RUN: runs[nruns++] = arg; break;
        case C_N: if (cli_arg_u32(ctx, "times", arg, 0, &times) < 0) return CLI_USAGE; break;
        case C_METRIC: metric = arg; break;
        case C_LEVEL: if (cli_arg_double(ctx, "level", arg, &level) < 0) return CLI_USAGE; break;
        case C_ITERS: if (cli_arg_u32(ctx, "iters", arg, 0, &iters) < 0) return CLI_USAGE; break;
        case C_SVG: svg = arg; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if ((nruns == 0) == (p.npos == 0))
        return cli_usage_error(ctx, "bench compare: give --run configurations or "
                               "sweep result files, not both");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "bench compare: --json and --csv exclude each other");
    if (!(level > 0 && level < 1))
        return cli_usage_error(ctx, "option '--level': give a value in (0, 1)");
    if (times == 0 || times > 10000 || iters < 100 || iters > 1000000)
        return cli_usage_error(ctx, "bench compare: -n 1..10000, --iters 100..1000000");
    if (svg && nruns)
        return cli_usage_error(ctx, "bench compare: --svg goes with result files");
    group *g = NULL;
    size_t ng = 0, gcap = 0, ncg = 0, cgcap = 0;
    ctr_group *cg = NULL;
    cp_err err;
    int ret = CLI_OK;
    if (nruns) {
        g = calloc(nruns, sizeof *g);
        if (!g) {
            cli_error("out of memory");
            return CLI_FAIL;
        }
        ng = nruns;
        for (size_t i = 0; i < nruns; i++) {
            const char *eq = strchr(runs[i], '=');
            if (!eq || eq == runs[i] || !eq[1] || (size_t)(eq - runs[i]) >= sizeof g[i].name) {
                free(g);
                return cli_usage_error(ctx, "option '--run': '%s' is not NAME=COMMAND",
                                       runs[i]);
            }
            memcpy(g[i].name, runs[i], (size_t)(eq - runs[i]));
        }
        catch_stop();
        for (uint32_t round = 0; round < times && !cp_sig_stop && ret == CLI_OK; round++)
            for (size_t i = 0; i < nruns && !cp_sig_stop; i++) {
                const char *cmd = strchr(runs[i], '=') + 1;
                int status = -1;
                char *out = run_capture(cmd, &status);
                double v;
                if (!out || status != 0) {
                    if (status != -1 && WIFEXITED(status))
                        cli_error("bench compare: '%s' failed (exit %d)", cmd,
                                  WEXITSTATUS(status));
                    else if (status != -1 && WIFSIGNALED(status))
                        cli_error("bench compare: '%s' failed (signal %d)", cmd,
                                  WTERMSIG(status));
                    else
                        cli_error("bench compare: cannot run '%s'", cmd);
                    free(out);
                    ret = CLI_FAIL;
                    break;
                }
                if (nb_extract_figure(out, metric, &v) < 0) {
                    cli_error("bench compare: '%s' printed no %s%s%s", cmd,
                              metric ? "\"" : "number", metric ? metric : "",
                              metric ? "\": NUMBER" : "");
                    free(out);
                    ret = CLI_FAIL;
                    break;
                }
                free(out);
                if (grow_push(&g[i].v, &g[i].cap, g[i].n, v) < 0) {
                    cli_error("out of memory");
                    ret = CLI_FAIL;
                    break;
                }
                g[i].n++;
                cli_info(ctx, "round %u/%u %s: %g", round + 1, times, g[i].name, v);
            }
        if (cp_sig_stop)
            cli_warn("bench compare: interrupted; comparing the finished runs");
    } else {
        for (int i = 0; i < p.npos; i++) {
            int cr = read_counters_json(pos[i], &cg, &ncg, &cgcap, &err);
            if (cr == 0 && read_sweep_csv(pos[i], &g, &ng, &gcap, &err) == 0)
                continue;
            if (cr != 1) {
                cli_error("bench compare: %s", err.msg);
                ret = CLI_FAIL;
                break;
            }
        }
    }
    int have = ng > 0 || ncg > 0;
    for (size_t i = 0; i < ng; i++)
        if (g[i].n == 0)
            have = 0;
    if (ret == CLI_OK && !have) {
        cli_error("bench compare: nothing measured to compare");
        ret = CLI_FAIL;
    }
    if (have && cli_out_open(ctx) == 0) {
        if (ng)
            print_groups(ctx, g, ng, level, iters, nruns == 0, cg, ncg);
        else
            print_counters_only(ctx, cg, ncg);
        if (svg && compare_svg(svg, g, ng) < 0)
            ret = CLI_FAIL;
    } else if (have) {
        ret = CLI_FAIL;
    }
    for (size_t i = 0; i < ng; i++) {
        free(g[i].v);
        free(g[i].all);
    }
    free(g);
    for (size_t i = 0; i < ncg; i++) {
        free(cg[i].mpe);
        free(cg[i].rate);
    }
    free(cg);
    if (cp_sig_stop && ret == CLI_OK)
        ret = CLI_FAIL;
    return ret;
}

/* ==== the bench table ==== */

static const cli_cmd *const bench_cmds[] = {
    &bench_udp, &bench_latency, &bench_sink, &bench_usbmon, &bench_compare,
    &bench_echo,
};
#define NBENCH (sizeof bench_cmds / sizeof bench_cmds[0])

static int cmd_bench_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_bench = {
    .name = "bench",
    .fn = cmd_bench_fn,
    .summary = "network benchmarks from the host: UDP sweep, latency, TCP sink, "
               "usbmon, compare",
    .usage = "SUBCOMMAND [options]",
    .description =
        "subcommands:\n"
        "  udp HOST[:PORT]     UDP echo rate sweep: reply rate, loss and RTT per rate\n"
        "  latency HOST[:PORT] round-trip times, UDP or ICMP echo, with a histogram\n"
        "  sink                TCP sink: bytes and Mbit/s per connection and interval\n"
        "  usbmon CAPTURE      per-echo time of a USB network device from usbmon\n"
        "  compare             interleaved runs with bootstrap intervals, or sweep files\n"
        "  echo                a UDP echo service\n\n"
        "Run 'codeplace bench SUBCOMMAND --help' for its options.\n\n"
        "example:\n"
        "  codeplace bench udp 192.168.7.2 --rates 50:3000:50 --passes 3 --svg sweep.svg",
    .globals = 0,
};

static int cmd_bench_fn(cli_ctx *ctx, int argc, char **argv)
{
    if (argc < 2) {
        cli_print_cmd_help(stderr, ctx->cmd);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        if (!strcmp(name, "help") && argc > 2)
            name = argv[2];
        else {
            cli_print_cmd_help(stdout, ctx->cmd);
            return CLI_OK;
        }
        for (size_t i = 0; i < NBENCH; i++)
            if (!strcmp(bench_cmds[i]->name + 6, name)) {
                cli_print_cmd_help(stdout, bench_cmds[i]);
                return CLI_OK;
            }
        return cli_usage_error(ctx, "bench: no subcommand '%s'", name);
    }
    for (size_t i = 0; i < NBENCH; i++) {
        if (strcmp(bench_cmds[i]->name + 6, name))
            continue;
        cli_ctx sub = {.cmd = bench_cmds[i]};
        int rc = bench_cmds[i]->fn(&sub, argc - 1, argv + 1);
        if (cli_out_close(&sub) < 0 && rc == CLI_OK)
            rc = CLI_FAIL;
        return rc;
    }
    return cli_usage_error(ctx, "bench: '%s' is not a bench subcommand", name);
}
