struct shell;
#define SHELL_NORMAL 0
void shell_fprintf(const struct shell *sh, int c, const char *fmt, ...) __attribute__((format(printf,3,4)));
#define shell_print(sh, ...) shell_fprintf(sh, 0, __VA_ARGS__)
#define shell_error(sh, ...) shell_fprintf(sh, 0, __VA_ARGS__)
#define shell_warn(sh, ...) shell_fprintf(sh, 0, __VA_ARGS__)
#define ARG_UNUSED(x) (void)(x)
typedef int (*shell_cmd_handler)(const struct shell *, size_t, char **);
struct shell_static_entry { const char *syntax; const void *sub; const char *help; shell_cmd_handler h; int m, o; };
#define SHELL_CMD_ARG(n, s, h, f, m, o) { #n, s, h, f, m, o }
#define SHELL_CMD(n, s, h, f) SHELL_CMD_ARG(n, s, h, f, 0, 0)
#define SHELL_SUBCMD_SET_END { 0 }
#define SHELL_STATIC_SUBCMD_SET_CREATE(name, ...) static const struct shell_static_entry name[] = { __VA_ARGS__ }
#define SHELL_CMD_REGISTER(n, s, h, f) const void *shell_reg_##n = s
