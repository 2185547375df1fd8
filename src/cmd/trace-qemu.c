/* codeplace trace --qemu: run the firmware in qemu-system-arm with the
 * codeplace-qemu.so recorder, optionally under UDP traffic (codeplace's
 * echo requests after waiting for the guest, or a --run command's), report
 * what was recorded and who stopped QEMU. The machines, the process, the
 * readiness wait, the traffic and the summary read back from the trace are
 * trace/qemurun.c's. */
#include "cmd/trace.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/tgtopt.h"
#include "emu/emu.h"
#include "image/image.h"
#include "trace/qemurun.h"
#include "trace/trace.h"
#include "util/jw.h"

static volatile sig_atomic_t q_interrupted;

static void q_on_sigint(int sig)
{
    (void)sig;
    q_interrupted = 1;
}

/* The exception handlers of the ELF's vector table, for the recorder to
 * tell exception contexts apart. */
static void read_vectors(const img *im, trc_qemu_cfg *c, cli_ctx *ctx)
{
    uint32_t vt;
    cp_err err;
    if (trc_qemu_vectors(im, c, &vt, &err)) {
        cli_warn("%s: %s; exception contexts are not told apart",
                 img_path(im), err.msg);
        return;
    }
    cli_debug(ctx, "vector table at 0x%08x: %u handlers", vt, c->nvec);
}

/* ---- the report ---- */

static void report(cli_ctx *ctx, const trace_qemu_opts *o,
                   const trc_qemu_sum *s, const trc_qemu_traffic *tr,
                   const char *stopper, double secs)
{
    uint64_t med = s->median, mn = s->min, mx = s->max;
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
        jw_key(&w, "stopped_by"); jw_str(&w, stopper);
        if (tr->sent) {
            jw_key(&w, "echoes_sent"); jw_uint(&w, tr->sent);
            jw_key(&w, "echoes_answered"); jw_uint(&w, tr->answered);
            jw_key(&w, "echoes_wrong"); jw_uint(&w, tr->wrong);
            jw_key(&w, "echoes_unanswered"); jw_uint(&w, tr->unanswered);
            jw_key(&w, "echoes_in_flight"); jw_uint(&w, (uint64_t)tr->inflight);
        }
        jw_obj_end(&w);
        jw_finish(&w);
        return;
    }
    fprintf(f, "trace:        %s (%s bytes, %.3f bytes per instruction)\n",
            ctx->out_path, cp_commas(b1, s->bytes),
            s->insns ? (double)s->bytes / (double)s->insns : 0.0);
    fprintf(f, "mode:         qemu %s (plugin)\n", o->machine);
    fprintf(f, "iterations:   %zu (per iteration: median %s, min %s, ", s->nit,
            cp_commas(b1, med), cp_commas(b2, mn));
    fprintf(f, "max %s instructions)\n", cp_commas(b3, mx));
    fprintf(f, "instructions: %s (%s before the first iteration, %s "
            "uncached)\n", cp_commas(b1, s->insns), cp_commas(b2, s->pre),
            cp_commas(b3, s->uncached));
    fprintf(f, "fetch runs:   %s\n", cp_commas(b1, s->runs));
    fprintf(f, "flash reads:  %s\n", cp_commas(b1, s->dreads));
    fprintf(f, "contexts:     %s switches\n", cp_commas(b1, s->ctxs));
    if (tr->sent)
        fprintf(f, "echoes:       %s sent, %s answered, %s wrong replies, "
                "%llu unanswered, %d in flight at the end (one at a time, "
                "after the guest first answered)\n", cp_commas(b1, tr->sent),
                cp_commas(b2, tr->answered), cp_commas(b3, tr->wrong),
                (unsigned long long)tr->unanswered, tr->inflight);
    fprintf(f, "ended:        %s\n", s->end);
    fprintf(f, "stopped by:   %s\n", stopper);
}

/* ---- the run ---- */

typedef struct qrun {
    trc_qemu_cfg c;
    pid_t qpid, cpid;
    int ufd;
    trc_qemu_traffic tr;
    const char *why;   /* why codeplace stops QEMU: the trace's end */
    int ended;         /* QEMU ended by itself */
    trc_qemu_end how;
    int qst, cst;      /* QEMU's status; the --run command's wait status */
    int ready;         /* the guest answered, or --run's command runs */
    double t0;
    char plugin[4096], endfile[4200], pcap[4200], tname[64];
} qrun;

static double q_elapsed(const qrun *r)
{
    return cp_now_s() - r->t0;
}

/* The trace's window and header from --target, a preset named after the
 * machine, or the machine's code memory. */
