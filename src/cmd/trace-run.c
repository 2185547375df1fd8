/* codeplace trace ELF: a recording on the virtual board (trace.c parses
 * the command line, trace-report.c reports). */
#include "cmd/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "image/image.h"
#include "util/sig.h"

/* A symbol's address: a function (Thumb bit cleared) or any ELF symbol. */
int trace_sym_addr(const img *im, const char *opt, const char *name,
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

/* The addresses the options name; boot_until: where a pico-sdk image's
 * start-up, run first in harness mode, ends (0: not run). */
typedef struct run_addrs {
    uint32_t init, iter, mark, entry, sp, res, boot_until;
} run_addrs;

static int resolve_addrs(cli_ctx *ctx, const run_opts *ro, const img *im,
                         run_addrs *a)
{
    a->sp = ro->sp;
    if ((ro->init && trace_sym_addr(im, "--init", ro->init, &a->init)) ||
        (ro->iter && trace_sym_addr(im, "--iter", ro->iter, &a->iter)) ||
        (ro->mark && trace_sym_addr(im, "--mark", ro->mark, &a->mark)) ||
        (ro->entry && trace_sym_addr(im, "--entry", ro->entry, &a->entry)) ||
        (ro->result && trace_sym_addr(im, "--result", ro->result, &a->res)))
        return -1;
    if (ro->iter && ro->t->chip && !ro->no_startup &&
        img_section_by_name(im, ".boot2")) {
        /* A pico-sdk image: its start-up sets up the clocks, the ROM's
         * function tables and the runtime that init and iter rely on. */
        a->boot_until = a->init;
        if (!a->init && trace_sym_addr(im, "--iter (the start-up runs to main)",
                                 "main", &a->boot_until))
            return -1;
        cli_debug(ctx, "harness: running the start-up from reset to 0x%08x",
                  a->boot_until);
    }
    return 0;
}

/* From reset as the chip starts, unless --entry or --sp say otherwise:
 * the one not given comes from the vector table. */
static int reset_entry(cli_ctx *ctx, const run_opts *ro, const img *im,
                       run_addrs *a)
{
    if (ro->iter || !(ro->entry || ro->have_sp) ||
        (ro->entry && ro->have_sp))
        return 0;
    cp_err err;
    uint32_t vt, v[2];
    if (emu_find_vectors(im, &vt, &err) || img_read(im, vt, v, 8)) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (!ro->entry)
        a->entry = v[1] & ~1u;
    if (!ro->have_sp)
        a->sp = v[0];
    cli_debug(ctx, "vector table at 0x%08x: sp 0x%08x, reset 0x%08x", vt,
              v[0], v[1]);
    return 0;
}

static trc_writer *create_trace(cli_ctx *ctx, const run_opts *ro,
                                const img *im)
{
    cp_err err;
    trc_header h = {TRC_VERSION, "", "", "", "unicorn"};
    tgt_header_name(ro->t, h.target, sizeof h.target);
    snprintf(h.cpu, sizeof h.cpu, "%s", ro->t->cpu);
    snprintf(h.elf_hash, sizeof h.elf_hash, "%s", img_hash(im));
    trc_writer *w = trc_create(ctx->out_path, &h, &err);
    if (!w)
        cli_error("%s", err.msg);
    return w;
}

/* Ends the trace with the run's end reason (rc: the run failed); its
 * totals and size in *tot and *bytes. -1 when it cannot be written; w is
 * freed either way. */
static int finish_trace(cli_ctx *ctx, trc_writer *w, int rc,
                        const emu_stats *st, trc_totals *tot,
                        uint64_t *bytes)
{
    /* A run that failed is never "done", wherever it failed. */
    trc_set_end(w, rc && st->end == EMU_END_DONE ? "fault"
                                                 : emu_end_name(st->end));
    *tot = *trc_writer_totals(w);
    cp_err e2;
    if (trc_finish(w, &e2)) {
        cli_error("%s", e2.msg);
        return -1;
    }
    FILE *f = fopen(ctx->out_path, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        *bytes = (uint64_t)ftell(f);
        fclose(f);
    }
    return 0;
}

/* --result: "SYM = 0x... (N)" in buf, or NULL when it cannot be read. */
static const char *read_result(const run_opts *ro, emu *e, uint32_t res,
                               char *buf, size_t cap)
{
    uint32_t v;
    if (emu_read(e, res, &v, 4)) {
        cli_error("--result: cannot read %s at 0x%08x", ro->result, res);
        return NULL;
    }
    snprintf(buf, cap, "%s = 0x%08x (%u)", ro->result, v, v);
    return buf;
}

/* --max-insns ended the run: where it was. */
static void insn_limit_error(const run_opts *ro, const emu_stats *st,
                             uint32_t boot_until, const char *kept)
{
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
}

/* How the run ended, in words, and the exit status. */
static int run_verdict(cli_ctx *ctx, const run_opts *ro, const emu_stats *st,
                       int rc, uint32_t boot_until)
{
    int status = CLI_FAIL;
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
        insn_limit_error(ro, st, boot_until, kept);
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
    return status;
}

/* Runs the image: harness or free-run mode, into w (NULL: --count-each).
 * The run's status in *rc, its wall-clock time returned. */
static double run_emu(cli_ctx *ctx, const run_opts *ro, emu *e,
                      trc_writer *w, const run_addrs *a, int *rc,
                      cp_err *err)
{
    cp_sig_catch(); /* Ctrl-C, SIGTERM and SIGHUP end the run cleanly */
    cli_info(ctx, "running %s on %s (%s), %s mode, %llu iterations...",
             ro->elf, ro->t->name, ro->t->cpu, ro->iter ? "harness" : "free-run",
             (unsigned long long)ro->n);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (ro->iter) {
        if (ro->have_sp)
            emu_set_sp(e, a->sp);
        *rc = emu_run_harness(e, w, a->init, a->iter, ro->n, err);
    } else {
        *rc = emu_run_free(e, w, a->entry, a->sp, a->mark, ro->n, err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cp_sig_restore();
    return (double)(t1.tv_sec - t0.tv_sec) +
           (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

int trace_board_run(cli_ctx *ctx, const run_opts *ro)
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
    run_addrs a = {0};
    if (resolve_addrs(ctx, ro, im, &a))
        goto out;
    run_progress rp = {.ctx = ctx, .ro = ro};
    emu_cfg cfg = {
        .im = im, .t = ro->t, .periph = ro->periph, .nperiph = ro->nperiph,
        .insn_limit = ro->max_insns, .time_limit = ro->timeout,
        .interrupt = &cp_sig_stop, .count_each = ro->count_each,
        .expect_ret = ro->expect, .progress = on_progress,
        .progress_arg = &rp, .progress_s = 0.5, .rom_path = ro->rom,
        .boot_until = a.boot_until,
    };
    e = emu_new(&cfg, &err);
    if (!e) {
        cli_error("%s: %s", ro->elf, err.msg);
        goto out;
    }
    for (unsigned i = 0; i < emu_nwarnings(e); i++)
        cli_warn("%s", emu_warning(e, i));
    if (reset_entry(ctx, ro, im, &a))
        goto out;
    if (!ro->count_each) {
        if (!(w = create_trace(ctx, ro, im)))
            goto out;
        rp.w = w;
        rp.avail = free_bytes(ctx->out_path);
    }
    int rc;
    double secs = run_emu(ctx, ro, e, w, &a, &rc, &err);
    if (rp.shown)
        fputs("\r\033[K", stderr);
    const emu_stats *st = emu_get_stats(e);
    if (rc)
        cli_error("%s: %s", ro->elf, err.msg);
    trc_totals tot = {0};
    uint64_t bytes = 0;
    if (w) {
        int fr = finish_trace(ctx, w, rc, st, &tot, &bytes);
        w = NULL;
        if (fr < 0)
            goto out;
    }
    char result_line[128];
    const char *rl = ro->result ? read_result(ro, e, a.res, result_line,
                                              sizeof result_line) : NULL;
    trace_report_run(ctx, ro, e, st, ro->count_each ? NULL : &tot, bytes,
                     secs, rl);
    int uart_failed = uart_out(ctx, ro, e) != 0;
    if (secs > 0 && st->insns >= 1000000)
        cli_info(ctx, "%.1f M instructions/s (%llu instructions in %.3f s)",
                 (double)st->insns / secs / 1e6,
                 (unsigned long long)st->insns, secs);
    status = run_verdict(ctx, ro, st, rc, a.boot_until);
    if (uart_failed) /* the run's figures stand; --uart's file is missing */
        status = CLI_FAIL;
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
