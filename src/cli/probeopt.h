/* cli probe options: how record and counters connect to a debug probe.
 * One set of options (--gdb, --openocd, --core, --timeout) in each
 * command's table, one parser and one way to connect, so the commands
 * cannot drift apart. */
#ifndef CP_CLI_PROBEOPT_H
#define CP_CLI_PROBEOPT_H

#include <stdint.h>

#include "cli/cli.h"
#include "probe/probe.h"

/* The entries of a command's option table, at the indices its enum gives. */
#define CLI_PROBE_OPTS(I_GDB, I_OPENOCD, I_CORE, I_TIMEOUT)                  \
    [I_GDB] = {"gdb", 0, "HOST[:PORT]", "a GDB stub (OpenOCD, pyOCD, Black " \
               "Magic Probe, J-Link, probe-rs, QEMU -gdb; default port "    \
               "3333)"},                                                    \
    [I_OPENOCD] = {"openocd", 0, "HOST[:PORT]", "OpenOCD's Tcl RPC port "      \
                   "(default port 6666)"},                                  \
    [I_CORE] = {"core", 0, "NAME", "OpenOCD target to use "                 \
                "(e.g. rp2040.core1)"},                                     \
    [I_TIMEOUT] = {"timeout", 0, "MS", "wait this long for each reply "     \
                   "(default 3000)"}

typedef struct cli_probe_args {
    const char *gdb, *openocd;
    probe_opts po; /* core, timeout_ms; the command may set nonstop */
} cli_probe_args;

/* Takes one of the options, by its long name in the table
 * (opts[rc].name): "gdb", "openocd", "core" or "timeout". Returns 0, or
 * prints a usage error and returns -1. */
int cli_probe_take(cli_ctx *ctx, cli_probe_args *a, const char *name,
                   const char *arg);
/* After parsing: exactly one of --gdb and --openocd, --core only with
 * --openocd. Returns 0, or prints a usage error and returns -1. */
int cli_probe_check(cli_ctx *ctx, cli_probe_args *a);
/* Connects, and lets a halted target run. Returns the probe, or reports the
 * error and returns NULL. */
probe *cli_probe_open(cli_ctx *ctx, const cli_probe_args *a);

#endif
