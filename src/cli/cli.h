/* cli: the command table's types, the option parser that every command
 * shares, help generated from the tables, and the reporting helpers.
 * This is the only layer (with the commands, src/cmd/) that prints or picks exit codes. */
#ifndef CP_CLI_H
#define CP_CLI_H

#include <stdint.h>
#include <stdio.h>

/* Exit codes. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Global options a command accepts (cli_cmd.globals). */
enum {
    CLI_G_JSON = 1 << 0,  /* --json */
    CLI_G_CSV = 1 << 1,   /* --csv */
    CLI_G_OUT = 1 << 2,   /* -o, --output FILE */
    CLI_G_VERB = 1 << 3,  /* -q, --quiet / -v, --verbose */
    CLI_G_ALL = 0xf,
};

/* One option of a command. Tables are indexed with an enum in the command's
 * file and end with an entry whose name is NULL. */
typedef struct cli_opt {
    const char *name;  /* long name, without the dashes */
    char shrt;         /* short letter, or 0 */
    const char *arg;   /* metavariable (e.g. "FILE"); NULL for a flag */
    const char *help;  /* one line */
} cli_opt;

struct cli_ctx;

typedef struct cli_cmd cli_cmd;

/* A command, or a group of nested commands (`bench udp`): a group has subs
 * and no fn; each of its subcommands points back at it with parent, so its
 * full name (cli_cmd_name) and help are generated from the same tables. */
struct cli_cmd {
    const char *name; /* one word: "udp", not "bench udp" */
    int (*fn)(struct cli_ctx *ctx, int argc, char **argv);
    const char *summary;     /* one line for `codeplace help` */
    const char *usage;       /* arguments after the command name */
    const char *description; /* paragraph(s) for `help <command>`; may be NULL */
    const cli_opt *opts;     /* may be NULL */
    unsigned globals;        /* CLI_G_* */
    const cli_cmd *const *subs; /* a group's subcommands, NULL-terminated */
    const cli_cmd *parent;      /* the group this command belongs to */
};

typedef struct cli_ctx {
    const cli_cmd *cmd;
    int json, csv, verbose; /* verbose: -1 quiet, 0 normal, 1.. verbose */
    const char *out_path;   /* -o FILE, NULL for stdout */
    FILE *out;              /* where results go; cli_out_open sets it */
} cli_ctx;

/* The parser walks argv once. Options are returned one by one; positional
 * arguments are collected in pos[]. */
typedef struct cli_parser {
    cli_ctx *ctx;
    int argc, i;
    char **argv;
    char **pos;
    int npos;
    const char *pending; /* rest of a cluster of short options */
    int dashdash;
} cli_parser;

enum { CLI_END = -1, CLI_ERR = -2, CLI_HELPED = -3 };

/* argv[0] is the command name. pos must have room for argc entries. */
void cli_parser_init(cli_parser *p, cli_ctx *ctx, int argc, char **argv,
                     char **pos);
/* Returns the index of the next option in ctx->cmd->opts and sets *arg to its
 * argument (NULL for flags); CLI_END when done; CLI_ERR after reporting a
 * usage error; CLI_HELPED after printing help. Global options are handled
 * here and never returned. */
int cli_next(cli_parser *p, const char **arg);

/* Convenience for the end of a switch: maps CLI_ERR/CLI_HELPED to the exit
 * code a command should return. */
int cli_parse_exit(int rc);

/* Reporting. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage error for the current command: prints it and a hint, returns 2. */
int cli_usage_error(cli_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Progress and notes on stderr, silenced by -q. */
void cli_info(cli_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Only with -v. */
void cli_debug(cli_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Number arguments: print a usage error naming the option on failure. */
int cli_arg_u64(cli_ctx *ctx, const char *opt, const char *s, int suffix,
                uint64_t *out);
int cli_arg_u32(cli_ctx *ctx, const char *opt, const char *s, int suffix,
                uint32_t *out);
int cli_arg_double(cli_ctx *ctx, const char *opt, const char *s, double *out);

/* The ELF a command works on: a positional argument (the documented form)
 * or --elf FILE (opt, NULL when not given). Without opt, the first
 * positional that starts with the ELF magic is taken and removed from pos;
 * when none does, first = 1 takes any first positional (the commands whose
 * only positional is the ELF) and first = 2 the second of exactly two (the
 * commands documented as "INPUT ELF": what is not an ELF then gets its
 * error from img_open). An ELF given both ways is a usage error. Returns 0 with
 * *elf set (NULL when none was given), or prints the error and returns -1. */
int cli_elf_arg(cli_ctx *ctx, char **pos, int *npos, const char *opt,
                int first, const char **elf);

/* Opens ctx->out (the -o file, or stdout). Returns 0 or reports and -1.
 * The file is written whole or not at all (util/wfile.h): it appears when
 * cli_out_close succeeds. */
int cli_out_open(cli_ctx *ctx);
/* The same for an event stream that is read while it is written (bench
 * sink's events): the -o file is written in place. */
int cli_out_open_stream(cli_ctx *ctx);
/* Flushes and closes ctx->out; reports write errors; returns 0 or -1. */
int cli_out_close(cli_ctx *ctx);

/* Help of a command (options) or of a group (its subcommands). */
void cli_print_cmd_help(FILE *f, const cli_cmd *cmd);

/* The full name of a command, its groups' names first ("bench udp"). The
 * string lives in a static buffer until the next call. */
const char *cli_cmd_name(const cli_cmd *cmd);

/* The command named name in a NULL-terminated table, or NULL. */
const cli_cmd *cli_find(const cli_cmd *const *table, const char *name);

/* The one dispatcher (bpftool's cmd_select): argv[0] is cmd's own name.
 * A group takes the next word as a subcommand ("help SUB...", "--help" and
 * "-h" print help) and recurses; a command runs its fn with a fresh context,
 * whose output it then closes. Returns the exit code. */
int cli_run(const cli_cmd *cmd, int argc, char **argv);

/* `help WORD...`: walks the words down table and its groups' subs and
 * prints the help of the command they name. Returns the exit code. */
int cli_help_path(const cli_cmd *const *table, int nwords, char **words);

#endif
