/* probe over the GDB remote serial protocol. All-stop by default: memory
 * is read while the target is halted, and the halting sampler interrupts
 * (0x03), reads the PC and continues. With non-stop mode (QNonStop, when
 * the stub offers it) memory reads work while the target runs. */
#include "probe/probe_int.h"

#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"

/* OpenOCD's and pyOCD's GDB server port when --gdb names a host alone. */
#define GDB_PORT_DEFAULT 3333

/* Sends the framed packet buf[0..n), after the '+' still owed for the
 * stub's last packet: buf[-1] must be writable (frame() leaves it). */
static int send_framed(probe_gdb *g, char *buf, size_t n, cp_err *err)
{
    if (g->ack_due) {
        /* buf starts one byte into its array: the '+' goes there. */
        buf[-1] = '+';
        buf--;
        n++;
        g->ack_due = 0;
    }
    return probe_conn_send(&g->c, buf, n, err);
}

/* Reads the next event from the connection into the parser. In ack mode
 * a packet's '+' is owed (ack_due) and sent with the next packet, or alone
 * before waiting for the stub: one write where there were two. A bad
 * checksum is answered with '-' so that the stub sends again. */
static probe_rsp_ev next_event(probe_gdb *g, int timeout_ms, cp_err *err)
{
    for (;;) {
        if (g->ack_due && g->c.pos >= g->c.len) {
            if (probe_conn_send(&g->c, "+", 1, err) < 0)
                return PROBE_RSP_EV_NONE;
            g->ack_due = 0;
        }
        if (probe_conn_fill(&g->c, timeout_ms, err) < 0)
            return PROBE_RSP_EV_NONE;
        size_t used;
        probe_rsp_ev ev = probe_rsp_feed(g->ps, g->c.buf + g->c.pos,
                                         g->c.len - g->c.pos, &used);
        g->c.pos += used;
        if (ev == PROBE_RSP_EV_NONE)
            continue;
        if (!g->noack && (ev == PROBE_RSP_EV_PACKET ||
                          ev == PROBE_RSP_EV_NOTIFY))
            g->ack_due = 1;
        if (!g->noack && (ev == PROBE_RSP_EV_BADSUM ||
                          ev == PROBE_RSP_EV_BADDATA)) {
            const char *r = g->ack_due ? "+-" : "-";
            g->ack_due = 0;
            if (probe_conn_send(&g->c, r, strlen(r), err) < 0)
                return PROBE_RSP_EV_NONE;
        }
        return ev;
    }
}

/* Frames data at buf + 1 (buf[0] is left for an owed '+'). Returns the
 * framed length, or -1 when it does not fit. */
static long frame(const char *data, char *buf, size_t cap)
{
    return probe_rsp_frame(data, strlen(data), buf + 1, cap - 1);
}

/* Sends one packet; in ack mode waits for '+' and sends again on '-' (up
 * to 3 times). */
static int send_packet(probe_gdb *g, const char *data, cp_err *err)
{
    size_t n = strlen(data);
    size_t cap = 2 * n + 9;
    char stackbuf[512], *buf = cap <= sizeof stackbuf ? stackbuf : malloc(cap);
    if (!buf)
        return cp_seterr(err, "out of memory");
    long fl = frame(data, buf, cap);
    int rc = -1;
    for (int attempt = 0; attempt < 4; attempt++) {
        if (send_framed(g, buf + 1, (size_t)fl, err) < 0)
            goto out;
        if (g->noack) {
            rc = 0;
            goto out;
        }
        for (;;) {
            probe_rsp_ev ev = next_event(g, 0, err);
            if (ev == PROBE_RSP_EV_NONE)
                goto out;
            if (ev == PROBE_RSP_EV_ACK) {
                rc = 0;
                goto out;
            }
            if (ev == PROBE_RSP_EV_NAK)
                break;
            /* anything else before the ack: ignore (stray output) */
        }
    }
    cp_seterr(err, "%s: the stub refused packet '%.40s' 4 times (bad link?)",
              g->c.addr, data);
out:
    if (buf != stackbuf)
        free(buf);
    return rc;
}

