/* codeplace trace: the parts of the command in other files. */
#ifndef CP_CMD_TRACE_H
#define CP_CMD_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "emu/emu.h"
#include "image/image.h"
#include "target/target.h"
#include "trace/trace.h"

/* trace --qemu MACHINE ELF (src/cmd/trace-qemu.c). */
typedef struct trace_qemu_opts {
    const char *machine, *elf, *map, *mark;
    const tgt *t;          /* --target, or NULL: the machine's code memory */
    uint64_t n, skip;
    double timeout;        /* seconds, 0: none */
    unsigned udp_port;     /* --udp: the guest's echo port, 0: none */
    double rate;           /* --rate: echo requests per second */
    unsigned size;         /* --size: request bytes */
    const char *run;       /* --run CMD */
} trace_qemu_opts;

int trace_qemu_run(cli_ctx *ctx, const trace_qemu_opts *o);

/* "i count" lines, one per iteration. */
void trace_print_iters(FILE *o, const uint64_t *v, size_t n);
/* trace --info TRACE [--per-iteration] [--partial]; --records. */
int trace_info(cli_ctx *ctx, const char *path, int per_iter, int partial);
int trace_dump_records(cli_ctx *ctx, const char *path, int partial);

/* trace ELF: what the command line asks of a recording on the virtual
 * board (src/cmd/trace.c). */
typedef struct run_opts {
    const char *elf, *map, *init, *iter, *mark, *entry, *result;
    const tgt *t;
    uint64_t n, max_insns;
    double timeout;
    int have_sp, count_each, per_iter, have_expect, no_startup;
    const char *rom, *uart;
    uint32_t sp, expect;
    emu_range periph[16];
    unsigned nperiph;
} run_opts;

/* The recording (src/cmd/trace-run.c). */
int trace_board_run(cli_ctx *ctx, const run_opts *ro);

/* A symbol's address for option opt: a function (Thumb bit cleared) or
 * any ELF symbol; -1 after an error. */
int trace_sym_addr(const img *im, const char *opt, const char *name,
                   uint32_t *addr);

/* Its report (src/cmd/trace-report.c): the trace's figures, what the
 * harness functions returned, the unmodelled peripherals read. */
void trace_report_run(cli_ctx *ctx, const run_opts *ro, emu *e,
                      const emu_stats *st, const trc_totals *tot,
                      uint64_t bytes, double secs, const char *result_line);

#endif
