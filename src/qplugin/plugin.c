/* codeplace-qemu.so: a QEMU TCG plugin that writes a codeplace trace
 * (docs/formats/trace.md) of what the flash cache sees while a whole system
 * runs in qemu-system-arm: executed instructions, data reads from the cached
 * window, iteration marks at a marker address, and the exception context.
 *
 *   qemu-system-arm ... -plugin codeplace-qemu.so,out=run.trace,mark=0x1f4,\
 *       marks=50,cached=0x0:0x400000,vec=15:0x2a1,...
 *
 * Arguments (key=value; docs/trace.md "QEMU plugin"):
 *   out=PATH        the trace file (required)
 *   mark=ADDR       marker address; marks=N: stop after N iterations (0: no
 *                   limit); skip=K: the first K passes are warm-up (no MARK)
 *   exit=0|1        exit QEMU when mark N is reached (default 1)
 *   cached=B:S      a window the cache sees (repeatable; none: everything);
 *                   fetches outside carry TRC_F_UNCACHED, data reads outside
 *                   are not recorded
 *   noalloc=B:S     a flash alias that looks the cache up but never fills
 *                   (data reads there carry TRC_F_NOALLOC; fetches too)
 *   vec=N:ADDR      exception N's handler starts at ADDR (repeatable)
 *   target=, cpu=, elf=   header fields
 *   endfile=PATH    at exit, the end reason is read from this file if it
 *                   exists ("interrupted", "time limit", ...); else
 *                   "stopped" (QEMU ended before mark N)
 *
 * Every instruction gets an exec callback, so an instruction is counted
 * only when it starts executing: a block that QEMU leaves before its first
 * instruction (an interrupt pending at its start) or cuts short (an
 * exception in the middle) counts exactly what ran. */
#include "qplugin/qemu-plugin-api.h"
#include "qplugin/thumb.h"
#include "trace/trace.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_WIN 8
#define MAX_VEC 512 /* 16 system exceptions + up to 496 IRQs (ARMv7-M) */
#define MAX_NEST 64
#define EXC_SHARED 0xffff /* several vectors share this handler */

typedef struct win {
    uint32_t base, size;
} win;

/* One translated instruction (kept for the life of the plugin: the
 * callbacks of a translation block may run until QEMU exits). */
typedef struct pinsn {
    uint32_t addr;
    uint32_t target; /* direct branch or call target */
    uint16_t exc;    /* a vector handler starts here: its exception */
    uint8_t len;
    uint8_t flags;   /* TRC_F_* of its fetch */
    uint8_t flow;    /* qp_flow */
    uint8_t mark;
} pinsn;

typedef struct frame {
    uint32_t ctx;   /* TRC_CTX_THREAD or the exception number */
    uint32_t depth; /* calls made in this context not yet returned */
} frame;

static struct {
    pthread_mutex_t lock;
    trc_writer *w;
    volatile int off; /* finished or failed: callbacks do nothing */
    char *endfile;
    int do_exit;
    /* pending fetch run */
    int live;
    uint32_t raddr, rlen, rninsn, rflags;
    const pinsn *prev;
    /* windows */
    win cached[MAX_WIN], noalloc[MAX_WIN];
    unsigned ncached, nnoalloc;
    /* marks */
    uint32_t mark;
    int have_mark;
    uint64_t seen, skip, n;
    /* exception contexts */
    uint32_t vaddr[MAX_VEC];
    uint16_t vexc[MAX_VEC];
    unsigned nvec;
    frame stack[MAX_NEST];
    unsigned sp;
    uint64_t overflow; /* entries beyond MAX_NEST (not tracked) */
    /* allocation of pinsn records */
    pinsn *pool;
    size_t pool_left;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .do_exit = 1};

/* To stderr (QEMU's log, where qemu_plugin_outs writes, is shown only
 * with -d plugin). */
static void say(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, fmt, a, b);
    fflush(stderr);
}

