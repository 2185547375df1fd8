#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "util/wfile.h"

/* The global options, in the order help lists them. */
static const struct {
    unsigned mask;
    const char *name;
    char shrt;
    const char *arg;
    const char *help;
} globals[] = {
    {CLI_G_JSON, "json", 0, NULL, "write JSON instead of text"},
    {CLI_G_CSV, "csv", 0, NULL, "write CSV instead of text"},
    {CLI_G_OUT, "output", 'o', "FILE", "write the result to FILE instead of stdout"},
    {CLI_G_VERB, "quiet", 'q', NULL, "print no progress or notes"},
    {CLI_G_VERB, "verbose", 'v', NULL, "print more detail (repeatable)"},
};
#define NGLOBALS (sizeof globals / sizeof globals[0])

static void vreport(const char *kind, const char *fmt, va_list ap)
{
    fflush(stdout);
    fprintf(stderr, "codeplace: %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning", fmt, ap);
    va_end(ap);
}

int cli_usage_error(cli_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
    if (ctx && ctx->cmd)
        fprintf(stderr, "usage: codeplace %s %s\n"
                "try 'codeplace help %s' for the options\n",
                cli_cmd_name(ctx->cmd), ctx->cmd->usage ? ctx->cmd->usage : "",
                cli_cmd_name(ctx->cmd));
    return CLI_USAGE;
}

