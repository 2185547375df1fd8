/* trc: running QEMU with the recorder plugin (see qemurun.h). */
#include "trace/qemurun.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A -plugin argument value: QEMU's option parser takes ",," for a comma. */
static int append(char **s, size_t *len, size_t *cap, const char *v, int esc)
{
    for (const char *p = v; *p; p++) {
        if (*len + 3 > *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            char *n = realloc(*s, nc);
            if (!n)
                return -1;
            *s = n;
            *cap = nc;
        }
        (*s)[(*len)++] = *p;
        if (esc && *p == ',')
            (*s)[(*len)++] = ',';
    }
    if (*len + 1 > *cap) {
        char *n = realloc(*s, *cap + 16);
        if (!n)
            return -1;
        *s = n;
        *cap += 16;
    }
    (*s)[*len] = 0;
    return 0;
}

static int kv(char **s, size_t *len, size_t *cap, const char *k,
              const char *v)
{
    return append(s, len, cap, ",", 0) || append(s, len, cap, k, 0) ||
           append(s, len, cap, "=", 0) || append(s, len, cap, v, 1);
}

char **trc_qemu_argv(const trc_qemu_cfg *c, cp_err *err)
{
    char **a = calloc(32, sizeof *a);
    char *pl = NULL;
    size_t len = 0, cap = 0;
    char b[64];
    int bad = 0;
    if (!a)
        goto oom;
    bad |= append(&pl, &len, &cap, c->plugin, 1);
    bad |= kv(&pl, &len, &cap, "out", c->out);
    snprintf(b, sizeof b, "0x%x", c->mark);
    bad |= kv(&pl, &len, &cap, "mark", b);
    snprintf(b, sizeof b, "%llu", (unsigned long long)c->n);
    bad |= kv(&pl, &len, &cap, "marks", b);
    snprintf(b, sizeof b, "%llu", (unsigned long long)c->skip);
    bad |= kv(&pl, &len, &cap, "skip", b);
    for (unsigned i = 0; i < c->ncached; i++) {
        snprintf(b, sizeof b, "0x%x:0x%x", c->cached[i].base,
                 c->cached[i].size);
        bad |= kv(&pl, &len, &cap, "cached", b);
    }
    for (unsigned i = 0; i < c->nnoalloc; i++) {
        snprintf(b, sizeof b, "0x%x:0x%x", c->noalloc[i].base,
                 c->noalloc[i].size);
        bad |= kv(&pl, &len, &cap, "noalloc", b);
    }
    for (unsigned i = 0; i < c->nvec; i++) {
        snprintf(b, sizeof b, "%u:0x%x", c->vec[i].exc, c->vec[i].handler);
        bad |= kv(&pl, &len, &cap, "vec", b);
    }
    if (c->target && *c->target)
        bad |= kv(&pl, &len, &cap, "target", c->target);
    if (c->cpu && *c->cpu)
        bad |= kv(&pl, &len, &cap, "cpu", c->cpu);
    if (c->elf_hash && *c->elf_hash)
        bad |= kv(&pl, &len, &cap, "elf", c->elf_hash);
    if (c->endfile)
        bad |= kv(&pl, &len, &cap, "endfile", c->endfile);
    if (bad)
        goto oom;
    const char *fixed[] = {c->qemu, "-M", c->machine, "-display", "none",
                           "-monitor", "none", "-serial", "none",
                           "-semihosting-config", "enable=on,target=native",
                           "-kernel", c->elf, "-plugin", pl};
    size_t n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (!(a[n++] = strdup(fixed[i])))
            goto oom;
    if (c->udp_guest) {
        snprintf(b, sizeof b, "user,model=lan9118,hostfwd=udp:127.0.0.1:%u-:%u",
                 c->udp_host, c->udp_guest);
        if (!(a[n++] = strdup("-nic")) || !(a[n++] = strdup(b)))
            goto oom;
    }
    free(pl);
    return a;
oom:
    free(pl);
    trc_qemu_argv_free(a);
    cp_seterr(err, "out of memory");
    return NULL;
}

void trc_qemu_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

