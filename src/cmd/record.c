/* codeplace record: PC samples from a debug probe while the board works. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/probeopt.h"
#include "cli/tgtopt.h"
#include "cmd/commands.h"
#include "image/image.h"
#include "probe/probe.h"
#include "target/target.h"
#include "util/jw.h"
#include "util/sig.h"

enum {
    O_GDB, O_OPENOCD, O_ELF, O_TARGET, O_CACHE, O_AS, O_HALT, O_PCSR, O_RATE, O_DURATION,
    O_SAMPLES, O_CORE, O_TIMEOUT, O_TOP, O_NOPT
};

static const cli_opt opts[] = {
    CLI_PROBE_OPTS(O_GDB, O_OPENOCD, O_CORE, O_TIMEOUT),
    [O_ELF] = {"elf", 'e', "FILE", "the firmware running on the target "
               "(its hash goes in the header; functions in the summary)"},
    [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target name or file: DWT_PCSR "
                                    "address, CPU"),
    [O_CACHE] = CLI_TGT_OPT_CACHE(0),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_HALT] = {"halt", 0, NULL, "sample by halting: interrupt, read the PC, "
                "continue (automatic when DWT_PCSR reads 0 or never "
                "changes)"},
    [O_PCSR] = {"pcsr", 0, NULL, "sample DWT_PCSR without halting, or fail "
                "(no fall back to halting)"},
    [O_RATE] = {"rate", 'r', "HZ", "samples per second (default: PCSR as fast "
                "as the link allows; halting lets the core run about as "
                "long as each stop)"},
    [O_DURATION] = {"duration", 'd', "SECONDS", "stop after this long "
                    "(default: until Ctrl-C)"},
    [O_SAMPLES] = {"samples", 0, "N", "stop after N samples (N > 0)"},
    [O_TOP] = {"top", 0, "N", "functions in the summary (default 10; needs "
               "--elf)"},
    [O_NOPT] = {0},
};

static int cmd_record_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_record = {
    .name = "record",
    .fn = cmd_record_fn,
    .summary = "sample the program counter through a debug probe",
    .usage = "--gdb HOST[:PORT]|--openocd HOST[:PORT] -o SAMPLES [--elf ELF] "
             "[--target T] [--halt] [--rate HZ] [--duration S]",
    .description =
        "Samples the PC of a running board through a probe's own server and\n"
        "writes a samples file (docs/formats/samples.md). By default, on every\n"
        "core (ARMv6-M too: the Cortex-M0+ of the RP2040 has one), it reads\n"
        "DWT_PCSR (0xE000101C) without halting, as fast as the link allows;\n"
        "this needs memory reads while the core runs (OpenOCD's Tcl port, or\n"
        "a GDB stub with non-stop mode). 16 reads check the register first:\n"
        "when they all give 0 or one value, or the stub cannot read while the\n"
        "core runs, record samples by halting and says why. --halt forces\n"
        "that: it interrupts the core, reads the PC and lets it run again;\n"
        "the time it was stopped is reported. Samples are flushed to the file as\n"
        "they come: Ctrl-C or a probe that goes away keeps what was measured.\n"
        "See docs/probe.md.\n\n"
        "example:\n"
        "  codeplace record --openocd localhost --elf fw.elf --target rp2040 \\\n"
        "      --duration 10 -o samples.txt\n"
        "  codeplace record --gdb localhost:3333 --elf fw.elf --target rp2040 \\\n"
        "      --rate 1000 -o samples.txt",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};


static void progress(void *arg, const probe_sample_stats *st)
{
    cli_ctx *ctx = arg;
    if (ctx->verbose < 0)
        return;
    fprintf(stderr, "\rrecording: %llu samples in %.1f s (%.0f/s)",
            (unsigned long long)st->samples, st->elapsed_s,
            st->elapsed_s > 0 ? st->samples / st->elapsed_s : 0.0);
    if (st->halted_s > 0)
        fprintf(stderr, ", target stopped %.1f%% of the time",
                100.0 * st->halted_s / st->elapsed_s);
    fputs("   ", stderr); /* covers a longer line before */
    fflush(stderr);
}

