#include "bench/udp.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench/net.h"
#include "util/stats.h"

#define MAGIC 0x43504e42u /* "CPNB" */
#define BATCH 64

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

/* The state of the step in flight, shared with the receiver thread. */
typedef struct stepstate {
    uint32_t id;          /* 1-based over the whole run */
    uint64_t n;           /* requested */
    uint64_t timeout_ns;
    uint8_t *count;       /* replies per sequence number (saturates) */
    double *rtt;          /* first reply's RTT in us */
    uint8_t *is_late;
    int64_t max_seq;      /* highest sequence answered so far, -1 none */
    uint64_t late, dup, reord, stray;
} stepstate;

typedef struct rx {
    int fd;
    uint32_t run;
    size_t size;
    pthread_mutex_t mu;
    stepstate *cur;       /* NULL between steps */
    uint64_t stray_between;
    volatile int quit;
    volatile int warm_seen; /* the warm-up reply arrived */
} rx;

static void take_reply(rx *r, const unsigned char *p, size_t len, uint64_t now)
{
    stepstate *s = r->cur;
    if (len >= NB_UDP_HDR && get32(p) == MAGIC && get32(p + 4) == r->run &&
        get32(p + 8) == 0) {
        r->warm_seen = 1;
        return;
    }
    if (len < NB_UDP_HDR || get32(p) != MAGIC || get32(p + 4) != r->run ||
        !s || get32(p + 8) != s->id) {
        if (s)
            s->stray++;
        else
            r->stray_between++;
        return;
    }
    uint32_t seq = get32(p + 12);
    uint64_t sent = (uint64_t)get32(p + 16) << 32 | get32(p + 20);
    if (seq >= s->n) {
        s->stray++;
        return;
    }
    if (s->count[seq]) {
        s->dup++;
        if (s->count[seq] < 255)
            s->count[seq]++;
        return;
    }
    s->count[seq] = 1;
    uint64_t rtt = now > sent ? now - sent : 0;
    s->rtt[seq] = (double)rtt / 1000.0;
    if (rtt > s->timeout_ns) {
        s->is_late[seq] = 1;
        s->late++;
        return; /* late, not also reordered */
    }
    if ((int64_t)seq < s->max_seq)
        s->reord++;
    else
        s->max_seq = seq;
}

