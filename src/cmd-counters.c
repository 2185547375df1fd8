#include "cli/cli.h"
#include "commands.h"
static int fn(cli_ctx *ctx, int argc, char **argv) { (void)ctx; (void)argc; (void)argv; return 1; }
const cli_cmd cmd_counters = {.name = "counters", .fn = fn, .summary = "x"};