typedef struct fshare {
    const char *name;
    uint64_t count;
} fshare;

static int cmp_share(const void *a, const void *b)
{
    const fshare *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Reads the samples file back and sums counts per function. */
static fshare *per_function(const char *path, const img *im, size_t *n,
                            uint64_t *total)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = img_nfuncs(im) + 3;
    fshare *t = calloc(cap, sizeof *t);
    if (!t) {
        fclose(f);
        return NULL;
    }
    *n = 0;
    *total = 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned long a;
        unsigned long long c;
        if (line[0] == '#' || sscanf(line, "%lx %llu", &a, &c) != 2)
            continue;
        const img_func *fn = a == 0xffffffffUL ? NULL
                                               : img_lookup(im, (uint32_t)a & ~1u);
        const char *name = fn ? fn->pretty
                              : a == 0xffffffffUL ? "(halted)" : "(unknown)";
        size_t k = 0;
        while (k < *n && strcmp(t[k].name, name))
            k++;
        if (k == *n && *n < cap) {
            t[k].name = name;
            (*n)++;
        }
        if (k < *n)
            t[k].count += c;
        *total += c;
    }
    fclose(f);
    qsort(t, *n, sizeof *t, cmp_share);
    return t;
}

/* Halting at --rate R: fewer than 90 % of R samples per second taken.
 * The rate needs a stop and the sampler's wake-up well under a period. */
static void warn_rate(const probe_sample_stats *st, double rate)
{
    if (!(rate > 0) || st->samples < 2 || !(st->elapsed_s > 0))
        return;
    double got = (double)st->samples / st->elapsed_s;
    if (got >= 0.9 * rate)
        return;
    double n = (double)st->samples;
    cli_warn("--rate %.0f: %.0f samples/s taken: a stop took %.0f us and "
             "the sampler woke %.0f us late on average, against a period of "
             "%.0f us", rate, got, 1e6 * st->halted_s / n,
             1e6 * st->late_s / n, 1e6 / rate);
}

/* Shares of the samples (halted ones not counted) in no function of the
 * ELF past which the function shares get a warning, and past which they
 * mean nothing (exit 1): the ELF is not what the board runs, or the
 * board spends its time in code the ELF does not hold (ROM, code loaded
 * to RAM). */
#define UNKNOWN_WARN 0.10
#define UNKNOWN_FAIL 0.50

/* The functions' shares of a recording, from the samples file. */
typedef struct shares {
    fshare *fs;      /* by count, NULL without --elf */
    size_t n;
    uint64_t total;
    double unknown;  /* share in no function (of those not halted), or -1 */
} shares;

static void shares_read(shares *sh, const char *path, const img *im)
{
    memset(sh, 0, sizeof *sh);
    sh->unknown = -1;
    if (!im || !(sh->fs = per_function(path, im, &sh->n, &sh->total)))
        return;
    uint64_t unknown = 0, halted = 0;
    for (size_t i = 0; i < sh->n; i++) {
        if (!strcmp(sh->fs[i].name, "(unknown)"))
            unknown = sh->fs[i].count;
        else if (!strcmp(sh->fs[i].name, "(halted)"))
            halted = sh->fs[i].count;
    }
    if (sh->total > halted)
        sh->unknown = (double)unknown / (double)(sh->total - halted);
}

