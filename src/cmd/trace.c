/* codeplace trace: record what the cache sees while firmware runs on the
 * virtual board, import a QEMU execution log, or summarise a trace. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

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
#include "util/jw.h"
#include "util/sig.h"

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

/* A symbol's address: a function (Thumb bit cleared) or any ELF symbol. */
static int sym_addr(const img *im, const char *opt, const char *name,
                    uint32_t *addr)
{
    const img_func *f = img_find(im, name);
    if (f) {
        *addr = f->addr;
        return 0;
    }
    cp_err err;
    if (img_symbol(im, name, addr, NULL, &err)) {
        cli_error("%s: %s", opt, err.msg);
        return -1;
    }
    *addr &= ~1u;
    return 0;
}

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
    uint32_t maddr = 0;
    if (mark && sym_addr(im, "--mark", mark, &maddr)) {
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

/* ---- recording ---- */


/* Progress of a recording, and the disk it fills. */
typedef struct run_progress {
    cli_ctx *ctx;
    const run_opts *ro;
    trc_writer *w;
    uint64_t avail;   /* bytes free where the trace goes (0: unknown) */
    uint64_t flushed_at; /* iterations at the last flush for a projection */
    int shown;
} run_progress;

static uint64_t free_bytes(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    struct statvfs sv;
    if (statvfs(dir, &sv) != 0)
        return 0;
    return (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
}

static int on_progress(void *arg, emu *e)
{
    run_progress *rp = arg;
    const emu_stats *st = emu_get_stats(e);
    double secs = emu_elapsed(e);
    /* After iteration 1, 2, 4, 8... (the calls that do not depend on the
     * clock, so the file stays the same from run to run), what is buffered
     * goes out as a block: the bytes are then those of every record so far
     * (a write error shows at the end). */
    uint64_t k = st->iterations;
    if (rp->w && k && !(k & (k - 1)) && k != rp->flushed_at) {
        cp_err ferr;
        trc_flush(rp->w, &ferr);
        rp->flushed_at = k;
    }
    uint64_t bytes = rp->w ? trc_writer_bytes(rp->w) : 0;
    /* Projected from the bytes so far, less the start-up's share (by
     * instructions), per complete iteration. */
    uint64_t proj = 0;
    if (rp->w && st->iterations >= 4 && rp->ro->n > st->iterations &&
        bytes && st->insns > st->pre_insns) {
        double per_iter = (double)bytes *
                          (double)(st->insns - st->pre_insns) /
                          (double)st->insns / (double)st->iterations;
        proj = bytes + (uint64_t)(per_iter *
                                  (double)(rp->ro->n - st->iterations));
    }
    if (rp->ctx->verbose >= 0 && isatty(STDERR_FILENO)) {
        char b1[32], b2[32], b3[32];
        fprintf(stderr, "\r\033[Ktrace: %.1f M instructions/s, %s of %s "
                "iterations, %s bytes",
                secs > 0 ? (double)st->insns / secs / 1e6 : 0.0,
                cp_commas(b1, st->iterations), cp_commas(b2, rp->ro->n),
                cp_commas(b3, bytes));
        if (proj)
            fprintf(stderr, " (projected %s)", cp_commas(b1, proj));
        rp->shown = 1;
    }
    if (proj && rp->avail && proj > bytes && proj - bytes > rp->avail) {
        char note[200], b1[32], b2[32];
        snprintf(note, sizeof note, "the projected trace (%s bytes for %llu "
                 "iterations) does not fit the %s bytes free for '%s'",
                 cp_commas(b1, proj), (unsigned long long)rp->ro->n,
                 cp_commas(b2, rp->avail + bytes), rp->ctx->out_path);
        emu_set_stop_note(e, note);
        return 1;
    }
    return 0;
}

/* What the UARTs sent: shown with -v, written to --uart FILE (a second
 * UART's bytes to FILE.uart1). 0 or -1 when a file cannot be written. */
static int uart_out(cli_ctx *ctx, const run_opts *ro, const emu *e)
{
    for (unsigned n = 0; n < 2; n++) {
        size_t len;
        const uint8_t *p = emu_uart(e, n, &len);
        if (ctx->verbose > 0 && len)
            fprintf(stderr, "uart%u: %zu bytes:\n%.*s%s", n, len, (int)len,
                    (const char *)p, p[len - 1] == '\n' ? "" : "\n");
        if (!ro->uart || (n && !len))
            continue;
        char path[4096];
        snprintf(path, sizeof path, n ? "%s.uart1" : "%s", ro->uart);
        FILE *f = fopen(path, "wb");
        if (!f || (len && fwrite(p, 1, len, f) != len) || fclose(f)) {
            cli_error("--uart: cannot write '%s'", path);
            return -1;
        }
    }
    return 0;
}

static int do_run(cli_ctx *ctx, const run_opts *ro)
{
    cp_err err;
    img *im = img_open(ro->elf, ro->map, &err);
    if (!im || img_map_check(im, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    int status = CLI_FAIL;
    emu *e = NULL;
    trc_writer *w = NULL;
    uint32_t init = 0, iter = 0, mark = 0, entry = 0, sp = ro->sp, res = 0;
    if ((ro->init && sym_addr(im, "--init", ro->init, &init)) ||
        (ro->iter && sym_addr(im, "--iter", ro->iter, &iter)) ||
        (ro->mark && sym_addr(im, "--mark", ro->mark, &mark)) ||
        (ro->entry && sym_addr(im, "--entry", ro->entry, &entry)) ||
        (ro->result && sym_addr(im, "--result", ro->result, &res)))
        goto out;
    uint32_t boot_until = 0;
    if (ro->iter && ro->t->chip && !ro->no_startup &&
        img_section_by_name(im, ".boot2")) {
        /* A pico-sdk image: its start-up sets up the clocks, the ROM's
         * function tables and the runtime that init and iter rely on. */
        boot_until = init;
        if (!init && sym_addr(im, "--iter (the start-up runs to main)",
                              "main", &boot_until))
            goto out;
        cli_debug(ctx, "harness: running the start-up from reset to 0x%08x",
                  boot_until);
    }
    run_progress rp = {.ctx = ctx, .ro = ro};
    emu_cfg cfg = {
        .im = im, .t = ro->t, .periph = ro->periph, .nperiph = ro->nperiph,
        .insn_limit = ro->max_insns, .time_limit = ro->timeout,
        .interrupt = &cp_sig_stop, .count_each = ro->count_each,
        .expect_ret = ro->expect, .progress = on_progress,
        .progress_arg = &rp, .progress_s = 0.5, .rom_path = ro->rom,
        .boot_until = boot_until,
    };
    e = emu_new(&cfg, &err);
    if (!e) {
        cli_error("%s: %s", ro->elf, err.msg);
        goto out;
    }
    for (unsigned i = 0; i < emu_nwarnings(e); i++)
        cli_warn("%s", emu_warning(e, i));
    /* From reset as the chip starts, unless --entry or --sp say otherwise. */
    if (!ro->iter && (ro->entry || ro->have_sp) &&
        (!ro->entry || !ro->have_sp)) {
        uint32_t vt, v[2];
        if (emu_find_vectors(im, &vt, &err) || img_read(im, vt, v, 8)) {
            cli_error("%s", err.msg);
            goto out;
        }
        if (!ro->entry)
            entry = v[1] & ~1u;
        if (!ro->have_sp)
            sp = v[0];
        cli_debug(ctx, "vector table at 0x%08x: sp 0x%08x, reset 0x%08x", vt,
                  v[0], v[1]);
    }
    if (!ro->count_each) {
        trc_header h = {TRC_VERSION, "", "", "", "unicorn"};
        tgt_header_name(ro->t, h.target, sizeof h.target);
        snprintf(h.cpu, sizeof h.cpu, "%s", ro->t->cpu);
        snprintf(h.elf_hash, sizeof h.elf_hash, "%s", img_hash(im));
        w = trc_create(ctx->out_path, &h, &err);
        if (!w) {
            cli_error("%s", err.msg);
            goto out;
        }
        rp.w = w;
        rp.avail = free_bytes(ctx->out_path);
    }
    cp_sig_catch(); /* Ctrl-C, SIGTERM and SIGHUP end the run cleanly */
    cli_info(ctx, "running %s on %s (%s), %s mode, %llu iterations...",
             ro->elf, ro->t->name, ro->t->cpu, ro->iter ? "harness" : "free-run",
             (unsigned long long)ro->n);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc;
    if (ro->iter) {
        if (ro->have_sp)
            emu_set_sp(e, sp);
        rc = emu_run_harness(e, w, init, iter, ro->n, &err);
    } else {
        rc = emu_run_free(e, w, entry, sp, mark, ro->n, &err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cp_sig_restore();
    if (rp.shown)
        fputs("\r\033[K", stderr);
    double secs = (double)(t1.tv_sec - t0.tv_sec) +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    const emu_stats *st = emu_get_stats(e);
    if (rc)
        cli_error("%s: %s", ro->elf, err.msg);
    trc_totals tot = {0};
    uint64_t bytes = 0;
    if (w) {
        /* A run that failed is never "done", wherever it failed. */
        trc_set_end(w, rc && st->end == EMU_END_DONE ? "fault"
                                                     : emu_end_name(st->end));
        tot = *trc_writer_totals(w);
        cp_err e2;
        if (trc_finish(w, &e2)) {
            cli_error("%s", e2.msg);
            w = NULL;
            goto out;
        }
        w = NULL;
        FILE *f = fopen(ctx->out_path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            bytes = (uint64_t)ftell(f);
            fclose(f);
        }
    }
    char result_line[128] = "", *rl = NULL;
    if (ro->result) {
        uint32_t v;
        if (emu_read(e, res, &v, 4)) {
            cli_error("--result: cannot read %s at 0x%08x", ro->result, res);
        } else {
            snprintf(result_line, sizeof result_line, "%s = 0x%08x (%u)",
                     ro->result, v, v);
            rl = result_line;
        }
    }
    trace_report_run(ctx, ro, e, st, ro->count_each ? NULL : &tot, bytes,
                     secs, rl);
    if (uart_out(ctx, ro, e))
        status = CLI_FAIL;
    if (secs > 0 && st->insns >= 1000000)
        cli_info(ctx, "%.1f M instructions/s (%llu instructions in %.3f s)",
                 (double)st->insns / secs / 1e6,
                 (unsigned long long)st->insns, secs);
    const char *kept = ro->count_each ? "" : "; the trace so far is kept and "
                                             "valid";
    switch (st->end) {
    case EMU_END_DONE:
        status = rc ? CLI_FAIL : CLI_OK;
        if (!rc && ro->iter && ro->have_expect && st->ret_mismatches) {
            cli_error("%s: %s returned 0x%08x, not %u (--expect), in %llu of "
                      "%llu iterations (first: iteration %llu)", ro->elf,
                      ro->iter, st->first_mismatch_ret, ro->expect,
                      (unsigned long long)st->ret_mismatches,
                      (unsigned long long)st->iterations,
                      (unsigned long long)st->first_mismatch);
            status = CLI_FAIL;
        }
        break;
    case EMU_END_INSN_LIMIT:
        if (ro->mark && !st->marks)
            cli_error("%s: the PC never reached --mark %s in %llu "
                      "instructions (--max-insns)%s", ro->elf, ro->mark,
                      (unsigned long long)ro->max_insns, kept);
        else if (boot_until && !st->booted)
            cli_error("%s: the start-up from reset never reached %s in %llu "
                      "instructions (--max-insns): harness mode runs it to "
                      "--init, or to main; give an --init that main calls, or "
                      "--no-startup%s", ro->elf, ro->init ? ro->init : "main",
                      (unsigned long long)ro->max_insns, kept);
        else if (!st->iterations && !st->marks)
            cli_error("%s: %s ran past --max-insns %llu before the first "
                      "iteration%s", ro->elf, ro->init ? ro->init : "start-up",
                      (unsigned long long)ro->max_insns, kept);
        else
            cli_error("%s: an iteration ran past --max-insns %llu (in "
                      "iteration %llu)%s", ro->elf,
                      (unsigned long long)ro->max_insns,
                      (unsigned long long)st->iterations, kept);
        break;
    case EMU_END_TIME_LIMIT:
        cli_warn("stopped by --timeout after %llu iterations%s",
                 (unsigned long long)st->iterations, kept);
        status = CLI_OK;
        break;
    case EMU_END_INTERRUPTED:
        cli_warn("interrupted by %s after %llu iterations%s",
                 cp_sig_name(cp_sig_last()),
                 (unsigned long long)st->iterations, kept);
        status = CLI_OK;
        break;
    case EMU_END_STOPPED:
        cli_error("%s: %s after %llu of %llu iterations%s", ro->elf,
                  st->stop_note, (unsigned long long)st->iterations,
                  (unsigned long long)ro->n, kept);
        break;
    case EMU_END_FAULT:
        if (!rc)
            cli_error("%s: stopped by a fault", ro->elf);
        if (!ro->count_each)
            cli_info(ctx, "the trace up to the fault is kept in %s",
                     ctx->out_path);
        break;
    }
out:
    if (w)
        trc_abandon(w);
    emu_free(e);
    img_free(im);
    if (fflush(stdout)) {
        cli_error("cannot write the output");
        return CLI_FAIL;
    }
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

static int cmd_trace_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    run_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.n = 100;
    ro.max_insns = 100000000;
    const char *arg, *info = NULL, *qlog = NULL, *qelf = NULL;
    cli_tgt to = {0};
    trace_qemu_opts qo;
    memset(&qo, 0, sizeof qo);
    qo.rate = 100;
    qo.size = 64;
    int udp_given = 0;
    int partial = 0, rc, n_given = 0, records = 0;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_TARGET: to.name = arg; break;
        case O_CACHE: to.cache = arg; break;
        case O_AS: to.as = arg; break;
        case O_MAP: ro.map = arg; break;
        case O_INIT: ro.init = arg; break;
        case O_ITER: ro.iter = arg; break;
        case O_N:
            if (cli_arg_u64(ctx, "-n", arg, 1, &ro.n))
                return CLI_USAGE;
            if (!ro.n) /* no iteration: nothing to simulate or plan */
                return cli_usage_error(ctx, "-n 0: record at least one "
                                       "iteration");
            n_given = 1;
            break;
        case O_MARK: ro.mark = arg; break;
        case O_ENTRY: ro.entry = arg; break;
        case O_SP:
            if (cli_arg_u32(ctx, "--sp", arg, 0, &ro.sp))
                return CLI_USAGE;
            if (!ro.sp || ro.sp & 3)
                return cli_usage_error(ctx, "--sp: '%s' is not a stack "
                                       "pointer (non-zero, 4-byte aligned)",
                                       arg);
            ro.have_sp = 1;
            break;
        case O_EXPECT:
            if (cli_arg_u32(ctx, "--expect", arg, 0, &ro.expect))
                return CLI_USAGE;
            ro.have_expect = 1;
            break;
        case O_PERIPH:
            if (ro.nperiph == sizeof ro.periph / sizeof ro.periph[0])
                return cli_usage_error(ctx, "--periph: at most 16 ranges");
            if (parse_periph(ctx, arg, &ro.periph[ro.nperiph++]))
                return CLI_USAGE;
            break;
        case O_MAXI:
            if (cli_arg_u64(ctx, "--max-insns", arg, 1, &ro.max_insns))
                return CLI_USAGE;
            break;
        case O_TIMEOUT:
            if (cli_arg_double(ctx, "--timeout", arg, &ro.timeout))
                return CLI_USAGE;
            if (!(ro.timeout > 0))
                return cli_usage_error(ctx, "--timeout: '%s' is not a "
                                       "positive number of seconds", arg);
            break;
        case O_RESULT:
            if (ro.result)
                return cli_usage_error(ctx, "--result: give one symbol "
                                       "(already '%s')", ro.result);
            ro.result = arg;
            break;
        case O_COUNT: ro.count_each = 1; break;
        case O_ROM: ro.rom = arg; break;
        case O_UART: ro.uart = arg; break;
        case O_NOSTART: ro.no_startup = 1; break;
        case O_INFO: info = arg; break;
        case O_ITERS: ro.per_iter = 1; break;
        case O_RECORDS: records = 1; break;
        case O_PARTIAL: partial = 1; break;
        case O_QEMU: qlog = arg; break;
        case O_ELF: qelf = arg; break;
        case O_QRUN: qo.machine = arg; break;
        case O_SKIP:
            if (cli_arg_u64(ctx, "--skip", arg, 0, &qo.skip))
                return CLI_USAGE;
            break;
        case O_UDP:
            if (cli_arg_u32(ctx, "--udp", arg, 0, &qo.udp_port))
                return CLI_USAGE;
            if (!qo.udp_port || qo.udp_port > 65535)
                return cli_usage_error(ctx, "--udp: '%s' is not a port", arg);
            udp_given = 1;
            break;
        case O_RATE:
            if (cli_arg_double(ctx, "--rate", arg, &qo.rate))
                return CLI_USAGE;
            if (!(qo.rate > 0 && qo.rate <= NB_UDP_MAX_RATE))
                return cli_usage_error(ctx, "--rate: '%s' is not in (0, "
                                       "100000]", arg);
            udp_given |= 2;
            break;
        case O_SIZE:
            if (cli_arg_u32(ctx, "--size", arg, 0, &qo.size))
                return CLI_USAGE;
            if (qo.size < NB_UDP_HDR || qo.size > 1472)
                return cli_usage_error(ctx, "--size: %u is not in %d..1472",
                                       qo.size, NB_UDP_HDR);
            udp_given |= 2;
            break;
        case O_RUNCMD: qo.run = arg; udp_given |= 2; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (info) {
        if (p.npos)
            return cli_usage_error(ctx, "trace: --info takes no ELF");
        if (records)
            return trace_dump_records(ctx, info, partial);
        return trace_info(ctx, info, ro.per_iter, partial);
    }
    /* --qemu MACHINE: a preset named after the machine is the default. */
    if ((rc = cli_tgt_resolve(ctx, &to, NULL, qo.machine,
                              !qlog && !qo.machine)) != CLI_OK)
        return rc;
    ro.t = to.base ? &to.t : NULL;
    if (cli_elf_arg(ctx, pos, &p.npos, qelf, 1, &qelf) < 0)
        return CLI_USAGE;
    if (p.npos)
        return cli_usage_error(ctx, "trace: unexpected argument '%s'", pos[0]);
    if (qo.machine) {
        if (!qelf)
            return cli_usage_error(ctx, "trace: --qemu MACHINE takes one ELF");
        if (!ro.mark)
            return cli_usage_error(ctx, "trace: --qemu needs --mark SYM");
        if (!ctx->out_path)
            return cli_usage_error(ctx, "trace: give the trace file with -o");
        if ((udp_given & 2) && !(udp_given & 1))
            return cli_usage_error(ctx, "trace: --rate, --size and --run go "
                                   "with --udp PORT");
        if (ro.iter || ro.init || ro.entry || qlog || ro.count_each)
            return cli_usage_error(ctx, "trace: --qemu excludes --init, "
                                   "--iter, --entry, --from-qemu and "
                                   "--count-each");
        qo.elf = qelf;
        qo.map = ro.map;
        qo.mark = ro.mark;
        qo.t = ro.t;
        qo.n = ro.n;
        qo.timeout = ro.timeout;
        return trace_qemu_run(ctx, &qo);
    }
    if (udp_given || qo.skip)
        return cli_usage_error(ctx, "trace: --skip and --udp go with --qemu");
    if (qlog) {
        if (!qelf)
            return cli_usage_error(ctx, "trace: --from-qemu needs the ELF "
                                   "QEMU ran");
        if (!ctx->out_path)
            return cli_usage_error(ctx, "trace: give the trace file with -o");
        return do_qemu(ctx, qlog, qelf, ro.map, ro.t, ro.mark,
                       n_given ? ro.n : 0, ro.per_iter);
    }
    if (!qelf)
        return cli_usage_error(ctx, "trace: give one ELF file");
    ro.elf = qelf;
    if (!!ro.iter != !!ro.init && !ro.iter)
        return cli_usage_error(ctx, "trace: --init goes with --iter");
    if (ro.have_expect && !ro.iter)
        return cli_usage_error(ctx, "trace: --expect goes with --iter "
                               "(harness mode)");
    if (ro.iter && (ro.mark || ro.entry))
        return cli_usage_error(ctx, "trace: --iter (harness mode) excludes "
                               "--mark and --entry (free-run mode)");
    if (!ro.count_each && !ctx->out_path)
        return cli_usage_error(ctx, "trace: give the trace file with -o");
    if (ro.count_each && ctx->out_path)
        return cli_usage_error(ctx, "trace: --count-each writes no trace");
    return do_run(ctx, &ro);
}