static void *rx_main(void *arg)
{
    rx *r = arg;
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    size_t cap = 65536; /* merged replies (see above) can be long */
    unsigned char *buf = malloc(cap * BATCH);
    if (!buf)
        return NULL;
    for (int i = 0; i < BATCH; i++) {
        iov[i].iov_base = buf + (size_t)i * cap;
        iov[i].iov_len = cap;
    }
    while (!r->quit) {
        for (int i = 0; i < BATCH; i++) {
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int got = recvmmsg(r->fd, msgs, BATCH, MSG_WAITFORONE, NULL);
        if (got <= 0)
            continue; /* timeout (SO_RCVTIMEO), refused, interrupted */
        uint64_t now = nb_now_ns();
        pthread_mutex_lock(&r->mu);
        for (int i = 0; i < got; i++) {
            /* An echo that relays through a byte stream (socat PIPE or
             * EXEC:cat) can merge replies into one datagram: a reply of k
             * whole requests is k replies. */
            size_t len = msgs[i].msg_len;
            const unsigned char *b = iov[i].iov_base;
            if (len > r->size && len % r->size == 0)
                for (size_t off = 0; off < len; off += r->size)
                    take_reply(r, b + off, r->size, now);
            else
                take_reply(r, b, len, now);
        }
        pthread_mutex_unlock(&r->mu);
    }
    free(buf);
    return NULL;
}

/* Sleeps until t, in slices, so that a stop request is seen. Returns 0, or
 * -1 when stopped. */
static int pause_until(uint64_t t, volatile sig_atomic_t *stop)
{
    for (;;) {
        if (stop && *stop)
            return -1;
        uint64_t now = nb_now_ns();
        if (now >= t)
            return 0;
        uint64_t slice = t - now > 20000000ULL ? now + 20000000ULL : t;
        nb_wait_until(slice, 0);
    }
}

static int compare_rtt(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Finishes a step: counts and RTT statistics. */
static int finish_step(const nb_udp_cfg *cfg, stepstate *s, nb_udp_step *st,
                       double period_s)
{
    double *rt = malloc((s->n ? s->n : 1) * sizeof *rt);
    if (!rt)
        return -1;
    size_t k = 0;
    uint64_t replied = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        if (!s->count[i])
            continue;
        replied++;
        if (!s->is_late[i])
            rt[k++] = s->rtt[i];
    }
    st->answered = k;
    st->late = s->late;
    st->duplicated = s->dup;
    st->reordered = s->reord;
    st->stray = s->stray;
    st->lost = st->sent > replied ? st->sent - replied : 0;
    st->reply_rate = (double)k / ((double)s->n * period_s);
    st->loss_pct = s->n ? 100.0 * (double)(s->n - k) / (double)s->n : 0;
    if (cfg->on_rtts)
        cfg->on_rtts(cfg->arg, st, rt, k);
    qsort(rt, k, sizeof *rt, compare_rtt);
    st->rtt_median_us = cp_pct_sorted(rt, k, 50);
    st->rtt_p99_us = cp_pct_sorted(rt, k, 99);
    st->rtt_min_us = k ? rt[0] : NAN;
    st->rtt_max_us = k ? rt[k - 1] : NAN;
    free(rt);
    return 0;
}

/* Sends one step's requests. Returns 0, or 1 when stopped. */
static int send_step(const nb_udp_cfg *cfg, int fd, uint32_t run,
                     stepstate *s, nb_udp_step *st, unsigned char *pkt)
{
    double period_ns = 1e9 / st->rate;
    uint64_t spin = (uint64_t)(cfg->spin_us * 1000.0);
    uint64_t t0 = nb_now_ns() + 1000000ULL, last = t0;
    put32(pkt, MAGIC);
    put32(pkt + 4, run);
    put32(pkt + 8, s->id);
    for (uint64_t i = 0; i < s->n; i++) {
        if (cfg->stop && *cfg->stop)
            return 1;
        uint64_t deadline = t0 + (uint64_t)((double)i * period_ns);
        uint64_t next = t0 + (uint64_t)((double)(i + 1) * period_ns);
        uint64_t now = nb_now_ns();
        if (now >= next && i + 1 < s->n) {
            st->skipped++; /* a stall: never made up with a burst */
            continue;
        }
        if (now < deadline)
            now = nb_wait_until(deadline, spin);
        else if ((double)(now - deadline) > period_ns / 2)
            st->sent_late++;
        put32(pkt + 12, (uint32_t)i);
        put32(pkt + 16, (uint32_t)(now >> 32));
        put32(pkt + 20, (uint32_t)now);
        if (send(fd, pkt, cfg->size, 0) < 0) {
            st->send_errors++;
            continue;
        }
        st->sent++;
        last = now;
    }
    double span = (double)(last - t0) + period_ns;
    st->achieved_rate = st->sent ? (double)st->sent * 1e9 / span : 0;
    return 0;
}

static int open_socket(const nb_udp_cfg *cfg, cp_err *err)
{
    int fd = socket(cfg->peer.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cp_seterr(err, "cannot open a UDP socket: %s", strerror(errno));
    int big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 20000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (const struct sockaddr *)&cfg->peer, cfg->peerlen) < 0) {
        cp_seterr(err, "cannot reach the peer: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int nb_udp_sweep(const nb_udp_cfg *cfg, int *interrupted, cp_err *err)
{
    *interrupted = 0;
    if (cfg->size < NB_UDP_HDR || cfg->size > NB_UDP_MAX_SIZE)
        return cp_seterr(err, "payload size %zu is outside %d..%d", cfg->size,
                         NB_UDP_HDR, NB_UDP_MAX_SIZE);
    uint64_t maxn = 1;
    for (size_t i = 0; i < cfg->nrates; i++) {
        if (!(cfg->rates[i] > 0) || cfg->rates[i] > NB_UDP_MAX_RATE)
            return cp_seterr(err, "rate %g is outside (0, %g]", cfg->rates[i],
                             NB_UDP_MAX_RATE);
        uint64_t n = (uint64_t)llround(cfg->rates[i] * cfg->step_s);
        if (n > maxn)
            maxn = n;
    }
    if (maxn > UINT32_MAX)
        return cp_seterr(err, "too many requests in one step");
    int fd = open_socket(cfg, err);
    if (fd < 0)
        return -1;
    nb_tight_timers();
    struct sched_param sp_old, sp = {.sched_priority = 50};
    int pol_old = SCHED_OTHER;
    pthread_getschedparam(pthread_self(), &pol_old, &sp_old);
    if (cfg->realtime &&
        pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
        close(fd);
        return cp_seterr(err, "cannot run under SCHED_FIFO (needs root or "
                         "CAP_SYS_NICE)");
    }
    stepstate s = {0};
    s.count = calloc(maxn, 1);
    s.is_late = calloc(maxn, 1);
    s.rtt = calloc(maxn, sizeof *s.rtt);
    unsigned char *pkt = calloc(1, cfg->size);
    rx r = {.fd = fd, .size = cfg->size};
    uint64_t seed = nb_now_ns() ^ (uint64_t)getpid() << 20;
    r.run = (uint32_t)cp_rand(&seed);
    pthread_t th;
    int rc = -1, started = 0;
    if (!s.count || !s.is_late || !s.rtt || !pkt) {
        cp_seterr(err, "out of memory");
        goto out;
    }
    pthread_mutex_init(&r.mu, NULL);
    if (pthread_create(&th, NULL, rx_main, &r) != 0) {
        cp_seterr(err, "cannot start the receiver thread");
        goto out;
    }
    started = 1;
    /* Warm-up: one request outside every step (step id 0), so that address
     * resolution and a peer that sets up on its first datagram do not cost
     * the first step a request. Its reply is not counted. */
    put32(pkt, MAGIC);
    put32(pkt + 4, r.run);
    memset(pkt + 8, 0, 16);
    if (send(fd, pkt, cfg->size, 0) >= 0) {
        uint64_t until = nb_now_ns() + (uint64_t)(2 * cfg->timeout_s * 1e9);
        while (!r.warm_seen && nb_now_ns() < until)
            if (pause_until(nb_now_ns() + 1000000ULL, cfg->stop) < 0) {
                *interrupted = 1;
                goto done;
            }
    }
    pthread_mutex_lock(&r.mu);
    r.stray_between = 0;
    pthread_mutex_unlock(&r.mu);
    uint32_t id = 0;
    for (unsigned pass = 1; pass <= cfg->passes; pass++) {
        for (size_t k = 0; k < cfg->nrates; k++) {
            nb_udp_step st = {.pass = pass, .index = (unsigned)k,
                              .rate = cfg->rates[k]};
            uint64_t n = (uint64_t)llround(st.rate * cfg->step_s);
            st.requested = n ? n : 1;
            pthread_mutex_lock(&r.mu);
            s.id = ++id;
            s.n = st.requested;
            s.timeout_ns = (uint64_t)(cfg->timeout_s * 1e9);
            memset(s.count, 0, s.n);
            memset(s.is_late, 0, s.n);
            s.max_seq = -1;
            s.late = s.dup = s.reord = 0;
            s.stray = r.stray_between;
            r.stray_between = 0;
            r.cur = &s;
            pthread_mutex_unlock(&r.mu);
            if (send_step(cfg, fd, r.run, &s, &st, pkt)) {
                *interrupted = 1;
                goto done;
            }
            /* Wait for the replies to the last requests: twice the
             * timeout, so that late replies are seen as late, not lost. */
            if (pause_until(nb_now_ns() + (uint64_t)(2 * cfg->timeout_s * 1e9),
                            cfg->stop) < 0) {
                *interrupted = 1;
                goto done;
            }
            pthread_mutex_lock(&r.mu);
            r.cur = NULL;
            pthread_mutex_unlock(&r.mu);
            if (finish_step(cfg, &s, &st, 1.0 / st.rate) < 0) {
                cp_seterr(err, "out of memory");
                goto out;
            }
            if (cfg->on_step)
                cfg->on_step(cfg->arg, &st);
            if (cfg->gap_s > 0 &&
                pause_until(nb_now_ns() + (uint64_t)(cfg->gap_s * 1e9),
                            cfg->stop) < 0) {
                *interrupted = 1;
                goto done;
            }
        }
    }
done:
    rc = 0;
out:
    if (started) {
        r.quit = 1;
        pthread_join(th, NULL);
        pthread_mutex_destroy(&r.mu);
    }
    free(s.count);
    free(s.is_late);
    free(s.rtt);
    free(pkt);
    close(fd);
    if (cfg->realtime)
        pthread_setschedparam(pthread_self(), pol_old, &sp_old);
    return rc;
}

size_t nb_udp_summarize(const nb_udp_step *steps, size_t n,
                        nb_udp_pass *passes, size_t max_passes)
{
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned p = steps[i].pass;
        if (p == 0 || p > max_passes)
            continue;
        while (np < p) {
            passes[np] = (nb_udp_pass){.pass = (unsigned)np + 1};
            np++;
        }
        nb_udp_pass *ps = &passes[p - 1];
        if (steps[i].sent > 0 && steps[i].answered == steps[i].sent &&
            steps[i].rate > ps->all_answered_rate)
            ps->all_answered_rate = steps[i].rate;
        if (steps[i].reply_rate > ps->peak_reply_rate)
            ps->peak_reply_rate = steps[i].reply_rate;
    }
    return np;
}

static int parse_rate(const char *s, const char **end, double *v)
{
    char *e;
    errno = 0;
    *v = strtod(s, &e);
    if (e == s || errno || !isfinite(*v))
        return -1;
    *end = e;
    return 0;
}

int nb_parse_rates(const char *s, double **rates, size_t *n, cp_err *err)
{
    *rates = NULL;
    *n = 0;
    double a, b, c;
    const char *e;
    size_t cap = 0;
    if (parse_rate(s, &e, &a) == 0 && *e == ':') {
        if (parse_rate(e + 1, &e, &b) < 0 || *e != ':' ||
            parse_rate(e + 1, &e, &c) < 0 || *e)
            return cp_seterr(err, "'%s': expected START:STOP:STEP", s);
        if (!(a > 0) || !(c > 0) || b < a || b > NB_UDP_MAX_RATE)
            return cp_seterr(err, "'%s': need 0 < START <= STOP <= %g and "
                             "STEP > 0", s, NB_UDP_MAX_RATE);
        size_t steps = (size_t)floor((b - a) / c + 1e-9) + 1;
        if (steps > 100000)
            return cp_seterr(err, "'%s': too many steps", s);
        *rates = malloc(steps * sizeof **rates);
        if (!*rates)
            return cp_seterr(err, "out of memory");
        for (size_t i = 0; i < steps; i++)
            (*rates)[i] = a + (double)i * c;
        *n = steps;
        return 0;
    }
    const char *p = s;
    for (;;) {
        double v;
        if (parse_rate(p, &e, &v) < 0 || (*e && *e != ',')) {
            free(*rates);
            *rates = NULL;
            *n = 0;
            return cp_seterr(err, "'%s': expected START:STOP:STEP or a list "
                             "R1,R2,...", s);
        }
        if (!(v > 0) || v > NB_UDP_MAX_RATE) {
            free(*rates);
            *rates = NULL;
            *n = 0;
            return cp_seterr(err, "'%s': rate %g is outside (0, %g]", s, v,
                             NB_UDP_MAX_RATE);
        }
        if (cp_grow((void **)rates, &cap, *n + 1, sizeof **rates) < 0) {
            free(*rates);
            *rates = NULL;
            *n = 0;
            return cp_seterr(err, "out of memory");
        }
        (*rates)[(*n)++] = v;
        if (!*e)
            return 0;
        p = e + 1;
    }
}

int nb_udp_echo_serve(int fd, volatile sig_atomic_t *stop, uint64_t *count,
                      cp_err *err)
{
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_storage from[BATCH];
    size_t cap = 65536;
    unsigned char *buf = malloc(cap * BATCH);
    if (!buf)
        return cp_seterr(err, "out of memory");
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    *count = 0;
    while (!(stop && *stop)) {
        for (int i = 0; i < BATCH; i++) {
            iov[i].iov_base = buf + (size_t)i * cap;
            iov[i].iov_len = cap;
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &from[i];
            msgs[i].msg_hdr.msg_namelen = sizeof from[i];
        }
        int got = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
        if (got <= 0)
            continue;
        for (int i = 0; i < got; i++)
            iov[i].iov_len = msgs[i].msg_len;
        int off = 0;
        while (off < got) {
            int s = sendmmsg(fd, msgs + off, (unsigned)(got - off), 0);
            if (s <= 0)
                break;
            off += s;
        }
        *count += (uint64_t)got;
    }
    free(buf);
    return 0;
}