static void summary(cli_ctx *ctx, const probe_sample_stats *st,
                    probe_mode mode, const char *why, const char *path,
                    const shares *sh, const char *elf, unsigned top)
{
    double rate = st->elapsed_s > 0 ? st->samples / st->elapsed_s : 0;
    const char *end = st->stopped_by == 0   ? "duration"
                      : st->stopped_by == 1 ? "interrupted"
                      : st->stopped_by == 3 ? "count"
                                            : "probe error";
    const fshare *fs = sh->fs;
    size_t nf = sh->n;
    uint64_t total = sh->total;
    FILE *o = stdout;
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 1);
        jw_obj_begin(&w);
        jw_key(&w, "samples_file");
        jw_str(&w, path);
        jw_key(&w, "mode");
        jw_str(&w, mode == PROBE_MODE_PCSR ? "pcsr" : "halt");
        jw_key(&w, "mode_reason");
        jw_str(&w, why);
        jw_key(&w, "samples");
        jw_uint(&w, st->samples);
        jw_key(&w, "seconds");
        jw_double(&w, st->elapsed_s);
        jw_key(&w, "rate_hz");
        jw_double(&w, rate);
        jw_key(&w, "halted_samples");
        jw_uint(&w, st->halted);
        jw_key(&w, "stopped_s");
        jw_double(&w, st->halted_s);
        jw_key(&w, "stop_per_sample_us");
        jw_double(&w, st->samples ? 1e6 * st->halted_s / st->samples : 0);
        if (mode == PROBE_MODE_HALT) {
            double n = st->samples ? (double)st->samples : 1;
            jw_key(&w, "stop_us");
            jw_obj_begin(&w);
            jw_key(&w, "halt"); jw_double(&w, 1e6 * st->halt_s / n);
            jw_key(&w, "read_pc"); jw_double(&w, 1e6 * st->read_s / n);
            jw_key(&w, "resume"); jw_double(&w, 1e6 * st->resume_s / n);
            jw_obj_end(&w);
            jw_key(&w, "late_us");
            jw_double(&w, 1e6 * st->late_s / n);
        }
        jw_key(&w, "link");
        jw_obj_begin(&w);
        jw_key(&w, "waits"); jw_uint(&w, st->link.waits);
        jw_key(&w, "sends"); jw_uint(&w, st->link.sends);
        jw_key(&w, "bytes_out"); jw_uint(&w, st->link.bytes_out);
        jw_key(&w, "bytes_in"); jw_uint(&w, st->link.bytes_in);
        jw_obj_end(&w);
        jw_key(&w, "ended_by");
        jw_str(&w, end);
        jw_key(&w, "error");
        jw_str(&w, st->stopped_by == 2 ? st->error.msg : NULL);
        jw_key(&w, "unknown_share");
        if (sh->unknown < 0)
            jw_null(&w);
        else
            jw_double(&w, sh->unknown);
        jw_key(&w, "functions");
        jw_arr_begin(&w);
        for (size_t i = 0; fs && i < nf && i < top; i++) {
            jw_obj_begin(&w);
            jw_key(&w, "name");
            jw_str(&w, fs[i].name);
            jw_key(&w, "samples");
            jw_uint(&w, fs[i].count);
            jw_key(&w, "share");
            jw_double(&w, total ? (double)fs[i].count / total : 0);
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        jw_obj_end(&w);
        jw_finish(&w);
    } else {
        char b[32];
        fprintf(o, "samples:   %s in %.2f s (%.0f/s), %s, ended by %s\n",
                cp_commas(b, st->samples), st->elapsed_s, rate,
                mode == PROBE_MODE_PCSR ? "DWT_PCSR" : "halting", end);
        if (mode == PROBE_MODE_PCSR)
            fprintf(o, "halted:    %llu samples read 0xFFFFFFFF\n",
                    (unsigned long long)st->halted);
        else
            fprintf(o, "intrusion: target stopped %.1f%% of the time, "
                    "%.0f us per sample (longest %.0f us)\n",
                    st->elapsed_s > 0 ? 100 * st->halted_s / st->elapsed_s : 0,
                    st->samples ? 1e6 * st->halted_s / st->samples : 0,
                    1e6 * st->max_halt_s);
        if (mode == PROBE_MODE_HALT && st->samples)
            fprintf(o, "stop:      per sample %.0f us to halt (interrupt to "
                    "stop reply), %.0f us to read the PC, %.0f us to resume\n",
                    1e6 * st->halt_s / (double)st->samples,
                    1e6 * st->read_s / (double)st->samples,
                    1e6 * st->resume_s / (double)st->samples);
        if (mode == PROBE_MODE_HALT && st->samples && st->late_s > 0)
            fprintf(o, "late:      the sampler woke %.0f us after a sample "
                    "was due, on average (the machine's load)\n",
                    1e6 * st->late_s / (double)st->samples);
        if (st->samples)
            fprintf(o, "link:      per sample %.2f waits for the probe, %.2f "
                    "writes, %.0f bytes out, %.0f bytes in\n",
                    (double)st->link.waits / (double)st->samples,
                    (double)st->link.sends / (double)st->samples,
                    (double)st->link.bytes_out / (double)st->samples,
                    (double)st->link.bytes_in / (double)st->samples);
        fprintf(o, "mode:      %s: %s\n",
                mode == PROBE_MODE_PCSR ? "DWT_PCSR" : "halting", why);
        fprintf(o, "written:   %s\n", path);
        if (sh->unknown > UNKNOWN_WARN)
            fprintf(o, "warning:   %.1f%% of the samples are in no function "
                    "of %s%s\n", 100 * sh->unknown, elf,
                    sh->unknown > UNKNOWN_FAIL ? ": the shares below are not "
                    "the firmware's" : "");
        if (fs && nf) {
            fprintf(o, "\n%-32s %10s %7s\n", "function", "samples", "share");
            for (size_t i = 0; i < nf && i < top; i++)
                fprintf(o, "%-32s %10s %6.1f%%\n", fs[i].name,
                        cp_commas(b, fs[i].count),
                        total ? 100.0 * fs[i].count / total : 0);
        }
    }
}

