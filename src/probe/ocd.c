/* probe over OpenOCD's Tcl RPC: each command and each reply ends with
 * 0x1a. Every command is wrapped so that its Tcl status and a sequence tag
 * come back with the result:
 *     format "cp%u %d %s" SEQ [catch {CMD} cp_r] $cp_r
 * A Tcl error becomes a codeplace error naming the command; messages
 * without our tag (target event notifications, when a client switched
 * them on) are skipped. OpenOCD reads memory through the debug port while
 * the core runs, so PCSR sampling needs no halt. */
#include "probe/probe_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"

#define OCD_TCL_PORT 6666
#define OCD_MAX_REPLY (1u << 20)

/* Reads one 0x1a-terminated message into o->reply. */
static int read_message(probe_ocd *o, size_t *len, cp_err *err)
{
    size_t n = 0;
    for (;;) {
        if (probe_conn_fill(&o->c, 0, err) < 0)
            return -1;
        char *b = o->c.buf + o->c.pos;
        size_t avail = o->c.len - o->c.pos;
        char *end = memchr(b, 0x1a, avail);
        size_t take = end ? (size_t)(end - b) : avail;
        if (n + take + 1 > o->rcap) {
            size_t nc = o->rcap ? o->rcap : 4096;
            while (nc < n + take + 1)
                nc *= 2;
            if (nc > OCD_MAX_REPLY)
                return cp_seterr(err, "%s: reply longer than %u bytes",
                                 o->c.addr, OCD_MAX_REPLY);
            char *r = realloc(o->reply, nc);
            if (!r)
                return cp_seterr(err, "out of memory");
            o->reply = r;
            o->rcap = nc;
        }
        memcpy(o->reply + n, b, take);
        n += take;
        o->c.pos += take + (end ? 1 : 0);
        if (end) {
            o->reply[n] = 0;
            *len = n;
            return 0;
        }
    }
}

/* Runs cmd; on success *res points at the result text (inside o->reply). */
static int run(probe_ocd *o, const char *cmd, const char **res, cp_err *err)
{
    size_t cl = strlen(cmd);
    char *msg = malloc(cl + 96);
    if (!msg)
        return cp_seterr(err, "out of memory");
    unsigned seq = ++o->seq;
    int ml = snprintf(msg, cl + 96, "format \"cp%u %%d %%s\" [catch {%s} "
                      "cp_r] $cp_r\x1a", seq, cmd);
    int r = probe_conn_send(&o->c, msg, (size_t)ml, err);
    free(msg);
    if (r < 0)
        return -1;
    char tag[24];
    int tl = snprintf(tag, sizeof tag, "cp%u ", seq);
    char skipped[64] = "";
    for (;;) {
        size_t len = 0;
        if (read_message(o, &len, err) < 0) {
            cp_err e2 = *err;
            if (skipped[0] && !strncmp(cmd, "version", 7))
                return cp_seterr(err, "%s: not an OpenOCD Tcl port? It "
                                 "answered '%s' (%s)", o->c.addr, skipped,
                                 e2.msg);
            return cp_seterr(err, "%s (OpenOCD command '%.60s')", e2.msg, cmd);
        }
        if (len < (size_t)tl + 2 || memcmp(o->reply, tag, (size_t)tl)) {
            /* a notification, or a stale reply: keep a printable copy */
            size_t k = 0;
            for (size_t i = 0; i < len && k < sizeof skipped - 1; i++)
                skipped[k++] = o->reply[i] >= 32 && o->reply[i] < 127
                                   ? o->reply[i] : '.';
            skipped[k] = 0;
            continue;
        }
        char *text;
        long code = strtol(o->reply + tl, &text, 10);
        if (*text == ' ')
            text++;
        if (code != 0) {
            /* Keep the first line of OpenOCD's message. */
            size_t ll = strcspn(text, "\n");
            while (ll && isspace((unsigned char)text[ll - 1]))
                ll--;
            if (ll == 0)
                return cp_seterr(err, "%s: OpenOCD: '%.60s' failed (code "
                                 "%ld, no message; OpenOCD's log says why: "
                                 "is the target connected and powered?)",
                                 o->c.addr, cmd, code);
            const char *hint = "";
            if (strstr(text, "invalid command name") && ll < 80)
                hint = " (OpenOCD has no target: start it with a target "
                       "config, e.g. -f target/rp2040.cfg)";
            return cp_seterr(err, "%s: OpenOCD: '%.60s' failed: %.*s%s",
                             o->c.addr, cmd, (int)(ll > 300 ? 300 : ll),
                             text, hint);
        }
        *res = text;
        return 0;
    }
}