static int in_wins(const win *w, unsigned n, uint32_t a)
{
    for (unsigned i = 0; i < n; i++)
        if (a - w[i].base < w[i].size)
            return 1;
    return 0;
}

static unsigned fetch_flags(uint32_t a)
{
    if (in_wins(S.noalloc, S.nnoalloc, a))
        return TRC_F_NOALLOC;
    if (S.ncached && !in_wins(S.cached, S.ncached, a))
        return TRC_F_UNCACHED;
    return 0;
}

/* A write failed: stop recording and end QEMU with a failure. */
static void fail(const cp_err *err)
{
    S.off = 1;
    say("codeplace-qemu: %s%s\n", err->msg, "");
    trc_abandon(S.w);
    S.w = NULL;
    exit(1);
}

static void put(const trc_rec *r)
{
    cp_err err;
    if (trc_write(S.w, r, &err))
        fail(&err);
}

static void flush_run(void)
{
    if (!S.live)
        return;
    trc_rec r = {TRC_FETCH, S.raddr, S.rlen, S.rninsn, S.rflags};
    S.live = 0;
    put(&r);
}

/* Ends the trace with its trailer (once). Called with S.lock held. */
static void finish(const char *why)
{
    if (S.off || !S.w)
        return;
    flush_run();
    trc_set_end(S.w, why);
    cp_err err;
    int rc = trc_finish(S.w, &err);
    S.w = NULL;
    S.off = 1;
    if (rc)
        say("codeplace-qemu: %s%s\n", err.msg, "");
}

static void set_ctx(void)
{
    flush_run();
    trc_rec r = {TRC_CTX, S.stack[S.sp].ctx, 0, 0, 0};
    put(&r);
}

/* The control flow between the previous instruction and p (p does not
 * follow it in memory). Exception entry: p starts a vector's handler and
 * the previous instruction was not a call of it or a branch to it.
 * Exception return: a return instruction in an exception context with no
 * call of that context outstanding. */
static void discontinuity(const pinsn *p)
{
    const pinsn *q = S.prev;
    int changed = 0;
    if (q->flow == QP_RET) {
        frame *f = &S.stack[S.sp];
        if (f->depth)
            f->depth--;
        else if (S.overflow)
            S.overflow--;
        else if (S.sp) {
            S.sp--;
            changed = 1;
        }
    }
    if (p->exc && q->target != p->addr &&
        !(q->flow == QP_CALL && !q->target)) {
        if (S.sp + 1 < MAX_NEST) {
            S.sp++;
            S.stack[S.sp].ctx = p->exc == EXC_SHARED ? 0xffffffffu : p->exc;
            S.stack[S.sp].depth = 0;
            changed = 1;
        } else {
            S.overflow++;
        }
    }
    if (changed)
        set_ctx();
}

static void on_mark(void)
{
    uint64_t k = S.seen++;
    if (k < S.skip)
        return;
    k -= S.skip;
    if (S.n && k >= S.n) {
        pthread_mutex_lock(&S.lock);
        finish("done");
        pthread_mutex_unlock(&S.lock);
        if (S.do_exit)
            exit(0);
        return;
    }
    flush_run();
    trc_rec r = {TRC_MARK, (uint32_t)k, 0, 0, 0};
    put(&r);
}