/* The command line, parsed. */
typedef struct rec_args {
    const char *elf;
    cli_tgt to;
    int halt, pcsr;
    double rate, duration;
    uint32_t top;
    uint64_t max_samples;
    cli_probe_args pa;
} rec_args;

static int rec_opt(cli_ctx *ctx, int o, const char *arg, rec_args *a)
{
    switch (o) {
    case O_GDB:
    case O_OPENOCD:
    case O_CORE:
    case O_TIMEOUT:
        if (cli_probe_take(ctx, &a->pa, opts[o].name, arg) < 0)
            return CLI_USAGE;
        break;
    case O_ELF: a->elf = arg; break;
    case O_TARGET: a->to.name = arg; break;
    case O_CACHE: a->to.cache = arg; break;
    case O_AS: a->to.as = arg; break;
    case O_HALT: a->halt = 1; break;
    case O_PCSR: a->pcsr = 1; break;
    case O_RATE:
        if (cli_arg_double(ctx, "rate", arg, &a->rate) < 0)
            return CLI_USAGE;
        if (a->rate <= 0 || a->rate > 1e6)
            return cli_usage_error(ctx, "--rate: give 1 to 1000000 Hz");
        break;
    case O_DURATION:
        if (cli_arg_double(ctx, "duration", arg, &a->duration) < 0)
            return CLI_USAGE;
        if (a->duration <= 0)
            return cli_usage_error(ctx, "--duration: give seconds > 0");
        break;
    case O_SAMPLES:
        if (cli_arg_u64(ctx, "samples", arg, 1, &a->max_samples) < 0)
            return CLI_USAGE;
        if (a->max_samples == 0)
            return cli_usage_error(ctx, "--samples: give N > 0 (without "
                                   "--samples, record stops at "
                                   "--duration or Ctrl-C)");
        break;
    case O_TOP:
        if (cli_arg_u32(ctx, "top", arg, 0, &a->top) < 0)
            return CLI_USAGE;
        break;
    }
    return CLI_OK;
}

/* CLI_OK, the status of a usage error, or cli_next's CLI_HELPED or
 * CLI_ERR. */