/* Waits for the reply packet. Notifications and console output ('O'
 * packets while running) are skipped. Bad checksums are retried by the
 * stub in ack mode; in no-ack mode they are an error. */
static int recv_reply(probe_gdb *g, int timeout_ms, cp_err *err)
{
    for (int bad = 0;;) {
        probe_rsp_ev ev = next_event(g, timeout_ms, err);
        switch (ev) {
        case PROBE_RSP_EV_NONE:
            return -1;
        case PROBE_RSP_EV_PACKET:
            return 0;
        case PROBE_RSP_EV_BADSUM:
        case PROBE_RSP_EV_BADDATA:
            if (g->noack || ++bad > 3)
                return cp_seterr(err, "%s: reply with a bad %s",
                                 g->c.addr, ev == PROBE_RSP_EV_BADSUM
                                     ? "checksum" : "escape or run length");
            continue;
        case PROBE_RSP_EV_OVERFLOW:
            return cp_seterr(err, "%s: reply longer than %d bytes",
                             g->c.addr, PROBE_RSP_MAX);
        default:
            continue;
        }
    }
}

static int command(probe_gdb *g, const char *pkt, cp_err *err)
{
    if (send_packet(g, pkt, err) < 0)
        return -1;
    return recv_reply(g, 0, err);
}

/* An `Exx` reply (or E.message). */
static int is_error(const probe_gdb *g)
{
    const char *d = g->ps->data;
    return g->ps->len >= 2 && d[0] == 'E' &&
           (g->ps->len == 3 || d[1] == '.');
}

static int is_stop_reply(const char *d)
{
    return d[0] == 'S' || d[0] == 'T' || d[0] == 'W' || d[0] == 'X';
}

static int stop_error(probe_gdb *g, cp_err *err)
{
    const char *d = g->ps->data;
    if (d[0] == 'W' || d[0] == 'X')
        return cp_seterr(err, "%s: the target %s ('%.20s')", g->c.addr,
                         d[0] == 'W' ? "exited" : "was terminated", d);
    return 0;
}

static void parse_supported(probe_gdb *g, int *noack, int *nonstop)
{
    char *s = g->ps->data;
    for (char *tok = strtok(s, ";"); tok; tok = strtok(NULL, ";")) {
        if (!strncmp(tok, "PacketSize=", 11)) {
            unsigned long v = strtoul(tok + 11, NULL, 16);
            if (v >= 32 && v <= PROBE_RSP_MAX)
                g->pktsize = v;
        } else if (!strcmp(tok, "QStartNoAckMode+")) {
            *noack = 1;
        } else if (!strcmp(tok, "QNonStop+")) {
            *nonstop = 1;
        } else if (!strcmp(tok, "qXfer:features:read+")) {
            g->xml = 1;
        }
    }
}

