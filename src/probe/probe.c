#include "probe/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe/probe_int.h"

/* ---- TCP ---- */

/* HOST:PORT, HOST alone (the probe's default port), PORT alone (on
 * localhost), [V6]:PORT, [V6] or a bare IPv6 address. */
static int split_addr(const char *addr, int default_port, char *host,
                      size_t hcap, char *port, size_t pcap, cp_err *err)
{
    const char *h = addr, *pt = "";
    size_t hl = strlen(addr);
    const char *colon = strrchr(addr, ':');
    if (addr[0] == '[') {
        const char *rb = strchr(addr, ']');
        if (!rb || (rb[1] && rb[1] != ':'))
            return cp_seterr(err, "'%s' is not [ADDRESS]:PORT", addr);
        h = addr + 1;
        hl = (size_t)(rb - h);
        pt = rb[1] ? rb + 2 : "";
    } else if (colon && strchr(addr, ':') == colon) {
        hl = (size_t)(colon - addr);
        pt = colon + 1;
    } else if (!colon && addr[0] && strspn(addr, "0123456789") == hl) {
        pt = addr; /* a port alone */
        hl = 0;
    } /* else a host name, or an IPv6 address without brackets */
    if (hl == 0) {
        h = "localhost";
        hl = strlen(h);
    }
    if (*pt == 0) {
        if (default_port <= 0)
            return cp_seterr(err, "'%s': give the port (HOST:PORT)", addr);
        snprintf(port, pcap, "%d", default_port);
    } else {
        char *end;
        long v = strtol(pt, &end, 10);
        if (*end || v <= 0 || v > 65535)
            return cp_seterr(err, "'%s' is not HOST:PORT (port 1-65535)", addr);
        snprintf(port, pcap, "%ld", v);
    }
    if (hl >= hcap)
        return cp_seterr(err, "'%s': host name too long", addr);
    memcpy(host, h, hl);
    host[hl] = 0;
    return 0;
}

int probe_conn_open(probe_conn *c, const char *addr, int default_port,
                    int timeout_ms, cp_err *err)
{
    char host[256], port[16];
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 3000;
    if (split_addr(addr, default_port, host, sizeof host, port, sizeof port,
                   err) < 0)
        return -1;
    snprintf(c->addr, sizeof c->addr, "%s:%s", host, port);
    struct addrinfo hints = {0}, *res, *ai;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_family = AF_UNSPEC;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g)
        return cp_seterr(err, "cannot resolve '%s': %s", host, gai_strerror(g));
    int last = ECONNREFUSED;
    for (ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last = errno;
            continue;
        }
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (r < 0 && errno == EINPROGRESS) {
            struct pollfd pf = {fd, POLLOUT, 0};
            double end = cp_now_s() + c->timeout_ms / 1000.0;
            do {
                int ms = (int)((end - cp_now_s()) * 1000);
                r = poll(&pf, 1, ms > 0 ? ms : 0);
            } while (r < 0 && errno == EINTR);
            if (r == 0) {
                last = ETIMEDOUT;
                close(fd);
                continue;
            }
            int e = 0;
            socklen_t el = sizeof e;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
            r = e ? -1 : 0;
            errno = e;
        }
        if (r < 0) {
            last = errno;
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        break;
    }
    freeaddrinfo(res);
    if (c->fd < 0)
        return cp_seterr(err, "cannot connect to %s: %s", c->addr,
                         strerror(last));
    return 0;
}

