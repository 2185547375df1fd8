#include "bench/sink.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bench/net.h"

typedef struct conn {
    int live;
    uint64_t id;
    uint64_t open_ns, last_ns;
    uint64_t bytes, ibytes;
    char addr[64];
} conn;

typedef struct sink {
    const nb_sink_cfg *cfg;
    int ep, lfd;
    conn *conns;      /* indexed by fd */
    size_t cap;
    uint64_t start, opened, closed, idle, half_open, total;
    uint64_t gone_ibytes; /* this interval's bytes of closed connections */
    unsigned active, peak;
    unsigned char *buf;
} sink;

#define BUF (256 * 1024)

static double secs(const sink *s, uint64_t t)
{
    return (double)(t - s->start) / 1e9;
}

static void emit(const sink *s, nb_sink_event *ev)
{
    if (s->cfg->on_event)
        s->cfg->on_event(s->cfg->arg, ev);
}

static void close_conn(sink *s, int fd, const char *reason, uint64_t now)
{
    conn *c = &s->conns[fd];
    double d = (double)(now - c->open_ns) / 1e9;
    nb_sink_event ev = {.kind = NB_SINK_CLOSE, .t = secs(s, now),
                        .conn = c->id, .addr = c->addr, .bytes = c->bytes,
                        .secs = d, .reason = reason};
    ev.mbps = d > 0 ? (double)c->bytes * 8 / d / 1e6 : 0;
    s->gone_ibytes += c->ibytes;
    epoll_ctl(s->ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    c->live = 0;
    s->active--;
    s->closed++;
    if (!strcmp(reason, "idle"))
        s->idle++;
    else if (!strcmp(reason, "half-open"))
        s->half_open++;
    emit(s, &ev);
}

static int accept_all(sink *s, cp_err *err)
{
    for (;;) {
        struct sockaddr_storage a;
        socklen_t al = sizeof a;
        int fd = accept4(s->lfd, (struct sockaddr *)&a, &al,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
                errno == ECONNABORTED)
                return 0;
            if (errno == EMFILE || errno == ENFILE)
                return 0; /* retried on the next event */
            return cp_seterr(err, "accept: %s", strerror(errno));
        }
        if ((size_t)fd >= s->cap) {
            size_t old = s->cap;
            if (cp_grow((void **)&s->conns, &s->cap, (size_t)fd + 1,
                        sizeof *s->conns) < 0) {
                close(fd);
                return cp_seterr(err, "out of memory");
            }
            memset(s->conns + old, 0, (s->cap - old) * sizeof *s->conns);
        }
        int on = 1, idle = 5, intvl = 2, cnt = 3;
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP,
                                 .data.fd = fd};
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
            close(fd);
            continue;
        }
        uint64_t now = nb_now_ns();
        conn *c = &s->conns[fd];
        memset(c, 0, sizeof *c);
        c->live = 1;
        c->id = ++s->opened;
        c->open_ns = c->last_ns = now;
        nb_addr_str(&a, c->addr, sizeof c->addr);
        s->active++;
        if (s->active > s->peak)
            s->peak = s->active;
        nb_sink_event e = {.kind = NB_SINK_OPEN, .t = secs(s, now),
                           .conn = c->id, .addr = c->addr,
                           .active = s->active};
        emit(s, &e);
    }
}

static void read_conn(sink *s, int fd)
{
    conn *c = &s->conns[fd];
    /* Bounded per wake-up so that one fast connection cannot starve the
     * others; level-triggered epoll brings us back. */
    for (int k = 0; k < 16; k++) {
        /* MSG_TRUNC: TCP discards the data instead of copying it. */
        ssize_t n = recv(fd, s->buf, BUF, MSG_DONTWAIT | MSG_TRUNC);
        uint64_t now = nb_now_ns();
        if (n > 0) {
            c->bytes += (uint64_t)n;
            c->ibytes += (uint64_t)n;
            s->total += (uint64_t)n;
            c->last_ns = now;
            if ((size_t)n < BUF)
                return;
            continue;
        }
        if (n == 0) {
            close_conn(s, fd, "eof", now);
            return;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        close_conn(s, fd, errno == ETIMEDOUT ? "half-open" : "reset", now);
        return;
    }
}

static void interval(sink *s, uint64_t now, double len)
{
    uint64_t bytes = s->gone_ibytes;
    unsigned moving = 0;
    s->gone_ibytes = 0;
    for (size_t fd = 0; fd < s->cap; fd++) {
        conn *c = &s->conns[fd];
        if (!c->live || !c->ibytes)
            continue;
        bytes += c->ibytes;
        moving++;
        if (s->cfg->per_conn) {
            nb_sink_event e = {.kind = NB_SINK_CONN_INTERVAL,
                               .t = secs(s, now), .conn = c->id,
                               .addr = c->addr, .bytes = c->ibytes,
                               .secs = len,
                               .mbps = (double)c->ibytes * 8 / len / 1e6};
            emit(s, &e);
        }
        c->ibytes = 0;
    }
    nb_sink_event e = {.kind = NB_SINK_INTERVAL, .t = secs(s, now),
                       .bytes = bytes, .secs = len,
                       .mbps = (double)bytes * 8 / len / 1e6,
                       .active = s->active, .conns_moving = moving,
                       .opened = s->opened, .closed = s->closed};
    emit(s, &e);
}

static void timeouts(sink *s, uint64_t now)
{
    uint64_t lim = (uint64_t)(s->cfg->idle_s * 1e9);
    if (!lim)
        return;
    for (size_t fd = 0; fd < s->cap; fd++) {
        conn *c = &s->conns[fd];
        if (c->live && now - c->last_ns >= lim)
            close_conn(s, (int)fd, c->bytes ? "idle" : "half-open", now);
    }
}

static int open_listener(sink *s, cp_err *err)
{
    const nb_sink_cfg *cfg = s->cfg;
    s->lfd = socket(cfg->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
                    SOCK_CLOEXEC, 0);
    if (s->lfd < 0)
        return cp_seterr(err, "socket: %s", strerror(errno));
    int on = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_storage a = cfg->addr;
    char buf[64];
    if (bind(s->lfd, (const struct sockaddr *)&a, cfg->addrlen) < 0)
        return cp_seterr(err, "cannot listen on %s: %s",
                         nb_addr_str(&a, buf, sizeof buf), strerror(errno));
    if (listen(s->lfd, 4096) < 0)
        return cp_seterr(err, "listen: %s", strerror(errno));
    socklen_t al = sizeof a;
    getsockname(s->lfd, (struct sockaddr *)&a, &al);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->lfd};
    if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ev) < 0)
        return cp_seterr(err, "epoll: %s", strerror(errno));
    nb_sink_event e = {.kind = NB_SINK_LISTEN, .t = 0,
                       .addr = nb_addr_str(&a, buf, sizeof buf)};
    emit(s, &e);
    return 0;
}