int trc_qemu_spawn(char *const *argv, int quiet, pid_t *pid, cp_err *err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC))
        return cp_seterr(err, "pipe: %s", strerror(errno));
    pid_t p = fork();
    if (p < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return cp_seterr(err, "fork: %s", strerror(errno));
    }
    if (!p) {
        /* Its own process group: a Ctrl-C at the terminal reaches codeplace,
         * which then stops QEMU so that the plugin records why. */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            if (quiet)
                dup2(nul, 1);
            else
                dup2(2, 1);
        }
        execvp(argv[0], argv);
        int e = errno;
        if (write(pfd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(pfd[1]);
    int e = 0;
    ssize_t r = read(pfd[0], &e, sizeof e);
    close(pfd[0]);
    if (r == (ssize_t)sizeof e) {
        waitpid(p, NULL, 0);
        return cp_seterr(err, "cannot run '%s': %s", argv[0], strerror(e));
    }
    *pid = p;
    return 0;
}

static void decode(int st, trc_qemu_end *how, int *status)
{
    if (WIFSIGNALED(st)) {
        *how = TRC_QEMU_SIGNALLED;
        *status = WTERMSIG(st);
    } else {
        *how = TRC_QEMU_EXITED;
        *status = WEXITSTATUS(st);
    }
}

/* Reaps PID within LIMIT_S seconds (0: no limit) or until *STOP: 0 when
 * it ended (HOW, STATUS set), 1 when it did not, -1 when waitpid failed. */
static int reap(pid_t pid, double limit_s, volatile sig_atomic_t *stop,
                trc_qemu_end *how, int *status)
{
    double t0 = cp_now_s();
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            decode(st, how, status);
            return 0;
        }
        if (r < 0 && errno != EINTR)
            return -1;
        if ((stop && *stop) || (limit_s > 0 && cp_now_s() - t0 >= limit_s))
            return 1;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int trc_qemu_wait(pid_t pid, double deadline_s, volatile sig_atomic_t *stop,
                  trc_qemu_end *how, int *status, cp_err *err)
{
    int r = reap(pid, deadline_s, stop, how, status);
    if (r < 0)
        return cp_seterr(err, "waitpid: %s", strerror(errno));
    return r;
}

int trc_qemu_stop(pid_t pid, double grace_s, trc_qemu_end *how, int *status)
{
    kill(pid, SIGTERM);
    /* a grace of 0 would mean "no limit" to reap: keep a moment */
    int r = reap(pid, grace_s > 0 ? grace_s : 0.001, NULL, how, status);
    if (r <= 0)
        return r;
    kill(pid, SIGKILL);
    int st;
    if (waitpid(pid, &st, 0) == pid)
        decode(st, how, status);
    return 1;
}

static int exists(const char *p)
{
    struct stat st;
    return !stat(p, &st) && S_ISREG(st.st_mode);
}

int trc_qemu_find_plugin(char *buf, size_t cap, cp_err *err)
{
    const char *env = getenv("CODEPLACE_QEMU_PLUGIN");
    if (env && *env) {
        if (!exists(env))
            return cp_seterr(err, "CODEPLACE_QEMU_PLUGIN: no such file '%s'",
                             env);
        snprintf(buf, cap, "%s", env);
        return 0;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return cp_seterr(err, "cannot find the running binary: %s",
                         strerror(errno));
    exe[n] = 0;
    char *sl = strrchr(exe, '/');
    if (!sl)
        return cp_seterr(err, "cannot find the running binary");
    *sl = 0;
    const char *rel[] = {"/codeplace-qemu.so", "/../codeplace-qemu.so",
                         "/../lib/codeplace/codeplace-qemu.so"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(buf, cap, "%s%s", exe, rel[i]);
        if (exists(buf)) {
            char *rp = realpath(buf, NULL);
            if (rp) {
                snprintf(buf, cap, "%s", rp);
                free(rp);
            }
            return 0;
        }
    }
    return cp_seterr(err, "no codeplace-qemu.so next to %s or in "
                     "%s/../lib/codeplace (make plugin, or set "
                     "CODEPLACE_QEMU_PLUGIN)", exe, exe);
}

int trc_qemu_free_udp_port(unsigned *port, cp_err *err)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cp_seterr(err, "socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) ||
        getsockname(fd, (struct sockaddr *)&a, &l)) {
        int e = errno;
        close(fd);
        return cp_seterr(err, "cannot find a free UDP port: %s", strerror(e));
    }
    *port = ntohs(a.sin_port);
    close(fd);
    return 0;
}