static void set_windows(const trace_qemu_opts *o, const trc_qemu_machine *m,
                        qrun *r)
{
    const tgt *t = o->t ? o->t : tgt_find(m->name);
    if (trc_qemu_windows(&r->c, m, t, r->tname, sizeof r->tname))
        cli_warn("target %s: the marker 0x%08x is outside its cached "
                 "window; on %s the code runs from 0x%08x", t->name,
                 r->c.mark, m->name, m->code_base);
}

/* The user network: a free host port forwarded to the guest's, the
 * guest's address from its Zephyr build's .config when it has one. */
static int set_network(cli_ctx *ctx, const trace_qemu_opts *o, qrun *r)
{
    cp_err err;
    trc_qemu_cfg *c = &r->c;
    if (trc_qemu_free_udp_port(&c->udp_host, &err)) {
        cli_error("%s", err.msg);
        return -1;
    }
    c->udp_guest = o->udp_port;
    char from[4200], b[16];
    int z = trc_qemu_zephyr_addr(o->elf, &c->guest_ip, &c->guest_mask,
                                 &c->host_ip, from, sizeof from, &err);
    if (z < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (!z)
        c->guest_ip = 0;
    else
        cli_info(ctx, "the guest is %s (%s); QEMU's user network takes "
                 "its subnet", trc_qemu_ipstr(c->guest_ip, b), from);
    /* the readiness wait watches the guest's frames; --run sends none */
    snprintf(r->pcap, sizeof r->pcap, "%s.net.pcap", ctx->out_path);
    remove(r->pcap);
    c->pcap = o->run ? NULL : r->pcap;
    return 0;
}

static int setup(cli_ctx *ctx, const trace_qemu_opts *o,
                 const trc_qemu_machine *m, img *im, qrun *r)
{
    cp_err err;
    trc_qemu_cfg *c = &r->c;
    const img_func *mf = img_find(im, o->mark);
    uint32_t maddr;
    if (mf) {
        maddr = mf->addr;
    } else if (img_symbol(im, o->mark, &maddr, NULL, &err)) {
        cli_error("--mark: %s", err.msg);
        return -1;
    }
    if (trc_qemu_find_plugin(r->plugin, sizeof r->plugin, &err)) {
        cli_error("%s", err.msg);
        return -1;
    }
    snprintf(r->endfile, sizeof r->endfile, "%s.end", ctx->out_path);
    remove(r->endfile);
    const char *qemu = getenv("CODEPLACE_QEMU");
    c->qemu = qemu && *qemu ? qemu : "qemu-system-arm";
    c->machine = m->name;
    c->elf = o->elf;
    c->plugin = r->plugin;
    c->out = ctx->out_path;
    c->endfile = r->endfile;
    c->mark = maddr & ~1u;
    c->n = o->n;
    c->skip = o->skip;
    c->elf_hash = img_hash(im);
    set_windows(o, m, r);
    read_vectors(im, c, ctx);
    if (o->udp_port && set_network(ctx, o, r))
        return -1;
    c->quiet = ctx->verbose <= 0;
    return 0;
}

/* Why the guest never answered, from what QEMU's dump saw. */
static void no_answer(const trace_qemu_opts *o, const qrun *r,
                      const trc_qemu_await_res *a)
{
    char g[16], s[16];
    uint32_t gip = r->c.guest_ip ? r->c.guest_ip : TRC_QEMU_DEFAULT_GUEST;
    trc_qemu_ipstr(gip, g);
    cli_error("the guest did not answer on UDP port %u (forwarded from "
              "127.0.0.1:%u) in %.1f s", o->udp_port, r->c.udp_host,
              q_elapsed(r));
    if (a->arp_s >= 0)
        cli_info(NULL, "it answered ARP for %s after %.1f s; %u probes on "
                 "port %u, one at a time, got no answer", g, a->arp_s,
                 a->probes, o->udp_port);
    else if (a->guest_src && a->guest_src != gip)
        cli_info(NULL, "it never answered ARP for %s: it speaks from %s "
                 "(give it %s, or build it with its address in its "
                 ".config)", g, trc_qemu_ipstr(a->guest_src, s), g);
    else if (!a->guest_frames)
        cli_info(NULL, "it sent no Ethernet frame at all (QEMU's lan9118 "
                 "is its network interface)");
    else
        cli_info(NULL, "it never answered ARP for %s", g);
    cli_info(NULL, "QEMU's dump of the user network: %s", r->pcap);
}

/* --run: the command from the start. Else wait for the guest, then echo
 * traffic. Sets r->why when the run cannot go on. */
static void start_udp(cli_ctx *ctx, const trace_qemu_opts *o, qrun *r)
{
    cp_err err;
    if (o->run) {
        if (trc_qemu_run_cmd(o->run, r->c.udp_host, &r->cpid, &err)) {
            cli_error("--run: %s", err.msg);
            r->why = "stopped";
        }
        r->ready = !r->why;
        return;
    }
    if ((r->ufd = trc_qemu_udp_socket(r->c.udp_host, &err)) < 0) {
        cli_error("%s", err.msg);
        r->why = "stopped";
        return;
    }
    double limit = o->timeout > 0 ? o->timeout - q_elapsed(r) : 60;
    trc_qemu_await_res a;
    int w = trc_qemu_await(r->ufd, r->pcap, r->c.guest_ip ? r->c.guest_ip
                           : TRC_QEMU_DEFAULT_GUEST, r->qpid, o->size, limit > 0 ? limit
                           : 0.001, &q_interrupted, &a, &err);
    if (w < 0) {
        cli_error("%s", err.msg);
        r->why = "stopped";
    } else if (w == TRC_QEMU_GONE) {
        cli_warn("QEMU ended before the guest answered on UDP port %u; no "
                 "traffic was sent", o->udp_port);
    } else if (w == TRC_QEMU_HALTED) {
        r->why = "interrupted";
    } else if (w == TRC_QEMU_NO_ANSWER) {
        no_answer(o, r, &a);
        r->why = o->timeout > 0 ? "time limit" : "no answer";
    } else if (trc_qemu_traffic_start(&r->tr, r->ufd, o->rate, o->size,
                                      &err)) {
        cli_error("%s", err.msg);
        r->why = "stopped";
    } else {
        r->ready = 1;
        remove(r->pcap);
        cli_info(ctx, "the guest answers (ARP after %.1f s, %u probes, "
                 "answered after %.1f s); echo requests of %u bytes, one "
                 "at a time, at most %.0f/s", a.arp_s, a.probes, a.ready_s,
                 o->size, o->rate);
    }
}

/* Until QEMU ends, --timeout, Ctrl-C, the guest stops answering for 10 s
 * or the --run command ends. */
static void supervise(const trace_qemu_opts *o, qrun *r)
{
    if (r->why)
        return;
    cp_err err;
    trc_qemu_watch w = {
        .qpid = r->qpid, .cpid = r->cpid, .tr = &r->tr, .t0 = r->t0,
        .timeout_s = o->timeout > 0 ? o->timeout : 0, .quiet_s = 10,
        .stop = &q_interrupted,
    };
    if (trc_qemu_supervise(&w, &r->why, &r->how, &r->qst, &err) < 0)
        cli_error("%s", err.msg);
    r->ended = !r->why;
    r->cpid = w.cpid;
    r->cst = w.cst;
}

/* Who stopped QEMU, in words. */
static const char *stopper(const trace_qemu_opts *o, const qrun *r,
                           const trc_qemu_sum *s, char *buf, size_t cap)
{
    const char *w = r->why ? r->why : "";
    if (r->ended && !strcmp(s->end, "done"))
        snprintf(buf, cap, "the recorder after the %llu iterations of -n",
                 (unsigned long long)o->n);
    else if (r->ended)
        snprintf(buf, cap, "the guest: QEMU ended by itself (%s %d)", r->how ==
                 TRC_QEMU_SIGNALLED ? "killed by signal" : "exit status",
                 r->qst);
    else if (!strcmp(w, "time limit"))
        snprintf(buf, cap, "codeplace stopped QEMU at --timeout (%g s)",
                 o->timeout);
    else if (!strcmp(w, "interrupted"))
        snprintf(buf, cap, "codeplace stopped QEMU on Ctrl-C (SIGINT)");
    else if (!strcmp(w, "no answers"))
        snprintf(buf, cap, "codeplace stopped QEMU: the guest stopped "
                 "answering for 10 s");
    else if (!strcmp(w, "no answer"))
        snprintf(buf, cap, "codeplace stopped QEMU: the guest never "
                 "answered");
    else if (!strcmp(w, "command ended"))
        snprintf(buf, cap, "codeplace stopped QEMU: the --run command "
                 "ended (%s %d)",
                 WIFSIGNALED(r->cst) ? "signal" : "exit status",
                 WIFSIGNALED(r->cst) ? WTERMSIG(r->cst)
                 : WEXITSTATUS(r->cst));
    else
        snprintf(buf, cap, "codeplace stopped QEMU on an error");
    return buf;
}

/* The closing message and the exit status. */
static int verdict(cli_ctx *ctx, const trace_qemu_opts *o, const qrun *r,
                   const trc_qemu_sum *s, const char *by)
{
    unsigned long long n = (unsigned long long)o->n;
    const char *w = r->why ? r->why : "";
    if (r->ended && !strcmp(s->end, "done"))
        return CLI_OK;
    if (r->ended && s->truncated) {
        cli_error("%s: QEMU ended without the trace's trailer (%s %d); the "
                  "complete blocks are readable with --info --partial",
                  ctx->out_path, r->how == TRC_QEMU_SIGNALLED ? "signal"
                  : "exit status", r->qst);
        return CLI_FAIL;
    }
    if (r->ended) {
        cli_error("%s: the firmware stopped after %zu of %llu iterations: "
                  "the guest ended QEMU (%s %d), not codeplace; the trace so "
                  "far is kept and valid", o->elf, s->nit, n,
                  r->how == TRC_QEMU_SIGNALLED ? "signal" : "exit status",
                  r->qst);
        return CLI_FAIL;
    }
    if (!strcmp(w, "time limit") || !strcmp(w, "interrupted")) {
        cli_warn("%s after %zu of %llu iterations: %s; the trace so far is "
                 "kept and valid", !strcmp(w, "interrupted") ? "interrupted"
                 : "stopped by --timeout", s->nit, n, by);
        /* a guest that never answered is an error even at --timeout */
        return r->ready || !o->udp_port ? CLI_OK : CLI_FAIL;
    }
    cli_error("stopped after %zu of %llu iterations: %s; the trace so far "
              "is kept and valid", s->nit, n, by);
    return CLI_FAIL;
}

int trace_qemu_run(cli_ctx *ctx, const trace_qemu_opts *o)
{
    cp_err err;
    const trc_qemu_machine *m = trc_qemu_find_machine(o->machine);
    if (!m) {
        cli_error("--qemu: unknown machine '%s' (%s)", o->machine,
                  trc_qemu_machine_names());
        return CLI_USAGE;
    }
    img *im = img_open(o->elf, o->map, &err);
    if (!im || img_map_check(im, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    if (o->t && cli_tgt_check_traced(ctx, o->t, im) != CLI_OK) {
        img_free(im);
        return CLI_FAIL;
    }
    int status = CLI_FAIL;
    char **argv = NULL;
    qrun *r = calloc(1, sizeof *r);
    if (!r) {
        cli_error("out of memory");
        img_free(im);
        return CLI_FAIL;
    }
    r->qpid = r->cpid = -1;
    r->ufd = -1;
    pthread_mutex_init(&r->tr.lock, NULL);
    if (setup(ctx, o, m, im, r))
        goto out;
    if (!(argv = trc_qemu_argv(&r->c, &err))) {
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
    r->t0 = cp_now_s();
    if (trc_qemu_spawn(argv, r->c.quiet, &r->qpid, &err)) {
        cli_error("%s", err.msg);
        sigaction(SIGINT, &old, NULL);
        goto out;
    }
    cli_info(ctx, "running %s on QEMU %s (pid %d), %llu iterations...",
             o->elf, m->name, (int)r->qpid, (unsigned long long)o->n);
    if (o->udp_port)
        start_udp(ctx, o, r);
    supervise(o, r);
    if (!r->ended) {
        trc_qemu_leave_reason(r->endfile, r->why);
        if (trc_qemu_stop(r->qpid, 5.0, &r->how, &r->qst) > 0)
            cli_warn("QEMU (pid %d) did not stop on SIGTERM; killed",
                     (int)r->qpid);
    }
    r->qpid = -1;
    double secs = q_elapsed(r);
    sigaction(SIGINT, &old, NULL);
    trc_qemu_traffic_stop(&r->tr);
    if (r->cpid > 0) {
        trc_qemu_end_cmd(r->cpid);
        r->cpid = 0; /* it ran until codeplace stopped it */
    }
    remove(r->endfile);
    trc_qemu_sum s;
    if (trc_qemu_summary(ctx->out_path, &s, &err)) {
        cli_error("%s", err.msg);
        if (r->ended && r->how == TRC_QEMU_EXITED && r->qst)
            cli_error("QEMU exited with status %d", r->qst);
        trc_qemu_sum_free(&s);
        goto out;
    }
    char by[160];
    stopper(o, r, &s, by, sizeof by);
    report(ctx, o, &s, &r->tr, by, secs);
    if (secs > 0 && s.insns >= 1000000)
        cli_info(ctx, "%.1f M instructions/s (%llu instructions in %.3f s)",
                 (double)s.insns / secs / 1e6, (unsigned long long)s.insns,
                 secs);
    status = verdict(ctx, o, r, &s, by);
    trc_qemu_sum_free(&s);
out:
    if (r->qpid > 0)
        trc_qemu_stop(r->qpid, 2.0, &r->how, &r->qst);
    if (r->ufd >= 0)
        close(r->ufd);
    if (r->ready)
        remove(r->pcap);
    trc_qemu_argv_free(argv);
    free(r);
    img_free(im);
    if (fflush(stdout)) {
        cli_error("cannot write the output");
        return CLI_FAIL;
    }
    return status;
}
