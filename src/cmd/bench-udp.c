/* codeplace bench udp: UDP echo rate sweep. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench/net.h"
#include "util/stats.h"
#include "bench/sweepfile.h"
#include "cmd/bench.h"
#include "cmd/commands.h"
#include "report/svg.h"
#include "util/wfile.h"

enum { U_RATES, U_STEP, U_PASSES, U_SIZE, U_TIMEOUT, U_SPIN, U_GAP, U_LABEL,
       U_SVG, U_RT, U_NOPT };

static const cli_opt udp_opts[] = {
    [U_RATES] = {"rates", 0, "SPEC", "request rates per second: START:STOP:STEP "
                 "or R1,R2,... (default 100:1000:100, at most 100000)"},
    [U_STEP] = {"step", 0, "SECONDS", "duration of each rate step (default 1)"},
    [U_PASSES] = {"passes", 0, "N", "run the whole sweep N times (default 1)"},
    [U_SIZE] = {"size", 0, "BYTES", "UDP payload bytes, 24..65507 (default 32)"},
    [U_TIMEOUT] = {"timeout", 'w', "MS", "a reply later than this is late "
                   "(default 200)"},
    [U_SPIN] = {"spin", 0, "US", "spin this long before each send deadline "
                "instead of sleeping (default 30)"},
    [U_GAP] = {"gap", 0, "MS", "pause between steps (default 0)"},
    [U_LABEL] = {"label", 0, "NAME", "name of what was measured (an image), "
                 "kept in the output for bench compare"},
    [U_SVG] = {"svg", 0, "FILE", "also draw reply rate against request rate, "
               "one line per pass"},
    [U_RT] = {"realtime", 0, NULL, "pace from a SCHED_FIFO thread (root): "
              "fewer skipped slots on a busy host"},
    [U_NOPT] = {0},
};

static int bench_udp_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_bench_udp = {
    .name = "udp",
    .parent = &cmd_bench,
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
        "  codeplace bench udp 192.168.7.2:7 --rates 500:3000:500 --passes 3 \\\n"
        "      --label stock --csv -o stock.csv --svg stock.svg",
    .opts = udp_opts,
    .globals = CLI_G_ALL,
};

/* The most passes one sweep runs; the text, JSON and SVG keep every one. */
enum { UDP_MAX_PASSES = 1000 };

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
        nb_sweep_write_row(ctx->out, st);
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
    bench_json_num(&w, "step_s", cfg->step_s);
    bench_json_num(&w, "timeout_s", cfg->timeout_s);
    jw_key(&w, "interrupted");
    jw_bool(&w, interrupted);
    jw_key(&w, "steps");
    jw_arr_begin(&w);
    for (size_t i = 0; i < r->n; i++) {
        const nb_udp_step *s = &r->steps[i];
        jw_obj_begin(&w);
        jw_key(&w, "pass"); jw_uint(&w, s->pass);
        jw_key(&w, "step"); jw_uint(&w, s->index);
        bench_json_num(&w, "rate", s->rate);
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
        bench_json_num(&w, "achieved_rate", s->achieved_rate);
        bench_json_num(&w, "reply_rate", s->reply_rate);
        bench_json_num(&w, "loss_pct", s->loss_pct);
        bench_json_num(&w, "rtt_median_us", s->rtt_median_us);
        bench_json_num(&w, "rtt_p99_us", s->rtt_p99_us);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "passes");
    jw_arr_begin(&w);
    double a[UDP_MAX_PASSES], p[UDP_MAX_PASSES];
    size_t k = 0;
    for (size_t i = 0; i < np; i++) {
        jw_obj_begin(&w);
        jw_key(&w, "pass");
        jw_uint(&w, ps[i].pass);
        bench_json_num(&w, "all_answered_rate", ps[i].all_answered_rate);
        bench_json_num(&w, "peak_reply_rate", ps[i].peak_reply_rate);
        jw_obj_end(&w);
        if (k < UDP_MAX_PASSES) {
            a[k] = ps[i].all_answered_rate;
            p[k++] = ps[i].peak_reply_rate;
        }
    }
    jw_arr_end(&w);
    jw_key(&w, "summary");
    jw_obj_begin(&w);
    jw_key(&w, "passes");
    jw_uint(&w, k);
    bench_json_num(&w, "all_answered_rate_mean", cp_mean(a, k));
    bench_json_num(&w, "all_answered_rate_sd", cp_sd(a, k));
    bench_json_num(&w, "peak_reply_rate_mean", cp_mean(p, k));
    bench_json_num(&w, "peak_reply_rate_sd", cp_sd(p, k));
    jw_obj_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
}

