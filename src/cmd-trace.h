/* codeplace trace: the parts of the command in other files. */
#ifndef CP_CMD_TRACE_H
#define CP_CMD_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "target/target.h"

/* trace --qemu MACHINE ELF (src/cmd-trace-qemu.c). */
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

/* The spread of per-iteration counts (src/cmd-trace-info.c). */
typedef struct trace_spread_t {
    uint64_t median, min, max;
} trace_spread_t;
trace_spread_t trace_spread(const uint64_t *v, size_t n);
/* "i count" lines, one per iteration. */
void trace_print_iters(FILE *o, const uint64_t *v, size_t n);
/* trace --info TRACE [--per-iteration] [--partial]; --records. */
int trace_info(cli_ctx *ctx, const char *path, int per_iter, int partial);
int trace_dump_records(cli_ctx *ctx, const char *path, int partial);

#endif
