/* codeplace trace --qemu: run the firmware in qemu-system-arm with the
 * codeplace-qemu.so recorder, optionally under UDP echo traffic, and report
 * what was recorded. */
#include "cmd-trace.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/net.h"
#include "bench/udp.h"
#include "emu/emu.h"
#include "image/image.h"
#include "trace/qemurun.h"
#include "trace/trace.h"
#include "util/jw.h"

/* QEMU's Cortex-M machines: CPU and the memory the code runs from, which
 * the recorder treats as the cached window unless --target says otherwise. */
typedef struct machine {
    const char *name, *cpu;
    uint32_t code_base, code_size;
} machine;

static const machine machines[] = {
    /* MPS2 AN385 / AN500: ZBT SSRAM1, 4 MiB at 0x00000000 (QEMU
     * hw/arm/mps2.c, mps2_common_init(); ARM AN385 3.2 "Memory map") */
    {"mps2-an385", "cortex-m3", 0x00000000, 0x00400000},
    {"mps2-an386", "cortex-m4", 0x00000000, 0x00400000},
    {"mps2-an500", "cortex-m7", 0x00000000, 0x00400000},
    /* MPS2 AN505: SSRAM1 4 MiB, secure alias at 0x10000000 (QEMU
     * hw/arm/mps2-tz.c; ARM AN505 4.2 "Memory map") */
    {"mps2-an505", "cortex-m33", 0x10000000, 0x00400000},
    /* micro:bit (nRF51822): flash 256 KiB at 0x00000000 (QEMU
     * include/hw/arm/nrf51.h, NRF51_FLASH_BASE; nRF51822 PS 3.0 table 8) */
    {"microbit", "cortex-m0", 0x00000000, 0x00040000},
};

static const machine *find_machine(const char *name)
{
    for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
        if (!strcmp(machines[i].name, name))
            return &machines[i];
    return NULL;
}

static volatile sig_atomic_t q_interrupted;

static void q_on_sigint(int sig)
{
    (void)sig;
    q_interrupted = 1;
}

/* The exception handlers of the ELF's vector table: entries 2.. whose
 * value is the (Thumb) start of a function of the image. */
static void read_vectors(const img *im, trc_qemu_cfg *c, cli_ctx *ctx)
{
    uint32_t vt;
    cp_err err;
    if (emu_find_vectors(im, &vt, &err)) {
        cli_warn("%s: %s; exception contexts are not told apart",
                 img_path(im), err.msg);
        return;
    }
    for (uint32_t i = 2; i < 16 + TRC_QEMU_MAX_VEC && c->nvec <
         TRC_QEMU_MAX_VEC; i++) {
        uint32_t v;
        if (img_read(im, vt + 4 * i, &v, 4))
            break;
        const img_func *f = (v & 1) ? img_lookup(im, v & ~1u) : NULL;
        if (!f || f->addr != (v & ~1u))
            continue;
        c->vec[c->nvec].exc = i;
        c->vec[c->nvec].handler = v & ~1u;
        c->nvec++;
    }
    cli_debug(ctx, "vector table at 0x%08x: %u handlers", vt, c->nvec);
}

/* ---- traffic ---- */

/* Echo requests at a fixed rate on absolute deadlines (bench/net.h's
 * clock), each carrying "CPQE" and its sequence number; a reply counts as
 * answered when it is byte for byte the request. Counts are exact up to
 * the moment QEMU stops: requests still in flight then are sent and not
 * answered. */
typedef struct traffic {
    pthread_t th;
    int running, fd;
    double rate;
    size_t size;
    volatile sig_atomic_t stop;
    pthread_mutex_t lock;
    uint64_t sent, answered, mismatched;
    uint64_t last_answer_ns; /* nb_now_ns() of the last answer */
} traffic;

/* The sequence number of the probes sent while waiting for the guest
 * (same size as the requests, so every echo does the same work). */
#define PROBE_SEQ UINT64_MAX

