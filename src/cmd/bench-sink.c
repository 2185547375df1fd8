/* codeplace bench sink: a TCP sink: bytes and Mbit/s per connection and interval. */
#include <math.h>

#include "bench/net.h"
#include "bench/sink.h"
#include "cmd/bench.h"
#include "cmd/commands.h"

enum { K_LISTEN, K_INTERVAL, K_DURATION, K_IDLE, K_CONNS, K_PERCONN, K_NOPT };

static const cli_opt sink_opts[] = {
    [K_LISTEN] = {"listen", 'L', "ADDR:PORT", "where to listen (default "
                  "0.0.0.0:5001; port 0 picks a free one)"},
    [K_INTERVAL] = {"interval", 'i', "SECONDS", "report every interval "
                    "(default 1)"},
    [K_DURATION] = {"duration", 'd', "SECONDS", "stop after this long "
                    "(default: until Ctrl-C)"},
    [K_IDLE] = {"idle", 0, "SECONDS", "close connections silent this long "
                "(default 10; 0 never)"},
    [K_CONNS] = {"conns", 0, "N", "stop once N connections have closed"},
    [K_PERCONN] = {"per-conn", 0, NULL, "also report every connection in "
                   "every interval"},
    [K_NOPT] = {0},
};

static int bench_sink_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_bench_sink = {
    .name = "sink",
    .parent = &cmd_bench,
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
                    cp_commas(b1, e->bytes), e->mbps);
            break;
        case NB_SINK_INTERVAL:
            fprintf(o, "%9.3f interval %.3f s: bytes %s  %.2f Mbit/s  %u "
                    "active, %u moving\n", e->t, e->secs,
                    cp_commas(b1, e->bytes), e->mbps, e->active,
                    e->conns_moving);
            break;
        case NB_SINK_CLOSE:
            fprintf(o, "%9.3f close #%llu %s: bytes %s in %.3f s, %.2f "
                    "Mbit/s (%s)\n", e->t, (unsigned long long)e->conn,
                    e->addr, cp_commas(b1, e->bytes), e->secs, e->mbps,
                    e->reason);
            break;
        case NB_SINK_SUMMARY:
            fprintf(o, "total: bytes %s in %.3f s, %.2f Mbit/s; %llu "
                    "connections (%llu closed, peak %u at once, %llu idle, "
                    "%llu half-open)\n", cp_commas(b1, e->bytes), e->secs,
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
        case K_INTERVAL: if (bench_arg_seconds(ctx, "interval", arg, &interval) < 0) return CLI_USAGE; break;
        case K_DURATION: if (bench_arg_seconds(ctx, "duration", arg, &duration) < 0) return CLI_USAGE; break;
        case K_IDLE: if (bench_arg_seconds(ctx, "idle", arg, &idle) < 0) return CLI_USAGE; break;
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
    bench_catch_stop();
    if (nb_sink_run(&cfg, &err) < 0) {
        cli_error("bench sink: %s", err.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}