static void on_exec(unsigned int vcpu, void *ud)
{
    (void)vcpu;
    const pinsn *p = ud;
    if (S.off)
        return;
    if (S.prev && S.prev->flow == QP_CALL)
        S.stack[S.sp].depth++;
    if (S.prev && p->addr != S.prev->addr + S.prev->len)
        discontinuity(p);
    S.prev = p;
    if (p->mark) {
        on_mark();
        if (S.off)
            return;
    }
    if (S.live && S.raddr + S.rlen == p->addr && S.rflags == p->flags &&
        S.rlen < (1u << 20)) {
        S.rlen += p->len;
        S.rninsn++;
        return;
    }
    flush_run();
    S.live = 1;
    S.raddr = p->addr;
    S.rlen = p->len;
    S.rninsn = 1;
    S.rflags = p->flags;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info,
                   uint64_t vaddr, void *ud)
{
    (void)vcpu;
    (void)ud;
    if (S.off || qemu_plugin_mem_is_store(info))
        return;
    uint32_t a = (uint32_t)vaddr;
    unsigned fl;
    if (in_wins(S.noalloc, S.nnoalloc, a))
        fl = TRC_F_NOALLOC;
    else if (!S.ncached || in_wins(S.cached, S.ncached, a))
        fl = 0;
    else
        return;
    /* The load's own fetch comes first: its run ends with it. */
    flush_run();
    trc_rec r = {TRC_DREAD, a, 1u << qemu_plugin_mem_size_shift(info), 0, fl};
    put(&r);
}

static pinsn *new_pinsn(void)
{
    if (!S.pool_left) {
        S.pool = calloc(4096, sizeof *S.pool);
        if (!S.pool)
            return NULL;
        S.pool_left = 4096;
    }
    S.pool_left--;
    return S.pool++;
}

static uint16_t handler_at(uint32_t a)
{
    for (unsigned i = 0; i < S.nvec; i++)
        if (S.vaddr[i] == a)
            return S.vexc[i];
    return 0;
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        pinsn *p = new_pinsn();
        if (!p) {
            cp_err e;
            snprintf(e.msg, sizeof e.msg, "out of memory");
            fail(&e);
            return;
        }
        /* The length from the encoding (ARMv7-M ARM A5.1: a first
         * halfword of 0b11101, 0b11110 or 0b11111 starts a 32-bit
         * instruction): QEMU 7.2 counts into the last instruction before a
         * page end the halfword it reads to see whether the next one
         * crosses the page, so qemu_plugin_insn_size can be 2 too large. */
        size_t qlen = qemu_plugin_insn_size(insn);
        const uint8_t *data = qemu_plugin_insn_data(insn);
        size_t len = qlen >= 2 && (data[1] >> 3) >= 0x1d ? 4 : 2;
        if (qlen < len) {
            cp_err e;
            snprintf(e.msg, sizeof e.msg, "instruction at 0x%08llx: %zu "
                     "bytes from QEMU, %zu decoded",
                     (unsigned long long)qemu_plugin_insn_vaddr(insn), qlen,
                     len);
            fail(&e);
            return;
        }
        p->addr = (uint32_t)qemu_plugin_insn_vaddr(insn);
        p->len = (uint8_t)len;
        p->flags = (uint8_t)fetch_flags(p->addr);
        qp_insn d = qp_decode(data, len, p->addr);
        p->flow = (uint8_t)d.flow;
        p->target = d.target;
        p->exc = handler_at(p->addr);
        p->mark = S.have_mark && p->addr == S.mark;
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_exec,
                                               QEMU_PLUGIN_CB_NO_REGS, p);
        /* QEMU_PLUGIN_MEM_RW, with stores dropped in on_mem: QEMU 7.2
         * calls a callback registered with QEMU_PLUGIN_MEM_R for stores
         * only (measured: every access it reports has the store bit). */
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
                                         QEMU_PLUGIN_MEM_RW, NULL);
    }
}

static void on_exit_cb(qemu_plugin_id_t id, void *ud)
{
    (void)id;
    (void)ud;
    pthread_mutex_lock(&S.lock);
    char why[32] = "stopped";
    if (S.endfile) {
        FILE *f = fopen(S.endfile, "r");
        if (f) {
            if (fgets(why, sizeof why, f))
                why[strcspn(why, "\r\n")] = 0;
            if (!why[0])
                snprintf(why, sizeof why, "stopped");
            fclose(f);
        }
    }
    finish(why);
    pthread_mutex_unlock(&S.lock);
}