int probe_gdb_open(probe *p, const char *addr, const probe_opts *o,
                   cp_err *err)
{
    probe_gdb *g = &p->u.g;
    memset(g, 0, sizeof *g);
    g->pktsize = 400; /* a safe size when the stub does not say */
    g->ps = malloc(sizeof *g->ps);
    if (!g->ps)
        return cp_seterr(err, "out of memory");
    probe_rsp_init(g->ps);
    if (probe_conn_open(&g->c, addr, GDB_PORT_DEFAULT, o->timeout_ms, err) < 0)
        goto fail;
    /* A '+' first, as GDB does, resynchronises a stub that waits for an
     * ack of its last packet. */
    if (probe_conn_send(&g->c, "+", 1, err) < 0)
        goto fail;
    if (command(g, "qSupported:swbreak+;hwbreak+", err) < 0)
        goto fail_ctx;
    int can_noack = 0, can_nonstop = 0;
    parse_supported(g, &can_noack, &can_nonstop);
    if (can_noack) {
        if (command(g, "QStartNoAckMode", err) < 0)
            goto fail_ctx;
        if (!strcmp(g->ps->data, "OK"))
            g->noack = 1;
    }
    if (o->nonstop == 1 || (o->nonstop == 2 && can_nonstop)) {
        if (!can_nonstop) {
            cp_seterr(err, "%s: the GDB stub cannot read memory while the "
                      "target runs (no non-stop mode); sample with --halt, "
                      "or through OpenOCD's Tcl port (--openocd)", g->c.addr);
            goto fail_close;
        }
        if (command(g, "QNonStop:1", err) < 0)
            goto fail_ctx;
        if (strcmp(g->ps->data, "OK")) {
            cp_seterr(err, "%s: the stub refused non-stop mode ('%.40s')",
                      g->c.addr, g->ps->data);
            goto fail_close;
        }
        g->nonstop = 1;
    }
    /* Where is the target? In all-stop mode '?' answers with the stop
     * reason of a halted target. */
    if (command(g, "?", err) < 0)
        goto fail_ctx;
    if (is_stop_reply(g->ps->data)) {
        if (stop_error(g, err) < 0)
            goto fail_close;
        g->halted = 1;
    } else if (!g->nonstop) {
        cp_seterr(err, "%s: unexpected answer to '?': '%.40s'", g->c.addr,
                  g->ps->data);
        goto fail_close;
    }
    /* QEMU answers 'p' (one register, 8 hex digits for the PC) only to a
     * client that has read the target description, as GDB does first
     * (its gdbstub's gdb_has_xml, set by qXfer:features:read);
     * else the PC takes a 'g' of every register. The answer itself is
     * not needed: an error or an empty reply leaves 'g'. */
    if (g->xml) {
        char q[64];
        snprintf(q, sizeof q, "qXfer:features:read:target.xml:0,%zx",
                 g->pktsize - 8);
        if (command(g, q, err) < 0)
            goto fail_ctx;
    }
    g->detach_ok = 1;
    return 0;
fail_ctx: {
        cp_err e2 = *err;
        cp_seterr(err, "%s (while connecting to a GDB stub)", e2.msg);
    }
fail_close:
    probe_conn_close(&g->c);
fail:
    free(g->ps);
    g->ps = NULL;
    return -1;
}

void probe_gdb_close(probe *p)
{
    probe_gdb *g = &p->u.g;
    cp_err e;
    if (g->c.fd >= 0 && g->detach_ok) {
        /* Detach: the stub lets the target run. An all-stop stub takes
         * packets only while the target is stopped, so stop it first (as
         * GDB does); the detach resumes it. One short try. */
        g->c.timeout_ms = g->c.timeout_ms < 1000 ? g->c.timeout_ms : 1000;
        if ((g->halted || g->nonstop || probe_gdb_halt(p, &e) == 0) &&
            send_packet(g, "D", &e) == 0)
            recv_reply(g, 0, &e);
    }
    probe_conn_close(&g->c);
    free(g->ps);
    g->ps = NULL;
}

int probe_gdb_read(probe *p, uint32_t addr, void *buf, size_t len,
                   cp_err *err)
{
    probe_gdb *g = &p->u.g;
    if (!g->halted && !g->nonstop)
        return cp_seterr(err, "%s: cannot read memory while the target "
                         "runs (all-stop GDB stub)", g->c.addr);
    /* A reply carries 2 hex digits per byte plus framing. */
    size_t chunk = (g->pktsize - 8) / 2;
    if (chunk > 4096)
        chunk = 4096;
    uint8_t *out = buf;
    while (len) {
        size_t n = len < chunk ? len : chunk;
        char pkt[64];
        snprintf(pkt, sizeof pkt, "m%x,%zx", addr, n);
        if (command(g, pkt, err) < 0)
            return -1;
        if (is_error(g) || g->ps->len == 0)
            return cp_seterr(err, "%s: cannot read %zu bytes at 0x%08x: "
                             "stub replied '%s'", g->c.addr, n, addr,
                             g->ps->len ? g->ps->data : "(empty)");
        long got = probe_hex_decode(g->ps->data, g->ps->len, out, n);
        if (got <= 0)
            return cp_seterr(err, "%s: bad memory reply for 0x%08x: "
                             "'%.40s'", g->c.addr, addr, g->ps->data);
        /* A stub may return fewer bytes than asked: go on from there. */
        out += got;
        addr += (uint32_t)got;
        len -= (size_t)got;
    }
    return 0;
}

