#include "cli/probeopt.h"

#include <stddef.h>
#include <string.h>

int cli_probe_take(cli_ctx *ctx, cli_probe_args *a, const char *name,
                   const char *arg)
{
    uint32_t ms;
    if (!strcmp(name, "gdb")) {
        a->gdb = arg;
    } else if (!strcmp(name, "openocd")) {
        a->openocd = arg;
    } else if (!strcmp(name, "core")) {
        a->po.core = arg;
    } else if (!strcmp(name, "timeout")) {
        if (cli_arg_u32(ctx, "timeout", arg, 0, &ms) < 0)
            return -1;
        if (!ms || ms > 3600000)
            return cli_usage_error(ctx, "option '--timeout': give 1 to "
                                   "3600000 ms"), -1;
        a->po.timeout_ms = (int)ms;
    } else {
        return cli_usage_error(ctx, "option '--%s' is not a probe option",
                               name), -1;
    }
    return 0;
}

int cli_probe_check(cli_ctx *ctx, cli_probe_args *a)
{
    const char *name = cli_cmd_name(ctx->cmd);
    if (!a->gdb == !a->openocd)
        return cli_usage_error(ctx, "%s: give one of --gdb HOST[:PORT] or "
                               "--openocd HOST[:PORT]", name), -1;
    if (a->po.core && !a->openocd)
        return cli_usage_error(ctx, "%s: --core goes with --openocd",
                               cli_cmd_name(ctx->cmd)), -1;
    if (!a->po.timeout_ms)
        a->po.timeout_ms = 3000;
    return 0;
}

probe *cli_probe_open(cli_ctx *ctx, const cli_probe_args *a)
{
    cp_err err;
    probe *pr = probe_open(a->gdb ? PROBE_GDB : PROBE_OPENOCD,
                           a->gdb ? a->gdb : a->openocd, &a->po, &err);
    if (!pr) {
        cli_error("%s", err.msg);
        return NULL;
    }
    if (probe_is_halted(pr)) {
        cli_info(ctx, "the target was halted; letting it run");
        if (probe_resume(pr, &err) < 0) {
            cli_error("%s", err.msg);
            probe_close(pr);
            return NULL;
        }
    }
    return pr;
}