static int parse(cli_ctx *ctx, int argc, char **argv, char **pos,
                 rec_args *a)
{
    const char *arg;
    int rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        if (rec_opt(ctx, rc, arg, a) != CLI_OK)
            return CLI_USAGE;
    if (rc != CLI_END)
        return rc; /* CLI_HELPED or CLI_ERR */
    if (p.npos)
        return cli_usage_error(ctx, "record: unexpected argument '%s'", pos[0]);
    if (cli_probe_check(ctx, &a->pa) < 0)
        return CLI_USAGE;
    if (!ctx->out_path || !strcmp(ctx->out_path, "-"))
        return cli_usage_error(ctx, "record: give the samples file with -o "
                               "FILE");
    if (a->halt && a->pcsr)
        return cli_usage_error(ctx, "record: --halt and --pcsr exclude each "
                               "other");
    return cli_tgt_resolve(ctx, &a->to, NULL, NULL, 0);
}

/* How to sample: DWT_PCSR when the probe reads while the core runs and
 * the register samples, else by halting; why in why. -1 after an error. */
static int choose_mode(cli_ctx *ctx, const rec_args *a, probe *pr,
                       uint32_t pcsr_addr, probe_mode *mode, char *why,
                       size_t cap)
{
    cp_err err;
    if (*mode == PROBE_MODE_PCSR && !probe_reads_while_running(pr)) {
        snprintf(why, cap, "the GDB stub cannot read memory while "
                 "the target runs (no non-stop mode)");
        cli_info(ctx, "note: the GDB stub at %s cannot read memory while the "
                 "target runs; sampling by halting", probe_addr(pr));
        *mode = PROBE_MODE_HALT;
    }
    if (*mode != PROBE_MODE_PCSR)
        return 0;
    int changed;
    cp_err e2;
    if (probe_dwt_enable(pr, &changed, &e2) < 0)
        cli_warn("cannot check DEMCR.TRCENA (DWT enable): %s", e2.msg);
    else if (changed)
        cli_info(ctx, "enabled the DWT (DEMCR.TRCENA was 0)");
    probe_pcsr_verdict vd;
    if (probe_pcsr_test(pr, pcsr_addr, 16, &vd, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (vd == PROBE_PCSR_HALTED || (vd != PROBE_PCSR_OK && a->pcsr)) {
        cli_error("%s%s", err.msg, vd == PROBE_PCSR_HALTED ? ""
                  : "; sample with --halt");
        return -1;
    }
    if (vd != PROBE_PCSR_OK) {
        snprintf(why, cap, "%s", err.msg);
        cli_info(ctx, "note: %s; sampling by halting", err.msg);
        *mode = PROBE_MODE_HALT;
    }
    return 0;
}

/* The recording into the samples file -o. -1 after an error. */
static int sample(cli_ctx *ctx, const rec_args *a, probe *pr,
                  probe_mode mode, uint32_t pcsr_addr, const char *tname,
                  const img *im, probe_sample_stats *st)
{
    cp_err err;
    probe_samples_hdr h = {
        .source = mode == PROBE_MODE_PCSR ? "probe-pcsr" : "probe-halt",
        .target = tname,
        .elf_hash = im ? img_hash(im) : "",
        .rate_hz = a->rate,
    };
    probe_samples *out = probe_samples_create(ctx->out_path, &h, &err);
    if (!out) {
        cli_error("%s", err.msg);
        return -1;
    }
    cp_sig_catch(); /* SIGINT, SIGTERM, SIGHUP stop the recording */
    probe_sampler cfg = {
        .mode = mode, .pcsr_addr = pcsr_addr, .rate_hz = a->rate,
        .duration_s = a->duration, .max_samples = a->max_samples,
        .stop = &cp_sig_stop, .progress = progress,
        .progress_arg = ctx, .progress_s = 1.0,
    };
    cli_info(ctx, "recording from %s (%s)%s", probe_addr(pr),
             mode == PROBE_MODE_PCSR ? "DWT_PCSR" : "halting",
             a->duration > 0 || a->max_samples ? "" : "; Ctrl-C stops");
    int r = probe_sample_run(pr, &cfg, out, st, &err);
    cp_sig_restore();
    if (ctx->verbose >= 0 && st->elapsed_s >= 1.0)
        fputc('\n', stderr);
    if (probe_samples_finish(out, st->elapsed_s, r < 0 ? NULL : &err) < 0 ||
        r < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

/* What the recording says, and the exit status. */
static int verdict(cli_ctx *ctx, const rec_args *a, const img *im,
                   const probe_sample_stats *st, probe_mode mode,
                   const char *why)
{
    if (st->stopped_by == 2)
        cli_error("%s; kept the %llu samples measured before it in '%s'",
                  st->error.msg, (unsigned long long)st->samples,
                  ctx->out_path);
    if (mode == PROBE_MODE_PCSR && st->samples && st->distinct <= 1)
        cli_warn("DWT_PCSR hardly changed: the core may sleep or be stuck");
    if (mode == PROBE_MODE_HALT)
        warn_rate(st, a->rate);
    shares sh;
    shares_read(&sh, ctx->out_path, im);
    summary(ctx, st, mode, why, ctx->out_path, &sh, a->elf, a->top);
    int status = st->stopped_by == 2 ? CLI_FAIL : CLI_OK;
    if (sh.unknown > UNKNOWN_WARN)
        cli_warn("%.1f%% of the samples are in no function of %s: is it the "
                 "image the board runs? (code in ROM or loaded to RAM from "
                 "elsewhere counts here too)%s", 100 * sh.unknown, a->elf,
                 sh.unknown > UNKNOWN_FAIL ? "; the function shares mean "
                 "nothing" : "");
    if (sh.unknown > UNKNOWN_FAIL)
        status = CLI_FAIL;
    free(sh.fs);
    return status;
}

static int cmd_record_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    rec_args a = {.top = 10};
    int rc = parse(ctx, argc, argv, pos, &a);
    if (rc != CLI_OK)
        return rc < 0 ? cli_parse_exit(rc) : rc;
    const tgt *t = a.to.base ? &a.to.t : NULL;
    char tname[32] = "";
    if (t)
        tgt_header_name(t, tname, sizeof tname);
    cp_err err;
    img *im = NULL;
    if (a.elf && !(im = img_open(a.elf, NULL, &err))) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    if (im && t && cli_tgt_check_image(ctx, t, im) != CLI_OK) {
        img_free(im);
        return CLI_FAIL;
    }
    /* DWT_PCSR first on every core, ARMv6-M included (optional there:
     * ARMv6-M Architecture Reference Manual, DDI 0419C, C1.7.2; the
     * Cortex-M0+ has it with its DWT, Cortex-M0+ TRM 7.1.3); halting only
     * when asked or when the register turns out not to sample. */
    probe_mode mode = a.halt ? PROBE_MODE_HALT : PROBE_MODE_PCSR;
    char why[sizeof err.msg];
    snprintf(why, sizeof why, "%s", a.halt ? "--halt" : "DWT_PCSR changes "
             "while the core runs");
    uint32_t pcsr_addr = t && t->dwt_pcsr ? t->dwt_pcsr : 0xe000101cu;
    if (a.pa.gdb && mode == PROBE_MODE_PCSR)
        a.pa.po.nonstop = a.pcsr ? 1 : 2;
    probe *pr = cli_probe_open(ctx, &a.pa);
    if (!pr) {
        img_free(im);
        return CLI_FAIL;
    }
    int status = CLI_FAIL;
    probe_sample_stats st;
    if (choose_mode(ctx, &a, pr, pcsr_addr, &mode, why, sizeof why) == 0 &&
        sample(ctx, &a, pr, mode, pcsr_addr, tname, im, &st) == 0)
        status = verdict(ctx, &a, im, &st, mode, why);
    probe_close(pr);
    img_free(im);
    return status;
}
