/* codeplace trace: record what the cache sees while firmware runs on the
 * virtual board, import a QEMU execution log, or summarise a trace. This
 * file: the options, the command line and --from-qemu; trace-run.c
 * records on the board, trace-qemu.c runs QEMU, trace-info.c reads a
 * trace back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tgtopt.h"
#include "cmd/trace.h"
#include "cmd/commands.h"
#include "emu/emu.h"
#include "image/image.h"
#include "target/target.h"
#include "trace/qemu.h"
#include "trace/trace.h"
#include "bench/udp.h"

enum {
    O_TARGET, O_CACHE, O_AS, O_MAP, O_INIT, O_ITER, O_N, O_MARK, O_ENTRY, O_SP, O_PERIPH,
    O_MAXI, O_TIMEOUT, O_RESULT, O_COUNT, O_INFO, O_ITERS, O_RECORDS, O_PARTIAL,
    O_QEMU, O_ELF, O_QRUN, O_SKIP, O_UDP, O_RATE, O_SIZE, O_RUNCMD, O_EXPECT,
    O_ROM, O_UART, O_NOSTART, O_NOPT
};

static const cli_opt opts[] = {
    [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target name or file: CPU model "
                                    "and memory map ('codeplace target')"),
    [O_CACHE] = CLI_TGT_OPT_CACHE(0),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_MAP] = {"map", 'm', "FILE", "the GNU ld map file of the same build"},
    [O_INIT] = {"init", 0, "SYM", "harness mode: function called once first"},
    [O_ITER] = {"iter", 0, "SYM", "harness mode: function called once per "
                "iteration"},
    [O_N] = {"iterations", 'n', "N", "iterations to record (default 100)"},
    [O_MARK] = {"mark", 0, "SYM", "free-run mode: an iteration starts each "
                "time the PC reaches SYM"},
    [O_ENTRY] = {"entry", 0, "SYM", "free-run mode: start here instead of "
                 "the reset handler"},
    [O_SP] = {"sp", 0, "ADDR", "initial stack pointer (default: the vector "
              "table's)"},
    [O_PERIPH] = {"periph", 0, "BASE:SIZE", "more peripheral memory: reads "
                  "return zero, writes are counted (repeatable)"},
    [O_MAXI] = {"max-insns", 0, "N", "stop when one iteration (or start-up) "
                "runs more instructions (default 100M; 0: no limit)"},
    [O_TIMEOUT] = {"timeout", 0, "SECONDS", "stop after this much wall-clock "
                   "time (the trace so far is kept)"},
    [O_RESULT] = {"result", 0, "SYM", "print this 32-bit variable at the end"},
    [O_COUNT] = {"count-each", 0, NULL, "count instructions with a hook on "
                 "each one and print per-iteration counts (no trace; a check "
                 "of the block-based count)"},
    [O_INFO] = {"info", 0, "TRACE", "summarise a trace file"},
    [O_ITERS] = {"per-iteration", 0, NULL, "with --info or --count-each: list "
                 "the instructions of every iteration"},
    [O_RECORDS] = {"records", 0, NULL, "with --info: print every record as "
                   "text (fetch ADDR LEN NINSN [u], read ADDR LEN, mark N, "
                   "ctx N)"},
    [O_PARTIAL] = {"partial", 0, NULL, "with --info: read a file that was cut "
                   "short up to its last complete block"},
    [O_QEMU] = {"from-qemu", 0, "LOG", "convert a QEMU log (-d exec,nochain "
                "-singlestep) of the ELF"},
    [O_ELF] = {"elf", 'e', "FILE", "the ELF, as the ELF argument (with "
               "--from-qemu: the image QEMU ran)"},
    [O_QRUN] = {"qemu", 0, "MACHINE", "run ELF in qemu-system-arm -M MACHINE "
                "(mps2-an385, mps2-an500, mps2-an505, microbit) with the "
                "codeplace-qemu.so recorder; needs --mark"},
    [O_SKIP] = {"skip", 0, "K", "with --qemu: the first K marks are warm-up "
                "(not iterations)"},
    [O_UDP] = {"udp", 0, "PORT", "with --qemu: forward a free 127.0.0.1 UDP "
               "port to the guest's PORT, wait for it to answer, send echo "
               "requests"},
    [O_RATE] = {"rate", 0, "R", "with --udp: at most R echo requests per "
                "second, one at a time (default 100)"},
    [O_SIZE] = {"size", 0, "BYTES", "with --udp: request size (default 64)"},
    [O_RUNCMD] = {"run", 0, "CMD", "with --udp: run CMD (sh -c) from the "
                  "start for traffic instead, no probe or echo of codeplace's; "
                  "$CODEPLACE_UDP_HOST:$CODEPLACE_UDP_PORT reach the guest"},
    [O_EXPECT] = {"expect", 0, "N", "harness mode: the iteration function "
                  "must return N (r0); a run with another return fails"},
    [O_ROM] = {"rom", 0, "FILE", "the chip's boot ROM image (RP2040: 16 KiB "
                "at 0, read from a board with a probe, e.g. OpenOCD "
                "'dump_image rom.bin 0 16384')"},
    [O_UART] = {"uart", 0, "FILE", "write what the firmware sent on its UARTs "
                "to FILE (-v shows it)"},
    [O_NOSTART] = {"no-startup", 0, NULL, "harness mode on an image with the "
                   "chip's start-up (pico-sdk): copy .data and zero .bss "
                   "instead of running the start-up to main or --init"},
    [O_NOPT] = {0},
};

static int cmd_trace_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_trace = {
    .name = "trace",
    .fn = cmd_trace_fn,
    .summary = "run firmware on the virtual board and record the fetch "
               "stream the cache sees",
    .usage = "ELF --target T -o TRACE [--init SYM --iter SYM | --mark SYM] "
             "[-n N] | --qemu MACHINE ELF --mark SYM -n N [--skip K] [--udp "
             "PORT] -o TRACE | --info TRACE | ELF --from-qemu LOG",
    .description =
        "Runs the firmware's own machine code in the unicorn engine with the\n"
        "target's CPU model and memory map and writes a trace\n"
        "(docs/formats/trace.md): runs of instruction fetches, data reads from\n"
        "the cached flash window, and a mark before every iteration.\n\n"
        "Harness mode (--init, --iter) copies .data, zeroes .bss, calls init\n"
        "once and iter N times; on a pico-sdk image it runs the real start-up\n"
        "from reset up to main (or --init) first. Free-run mode starts from\n"
        "reset (an RP2040 image's boot2, else the reset handler with the\n"
        "vector table's stack pointer) and counts an iteration each time the\n"
        "PC reaches --mark. On a target with a chip model (rp2040) the board\n"
        "answers the registers pico-sdk uses; other peripheral reads return\n"
        "the last value written (else 0) and are counted per register, and a\n"
        "loop that polls one of them stops the run. --max-insns, --timeout\n"
        "and Ctrl-C end a run early; the trace so far stays valid.\n\n"
        "example:\n"
        "  codeplace trace build/fw/demo-rp2040.elf --target rp2040 \\\n"
        "      --init codeplace_init --iter codeplace_iteration -n 300 \\\n"
        "      --result codeplace_result -o run.trace\n"
        "  codeplace trace fw.elf --target rp2040 --mark codeplace_mark -n 300 -o run.trace\n"
        "  codeplace trace --qemu mps2-an500 build/fw/demo-mps2-an500.elf \\\n"
        "      --mark codeplace_mark -n 50 -o q.trace\n"
        "  codeplace trace --info run.trace --json\n"
        "  codeplace trace build/fw/demo-mps2-an500.elf --from-qemu qemu.log \\\n"
        "      --target mps2-an500 --mark codeplace_mark -n 3 -o qemu.trace",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

/* ---- --from-qemu ---- */