static void fill(uint8_t *b, size_t n, uint64_t seq)
{
    memcpy(b, "CPQE", 4);
    for (int i = 0; i < 8; i++)
        b[4 + i] = (uint8_t)(seq >> (8 * i));
    for (size_t i = 12; i < n; i++)
        b[i] = (uint8_t)(seq * 31 + i);
}

static void *traffic_main(void *arg)
{
    traffic *t = arg;
    uint8_t req[NB_UDP_MAX_SIZE], rep[NB_UDP_MAX_SIZE + 1], want[NB_UDP_MAX_SIZE];
    uint64_t period = (uint64_t)(1e9 / t->rate), next = nb_now_ns(), seq = 0;
    while (!t->stop) {
        uint64_t now = nb_now_ns();
        if (now >= next) {
            fill(req, t->size, seq);
            if (send(t->fd, req, t->size, 0) == (ssize_t)t->size) {
                pthread_mutex_lock(&t->lock);
                t->sent++;
                pthread_mutex_unlock(&t->lock);
            }
            seq++;
            next += period;
            if (next < now) /* never catch up after a stall */
                next = now + period;
            continue;
        }
        int ms = (int)((next - now) / 1000000);
        struct pollfd p = {t->fd, POLLIN, 0};
        if (poll(&p, 1, ms > 20 ? 20 : ms) == 1) {
            ssize_t r = recv(t->fd, rep, sizeof rep, 0);
            if (r < 12)
                continue;
            uint64_t rs = 0;
            for (int i = 0; i < 8; i++)
                rs |= (uint64_t)rep[4 + i] << (8 * i);
            if (rs == PROBE_SEQ)
                continue; /* a late answer to a probe */
            fill(want, t->size, rs);
            int ok = (size_t)r == t->size && rs < seq &&
                     !memcmp(rep, want, t->size);
            pthread_mutex_lock(&t->lock);
            if (ok) {
                t->answered++;
                t->last_answer_ns = nb_now_ns();
            } else {
                t->mismatched++;
            }
            pthread_mutex_unlock(&t->lock);
        }
    }
    return NULL;
}

/* Sends probes to 127.0.0.1:port until one is answered, QEMU ends or
 * wait_s passes. 1 answered, 0 not, 2 QEMU ended, -1 error. */
static int wait_answer(int fd, pid_t qpid, double wait_s, size_t size,
                       cp_err *err)
{
    uint8_t probe[NB_UDP_MAX_SIZE];
    fill(probe, size, PROBE_SEQ);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double el = (double)(t1.tv_sec - t0.tv_sec) +
                    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (el >= wait_s || q_interrupted)
            return 0;
        /* Until QEMU listens on the port, the host answers with ICMP port
         * unreachable: ECONNREFUSED on the next call. */
        if (send(fd, probe, size, 0) < 0 && errno != ECONNREFUSED)
            return cp_seterr(err, "send: %s", strerror(errno));
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) == 1) {
            char b[2048];
            if (recv(fd, b, sizeof b, 0) > 0)
                return 1;
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        int st;
        if (waitpid(qpid, &st, WNOHANG | WNOWAIT) == qpid)
            return 2; /* QEMU ended: the caller reaps it */
    }
}

static int udp_socket(unsigned port, cp_err *err)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cp_seterr(err, "socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return cp_seterr(err, "connect: %s", strerror(errno));
    }
    return fd;
}

static int start_traffic(traffic *t, int fd, double rate, unsigned size,
                         cp_err *err)
{
    t->fd = fd;
    t->rate = rate;
    t->size = size;
    t->last_answer_ns = nb_now_ns();
    if (pthread_create(&t->th, NULL, traffic_main, t))
        return cp_seterr(err, "cannot start the traffic thread");
    t->running = 1;
    return 0;
}

static void stop_traffic(traffic *t)
{
    if (t->running) {
        t->stop = 1;
        pthread_join(t->th, NULL);
        t->running = 0;
    }
}

/* --run CMD: sh -c CMD in its own process group, with the port in its
 * environment. */