/* ---- arguments ---- */

static int num(const char *s, uint64_t max, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s || *end || x > max)
        return -1;
    *v = x;
    return 0;
}

static int pair(const char *s, uint64_t *a, uint64_t *b)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *c = strchr(buf, ':');
    if (!c)
        return -1;
    *c = 0;
    return num(buf, UINT32_MAX, a) || num(c + 1, UINT32_MAX, b) ? -1 : 0;
}

static int add_win(win *w, unsigned *n, const char *v)
{
    uint64_t b, s;
    if (*n == MAX_WIN || pair(v, &b, &s) || !s || b + s > 0x100000000ULL)
        return -1;
    w[*n].base = (uint32_t)b;
    w[*n].size = (uint32_t)s;
    (*n)++;
    return 0;
}

static int add_vec(const char *v)
{
    uint64_t e, a;
    if (pair(v, &e, &a) || e < 2 || e >= MAX_VEC || S.nvec == MAX_VEC)
        return -1;
    a &= ~1ull;
    for (unsigned i = 0; i < S.nvec; i++)
        if (S.vaddr[i] == a) {
            S.vexc[i] = EXC_SHARED;
            return 0;
        }
    S.vaddr[S.nvec] = (uint32_t)a;
    S.vexc[S.nvec++] = (uint16_t)e;
    return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info, int argc,
                                           char **argv)
{
    trc_header h = {2, "", "", "", "qemu-plugin"};
    const char *out = NULL;
    if (!info->system_emulation || info->system.smp_vcpus != 1) {
        say("codeplace-qemu: %s%s\n", "needs system emulation with one CPU",
            "");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            say("codeplace-qemu: argument '%s' is not key=value%s\n", argv[i],
                "");
            return -1;
        }
        size_t kl = (size_t)(eq - argv[i]);
        const char *k = argv[i], *v = eq + 1;
        uint64_t x;
        int bad = 0;
#define KEY(s) (kl == sizeof s - 1 && !strncmp(k, s, kl))
        if (KEY("out"))
            out = v;
        else if (KEY("mark")) {
            bad = num(v, UINT32_MAX, &x);
            S.mark = (uint32_t)x & ~1u;
            S.have_mark = 1;
        } else if (KEY("marks"))
            bad = num(v, UINT64_MAX, &S.n);
        else if (KEY("skip"))
            bad = num(v, UINT64_MAX, &S.skip);
        else if (KEY("exit")) {
            bad = num(v, 1, &x);
            S.do_exit = (int)x;
        } else if (KEY("cached"))
            bad = add_win(S.cached, &S.ncached, v);
        else if (KEY("noalloc"))
            bad = add_win(S.noalloc, &S.nnoalloc, v);
        else if (KEY("vec"))
            bad = add_vec(v);
        else if (KEY("target"))
            snprintf(h.target, sizeof h.target, "%s", v);
        else if (KEY("cpu"))
            snprintf(h.cpu, sizeof h.cpu, "%s", v);
        else if (KEY("elf"))
            snprintf(h.elf_hash, sizeof h.elf_hash, "%s", v);
        else if (KEY("endfile"))
            S.endfile = strdup(v);
        else
            bad = 2;
#undef KEY
        if (bad) {
            say(bad == 2 ? "codeplace-qemu: unknown argument '%s'%s\n"
                         : "codeplace-qemu: bad value in '%s'%s\n",
                argv[i], "");
            return -1;
        }
    }
    if (!out) {
        say("codeplace-qemu: give the trace file with out=PATH%s%s\n", "", "");
        return -1;
    }
    cp_err err;
    S.w = trc_create(out, &h, &err);
    if (!S.w) {
        say("codeplace-qemu: %s%s\n", err.msg, "");
        return -1;
    }
    S.stack[0].ctx = TRC_CTX_THREAD;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}
