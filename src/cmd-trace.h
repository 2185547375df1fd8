/* codeplace trace: the parts of the command in other files. */
#ifndef CP_CMD_TRACE_H
#define CP_CMD_TRACE_H

#include <stdint.h>

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

#endif