static int start_cmd(const char *cmd, unsigned port, pid_t *pid, cp_err *err)
{
    pid_t p = fork();
    if (p < 0)
        return cp_seterr(err, "fork: %s", strerror(errno));
    if (!p) {
        setpgid(0, 0);
        char b[16];
        snprintf(b, sizeof b, "%u", port);
        setenv("CODEPLACE_UDP_HOST", "127.0.0.1", 1);
        setenv("CODEPLACE_UDP_PORT", b, 1);
        signal(SIGINT, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    *pid = p;
    return 0;
}

/* ---- the summary, read back from the trace ---- */

typedef struct qsum {
    uint64_t bytes, insns, pre, uncached, runs, dreads, ctxs, marks;
    uint64_t *iters;
    size_t nit, cap;
    char end[32];
    int truncated;
} qsum;

static int summarize(const char *path, qsum *s, cp_err *err)
{
    memset(s, 0, sizeof *s);
    trc_reader *r = trc_open_ex(path, TRC_OPEN_PARTIAL | TRC_OPEN_CONTEXT, err);
    if (!r)
        return -1;
    trc_rec rec;
    int rc, in = 0;
    uint64_t cur = 0;
    while ((rc = trc_next(r, &rec, err)) == 1) {
        if (rec.kind == TRC_MARK) {
            if (in && !cp_grow((void **)&s->iters, &s->cap, s->nit + 1,
                               sizeof *s->iters))
                s->iters[s->nit++] = cur;
            in = 1;
            cur = 0;
        } else if (rec.kind == TRC_FETCH) {
            *(in ? &cur : &s->pre) += rec.ninsn;
            if (rec.flags & TRC_F_UNCACHED)
                s->uncached += rec.ninsn;
        }
    }
    if (rc == 0) {
        const trc_totals *t = trc_get_totals(r);
        s->truncated = trc_truncated(r);
        snprintf(s->end, sizeof s->end, "%s",
                 s->truncated ? "truncated" : t->end);
        if (in && !strcmp(s->end, "done") &&
            !cp_grow((void **)&s->iters, &s->cap, s->nit + 1,
                     sizeof *s->iters))
            s->iters[s->nit++] = cur;
        s->insns = t->insns;
        s->runs = t->fetch_runs;
        s->dreads = t->dreads;
        s->ctxs = t->contexts;
        s->marks = t->marks;
        s->bytes = trc_offset(r);
    }
    trc_close(r);
    return rc;
}

static int cmp64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(cli_ctx *ctx, const trace_qemu_opts *o, const qsum *s,
                   const traffic *tr, int udp, double secs)
{
    uint64_t med = 0, mn = 0, mx = 0;
    if (s->nit) {
        uint64_t *c = malloc(s->nit * sizeof *c);
        if (c) {
            memcpy(c, s->iters, s->nit * sizeof *c);
            qsort(c, s->nit, sizeof *c, cmp64);
            med = c[s->nit / 2];
            mn = c[0];
            mx = c[s->nit - 1];
            free(c);
        }
    }
    FILE *f = stdout;
    char b1[32], b2[32], b3[32];
    if (ctx->json) {
        jw w;
        jw_init(&w, f, 1);
        jw_obj_begin(&w);
        jw_key(&w, "trace"); jw_str(&w, ctx->out_path);
        jw_key(&w, "mode"); jw_str(&w, "qemu");
        jw_key(&w, "machine"); jw_str(&w, o->machine);
        jw_key(&w, "iterations"); jw_uint(&w, s->nit);
        jw_key(&w, "instructions"); jw_uint(&w, s->insns);
        jw_key(&w, "pre_instructions"); jw_uint(&w, s->pre);
        jw_key(&w, "uncached_instructions"); jw_uint(&w, s->uncached);
        jw_key(&w, "iteration_instructions");
        jw_obj_begin(&w);
        jw_key(&w, "median"); jw_uint(&w, med);
        jw_key(&w, "min"); jw_uint(&w, mn);
        jw_key(&w, "max"); jw_uint(&w, mx);
        jw_obj_end(&w);
        jw_key(&w, "fetch_runs"); jw_uint(&w, s->runs);
        jw_key(&w, "data_reads"); jw_uint(&w, s->dreads);
        jw_key(&w, "context_switches"); jw_uint(&w, s->ctxs);
        jw_key(&w, "bytes"); jw_uint(&w, s->bytes);
        jw_key(&w, "seconds"); jw_double(&w, secs);
        jw_key(&w, "end"); jw_str(&w, s->end);
        if (udp) {
            jw_key(&w, "echoes_sent"); jw_uint(&w, tr->sent);
            jw_key(&w, "echoes_answered"); jw_uint(&w, tr->answered);
            jw_key(&w, "echoes_wrong"); jw_uint(&w, tr->mismatched);
        }
        jw_obj_end(&w);
        jw_finish(&w);
        return;
    }
    fprintf(f, "trace:        %s (%s bytes, %.3f bytes per instruction)\n",
            ctx->out_path, cli_commas(b1, s->bytes),
            s->insns ? (double)s->bytes / (double)s->insns : 0.0);
    fprintf(f, "mode:         qemu %s (plugin)\n", o->machine);
    fprintf(f, "iterations:   %zu (per iteration: median %s, min %s, ", s->nit,
            cli_commas(b1, med), cli_commas(b2, mn));
    fprintf(f, "max %s instructions)\n", cli_commas(b3, mx));
    fprintf(f, "instructions: %s (%s before the first iteration, %s "
            "uncached)\n", cli_commas(b1, s->insns), cli_commas(b2, s->pre),
            cli_commas(b3, s->uncached));
    fprintf(f, "fetch runs:   %s\n", cli_commas(b1, s->runs));
    fprintf(f, "flash reads:  %s\n", cli_commas(b1, s->dreads));
    fprintf(f, "contexts:     %s switches\n", cli_commas(b1, s->ctxs));
    if (udp)
        fprintf(f, "echoes:       %s sent, %s answered, %s wrong replies "
                "(after the guest first answered)\n", cli_commas(b1, tr->sent),
                cli_commas(b2, tr->answered), cli_commas(b3, tr->mismatched));
    fprintf(f, "ended:        %s\n", s->end);
}

/* ---- the run ---- */

static void leave_reason(const char *path, const char *why)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", why);
        fclose(f);
    }
}

