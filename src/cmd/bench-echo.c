/* codeplace bench echo: a UDP echo service. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "bench/net.h"
#include "bench/sweepfile.h"
#include "cmd/bench.h"
#include "cmd/commands.h"

enum { E_LISTEN, E_DURATION, E_NOPT };

static const cli_opt echo_opts[] = {
    [E_LISTEN] = {"listen", 'L', "ADDR:PORT", "where to listen (default "
                  "0.0.0.0:7)"},
    [E_DURATION] = {"duration", 'd', "SECONDS", "stop after this long "
                    "(default: until Ctrl-C)"},
    [E_NOPT] = {0},
};

static int bench_echo_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_bench_echo = {
    .name = "echo",
    .parent = &cmd_bench,
    .fn = bench_echo_fn,
    .summary = "a UDP echo service (recvmmsg/sendmmsg) to calibrate a sweep",
    .usage = "[--listen ADDR:PORT] [--duration S]",
    .description =
        "Echoes every UDP datagram back to its sender, in batches. Run it on the\n"
        "host or on another machine to see what the sweep itself can reach.\n\n"
        "example:\n"
        "  codeplace bench echo --listen 127.0.0.1:9007 &\n"
        "  codeplace bench udp 127.0.0.1:9007 --rates 10000:100000:10000",
    .opts = echo_opts,
    .globals = CLI_G_VERB,
};

static int bench_echo_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg, *listen_s = "0.0.0.0:7";
    double duration = 0;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case E_LISTEN: listen_s = arg; break;
        case E_DURATION: if (bench_arg_seconds(ctx, "duration", arg, &duration) < 0) return CLI_USAGE; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos)
        return cli_usage_error(ctx, "bench echo: no arguments besides options");
    cp_err err;
    struct sockaddr_storage a;
    socklen_t al;
    if (nb_resolve_listen(listen_s, 7, SOCK_DGRAM, &a, &al, &err) < 0)
        return cli_usage_error(ctx, "option '--listen': %s", err.msg);
    int fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int big = 4 << 20;
    char buf[80];
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, al) < 0) {
        cli_error("bench echo: cannot listen on %s: %s",
                  nb_addr_str(&a, buf, sizeof buf), strerror(errno));
        if (fd >= 0)
            close(fd);
        return CLI_FAIL;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    bench_catch_stop();
    if (duration > 0)
        alarm((unsigned)ceil(duration));
    bench_stop_on(SIGALRM);
    socklen_t sl = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &sl);
    cli_info(ctx, "echoing on %s", nb_addr_str(&a, buf, sizeof buf));
    uint64_t n = 0;
    rc = nb_udp_echo_serve(fd, &cp_sig_stop, &n, &err);
    close(fd);
    cli_info(ctx, "echoed %llu datagrams", (unsigned long long)n);
    if (rc < 0) {
        cli_error("bench echo: %s", err.msg);
        return CLI_FAIL;
    }
    return CLI_OK;
}
