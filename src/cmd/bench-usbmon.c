/* codeplace bench usbmon: per-echo time of a USB network device from a usbmon capture. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/stats.h"
#include "bench/usbmon.h"
#include "cmd/bench.h"
#include "cmd/commands.h"

enum { M_LIVE, M_DURATION, M_BUS, M_DEVICE, M_PORT, M_MODE, M_NOPT };

static const cli_opt usb_opts[] = {
    [M_LIVE] = {"live", 0, "IFACE", "capture live on a usbmon interface "
                "(usbmon0 = all buses, usbmonN = bus N; root)"},
    [M_DURATION] = {"duration", 'd', "SECONDS", "with --live: how long "
                    "(default 10)"},
    [M_BUS] = {"bus", 0, "N", "only this USB bus"},
    [M_DEVICE] = {"device", 0, "N", "only this device address"},
    [M_PORT] = {"port", 'p', "PORT", "only UDP echoes to or from PORT (pcap "
                "input; ICMP is then ignored)"},
    [M_MODE] = {"mode", 0, "MODE", "auto (default), ecm (one frame per "
                "transfer) or ncm (NTB16)"},
    [M_NOPT] = {0},
};

static int bench_usbmon_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_bench_usbmon = {
    .name = "usbmon",
    .parent = &cmd_bench,
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
    cp_summary s;
} usb_part;

/* The command line, parsed. */
typedef struct usb_args {
    const char *live, *src;
    double duration;
    nb_usbmon_cfg cfg;
} usb_args;

static int usb_opt(cli_ctx *ctx, int o, const char *arg, usb_args *a)
{
    uint32_t v;
    switch (o) {
    case M_LIVE: a->live = arg; break;
    case M_DURATION:
        if (bench_arg_seconds(ctx, "duration", arg, &a->duration) < 0)
            return CLI_USAGE;
        break;
    case M_BUS:
        if (cli_arg_u32(ctx, "bus", arg, 0, &v) < 0)
            return CLI_USAGE;
        a->cfg.bus = (int)v;
        break;
    case M_DEVICE:
        if (cli_arg_u32(ctx, "device", arg, 0, &v) < 0)
            return CLI_USAGE;
        a->cfg.dev = (int)v;
        break;
    case M_PORT:
        if (cli_arg_u32(ctx, "port", arg, 0, &a->cfg.port) < 0)
            return CLI_USAGE;
        if (a->cfg.port == 0 || a->cfg.port > 65535)
            return cli_usage_error(ctx, "option '--port': give 1..65535");
        break;
    case M_MODE:
        if (!strcmp(arg, "auto"))
            a->cfg.mode = NB_USB_AUTO;
        else if (!strcmp(arg, "ecm"))
            a->cfg.mode = NB_USB_ECM;
        else if (!strcmp(arg, "ncm"))
            a->cfg.mode = NB_USB_NCM;
        else
            return cli_usage_error(ctx, "option '--mode': '%s' is not auto, "
                                   "ecm or ncm", arg);
        break;
    }
    return CLI_OK;
}

/* CLI_OK, the status of a usage error, or cli_next's CLI_HELPED or
 * CLI_ERR. */
static int parse(cli_ctx *ctx, int argc, char **argv, char **pos,
                 usb_args *a)
{
    cli_parser p;
    const char *arg;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        if (usb_opt(ctx, rc, arg, a) != CLI_OK)
            return CLI_USAGE;
    if (rc != CLI_END)
        return rc; /* CLI_HELPED or CLI_ERR */
    if ((p.npos != 1) == !a->live || p.npos > 1)
        return cli_usage_error(ctx, "bench usbmon: give one capture file or --live IFACE");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "bench usbmon: --json and --csv exclude each other");
    a->src = a->live ? a->live : pos[0];
    return CLI_OK;
}

/* The capture read, or taken live. */
static nb_usbmon *capture(cli_ctx *ctx, const usb_args *a)
{
    nb_usbmon *u = nb_usbmon_new(&a->cfg);
    if (!u) {
        cli_error("out of memory");
        return NULL;
    }
    cp_err err;
    int rc;
    if (a->live) {
        bench_catch_stop();
        cli_info(ctx, "capturing on %s for %g s", a->live, a->duration);
        rc = nb_usbmon_live(u, a->live, a->duration, &cp_sig_stop, &err);
    } else {
        rc = nb_usbmon_read(u, a->src, &err);
    }
    if (rc < 0) {
        cli_error("bench usbmon: %s", err.msg);
        nb_usbmon_free(u);
        return NULL;
    }
    return u;
}