void probe_conn_close(probe_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int probe_conn_send(probe_conn *c, const void *data, size_t n, cp_err *err)
{
    const char *d = data;
    double end = cp_now_s() + c->timeout_ms / 1000.0;
    while (n) {
        ssize_t w = send(c->fd, d, n, MSG_NOSIGNAL);
        c->link.sends++;
        if (w > 0) {
            c->link.bytes_out += (uint64_t)w;
            d += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {c->fd, POLLOUT, 0};
            int ms = (int)((end - cp_now_s()) * 1000);
            if (ms <= 0)
                return cp_seterr(err, "%s: timed out sending", c->addr);
            poll(&pf, 1, ms);
            continue;
        }
        return cp_seterr(err, "%s: connection lost while sending: %s",
                         c->addr, strerror(errno));
    }
    return 0;
}

int probe_conn_fill(probe_conn *c, int timeout_ms, cp_err *err)
{
    if (c->pos < c->len)
        return 0;
    c->pos = c->len = 0;
    double end = cp_now_s() + (timeout_ms > 0 ? timeout_ms : c->timeout_ms) /
                                   1000.0;
    for (;;) {
        ssize_t r = recv(c->fd, c->buf, sizeof c->buf, 0);
        if (r > 0) {
            c->len = (size_t)r;
            c->link.bytes_in += (uint64_t)r;
            return 0;
        }
        if (r == 0)
            return cp_seterr(err, "%s: the probe closed the connection",
                             c->addr);
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return cp_seterr(err, "%s: connection lost: %s", c->addr,
                             strerror(errno));
        int ms = (int)((end - cp_now_s()) * 1000);
        if (ms <= 0)
            return cp_seterr(err, "%s: no reply within %d ms", c->addr,
                             timeout_ms > 0 ? timeout_ms : c->timeout_ms);
        struct pollfd pf = {c->fd, POLLIN, 0};
        c->link.waits++;
        poll(&pf, 1, ms);
    }
}

/* ---- the handle ---- */

probe *probe_open(probe_kind kind, const char *addr, const probe_opts *o,
                  cp_err *err)
{
    probe_opts def = {0};
    probe *p = calloc(1, sizeof *p);
    if (!p) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    if (!o)
        o = &def;
    p->kind = kind;
    int r = kind == PROBE_GDB ? probe_gdb_open(p, addr, o, err)
                              : probe_ocd_open(p, addr, o, err);
    if (r < 0) {
        free(p);
        return NULL;
    }
    snprintf(p->addr, sizeof p->addr, "%s",
             kind == PROBE_GDB ? p->u.g.c.addr : p->u.o.c.addr);
    return p;
}

void probe_close(probe *p)
{
    if (!p)
        return;
    if (p->kind == PROBE_GDB)
        probe_gdb_close(p);
    else
        probe_ocd_close(p);
    free(p);
}

probe_kind probe_get_kind(const probe *p)
{
    return p->kind;
}

const char *probe_addr(const probe *p)
{
    return p->addr;
}

int probe_reads_while_running(const probe *p)
{
    return p->kind == PROBE_OPENOCD || p->u.g.nonstop;
}

size_t probe_packet_size(const probe *p)
{
    return p->kind == PROBE_GDB ? p->u.g.pktsize : 0;
}

int probe_read(probe *p, uint32_t addr, void *buf, size_t len, cp_err *err)
{
    if (p->kind == PROBE_GDB)
        return probe_gdb_read(p, addr, buf, len, err);
    if (addr % 4 || len % 4)
        return cp_seterr(err, "%s: OpenOCD reads are whole 32-bit words",
                         p->addr);
    uint32_t *w = malloc(len ? len : 4);
    if (!w)
        return cp_seterr(err, "out of memory");
    int r = probe_ocd_read32(p, addr, w, len / 4, err);
    if (r == 0)
        for (size_t i = 0; i < len / 4; i++) {
            uint8_t *b = (uint8_t *)buf + 4 * i;
            b[0] = (uint8_t)w[i];
            b[1] = (uint8_t)(w[i] >> 8);
            b[2] = (uint8_t)(w[i] >> 16);
            b[3] = (uint8_t)(w[i] >> 24);
        }
    free(w);
    return r;
}

int probe_read32(probe *p, uint32_t addr, uint32_t *v, cp_err *err)
{
    if (p->kind == PROBE_OPENOCD)
        return probe_ocd_read32(p, addr, v, 1, err);
    uint8_t b[4];
    if (probe_gdb_read(p, addr, b, 4, err) < 0)
        return -1;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
         (uint32_t)b[3] << 24;
    return 0;
}

int probe_write32(probe *p, uint32_t addr, uint32_t v, cp_err *err)
{
    if (p->kind == PROBE_OPENOCD)
        return probe_ocd_write32(p, addr, v, err);
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                    (uint8_t)(v >> 24)};
    return probe_gdb_write(p, addr, b, 4, err);
}

int probe_write_bytes(probe *p, uint32_t addr, const void *buf, size_t len,
                      cp_err *err)
{
    if (len > 1024)
        return cp_seterr(err, "write of %zu bytes: at most 1024", len);
    if (p->kind == PROBE_GDB)
        return probe_gdb_write(p, addr, buf, len, err);
    char cmd[64 + 5 * 1024], out[64];
    const uint8_t *b = buf;
    int n = snprintf(cmd, 64, "write_memory 0x%08x 8 {", addr);
    for (size_t i = 0; i < len; i++)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, "%s%u", i ? " " : "",
                      b[i]);
    snprintf(cmd + n, sizeof cmd - (size_t)n, "}");
    return probe_ocd_tcl(p, cmd, out, sizeof out, err);
}

int probe_halt(probe *p, cp_err *err)
{
    return p->kind == PROBE_GDB ? probe_gdb_halt(p, err)
                                : probe_ocd_halt(p, err);
}

int probe_resume(probe *p, cp_err *err)
{
    return p->kind == PROBE_GDB ? probe_gdb_resume(p, err)
                                : probe_ocd_resume(p, err);
}

int probe_read_pc(probe *p, uint32_t *pc, cp_err *err)
{
    return p->kind == PROBE_GDB ? probe_gdb_read_pc(p, pc, err)
                                : probe_ocd_read_pc(p, pc, err);
}

void probe_link_get(const probe *p, probe_link *l)
{
    *l = p->kind == PROBE_GDB ? p->u.g.c.link : p->u.o.c.link;
}

int probe_is_halted(const probe *p)
{
    return p->kind == PROBE_GDB ? p->u.g.halted : p->u.o.halted;
}

int probe_tcl(probe *p, const char *cmd, char *out, size_t cap, cp_err *err)
{
    if (p->kind != PROBE_OPENOCD)
        return cp_seterr(err, "%s: Tcl commands need --openocd", p->addr);
    return probe_ocd_tcl(p, cmd, out, cap, err);
}