int probe_gdb_write(probe *p, uint32_t addr, const void *buf, size_t len,
                    cp_err *err)
{
    probe_gdb *g = &p->u.g;
    if (!g->halted && !g->nonstop)
        return cp_seterr(err, "%s: cannot write memory while the target "
                         "runs (all-stop GDB stub)", g->c.addr);
    if (len > 1024)
        return cp_seterr(err, "write too long");
    char pkt[64 + 2048 + 1];
    int h = snprintf(pkt, 64, "M%x,%zx:", addr, len);
    probe_hex_encode(buf, len, pkt + h);
    if (command(g, pkt, err) < 0)
        return -1;
    if (strcmp(g->ps->data, "OK"))
        return cp_seterr(err, "%s: cannot write %zu bytes at 0x%08x: stub "
                         "replied '%s'", g->c.addr, len, addr,
                         g->ps->len ? g->ps->data : "(empty)");
    return 0;
}

int probe_gdb_halt(probe *p, cp_err *err)
{
    probe_gdb *g = &p->u.g;
    if (g->halted)
        return 0;
    if (g->nonstop) {
        if (command(g, "vCont;t", err) < 0)
            return -1;
        /* The stop comes as a %Stop notification; we only need the stub
         * to have stopped the threads: poll with '?'-less vStopped. */
        g->halted = 1;
        return 0;
    }
    const char *intr = g->ack_due ? "+\x03" : "\x03";
    g->ack_due = 0;
    if (probe_conn_send(&g->c, intr, strlen(intr), err) < 0)
        return -1;
    for (;;) {
        if (recv_reply(g, 0, err) < 0) {
            cp_err e2 = *err;
            return cp_seterr(err, "%s (waiting for the target to stop)",
                             e2.msg);
        }
        if (is_stop_reply(g->ps->data))
            break;
        /* 'O' console output or a late reply: skip */
    }
    if (stop_error(g, err) < 0) {
        g->detach_ok = 0;
        return -1;
    }
    g->halted = 1;
    return 0;
}

int probe_gdb_resume(probe *p, cp_err *err)
{
    probe_gdb *g = &p->u.g;
    if (!g->halted)
        return 0;
    if (g->nonstop) {
        if (command(g, "vCont;c", err) < 0)
            return -1;
    } else if (send_packet(g, "c", err) < 0) {
        return -1;
    }
    g->halted = 0;
    return 0;
}

int probe_gdb_read_pc(probe *p, uint32_t *pc, cp_err *err)
{
    probe_gdb *g = &p->u.g;
    if (!g->halted)
        return cp_seterr(err, "%s: the PC can be read only while the target "
                         "is halted", g->c.addr);
    const char *hex;
    if (!g->pc_by_g) {
        /* Register 15 is the PC in GDB's ARM numbering. */
        if (command(g, "pf", err) < 0)
            return -1;
        if (g->ps->len == 0 || is_error(g))
            g->pc_by_g = 1;
    }
    if (g->pc_by_g) {
        if (command(g, "g", err) < 0)
            return -1;
        if (g->ps->len < 16 * 8 || is_error(g))
            return cp_seterr(err, "%s: cannot read the registers: stub "
                             "replied '%.40s'", g->c.addr, g->ps->data);
        hex = g->ps->data + 15 * 8;
    } else {
        if (g->ps->len < 8)
            return cp_seterr(err, "%s: bad register reply '%.40s'",
                             g->c.addr, g->ps->data);
        hex = g->ps->data;
    }
    uint8_t b[4];
    if (probe_hex_decode(hex, 8, b, 4) != 4)
        return cp_seterr(err, "%s: bad register value '%.8s' (unavailable?)",
                         g->c.addr, hex);
    *pc = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
          (uint32_t)b[3] << 24;
    return 0;
}