int trace_qemu_run(cli_ctx *ctx, const trace_qemu_opts *o)
{
    cp_err err;
    const machine *m = find_machine(o->machine);
    if (!m) {
        cli_error("--qemu: unknown machine '%s' (mps2-an385, mps2-an386, "
                  "mps2-an500, mps2-an505, microbit)", o->machine);
        return CLI_USAGE;
    }
    img *im = img_open(o->elf, o->map, &err);
    if (!im) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    int status = CLI_FAIL;
    char **argv = NULL;
    char plugin[4096], endfile[4200];
    pid_t qpid = -1, cpid = -1;
    trc_qemu_end how = TRC_QEMU_EXITED;
    int qst = 0, ended = 0;
    traffic tr;
    memset(&tr, 0, sizeof tr);
    pthread_mutex_init(&tr.lock, NULL);
    trc_qemu_cfg c;
    memset(&c, 0, sizeof c);
    const img_func *mf = img_find(im, o->mark);
    uint32_t maddr;
    if (mf) {
        maddr = mf->addr;
    } else if (img_symbol(im, o->mark, &maddr, NULL, &err)) {
        cli_error("--mark: %s", err.msg);
        goto out;
    }
    if (trc_qemu_find_plugin(plugin, sizeof plugin, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    snprintf(endfile, sizeof endfile, "%s.end", ctx->out_path);
    remove(endfile);
    const char *qemu = getenv("CODEPLACE_QEMU");
    c.qemu = qemu && *qemu ? qemu : "qemu-system-arm";
    c.machine = m->name;
    c.elf = o->elf;
    c.plugin = plugin;
    c.out = ctx->out_path;
    c.endfile = endfile;
    c.mark = maddr & ~1u;
    c.n = o->n;
    c.skip = o->skip;
    c.elf_hash = img_hash(im);
    /* --target, or a preset named after the machine, gives the cached
     * window; otherwise the machine's code memory. */
    const tgt *t = o->t ? o->t : tgt_find(m->name);
    char tname[64];
    if (t) {
        tgt_header_name(t, tname, sizeof tname);
        c.target = tname;
        c.cpu = t->cpu;
        for (unsigned i = 0; i < t->nmems; i++) {
            const tgt_mem *mm = &t->mems[i];
            trc_qemu_win *w = NULL;
            if (mm->kind == TGT_MEM_FLASH && c.ncached < TRC_QEMU_MAX_WIN)
                w = &c.cached[c.ncached++];
            else if (mm->kind == TGT_MEM_FLASH_NOALLOC &&
                     c.nnoalloc < TRC_QEMU_MAX_WIN)
                w = &c.noalloc[c.nnoalloc++];
            if (w) {
                w->base = mm->base;
                w->size = mm->size;
            }
        }
        if (!tgt_is_cached(t, c.mark))
            cli_warn("target %s: the marker 0x%08x is outside its cached "
                     "window; on %s the code runs from 0x%08x", t->name,
                     c.mark, m->name, m->code_base);
    } else {
        c.target = m->name;
        c.cpu = m->cpu;
        c.cached[0].base = m->code_base;
        c.cached[0].size = m->code_size;
        c.ncached = 1;
    }
    read_vectors(im, &c, ctx);
    int udp = o->udp_port != 0;
    if (udp && trc_qemu_free_udp_port(&c.udp_host, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    c.udp_guest = o->udp_port;
    c.quiet = ctx->verbose <= 0;
    if (!(argv = trc_qemu_argv(&c, &err))) {
        cli_error("%s", err.msg);
        goto out;
    }
    if (ctx->verbose > 0) {
        fprintf(stderr, "codeplace: running");
        for (char **a = argv; *a; a++)
            fprintf(stderr, " %s", *a);
        fputc('\n', stderr);
    }
    q_interrupted = 0;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = q_on_sigint;
    sigaction(SIGINT, &sa, &old);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (trc_qemu_spawn(argv, c.quiet, &qpid, &err)) {
        cli_error("%s", err.msg);
        sigaction(SIGINT, &old, NULL);
        goto out;
    }
    cli_info(ctx, "running %s on QEMU %s (pid %d), %llu iterations...",
             o->elf, m->name, (int)qpid, (unsigned long long)o->n);
    const char *why = NULL;
    int ufd = -1;
    if (udp && (ufd = udp_socket(c.udp_host, &err)) < 0) {
        cli_error("%s", err.msg);
        why = "stopped";
    } else if (udp) {
        int a = wait_answer(ufd, qpid, o->timeout > 0 ? o->timeout : 60,
                            o->size, &err);
        if (a < 0) {
            cli_error("%s", err.msg);
            why = "stopped";
        } else if (a == 2) {
            cli_warn("QEMU ended before the guest answered on UDP port %u; "
                     "no traffic was sent", o->udp_port);
        } else if (!a) {
            if (!q_interrupted)
                cli_error("the guest did not answer on UDP port %u "
                          "(forwarded from 127.0.0.1:%u)", o->udp_port,
                          c.udp_host);
            why = q_interrupted ? "interrupted" : "stopped";
        } else if (o->run) {
            if (start_cmd(o->run, c.udp_host, &cpid, &err)) {
                cli_error("--run: %s", err.msg);
                why = "stopped";
            }
        } else if (start_traffic(&tr, ufd, o->rate, o->size, &err)) {
            cli_error("%s", err.msg);
            why = "stopped";
        } else {
            cli_info(ctx, "the guest answers; sending %.0f echo requests/s "
                     "of %u bytes", o->rate, o->size);
        }
    }
    while (!why) {
        double left = 0;
        if (o->timeout > 0) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double el = (double)(t1.tv_sec - t0.tv_sec) +
                        (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
            left = o->timeout - el;
            if (left <= 0) {
                why = "time limit";
                break;
            }
            if (left > 0.2)
                left = 0.2;
        } else {
            left = 0.2;
        }
        int r = trc_qemu_wait(qpid, left, &q_interrupted, &how, &qst, &err);
        if (r < 0) {
            cli_error("%s", err.msg);
            why = "stopped";
        } else if (r == 0) {
            ended = 1;
            break;
        } else if (q_interrupted) {
            why = "interrupted";
        } else if (tr.running) {
            pthread_mutex_lock(&tr.lock);
            uint64_t last = tr.last_answer_ns;
            pthread_mutex_unlock(&tr.lock);
            if (nb_now_ns() - last > (uint64_t)5e9)
                why = "no answers";
        } else if (cpid > 0 && waitpid(cpid, NULL, WNOHANG) == cpid) {
            cpid = -1;
            why = "stopped";
        }
    }
    if (!ended) {
        leave_reason(endfile, why);
        if (trc_qemu_stop(qpid, 5.0, &how, &qst) > 0)
            cli_warn("QEMU (pid %d) did not stop on SIGTERM; killed",
                     (int)qpid);
    }
    qpid = -1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sigaction(SIGINT, &old, NULL);
    stop_traffic(&tr);
    if (ufd >= 0)
        close(ufd);
    if (cpid > 0) {
        kill(-cpid, SIGTERM);
        waitpid(cpid, NULL, 0);
        cpid = -1;
    }
    remove(endfile);
    double secs = (double)(t1.tv_sec - t0.tv_sec) +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    qsum s;
    if (summarize(ctx->out_path, &s, &err)) {
        cli_error("%s", err.msg);
        if (ended && how == TRC_QEMU_EXITED && qst)
            cli_error("QEMU exited with status %d", qst);
        free(s.iters);
        goto out;
    }
    report(ctx, o, &s, &tr, udp, secs);
    if (secs > 0 && s.insns >= 1000000)
        cli_info(ctx, "%.1f M instructions/s (%llu instructions in %.3f s)",
                 (double)s.insns / secs / 1e6, (unsigned long long)s.insns,
                 secs);
    if (!strcmp(s.end, "done")) {
        status = CLI_OK;
    } else if (!strcmp(s.end, "interrupted") || !strcmp(s.end, "time limit")) {
        cli_warn("%s after %zu iterations; the trace so far is kept and "
                 "valid", !strcmp(s.end, "interrupted") ? "interrupted"
                 : "stopped by --timeout", s.nit);
        status = CLI_OK;
    } else if (!strcmp(s.end, "no answers")) {
        cli_error("the guest stopped answering after %zu of %llu "
                  "iterations; the trace so far is kept and valid", s.nit,
                  (unsigned long long)o->n);
    } else if (s.truncated) {
        cli_error("%s: QEMU ended without the trace's trailer (%s %d); "
                  "the complete blocks are readable with --info --partial",
                  ctx->out_path, how == TRC_QEMU_SIGNALLED ? "signal"
                  : "exit status", qst);
    } else {
        cli_error("%s: the firmware stopped after %zu of %llu iterations "
                  "(QEMU %s %d); the trace so far is kept and valid", o->elf,
                  s.nit, (unsigned long long)o->n,
                  how == TRC_QEMU_SIGNALLED ? "signal" : "exit status", qst);
    }
    free(s.iters);
out:
    if (qpid > 0)
        trc_qemu_stop(qpid, 2.0, &how, &qst);
    trc_qemu_argv_free(argv);
    img_free(im);
    if (fflush(stdout)) {
        cli_error("cannot write the output");
        return CLI_FAIL;
    }
    return status;
}
