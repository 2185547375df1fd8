/* codeplace: command dispatch. The table below is the one list of commands;
 * `codeplace help` and each command's --help are generated from it and from
 * the commands' option tables. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cmd/commands.h"

#ifndef CODEPLACE_VERSION
#define CODEPLACE_VERSION "0.1.0"
#endif

static int cmd_help_fn(cli_ctx *ctx, int argc, char **argv);

static const cli_cmd cmd_help = {
    .name = "help",
    .fn = cmd_help_fn,
    .summary = "show the commands, or one command's options",
    .usage = "[COMMAND [SUBCOMMAND]]",
};

/* Commands in the order `codeplace help` lists them: the pipeline first. */
static const cli_cmd *const commands[] = {
    &cmd_image,
    &cmd_trace,
    &cmd_sim,
    &cmd_plan,
    &cmd_verify,
    &cmd_apply,
    &cmd_target,
    &cmd_samples,
    &cmd_report,
    &cmd_diff,
    &cmd_bench,
    &cmd_calc,
    &cmd_record,
    &cmd_counters,
    &cmd_help,
    NULL,
};

static void print_overview(FILE *f)
{
    fputs("usage: codeplace <command> [options]\n"
          "       codeplace help <command>\n"
          "       codeplace --version\n\n"
          "Profile, simulate and plan code placement for microcontrollers "
          "that run code\nfrom cached external flash.\n\ncommands:\n", f);
    for (const cli_cmd *const *c = commands; *c; c++)
        fprintf(f, "  %-10s  %s\n", (*c)->name, (*c)->summary);
    fputs("\nRun 'codeplace help <command>' for a command's options, and\n"
          "'codeplace help <command> <subcommand>' for a nested command's.\n", f);
}

static int cmd_help_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        ;
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos == 0) {
        print_overview(stdout);
        return CLI_OK;
    }
    return cli_help_path(commands, p.npos, pos);
}

int main(int argc, char **argv)
{
    /* A file size limit (ulimit -f) makes writes fail with EFBIG, which every
     * writer reports, instead of killing the process mid-file. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        print_overview(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("codeplace %s\n", CODEPLACE_VERSION);
        return fflush(stdout) ? CLI_FAIL : CLI_OK;
    }
    if (!strcmp(name, "--help") || !strcmp(name, "-h"))
        name = "help";
    const cli_cmd *c = cli_find(commands, name);
    if (!c) {
        fprintf(stderr, "codeplace: error: '%s' is not a codeplace command\n"
                "try 'codeplace help'\n", name);
        return CLI_USAGE;
    }
    int rc = cli_run(c, argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "codeplace: error: cannot write standard output\n");
        if (rc == CLI_OK)
            rc = CLI_FAIL;
    }
    return rc;
}
