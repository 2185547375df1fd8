#include "bench/ping.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/net.h"

static uint16_t csum(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint32_t s = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        s += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (len & 1)
        s += (uint32_t)p[len - 1] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

typedef struct state {
    int fd, raw;
    uint16_t id;
    uint64_t magic;
    const nb_ping_cfg *cfg;
    uint8_t *seen;
    double *rtt;
    nb_ping_result *res;
} state;

static void take(state *s, unsigned char *buf, ssize_t len, uint64_t now)
{
    unsigned char *p = buf;
    if (s->raw) {
        if (len < 20)
            return;
        size_t ihl = (size_t)(p[0] & 0xf) * 4;
        if ((ssize_t)ihl + 8 > len)
            return;
        p += ihl;
        len -= (ssize_t)ihl;
    }
    if (len < 8 + 16 || p[0] != ICMP_ECHOREPLY)
        return;
    uint16_t id = (uint16_t)(p[4] << 8 | p[5]);
    if (s->raw && id != s->id)
        return;
    if (get64(p + 8) != s->magic)
        return;
    unsigned seq = (unsigned)(p[6] << 8 | p[7]);
    if (seq >= s->cfg->count)
        return;
    if (s->seen[seq]) {
        s->res->duplicated++;
        return;
    }
    s->seen[seq] = 1;
    uint64_t sent = get64(p + 16);
    double us = now > sent ? (double)(now - sent) / 1000.0 : 0;
    if (us > s->cfg->timeout_s * 1e6) {
        s->res->late++;
        return;
    }
    s->rtt[seq] = us;
}

/* Reads replies as they arrive until the monotonic time t (ppoll with a
 * nanosecond timeout, so that a reply is timestamped when it comes, not at
 * the next probe's deadline). */
static void drain_until(state *s, uint64_t t, unsigned char *buf, size_t cap)
{
    for (;;) {
        uint64_t now = nb_now_ns();
        if (now >= t)
            return;
        uint64_t left = t - now;
        struct timespec ts = {.tv_sec = (time_t)(left / 1000000000ULL),
                              .tv_nsec = (long)(left % 1000000000ULL)};
        struct pollfd pf = {.fd = s->fd, .events = POLLIN};
        if (ppoll(&pf, 1, &ts, NULL) <= 0)
            continue;
        for (;;) {
            ssize_t n = recv(s->fd, buf, cap, MSG_DONTWAIT);
            if (n < 0)
                break;
            take(s, buf, n, nb_now_ns());
        }
    }
}

int nb_ping(const nb_ping_cfg *cfg, nb_ping_result *res, cp_err *err)
{
    memset(res, 0, sizeof *res);
    if (cfg->peer.ss_family != AF_INET)
        return cp_seterr(err, "ICMP echo needs an IPv4 address");
    if (cfg->count == 0 || cfg->count > 65535)
        return cp_seterr(err, "probe count %u is outside 1..65535", cfg->count);
    if (cfg->size < 16 || cfg->size > 65000)
        return cp_seterr(err, "ICMP payload %zu is outside 16..65000", cfg->size);
    state s = {.cfg = cfg, .res = res};
    s.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
    res->socket_kind = "ping socket";
    if (s.fd < 0) {
        int e = errno;
        s.fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
        s.raw = 1;
        res->socket_kind = "raw socket";
        if (s.fd < 0)
            return cp_seterr(err, "no ICMP socket: ping socket: %s (see "
                             "net.ipv4.ping_group_range); raw socket: %s "
                             "(needs root or CAP_NET_RAW)", strerror(e),
                             strerror(errno));
    }
    uint64_t seed = nb_now_ns();
    s.id = (uint16_t)(getpid() ^ seed);
    s.magic = 0x43504e4250494e47ULL ^ seed; /* differs per run */
    s.seen = calloc(cfg->count, 1);
    s.rtt = malloc(cfg->count * sizeof *s.rtt);
    size_t cap = cfg->size + 128;
    unsigned char *pkt = calloc(1, 8 + cfg->size), *buf = malloc(cap);
    if (!s.seen || !s.rtt || !pkt || !buf) {
        free(s.seen); free(s.rtt); free(pkt); free(buf);
        close(s.fd);
        return cp_seterr(err, "out of memory");
    }
    for (unsigned i = 0; i < cfg->count; i++)
        s.rtt[i] = -1;
    nb_tight_timers();
    uint64_t period = (uint64_t)(cfg->interval_s * 1e9);
    uint64_t t0 = nb_now_ns() + 1000000ULL;
    for (unsigned i = 0; i < cfg->count; i++) {
        if (cfg->stop && *cfg->stop) {
            res->interrupted = 1;
            break;
        }
        uint64_t deadline = t0 + (uint64_t)i * period;
        drain_until(&s, deadline > 50000 ? deadline - 50000 : deadline, buf, cap);
        uint64_t now = nb_wait_until(deadline, 50000);
        memset(pkt, 0, 8);
        pkt[0] = ICMP_ECHO;
        pkt[4] = (unsigned char)(s.id >> 8);
        pkt[5] = (unsigned char)s.id;
        pkt[6] = (unsigned char)(i >> 8);
        pkt[7] = (unsigned char)i;
        put64(pkt + 8, s.magic);
        put64(pkt + 16, now);
        uint16_t c = csum(pkt, 8 + cfg->size);
        pkt[2] = (unsigned char)(c >> 8);
        pkt[3] = (unsigned char)c;
        if (sendto(s.fd, pkt, 8 + cfg->size, 0,
                   (const struct sockaddr *)&cfg->peer, cfg->peerlen) >= 0)
            res->sent++;
    }
    if (!res->interrupted)
        drain_until(&s, nb_now_ns() + (uint64_t)(cfg->timeout_s * 1e9), buf,
                    cap);
    size_t k = 0;
    for (unsigned i = 0; i < cfg->count; i++)
        if (s.rtt[i] >= 0)
            s.rtt[k++] = s.rtt[i];
    res->answered = k;
    uint64_t replied = k + res->late;
    res->lost = res->sent > replied ? res->sent - replied : 0;
    res->rtt_us = s.rtt;
    res->nrtt = k;
    free(s.seen);
    free(pkt);
    free(buf);
    close(s.fd);
    return 0;
}
