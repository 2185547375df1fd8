/* codeplace samples: convert what a profiler produced into a samples file:
 * OpenOCD's gmon.out, the on-target profiler's dump, or a trace (sampled
 * every N instructions or at Poisson-spaced instants). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tgtopt.h"
#include "cmd/commands.h"
#include "image/image.h"
#include "samples/samples.h"
#include "target/target.h"
#include "trace/trace.h"

enum {
    O_EVERY, O_POISSON, O_RATE, O_SEED, O_ELF, O_TARGET, O_CACHE, O_AS, O_PARTIAL, O_NOPT
};

static const cli_opt opts[] = {
    [O_EVERY] = {"every", 'N', "N", "trace: one sample every N instructions"},
    [O_POISSON] = {"poisson", 'P', "N", "trace: samples at random instants, "
                   "N instructions apart on average (seeded)"},
    [O_RATE] = {"rate", 'r', "HZ", "trace: mimic a probe sampling HZ times a "
                "second on the target's clock (with --poisson's spacing "
                "unless --every is given)"},
    [O_SEED] = {"seed", 0, "S", "seed of the Poisson spacing (default 1)"},
    [O_ELF] = {"elf", 'e', "FILE", "the image, as the ELF argument"},
    [O_CACHE] = CLI_TGT_OPT_CACHE(0),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_TARGET] = {"target", 't', "NAME|FILE", "target name or file (clock for --rate; "
                  "stamped into the header)"},
    [O_PARTIAL] = {"partial", 0, NULL, "trace: use a trace cut short up to its "
                   "last complete block"},
    [O_NOPT] = {0},
};

static int cmd_samples_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_samples = {
    .name = "samples",
    .fn = cmd_samples_fn,
    .summary = "convert gmon.out, profiler dumps and traces into a samples "
               "file",
    .usage = "INPUT [ELF] [-o SAMPLES] [--every N | --poisson N | --rate HZ]",
    .description =
        "Writes a samples file (docs/formats/samples.md) from INPUT, which is\n"
        "recognised from its contents:\n"
        "  gmon.out   OpenOCD's `profile SECONDS gmon.out` (one histogram)\n"
        "  dump       the on-target profiler's CPDUMP text, checked by CRC;\n"
        "             a dump cut short or corrupted is refused\n"
        "  trace      a codeplace trace, sampled every N instructions or at\n"
        "             Poisson-spaced instants (--seed makes it repeatable)\n"
        "  samples    a samples file (checked and normalised)\n"
        "Samples at 0xffffffff (core halted) and outside every function are\n"
        "kept.\n\n"
        "example:\n"
        "  codeplace samples gmon.out fw.elf -o samples.txt\n"
        "  codeplace samples console.log -o samples.txt\n"
        "  codeplace samples run.trace fw.elf --target rp2040 --rate 4000 -o s.txt\n"
        "  codeplace samples run.trace --every 1000 -o s.txt",
    .opts = opts,
    .globals = CLI_G_OUT | CLI_G_VERB,
};

static int is_trace(const char *path)
{
    FILE *f = fopen(path, "rb");
    char m[8] = {0};
    if (!f)
        return 0;
    size_t n = fread(m, 1, 8, f);
    fclose(f);
    return n == 8 && !memcmp(m, "CPTRACE", 8);
}

static int cmd_samples_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *arg, *elf = NULL;
    cli_tgt to = {0};
    uint64_t every = 0, poisson = 0, seed = 1;
    double rate = 0;
    int partial = 0, rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_EVERY:
            if (cli_arg_u64(ctx, "--every", arg, 1, &every) < 0)
                return CLI_USAGE;
            break;
        case O_POISSON:
            if (cli_arg_u64(ctx, "--poisson", arg, 1, &poisson) < 0)
                return CLI_USAGE;
            break;
        case O_RATE:
            if (cli_arg_double(ctx, "--rate", arg, &rate) < 0)
                return CLI_USAGE;
            if (!(rate > 0))
                return cli_usage_error(ctx, "--rate: give a rate above 0");
            break;
        case O_SEED:
            if (cli_arg_u64(ctx, "--seed", arg, 0, &seed) < 0)
                return CLI_USAGE;
            break;
        case O_ELF: elf = arg; break;
        case O_TARGET: to.name = arg; break;
        case O_CACHE: to.cache = arg; break;
        case O_AS: to.as = arg; break;
        case O_PARTIAL: partial = 1; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (cli_elf_arg(ctx, pos, &p.npos, elf, 0, &elf) < 0)
        return CLI_USAGE;
    if (p.npos != 1)
        return cli_usage_error(ctx, "samples: give one input file (and the "
                               "ELF)");
    if ((every != 0) + (poisson != 0) > 1)
        return cli_usage_error(ctx, "samples: --every and --poisson exclude "
                               "each other");
    if (rate > 0 && (every || poisson))
        return cli_usage_error(ctx, "samples: --rate sets the spacing; drop "
                               "--every/--poisson");
    const tgt *tg = NULL;
    const char *in = pos[0];
    int trace = is_trace(in);
    /* --target, else (for a trace) the target its header names. */
    if ((rc = cli_tgt_resolve(ctx, &to, trace ? in : NULL, NULL, 0)) != CLI_OK)
        return rc;
    if (to.base)
        tg = &to.t;
    if (!trace && (every || poisson || rate > 0 || partial))
        return cli_usage_error(ctx, "samples: --every, --poisson, --rate and "
                               "--partial are for traces; '%s' is not one", in);

    cp_err err;
    img *im = NULL;
    if (elf && !(im = img_open(elf, NULL, &err))) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    smp *s = NULL;
    if (trace) {
        smp_trace_opts o = {.mode = every ? SMP_EVERY : SMP_POISSON,
                            .period = every ? every : poisson,
                            .seed = seed, .im = im, .partial = partial};
        if (rate > 0 || !o.period) {
            /* The trace header names the target when --target does not. */
            if (!tg) {
                cli_error("%s: --rate needs the target's clock: give --target",
                          in);
                img_free(im);
                return CLI_USAGE;
            }
            if (rate <= 0) {
                cli_error("%s: say how to sample the trace: --every N, "
                          "--poisson N or --rate HZ", in);
                img_free(im);
                return CLI_USAGE;
            }
            double period = (double)tg->clock_hz / (tg->cpi * rate);
            o.period = period < 1 ? 1 : (uint64_t)(period + 0.5);
            cli_info(ctx, "%s: %.10g Hz at %" PRIu32 " Hz and %.2f cycles per "
                     "instruction: one sample per %" PRIu64 " instructions",
                     tg->name, rate, tg->clock_hz, tg->cpi, o.period);
        }
        uint64_t insns = 0;
        s = smp_from_trace(in, &o, &insns, &err);
        if (s) {
            if (tg) {
                tgt_header_name(tg, s->target, sizeof s->target);
                double secs = (double)insns * tg->cpi / tg->clock_hz;
                s->duration_s = secs;
                s->rate_hz = secs > 0 ? (double)smp_total(s) / secs : 0;
            }
            cli_info(ctx, "%s: %" PRIu64 " instructions, %" PRIu64 " samples",
                     in, insns, smp_total(s));
        }
    } else {
        smp_kind kind;
        s = smp_load(in, &kind, &err);
        if (s && tg)
            tgt_header_name(tg, s->target, sizeof s->target);
        if (s && im && !s->elf[0])
            snprintf(s->elf, sizeof s->elf, "%s", img_hash(im));
        if (s)
            cli_info(ctx, "%s: %s, %zu addresses, %" PRIu64 " samples", in,
                     smp_kind_name(kind), s->n, smp_total(s));
    }
    if (s && im && s->elf[0] && strcmp(s->elf, img_hash(im)))
        cli_warn("%s was recorded from image %s, but %s is %s (another "
                 "build): the names may not match the addresses", in, s->elf,
                 elf, img_hash(im));
    if (s && trace && smp_get_extra(s, "unfinished_iterations_dropped"))
        cli_warn("%s: the recording ended inside its last iteration: 1 "
                 "unfinished iteration dropped, complete iterations only", in);
    img_free(im);
    if (!s) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    int status = CLI_OK;
    if (cli_out_open(ctx) < 0)
        status = CLI_FAIL;
    else if (smp_write(s, ctx->out, &err) < 0) {
        cli_error("cannot write the samples: %s", err.msg);
        status = CLI_FAIL;
    }
    smp_free(s);
    return status;
}