typedef struct udp_svg_arg {
    const udp_run *r;
    const char *label;
} udp_svg_arg;

/* Reply rate against request rate, one line per pass, and the requested
 * rate itself as a dashed reference (y = x). */
static int put_udp_svg(FILE *f, void *arg, cp_err *err)
{
    const udp_run *r = ((const udp_svg_arg *)arg)->r;
    const char *label = ((const udp_svg_arg *)arg)->label;
    rep_svg_series *s = malloc((r->passes + 1) * sizeof *s);
    char (*names)[32] = malloc(r->passes * sizeof *names);
    double *x = malloc((r->n + 1) * sizeof *x), *y = malloc((r->n + 1) * sizeof *y);
    size_t ns = 0, used = 0;
    int rc = -1;
    if (!s || !names || !x || !y) {
        cp_seterr(err, "out of memory");
        goto out;
    }
    for (unsigned p = 1; p <= r->passes; p++) {
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
    rep_svg *sv = rep_svg_begin(f, 720, 440, title);
    if (sv) {
        rep_svg_xy(sv, &(rep_svg_box){0, 0, 720, 440}, s, ns, &c);
        rc = rep_svg_end(sv, err);
    }
out:
    free(s);
    free(names);
    free(x);
    free(y);
    return rc;
}

static int udp_svg(const char *path, const udp_run *r, const char *label)
{
    udp_svg_arg a = {r, label};
    cp_err err;
    if (cp_wfile_write(path, put_udp_svg, &a, &err) < 0) {
        cli_error("%s", err.msg);
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
        case U_STEP: if (bench_arg_seconds(ctx, "step", arg, &step) < 0) return CLI_USAGE; break;
        case U_PASSES: if (cli_arg_u32(ctx, "passes", arg, 0, &passes) < 0) return CLI_USAGE; break;
        case U_SIZE: if (cli_arg_u32(ctx, "size", arg, 0, &size) < 0) return CLI_USAGE; break;
        case U_TIMEOUT: if (bench_arg_seconds(ctx, "timeout", arg, &timeout_ms) < 0) return CLI_USAGE; break;
        case U_SPIN: if (bench_arg_seconds(ctx, "spin", arg, &spin) < 0) return CLI_USAGE; break;
        case U_GAP: if (bench_arg_seconds(ctx, "gap", arg, &gap_ms) < 0) return CLI_USAGE; break;
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
    if (passes == 0 || passes > UDP_MAX_PASSES)
        return cli_usage_error(ctx, "option '--passes': give 1..%d",
                               UDP_MAX_PASSES);
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
        nb_sweep_write_header(ctx->out, label, peer, size, step,
                              cfg.timeout_s);
    } else if (!ctx->json) {
        fprintf(ctx->out, "UDP echo sweep to %s: %zu rates x %u passes, %g s "
                "per step, %u-byte payload\n", peer, nrates, passes, step, size);
        udp_text_header(ctx->out);
    }
    fflush(ctx->out);
    bench_catch_stop();
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
    nb_udp_pass ps[UDP_MAX_PASSES];
    size_t np = nb_udp_summarize(run.steps, run.n, ps, UDP_MAX_PASSES);
    if (ctx->json) {
        udp_json(ctx->out, &run, peer, label, &cfg, ps, np, interrupted);
    } else if (!ctx->csv) {
        double a[UDP_MAX_PASSES], pk[UDP_MAX_PASSES];
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
                    cp_mean(a, np), cp_sd(a, np), cp_mean(pk, np), cp_sd(pk, np));
    }
    if (svg && run.n && udp_svg(svg, &run, label) < 0)
        rc = -1;
    if (interrupted)
        cli_warn("bench udp: interrupted; %zu finished step%s written", run.n,
                 run.n == 1 ? "" : "s");
    free(run.steps);
    return rc < 0 || interrupted ? CLI_FAIL : CLI_OK;
}