/* Each echo's device, bus and host times into parts (csv: a row each on
 * o). */
static void split_echoes(nb_usbmon *u, usb_part *parts, FILE *csv)
{
    size_t n;
    if (csv)
        fputs("echo,out_submit_ns,out_done_ns,in_done_ns,device_us,bus_us,host_us\n",
              csv);
    const nb_usb_echo *ech = nb_usbmon_echoes(u, &n);
    for (size_t i = 0; i < n; i++) {
        double e, h, b, d;
        nb_usbmon_split(u, i, &e, &h, &b, &d);
        parts[0].v[parts[0].n++] = d;
        parts[1].v[parts[1].n++] = b;
        if (isfinite(h))
            parts[2].v[parts[2].n++] = h;
        if (csv) {
            fprintf(csv, "%zu,%llu,%llu,%llu,%.3f,%.3f", i,
                    (unsigned long long)ech[i].out_s,
                    (unsigned long long)ech[i].out_c,
                    (unsigned long long)ech[i].in_c, d, b);
            bench_csv_num(csv, h);
            fputc('\n', csv);
        }
    }
    for (int k = 0; k < 3; k++)
        cp_summarize(parts[k].v, parts[k].n, &parts[k].s);
}

static void report_json(FILE *o, const char *src, const char *fmt,
                        const nb_usbmon_counts *c, const usb_part *parts)
{
    jw w;
    jw_init(&w, o, 1);
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
        bench_json_num(&w, "median_us", parts[k].s.median);
        bench_json_num(&w, "p10_us", parts[k].s.p10);
        bench_json_num(&w, "p90_us", parts[k].s.p90);
        bench_json_num(&w, "min_us", parts[k].s.min);
        bench_json_num(&w, "max_us", parts[k].s.max);
        bench_json_num(&w, "mean_us", parts[k].s.mean);
        bench_json_num(&w, "sd_us", parts[k].s.sd);
        jw_obj_end(&w);
    }
    jw_obj_end(&w);
    jw_finish(&w);
}

static void report_text(FILE *o, const char *src, const char *fmt,
                        const nb_usbmon_counts *c, const usb_part *parts)
{
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
        const cp_summary *s = &parts[k].s;
        fprintf(o, "%-8s %8zu %10.1f %10.1f %10.1f %10.1f %6.1f%%\n",
                parts[k].name, s->n, s->median, s->p10, s->p90, s->max,
                sum > 0 && isfinite(s->median) ? 100 * s->median / sum : NAN);
    }
    fputs("\ndevice: OUT transfer done -> reply IN transfer done\n"
          "bus:    OUT transfer submitted -> done\n"
          "host:   reply IN done -> next OUT submitted (one echo at a time)\n", o);
}

static int bench_usbmon_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    usb_args a = {.duration = 10,
                  .cfg = {.bus = -1, .dev = -1, .mode = NB_USB_AUTO}};
    int rc = parse(ctx, argc, argv, pos, &a);
    if (rc != CLI_OK)
        return rc < 0 ? cli_parse_exit(rc) : rc;
    nb_usbmon *u = capture(ctx, &a);
    if (!u)
        return CLI_FAIL;
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
    rc = cli_out_open(ctx) < 0 ? -1 : 0;
    split_echoes(u, parts, rc == 0 && ctx->csv ? ctx->out : NULL);
    const char *fmt = c->text ? "usbmon text" : c->dlt == NB_DLT_USB_LINUX
                                ? "pcap, DLT_USB_LINUX (189)"
                                : "pcap, DLT_USB_LINUX_MMAPPED (220)";
    if (rc == 0 && ctx->json)
        report_json(ctx->out, a.src, fmt, c, parts);
    else if (rc == 0 && !ctx->csv)
        report_text(ctx->out, a.src, fmt, c, parts);
    for (int k = 0; k < 3; k++)
        free(parts[k].v);
    nb_usbmon_free(u);
    return rc < 0 ? CLI_FAIL : CLI_OK;
}
