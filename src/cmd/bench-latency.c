/* codeplace bench latency: round-trip times of UDP or ICMP echoes, with a histogram. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "bench/net.h"
#include "bench/ping.h"
#include "util/stats.h"
#include "bench/sweepfile.h"
#include "cmd/bench.h"
#include "cmd/commands.h"

enum { L_ICMP, L_COUNT, L_INTERVAL, L_SIZE, L_TIMEOUT, L_BINS, L_NOPT };

static const cli_opt lat_opts[] = {
    [L_ICMP] = {"icmp", 'I', NULL, "ICMP echo (ping socket, or raw socket as "
                "root) instead of UDP echo"},
    [L_COUNT] = {"count", 0, "N", "probes (default 100)"},
    [L_INTERVAL] = {"interval", 'i', "MS", "time between probes (default 10)"},
    [L_SIZE] = {"size", 0, "BYTES", "payload bytes (default 32; ICMP >= 24, UDP >= 24)"},
    [L_TIMEOUT] = {"timeout", 'w', "MS", "a reply later than this is late "
                   "(default 1000)"},
    [L_BINS] = {"bins", 0, "N", "histogram bins (default 10)"},
    [L_NOPT] = {0},
};

static int bench_latency_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_bench_latency = {
    .name = "latency",
    .parent = &cmd_bench,
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
    cp_summary s;
    cp_summarize(r->rtt, r->n, &s);
    double lo = s.min, hi = s.max;
    if (!(hi > lo))
        hi = lo + 1;
    uint64_t *h = calloc(bins, sizeof *h);
    if (h && r->n)
        cp_histogram(r->rtt, r->n, lo, hi + (hi - lo) * 1e-9, bins, h);
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
        bench_json_num(&j, "interval_ms", interval_ms);
        jw_key(&j, "sent"); jw_uint(&j, r->sent);
        jw_key(&j, "answered"); jw_uint(&j, r->answered);
        jw_key(&j, "lost"); jw_uint(&j, r->lost);
        jw_key(&j, "late"); jw_uint(&j, r->late);
        jw_key(&j, "duplicated"); jw_uint(&j, r->duplicated);
        jw_key(&j, "reordered"); jw_uint(&j, r->reordered);
        jw_key(&j, "interrupted"); jw_bool(&j, r->interrupted);
        bench_json_num(&j, "min_us", s.min);
        bench_json_num(&j, "median_us", s.median);
        bench_json_num(&j, "p90_us", s.p90);
        bench_json_num(&j, "p99_us", s.p99);
        bench_json_num(&j, "max_us", s.max);
        bench_json_num(&j, "mean_us", s.mean);
        bench_json_num(&j, "sd_us", s.sd);
        jw_key(&j, "histogram");
        jw_arr_begin(&j);
        for (uint32_t b = 0; h && r->n && b < bins; b++) {
            jw_obj_begin(&j);
            bench_json_num(&j, "from_us", lo + w * b);
            bench_json_num(&j, "to_us", lo + w * (b + 1));
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
        case L_INTERVAL: if (bench_arg_seconds(ctx, "interval", arg, &interval) < 0) return CLI_USAGE; break;
        case L_SIZE: if (cli_arg_u32(ctx, "size", arg, 0, &size) < 0) return CLI_USAGE; break;
        case L_TIMEOUT: if (bench_arg_seconds(ctx, "timeout", arg, &timeout) < 0) return CLI_USAGE; break;
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
    bench_catch_stop();
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