static int do_qemu(cli_ctx *ctx, const char *log, const char *elf,
                   const char *map, const tgt *t, const char *mark, uint64_t n,
                   int per_iter)
{
    cp_err err;
    img *im = img_open(elf, map, &err);
    if (!im || img_map_check(im, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    if (t && cli_tgt_check_traced(ctx, t, im) != CLI_OK) {
        img_free(im);
        return CLI_FAIL;
    }
    uint32_t maddr = 0;
    if (mark && trace_sym_addr(im, "--mark", mark, &maddr)) {
        img_free(im);
        return CLI_FAIL;
    }
    trc_header h = {TRC_VERSION, "", "", "", "qemu"};
    if (t) {
        tgt_header_name(t, h.target, sizeof h.target);
        snprintf(h.cpu, sizeof h.cpu, "%s", t->cpu);
    }
    snprintf(h.elf_hash, sizeof h.elf_hash, "%s", img_hash(im));
    trc_writer *w = trc_create(ctx->out_path, &h, &err);
    if (!w) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    /* Exception entries: an interrupt may be taken after any instruction,
     * so a handler's first instruction may follow any other one. */
    uint32_t handlers[16 + 496], vt;
    trc_qemu_in in = {im, t, maddr, n, handlers, 0};
    if (!emu_find_vectors(im, &vt, &err))
        in.nhandlers = trc_qemu_handlers(im, vt, handlers,
                                         sizeof handlers / sizeof *handlers);
    else
        cli_warn("%s; an exception entry in the log is taken for a missing "
                 "line", err.msg);
    trc_qemu_stats st;
    int rc = trc_from_qemu(log, &in, w, &st, &err);
    if (rc) {
        cli_error("%s", err.msg);
        trc_set_end(w, "fault");
        cp_err e2;
        trc_finish(w, &e2);
        free(st.iter_insns);
        img_free(im);
        return CLI_FAIL;
    }
    /* A log that ends before the iterations asked for is not "done". */
    int short_log = mark && ((n && !st.all_done) || !st.iterations);
    trc_set_end(w, short_log ? "stopped" : "done");
    const trc_totals *tot = trc_writer_totals(w);
    uint64_t recs = tot->records;
    if (trc_finish(w, &err)) {
        cli_error("%s", err.msg);
        free(st.iter_insns);
        img_free(im);
        return CLI_FAIL;
    }
    FILE *o = stdout;
    char b1[32], b2[32], b3[32];
    if (per_iter) {
        trace_print_iters(o, st.iter_insns, st.iterations);
    } else {
        trc_spread s = trc_spread_of(st.iter_insns, st.iterations);
        fprintf(o, "trace:        %s (%s records, from %s)\n", ctx->out_path,
                cp_commas(b1, recs), log);
        fprintf(o, "instructions: %s (%s before the first iteration)\n",
                cp_commas(b1, st.insns), cp_commas(b2, st.pre_insns));
        fprintf(o, "iterations:   %llu (median %s, min %s",
                (unsigned long long)st.iterations, cp_commas(b1, s.median),
                cp_commas(b2, s.min));
        fprintf(o, ", max %s instructions)\n", cp_commas(b3, s.max));
        fprintf(o, "log:          %s Trace lines; dropped %s of blocks that "
                "did not run, %s of rewound blocks\n",
                cp_commas(b1, st.lines), cp_commas(b2, st.stopped),
                cp_commas(b3, st.rewound));
        fprintf(o, "checked:      one instruction per line, each following "
                "the last (%s exception entries)\n",
                cp_commas(b1, st.entries));
    }
    int status = CLI_OK;
    if (mark && !st.iterations) {
        cli_error("%s: the log ends before the first complete iteration "
                  "(--mark %s)", log, mark);
        status = CLI_FAIL;
    } else if (mark && n && !st.all_done) {
        cli_warn("%s: the log ends after %llu of %llu iterations", log,
                 (unsigned long long)st.iterations, (unsigned long long)n);
    }
    free(st.iter_insns);
    img_free(im);
    return status;
}

static int parse_periph(cli_ctx *ctx, const char *arg, emu_range *r)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", arg);
    char *c = strchr(buf, ':');
    uint64_t b, s;
    if (!c)
        return cli_usage_error(ctx, "--periph: '%s' is not BASE:SIZE", arg);
    *c = 0;
    if (cp_parse_u64(buf, 0, &b) || cp_parse_u64(c + 1, 1, &s) || !s ||
        b + s > 0x100000000ULL)
        return cli_usage_error(ctx, "--periph: '%s' is not BASE:SIZE", arg);
    r->base = (uint32_t)b;
    r->size = (uint32_t)s;
    return 0;
}

/* The command line, parsed: a recording (ro), a QEMU run (qo), --info or
 * --from-qemu. */
typedef struct trace_args {
    run_opts ro;
    trace_qemu_opts qo;
    cli_tgt to;
    const char *info, *qlog, *qelf;
    int udp_given; /* 1: --udp; 2: an option that goes with it */
    int partial, n_given, records;
} trace_args;

/* The options of a recording on the virtual board. -1: not one of them. */
static int run_opt(cli_ctx *ctx, int o, const char *arg, trace_args *ta)
{
    run_opts *ro = &ta->ro;
    switch (o) {
    case O_N:
        if (cli_arg_u64(ctx, "-n", arg, 1, &ro->n))
            return CLI_USAGE;
        if (!ro->n) /* no iteration: nothing to simulate or plan */
            return cli_usage_error(ctx, "-n 0: record at least one "
                                   "iteration");
        ta->n_given = 1;
        break;
    case O_SP:
        if (cli_arg_u32(ctx, "--sp", arg, 0, &ro->sp))
            return CLI_USAGE;
        if (!ro->sp || ro->sp & 3)
            return cli_usage_error(ctx, "--sp: '%s' is not a stack "
                                   "pointer (non-zero, 4-byte aligned)",
                                   arg);
        ro->have_sp = 1;
        break;
    case O_EXPECT:
        if (cli_arg_u32(ctx, "--expect", arg, 0, &ro->expect))
            return CLI_USAGE;
        ro->have_expect = 1;
        break;
    case O_PERIPH:
        if (ro->nperiph == sizeof ro->periph / sizeof ro->periph[0])
            return cli_usage_error(ctx, "--periph: at most 16 ranges");
        if (parse_periph(ctx, arg, &ro->periph[ro->nperiph++]))
            return CLI_USAGE;
        break;
    case O_MAXI:
        if (cli_arg_u64(ctx, "--max-insns", arg, 1, &ro->max_insns))
            return CLI_USAGE;
        break;
    case O_TIMEOUT:
        if (cli_arg_double(ctx, "--timeout", arg, &ro->timeout))
            return CLI_USAGE;
        if (!(ro->timeout > 0))
            return cli_usage_error(ctx, "--timeout: '%s' is not a "
                                   "positive number of seconds", arg);
        break;
    case O_RESULT:
        if (ro->result)
            return cli_usage_error(ctx, "--result: give one symbol "
                                   "(already '%s')", ro->result);
        ro->result = arg;
        break;
    default:
        return -1;
    }
    return 0;
}

/* The options of trace --qemu. -1: not one of them. */
static int qemu_opt(cli_ctx *ctx, int o, const char *arg, trace_args *ta)
{
    trace_qemu_opts *qo = &ta->qo;
    switch (o) {
    case O_QRUN: qo->machine = arg; break;
    case O_SKIP:
        if (cli_arg_u64(ctx, "--skip", arg, 0, &qo->skip))
            return CLI_USAGE;
        break;
    case O_UDP:
        if (cli_arg_u32(ctx, "--udp", arg, 0, &qo->udp_port))
            return CLI_USAGE;
        if (!qo->udp_port || qo->udp_port > 65535)
            return cli_usage_error(ctx, "--udp: '%s' is not a port", arg);
        ta->udp_given = 1;
        break;
    case O_RATE:
        if (cli_arg_double(ctx, "--rate", arg, &qo->rate))
            return CLI_USAGE;
        if (!(qo->rate > 0 && qo->rate <= NB_UDP_MAX_RATE))
            return cli_usage_error(ctx, "--rate: '%s' is not in (0, "
                                   "100000]", arg);
        ta->udp_given |= 2;
        break;
    case O_SIZE:
        if (cli_arg_u32(ctx, "--size", arg, 0, &qo->size))
            return CLI_USAGE;
        if (qo->size < NB_UDP_HDR || qo->size > 1472)
            return cli_usage_error(ctx, "--size: %u is not in %d..1472",
                                   qo->size, NB_UDP_HDR);
        ta->udp_given |= 2;
        break;
    case O_RUNCMD: qo->run = arg; ta->udp_given |= 2; break;
    default:
        return -1;
    }
    return 0;
}

/* One option: into ta, CLI_OK or an exit status. */
static int trace_opt(cli_ctx *ctx, int o, const char *arg, trace_args *ta)
{
    run_opts *ro = &ta->ro;
    int rc = run_opt(ctx, o, arg, ta);
    if (rc != -1)
        return rc ? CLI_USAGE : CLI_OK;
    if ((rc = qemu_opt(ctx, o, arg, ta)) != -1)
        return rc ? CLI_USAGE : CLI_OK;
    switch (o) {
    case O_TARGET: ta->to.name = arg; break;
    case O_CACHE: ta->to.cache = arg; break;
    case O_AS: ta->to.as = arg; break;
    case O_MAP: ro->map = arg; break;
    case O_INIT: ro->init = arg; break;
    case O_ITER: ro->iter = arg; break;
    case O_MARK: ro->mark = arg; break;
    case O_ENTRY: ro->entry = arg; break;
    case O_COUNT: ro->count_each = 1; break;
    case O_ROM: ro->rom = arg; break;
    case O_UART: ro->uart = arg; break;
    case O_NOSTART: ro->no_startup = 1; break;
    case O_INFO: ta->info = arg; break;
    case O_ITERS: ro->per_iter = 1; break;
    case O_RECORDS: ta->records = 1; break;
    case O_PARTIAL: ta->partial = 1; break;
    case O_QEMU: ta->qlog = arg; break;
    case O_ELF: ta->qelf = arg; break;
    }
    return CLI_OK;
}

/* trace --qemu MACHINE ELF. */
static int qemu_run(cli_ctx *ctx, trace_args *ta)
{
    run_opts *ro = &ta->ro;
    trace_qemu_opts *qo = &ta->qo;
    if (!ta->qelf)
        return cli_usage_error(ctx, "trace: --qemu MACHINE takes one ELF");
    if (!ro->mark)
        return cli_usage_error(ctx, "trace: --qemu needs --mark SYM");
    if (!ctx->out_path)
        return cli_usage_error(ctx, "trace: give the trace file with -o");
    if ((ta->udp_given & 2) && !(ta->udp_given & 1))
        return cli_usage_error(ctx, "trace: --rate, --size and --run go "
                               "with --udp PORT");
    if (ro->iter || ro->init || ro->entry || ta->qlog || ro->count_each)
        return cli_usage_error(ctx, "trace: --qemu excludes --init, "
                               "--iter, --entry, --from-qemu and "
                               "--count-each");
    qo->elf = ta->qelf;
    qo->map = ro->map;
    qo->mark = ro->mark;
    qo->t = ro->t;
    qo->n = ro->n;
    qo->timeout = ro->timeout;
    return trace_qemu_run(ctx, qo);
}

/* trace ELF: a recording on the virtual board. */
static int board_run(cli_ctx *ctx, trace_args *ta)
{
    run_opts *ro = &ta->ro;
    if (!ta->qelf)
        return cli_usage_error(ctx, "trace: give one ELF file");
    ro->elf = ta->qelf;
    if (!!ro->iter != !!ro->init && !ro->iter)
        return cli_usage_error(ctx, "trace: --init goes with --iter");
    if (ro->have_expect && !ro->iter)
        return cli_usage_error(ctx, "trace: --expect goes with --iter "
                               "(harness mode)");
    if (ro->iter && (ro->mark || ro->entry))
        return cli_usage_error(ctx, "trace: --iter (harness mode) excludes "
                               "--mark and --entry (free-run mode)");
    if (!ro->count_each && !ctx->out_path)
        return cli_usage_error(ctx, "trace: give the trace file with -o");
    if (ro->count_each && ctx->out_path)
        return cli_usage_error(ctx, "trace: --count-each writes no trace");
    return trace_board_run(ctx, ro);
}

static int cmd_trace_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    trace_args ta;
    memset(&ta, 0, sizeof ta);
    run_opts *ro = &ta.ro;
    ro->n = 100;
    ro->max_insns = 100000000;
    ta.qo.rate = 100;
    ta.qo.size = 64;
    const char *arg;
    int rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        if (trace_opt(ctx, rc, arg, &ta) != CLI_OK)
            return CLI_USAGE;
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (ta.info) {
        if (p.npos)
            return cli_usage_error(ctx, "trace: --info takes no ELF");
        if (ta.records)
            return trace_dump_records(ctx, ta.info, ta.partial);
        return trace_info(ctx, ta.info, ro->per_iter, ta.partial);
    }
    /* --qemu MACHINE: a preset named after the machine is the default. */
    if ((rc = cli_tgt_resolve(ctx, &ta.to, NULL, ta.qo.machine,
                              !ta.qlog && !ta.qo.machine)) != CLI_OK)
        return rc;
    ro->t = ta.to.base ? &ta.to.t : NULL;
    if (cli_elf_arg(ctx, pos, &p.npos, ta.qelf, 1, &ta.qelf) < 0)
        return CLI_USAGE;
    if (p.npos)
        return cli_usage_error(ctx, "trace: unexpected argument '%s'", pos[0]);
    if (ta.qo.machine)
        return qemu_run(ctx, &ta);
    if (ta.udp_given || ta.qo.skip)
        return cli_usage_error(ctx, "trace: --skip and --udp go with --qemu");
    if (ta.qlog) {
        if (!ta.qelf)
            return cli_usage_error(ctx, "trace: --from-qemu needs the ELF "
                                   "QEMU ran");
        if (!ctx->out_path)
            return cli_usage_error(ctx, "trace: give the trace file with -o");
        return do_qemu(ctx, ta.qlog, ta.qelf, ro->map, ro->t, ro->mark,
                       ta.n_given ? ro->n : 0, ro->per_iter);
    }
    return board_run(ctx, &ta);
}