int nb_sink_run(const nb_sink_cfg *cfg, cp_err *err)
{
    if (!(cfg->interval_s > 0))
        return cp_seterr(err, "the interval must be positive");
    sink s = {.cfg = cfg, .lfd = -1};
    s.ep = epoll_create1(EPOLL_CLOEXEC);
    s.buf = malloc(BUF);
    int rc = -1;
    if (s.ep < 0 || !s.buf) {
        cp_seterr(err, "cannot set up the event loop");
        goto out;
    }
    s.start = nb_now_ns();
    if (open_listener(&s, err) < 0)
        goto out;
    uint64_t ilen = (uint64_t)(cfg->interval_s * 1e9);
    uint64_t next = s.start + ilen, last_tick = s.start;
    uint64_t end = cfg->duration_s > 0
                       ? s.start + (uint64_t)(cfg->duration_s * 1e9)
                       : UINT64_MAX;
    struct epoll_event evs[256];
    for (;;) {
        uint64_t now = nb_now_ns();
        if ((cfg->stop && *cfg->stop) || now >= end ||
            (cfg->max_conns && s.closed >= cfg->max_conns))
            break;
        uint64_t wake = next < end ? next : end;
        int ms = now >= wake ? 0 : (int)((wake - now + 999999) / 1000000);
        if (ms > 100)
            ms = 100; /* idle checks and stop requests */
        int n = epoll_wait(s.ep, evs, 256, ms);
        if (n < 0 && errno != EINTR) {
            cp_seterr(err, "epoll_wait: %s", strerror(errno));
            goto out;
        }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == s.lfd) {
                if (accept_all(&s, err) < 0)
                    goto out;
            } else if ((size_t)fd < s.cap && s.conns[fd].live) {
                read_conn(&s, fd);
            }
        }
        now = nb_now_ns();
        if (now >= next) {
            interval(&s, now, (double)(now - last_tick) / 1e9);
            last_tick = now;
            while (next <= now)
                next += ilen;
        }
        timeouts(&s, now);
    }
    uint64_t now = nb_now_ns();
    /* The last, short interval: always when it holds bytes, so that the
     * intervals add up to the total. */
    int pending = s.gone_ibytes != 0;
    for (size_t fd = 0; fd < s.cap && !pending; fd++)
        pending = s.conns[fd].live && s.conns[fd].ibytes;
    if (pending || now > last_tick + ilen / 20)
        interval(&s, now, now > last_tick ? (double)(now - last_tick) / 1e9
                                           : 1e-9);
    for (size_t fd = 0; fd < s.cap; fd++)
        if (s.conns[fd].live)
            close_conn(&s, (int)fd, "stopped", now);
    double d = secs(&s, now);
    nb_sink_event e = {.kind = NB_SINK_SUMMARY, .t = d, .bytes = s.total,
                       .secs = d, .mbps = d > 0 ? (double)s.total * 8 / d / 1e6 : 0,
                       .opened = s.opened, .closed = s.closed, .peak = s.peak,
                       .idle = s.idle, .half_open = s.half_open};
    emit(&s, &e);
    rc = 0;
out:
    if (s.lfd >= 0)
        close(s.lfd);
    for (size_t fd = 0; fd < s.cap; fd++)
        if (s.conns[fd].live)
            close((int)fd);
    if (s.ep >= 0)
        close(s.ep);
    free(s.conns);
    free(s.buf);
    return rc;
}