int probe_ocd_tcl(probe *p, const char *cmd, char *out, size_t cap,
                  cp_err *err)
{
    const char *res;
    if (run(&p->u.o, cmd, &res, err) < 0)
        return -1;
    snprintf(out, cap, "%s", res);
    return 0;
}

/* Target state: "running", "halted", "reset", "unknown". */
static int query_state(probe_ocd *o, cp_err *err)
{
    const char *res;
    if (run(o, "[target current] curstate", &res, err) < 0)
        return -1;
    o->halted = !strncmp(res, "halted", 6);
    return 0;
}

int probe_ocd_open(probe *p, const char *addr, const probe_opts *opt,
                   cp_err *err)
{
    probe_ocd *o = &p->u.o;
    memset(o, 0, sizeof *o);
    if (probe_conn_open(&o->c, addr, OCD_TCL_PORT, opt->timeout_ms, err) < 0)
        return -1;
    const char *res;
    /* Every OpenOCD has `version`; it proves the peer speaks Tcl RPC. */
    if (run(o, "version", &res, err) < 0)
        goto fail;
    if (!strstr(res, "Open On-Chip Debugger")) {
        cp_seterr(err, "%s: not an OpenOCD Tcl port (version says "
                  "'%.60s')", o->c.addr, res);
        goto fail;
    }
    if (opt->core) {
        char cmd[200];
        snprintf(cmd, sizeof cmd, "targets {%s}", opt->core);
        if (strpbrk(opt->core, "{}[]$\\;\" ")) {
            cp_seterr(err, "'%s' is not a target name", opt->core);
            goto fail;
        }
        if (run(o, cmd, &res, err) < 0)
            goto fail;
    }
    return 0;
fail:
    probe_conn_close(&o->c);
    free(o->reply);
    o->reply = NULL;
    return -1;
}

void probe_ocd_close(probe *p)
{
    probe_ocd *o = &p->u.o;
    probe_conn_close(&o->c);
    free(o->reply);
    o->reply = NULL;
}

int probe_ocd_read32(probe *p, uint32_t addr, uint32_t *v, size_t n,
                     cp_err *err)
{
    probe_ocd *o = &p->u.o;
    size_t done = 0;
    while (done < n) {
        size_t k = n - done > 1024 ? 1024 : n - done;
        char cmd[96];
        const char *res;
        snprintf(cmd, sizeof cmd, "read_memory 0x%08x 32 %zu",
                 addr + (uint32_t)(4 * done), k);
        if (run(o, cmd, &res, err) < 0)
            return -1;
        for (size_t i = 0; i < k; i++) {
            while (*res == ' ' || *res == '{' || *res == '}')
                res++;
            char *end;
            unsigned long x = strtoul(res, &end, 0);
            if (end == res || x > 0xffffffffUL)
                return cp_seterr(err, "%s: OpenOCD: unexpected reply to "
                                 "'%s': '%.60s'", o->c.addr, cmd, o->reply);
            v[done + i] = (uint32_t)x;
            res = end;
        }
        done += k;
    }
    return 0;
}

int probe_ocd_write32(probe *p, uint32_t addr, uint32_t v, cp_err *err)
{
    char cmd[96];
    const char *res;
    snprintf(cmd, sizeof cmd, "write_memory 0x%08x 32 {0x%08x}", addr, v);
    return run(&p->u.o, cmd, &res, err);
}

int probe_ocd_halt(probe *p, cp_err *err)
{
    const char *res;
    if (run(&p->u.o, "halt", &res, err) < 0)
        return -1;
    p->u.o.halted = 1;
    return 0;
}

int probe_ocd_resume(probe *p, cp_err *err)
{
    const char *res;
    if (run(&p->u.o, "resume", &res, err) < 0)
        return -1;
    p->u.o.halted = 0;
    return 0;
}

int probe_ocd_read_pc(probe *p, uint32_t *pc, cp_err *err)
{
    const char *res;
    (void)query_state;
    if (run(&p->u.o, "reg pc", &res, err) < 0)
        return -1;
    /* "pc (/32): 0x10000234" */
    const char *x = strstr(res, "0x");
    if (!x)
        return cp_seterr(err, "%s: OpenOCD: cannot read the PC from '%.60s'",
                         p->u.o.c.addr, res);
    *pc = (uint32_t)strtoul(x, NULL, 16);
    return 0;
}