void cli_info(cli_ctx *ctx, const char *fmt, ...)
{
    if (ctx && ctx->verbose < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_debug(cli_ctx *ctx, const char *fmt, ...)
{
    if (!ctx || ctx->verbose < 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_parser_init(cli_parser *p, cli_ctx *ctx, int argc, char **argv,
                     char **pos)
{
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->argc = argc;
    p->argv = argv;
    p->pos = pos;
    p->i = 1;
}

static int nopts(const cli_cmd *cmd)
{
    int n = 0;
    if (cmd->opts)
        while (cmd->opts[n].name)
            n++;
    return n;
}

/* Applies a global option; returns 1 if name was one, 0 if not, CLI_ERR on a
 * missing argument. */
static int take_global(cli_parser *p, size_t g, const char *inline_arg,
                       const char **out_arg)
{
    cli_ctx *ctx = p->ctx;
    const char *arg = NULL;
    if (globals[g].arg) {
        if (inline_arg)
            arg = inline_arg;
        else if (p->i < p->argc)
            arg = p->argv[p->i++];
        else
            return cli_usage_error(ctx, "option '--%s' needs an argument",
                                   globals[g].name), CLI_ERR;
    } else if (inline_arg) {
        return cli_usage_error(ctx, "option '--%s' takes no argument",
                               globals[g].name), CLI_ERR;
    }
    (void)out_arg;
    if (!strcmp(globals[g].name, "json"))
        ctx->json = 1;
    else if (!strcmp(globals[g].name, "csv"))
        ctx->csv = 1;
    else if (!strcmp(globals[g].name, "output"))
        ctx->out_path = arg;
    else if (!strcmp(globals[g].name, "quiet"))
        ctx->verbose = -1;
    else if (!strcmp(globals[g].name, "verbose"))
        ctx->verbose = ctx->verbose < 0 ? 1 : ctx->verbose + 1;
    return 1;
}

static int find_long(const cli_cmd *cmd, const char *name, size_t len,
                     int *is_global)
{
    int n = nopts(cmd);
    for (int k = 0; k < n; k++)
        if (strlen(cmd->opts[k].name) == len &&
            !strncmp(cmd->opts[k].name, name, len)) {
            *is_global = 0;
            return k;
        }
    for (size_t g = 0; g < NGLOBALS; g++)
        if ((cmd->globals & globals[g].mask) &&
            strlen(globals[g].name) == len &&
            !strncmp(globals[g].name, name, len)) {
            *is_global = 1;
            return (int)g;
        }
    return -1;
}

static int find_short(const cli_cmd *cmd, char c, int *is_global)
{
    int n = nopts(cmd);
    for (int k = 0; k < n; k++)
        if (cmd->opts[k].shrt == c) {
            *is_global = 0;
            return k;
        }
    for (size_t g = 0; g < NGLOBALS; g++)
        if ((cmd->globals & globals[g].mask) && globals[g].shrt == c) {
            *is_global = 1;
            return (int)g;
        }
    return -1;
}

static int short_opt(cli_parser *p, const char **arg)
{
    const cli_cmd *cmd = p->ctx->cmd;
    char c = *p->pending++;
    if (c == 'h') {
        cli_print_cmd_help(stdout, cmd);
        return CLI_HELPED;
    }
    int glob;
    int k = find_short(cmd, c, &glob);
    if (k < 0) {
        cli_usage_error(p->ctx, "%s: unknown option '-%c'", cli_cmd_name(cmd), c);
        return CLI_ERR;
    }
    int wants = glob ? globals[k].arg != NULL : cmd->opts[k].arg != NULL;
    const char *inl = NULL;
    if (wants && *p->pending) {
        inl = p->pending;
        p->pending = NULL;
    }
    if (p->pending && !*p->pending)
        p->pending = NULL;
    if (glob) {
        int rc = take_global(p, (size_t)k, inl, arg);
        return rc == CLI_ERR ? CLI_ERR : cli_next(p, arg);
    }
    *arg = NULL;
    if (wants) {
        if (inl)
            *arg = inl;
        else if (p->i < p->argc)
            *arg = p->argv[p->i++];
        else {
            cli_usage_error(p->ctx, "%s: option '-%c' needs an argument",
                            cli_cmd_name(cmd), c);
            return CLI_ERR;
        }
    }
    return k;
}

int cli_next(cli_parser *p, const char **arg)
{
    const cli_cmd *cmd = p->ctx->cmd;
    *arg = NULL;
    if (p->pending)
        return short_opt(p, arg);
    while (p->i < p->argc) {
        char *a = p->argv[p->i++];
        if (p->dashdash || a[0] != '-' || a[1] == 0) {
            p->pos[p->npos++] = a;
            continue;
        }
        if (a[1] != '-') {
            p->pending = a + 1;
            return short_opt(p, arg);
        }
        if (a[2] == 0) {
            p->dashdash = 1;
            continue;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (len == 4 && !strncmp(name, "help", 4)) {
            cli_print_cmd_help(stdout, cmd);
            return CLI_HELPED;
        }
        int glob;
        int k = find_long(cmd, name, len, &glob);
        if (k < 0) {
            cli_usage_error(p->ctx, "%s: unknown option '--%.*s'", cli_cmd_name(cmd),
                            (int)len, name);
            return CLI_ERR;
        }
        if (glob) {
            if (take_global(p, (size_t)k, eq ? eq + 1 : NULL, arg) == CLI_ERR)
                return CLI_ERR;
            continue;
        }
        const cli_opt *o = &cmd->opts[k];
        if (!o->arg) {
            if (eq) {
                cli_usage_error(p->ctx, "%s: option '--%s' takes no argument",
                                cli_cmd_name(cmd), o->name);
                return CLI_ERR;
            }
            return k;
        }
        if (eq)
            *arg = eq + 1;
        else if (p->i < p->argc)
            *arg = p->argv[p->i++];
        else {
            cli_usage_error(p->ctx, "%s: option '--%s' needs an argument",
                            cli_cmd_name(cmd), o->name);
            return CLI_ERR;
        }
        return k;
    }
    return CLI_END;
}

int cli_parse_exit(int rc)
{
    return rc == CLI_HELPED ? CLI_OK : CLI_USAGE;
}

/* The option as a user types it, whichever way a command names it to the
 * helpers below ("iterations", "-n" or "--sp"): "--iterations", "--sp". */
static const char *opt_label(const cli_ctx *ctx, const char *opt, char *buf,
                             size_t n)
{
    opt += strspn(opt, "-");
    if (opt[0] && !opt[1] && ctx && ctx->cmd && ctx->cmd->opts)
        for (const cli_opt *o = ctx->cmd->opts; o->name; o++)
            if (o->shrt == opt[0]) {
                snprintf(buf, n, "--%s", o->name);
                return buf;
            }
    snprintf(buf, n, "--%s", opt);
    return buf;
}

int cli_arg_u64(cli_ctx *ctx, const char *opt, const char *s, int suffix,
                uint64_t *out)
{
    char lb[64];
    opt = opt_label(ctx, opt, lb, sizeof lb);
    if (cp_parse_u64(s, suffix, out) < 0) {
        cli_usage_error(ctx, "option '%s': '%s' is not a valid number%s",
                        opt, s, suffix ? " (suffixes K, M, G allowed)" : "");
        return -1;
    }
    return 0;
}

int cli_arg_u32(cli_ctx *ctx, const char *opt, const char *s, int suffix,
                uint32_t *out)
{
    uint64_t v;
    char lb[64];
    if (cli_arg_u64(ctx, opt, s, suffix, &v) < 0)
        return -1;
    if (v > UINT32_MAX) {
        cli_usage_error(ctx, "option '%s': %s is too large",
                        opt_label(ctx, opt, lb, sizeof lb), s);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int cli_arg_double(cli_ctx *ctx, const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) {
        char lb[64];
        cli_usage_error(ctx, "option '%s': '%s' is not a number",
                        opt_label(ctx, opt, lb, sizeof lb), s);
        return -1;
    }
    *out = v;
    return 0;
}

static int is_elf_file(const char *path)
{
    unsigned char m[4];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(m, 1, sizeof m, f);
    fclose(f);
    return n == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
}

static void drop_pos(char **pos, int *npos, int i)
{
    for (int k = i; k + 1 < *npos; k++)
        pos[k] = pos[k + 1];
    (*npos)--;
}

int cli_elf_arg(cli_ctx *ctx, char **pos, int *npos, const char *opt,
                int first, const char **elf)
{
    *elf = opt;
    for (int i = 0; i < *npos; i++) {
        if (!is_elf_file(pos[i]))
            continue;
        if (opt) {
            cli_usage_error(ctx, "%s: the ELF is given twice: '%s' and "
                            "--elf '%s'", cli_cmd_name(ctx->cmd), pos[i], opt);
            return -1;
        }
        *elf = pos[i];
        drop_pos(pos, npos, i);
        return 0;
    }
    if (!opt && first == 1 && *npos > 0) {
        *elf = pos[0];
        drop_pos(pos, npos, 0);
    } else if (!opt && first == 2 && *npos == 2) {
        *elf = pos[1];
        drop_pos(pos, npos, 1);
    }
    return 0;
}

/* The -o file of this process: written to a temporary file and renamed
 * by cli_out_close; removed at exit when a command fails before that. */
static cp_wfile out_w;
static int out_w_atexit;

static void out_w_cleanup(void)
{
    if (out_w.f)
        cp_wfile_abort(&out_w);
}

int cli_out_open(cli_ctx *ctx)
{
    if (!ctx->out_path || !strcmp(ctx->out_path, "-")) {
        ctx->out = stdout;
        return 0;
    }
    cp_err err;
    if (out_w.f)
        cp_wfile_abort(&out_w);
    if (cp_wfile_open(&out_w, ctx->out_path, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (!out_w_atexit) {
        atexit(out_w_cleanup);
        out_w_atexit = 1;
    }
    ctx->out = out_w.f;
    return 0;
}

int cli_out_open_stream(cli_ctx *ctx)
{
    if (!ctx->out_path || !strcmp(ctx->out_path, "-")) {
        ctx->out = stdout;
        return 0;
    }
    ctx->out = fopen(ctx->out_path, "w");
    if (!ctx->out) {
        cli_error("cannot create '%s': %s", ctx->out_path, strerror(errno));
        return -1;
    }
    return 0;
}

int cli_out_close(cli_ctx *ctx)
{
    if (!ctx->out)
        return 0;
    FILE *f = ctx->out;
    ctx->out = NULL;
    if (f == out_w.f) {
        cp_err err;
        if (cp_wfile_commit(&out_w, &err) < 0) {
            cli_error("%s", err.msg);
            return -1;
        }
        return 0;
    }
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno;
    if (f != stdout && fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        cli_error("cannot write '%s': %s",
                  ctx->out_path ? ctx->out_path : "standard output",
                  strerror(e));
        return -1;
    }
    return 0;
}

static void print_opt(FILE *f, char shrt, const char *name, const char *arg,
                      const char *help)
{
    char left[64];
    int n = 0;
    if (shrt)
        n = snprintf(left, sizeof left, "-%c, --%s", shrt, name);
    else
        n = snprintf(left, sizeof left, "    --%s", name);
    if (arg && n > 0 && (size_t)n < sizeof left)
        snprintf(left + n, sizeof left - (size_t)n, " %s", arg);
    if (strlen(left) > 24)
        fprintf(f, "  %s\n  %-24s  %s\n", left, "", help);
    else
        fprintf(f, "  %-24s  %s\n", left, help);
}

const char *cli_cmd_name(const cli_cmd *cmd)
{
    static char buf[128];
    const cli_cmd *chain[8];
    size_t n = 0, o = 0;
    for (const cli_cmd *c = cmd; c && n < sizeof chain / sizeof chain[0];
         c = c->parent)
        chain[n++] = c;
    buf[0] = 0;
    while (n-- > 0) {
        int w = snprintf(buf + o, sizeof buf - o, "%s%s", o ? " " : "",
                         chain[n]->name);
        if (w < 0 || (size_t)w >= sizeof buf - o)
            break;
        o += (size_t)w;
    }
    return buf;
}

static void print_group_help(FILE *f, const cli_cmd *cmd)
{
    fprintf(f, "usage: codeplace %s %s\n\n%s\n\nsubcommands:\n",
            cli_cmd_name(cmd), cmd->usage ? cmd->usage : "SUBCOMMAND [options]",
            cmd->summary);
    for (const cli_cmd *const *s = cmd->subs; *s; s++)
        fprintf(f, "  %-10s  %s\n", (*s)->name, (*s)->summary);
    if (cmd->description)
        fprintf(f, "\n%s\n", cmd->description);
    fprintf(f, "\nRun 'codeplace help %s SUBCOMMAND' for its options.\n",
            cli_cmd_name(cmd));
}

void cli_print_cmd_help(FILE *f, const cli_cmd *cmd)
{
    if (cmd->subs) {
        print_group_help(f, cmd);
        return;
    }
    fprintf(f, "usage: codeplace %s %s\n\n%s\n", cli_cmd_name(cmd),
            cmd->usage ? cmd->usage : "", cmd->summary);
    if (cmd->description)
        fprintf(f, "\n%s\n", cmd->description);
    int n = nopts(cmd);
    if (n) {
        fputs("\noptions:\n", f);
        for (int k = 0; k < n; k++)
            print_opt(f, cmd->opts[k].shrt, cmd->opts[k].name,
                      cmd->opts[k].arg, cmd->opts[k].help);
    }
    fputs("\ncommon options:\n", f);
    for (size_t g = 0; g < NGLOBALS; g++)
        if (cmd->globals & globals[g].mask)
            print_opt(f, globals[g].shrt, globals[g].name, globals[g].arg,
                      globals[g].help);
    print_opt(f, 'h', "help", NULL, "show this help");
}

const cli_cmd *cli_find(const cli_cmd *const *table, const char *name)
{
    for (; table && *table; table++)
        if (!strcmp((*table)->name, name))
            return *table;
    return NULL;
}

int cli_help_path(const cli_cmd *const *table, int nwords, char **words)
{
    const cli_cmd *c = NULL;
    for (int i = 0; i < nwords; i++) {
        const cli_cmd *next = cli_find(c ? c->subs : table, words[i]);
        if (!next) {
            if (c && !c->subs)
                cli_error("help: '%s' has no subcommands", cli_cmd_name(c));
            else if (c)
                cli_error("help: '%s' is not a %s subcommand", words[i],
                          cli_cmd_name(c));
            else
                cli_error("help: no command '%s'", words[i]);
            fputs("try 'codeplace help' for the commands\n", stderr);
            return CLI_USAGE;
        }
        c = next;
    }
    if (!c)
        return CLI_USAGE;
    cli_print_cmd_help(stdout, c);
    return CLI_OK;
}

int cli_run(const cli_cmd *cmd, int argc, char **argv)
{
    if (!cmd->subs) {
        cli_ctx ctx = {.cmd = cmd};
        int rc = cmd->fn(&ctx, argc, argv);
        if (cli_out_close(&ctx) < 0 && rc == CLI_OK)
            rc = CLI_FAIL;
        return rc;
    }
    if (argc < 2) {
        cli_print_cmd_help(stderr, cmd);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") ||
        (!strcmp(name, "help") && argc == 2)) {
        cli_print_cmd_help(stdout, cmd);
        return CLI_OK;
    }
    if (!strcmp(name, "help"))
        return cli_help_path(cmd->subs, argc - 2, argv + 2);
    const cli_cmd *sub = cli_find(cmd->subs, name);
    if (!sub) {
        cli_ctx ctx = {.cmd = cmd};
        return cli_usage_error(&ctx, "'%s' is not a %s subcommand", name,
                               cli_cmd_name(cmd));
    }
    return cli_run(sub, argc - 1, argv + 1);
}
