/* probe: the GDB packet codec; the GDB client against a small scripted
 * peer (split packets, bad checksums, run-length replies, disconnects,
 * timeouts, packet size) and against QEMU's real gdbstub running the test
 * firmware (tests/fixtures/probe/); the samples file. */
#include "probe/counters.h"
#include "probe/probe.h"
#include "probe/probe_int.h"
#include "probe/rsp.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- address forms (--gdb / --openocd) ---- */

/* A listening socket on 127.0.0.1 (v6: ::1) at a port the kernel picks. */
static int listener(int v6, int *port)
{
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 4) < 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                     : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

/* HOST alone takes the probe's default port (the form of the --help
 * examples: --openocd localhost); PORT alone is on localhost; [V6]:PORT
 * and [V6]; a bad port is refused with the address in the message. */
static void t_address_forms(void)
{
    int port, fd = listener(0, &port);
    T_ASSERT(fd >= 0);
    char a[64];
    probe_conn c;
    cp_err err;
    T_EQ(probe_conn_open(&c, "127.0.0.1", port, 1000, &err), 0);
    T_STREQ(c.addr, (snprintf(a, sizeof a, "127.0.0.1:%d", port), a));
    probe_conn_close(&c);
    snprintf(a, sizeof a, "%d", port);
    T_EQ(probe_conn_open(&c, a, 0, 1000, &err), 0);
    probe_conn_close(&c);
    snprintf(a, sizeof a, "127.0.0.1:%d", port);
    T_EQ(probe_conn_open(&c, a, 1, 1000, &err), 0); /* the port given wins */
    probe_conn_close(&c);
    T_EQ(probe_conn_open(&c, "127.0.0.1", 0, 1000, &err), -1);
    T_ASSERT(strstr(err.msg, "give the port") != NULL);
    T_EQ(probe_conn_open(&c, "127.0.0.1:70000", 6666, 1000, &err), -1);
    T_ASSERT(strstr(err.msg, "'127.0.0.1:70000' is not HOST:PORT") != NULL);
    T_EQ(probe_conn_open(&c, "[::1", 6666, 1000, &err), -1);
    close(fd);
    fd = listener(1, &port);
    if (fd < 0)
        return; /* no IPv6 loopback on this machine */
    snprintf(a, sizeof a, "[::1]:%d", port);
    T_EQ(probe_conn_open(&c, a, 0, 1000, &err), 0);
    probe_conn_close(&c);
    T_EQ(probe_conn_open(&c, "[::1]", port, 1000, &err), 0);
    probe_conn_close(&c);
    T_EQ(probe_conn_open(&c, "::1", port, 1000, &err), 0);
    probe_conn_close(&c);
    close(fd);
}

/* ---- codec ---- */

static probe_rsp_ev feed_all(probe_rsp_parser *p, const char *s, size_t *pos)
{
    size_t n = strlen(s), used;
    probe_rsp_ev ev = probe_rsp_feed(p, s + *pos, n - *pos, &used);
    *pos += used;
    return ev;
}

static void t_frame_and_escape(void)
{
    char out[64];
    long n = probe_rsp_frame("m0,4", 4, out, sizeof out);
    T_EQ(n, 8);
    out[n] = 0;
    T_STREQ(out, "$m0,4#fd");
    /* '#', '$', '}' and '*' are escaped; the parser gives them back */
    const char data[] = "a#b$c}d*e";
    n = probe_rsp_frame(data, strlen(data), out, sizeof out);
    T_ASSERT(n > 0);
    out[n] = 0;
    T_ASSERT(memchr(out + 1, '#', (size_t)n - 4) == NULL);
    T_ASSERT(memchr(out + 1, '$', (size_t)n - 1) == NULL);
    T_ASSERT(memcmp(out, "$a}\x03" "b}\x04" "c}]d}\x0a" "e#", 15) == 0);
    probe_rsp_parser *p = malloc(sizeof *p);
    probe_rsp_init(p);
    size_t pos = 0;
    T_EQ(feed_all(p, out, &pos), PROBE_RSP_EV_PACKET);
    T_STREQ(p->data, data);
    free(p);
    T_EQ(probe_rsp_frame("abc", 3, out, 6), -1);
}

static void t_run_length(void)
{
    char out[64];
    /* "0* " is '0' then 3 more: 0000; "x*!" is x then 4 more */
    long n = probe_rsp_decode("0* 1x*!", 7, out, sizeof out);
    T_EQ(n, 10);
    out[n] = 0;
    T_STREQ(out, "00001xxxxx");
    T_EQ(probe_rsp_decode("*a", 2, out, sizeof out), -1); /* nothing before */
    T_EQ(probe_rsp_decode("a*", 2, out, sizeof out), -1); /* no count */
    T_EQ(probe_rsp_decode("a*\x10", 3, out, sizeof out), -1);
    T_EQ(probe_rsp_decode("a*~", 3, out, 8), -1);         /* too long */
    T_EQ(probe_rsp_decode("a}", 2, out, sizeof out), -1); /* cut escape */
}

static void t_parser_events(void)
{
    probe_rsp_parser *p = malloc(sizeof *p);
    probe_rsp_init(p);
    /* ack, junk, a packet split anywhere, a notification, a bad sum */
    const char *s = "+xx$OK#9a%Stop:T05#99$OK#00-\x03";
    size_t pos = 0;
    T_EQ(feed_all(p, s, &pos), PROBE_RSP_EV_ACK);
    T_EQ(feed_all(p, s, &pos), PROBE_RSP_EV_PACKET);
    T_STREQ(p->data, "OK");
    T_EQ(p->junk, 2);
    T_EQ(feed_all(p, s, &pos), PROBE_RSP_EV_NOTIFY);
    T_STREQ(p->data, "Stop:T05");
    T_EQ(feed_all(p, s, &pos), PROBE_RSP_EV_BADSUM);
    T_EQ(feed_all(p, s, &pos), PROBE_RSP_EV_NAK);
    T_EQ(feed_all(p, s, &pos), PROBE_RSP_EV_INTR);
    T_EQ(feed_all(p, s, &pos), PROBE_RSP_EV_NONE);
    /* one byte at a time */
    const char *q = "$S05#b8";
    probe_rsp_ev ev = PROBE_RSP_EV_NONE;
    for (size_t i = 0; q[i]; i++) {
        size_t used;
        ev = probe_rsp_feed(p, q + i, 1, &used);
        T_EQ(used, 1);
        if (q[i + 1])
            T_EQ(ev, PROBE_RSP_EV_NONE);
    }
    T_EQ(ev, PROBE_RSP_EV_PACKET);
    T_STREQ(p->data, "S05");
    free(p);
}

static void t_parser_overflow(void)
{
    probe_rsp_parser *p = malloc(sizeof *p);
    probe_rsp_init(p);
    size_t n = PROBE_RSP_MAX + 10;
    char *big = malloc(n + 4);
    big[0] = '$';
    memset(big + 1, 'a', n - 1);
    uint8_t sum = 0;
    for (size_t i = 1; i < n; i++)
        sum = (uint8_t)(sum + 'a');
    snprintf(big + n, 4, "#%02x", sum);
    size_t used;
    T_EQ(probe_rsp_feed(p, big, n + 3, &used), PROBE_RSP_EV_OVERFLOW);
    free(big);
    free(p);
}

/* ---- scripted peer ---- */

typedef struct peer {
    int lfd, port;
    int noack;         /* offer QStartNoAckMode */
    int pktsize;       /* 0: do not announce */
    int chunk;         /* send replies in pieces of this many bytes */
    int corrupt_first_m; /* send a bad checksum for the first 'm' reply */
    int rle;           /* run-length encode memory replies */
    int close_after;   /* close mid-reply at this packet (0: never) */
    int mute_after;    /* stop answering at this packet */
    int nonstop;       /* offer QNonStop, answer m while running */
    int no_p;          /* answer 'p' with an empty reply (unsupported) */
    uint32_t pcsr;     /* value the 'm' of 0xe000101c returns */
    int pcsr_step;     /* added after each PCSR read */
    int npackets, nm, naks, nwrites;
    char last[20000];  /* the last reply, framed, for a resend */
    size_t lastn;
    uint32_t max_m;    /* largest 'm' length asked for */
    pthread_t th;
} peer;

static void psend(peer *pe, int fd, const char *s, size_t n)
{
    size_t c = pe->chunk > 0 ? (size_t)pe->chunk : n;
    for (size_t i = 0; i < n; i += c) {
        size_t k = n - i < c ? n - i : c;
        if (send(fd, s + i, k, MSG_NOSIGNAL) < 0)
            return;
        if (pe->chunk)
            usleep(200);
    }
}

static void reply(peer *pe, int fd, const char *data, int corrupt)
{
    char buf[20000];
    long n;
    if (pe->rle && strchr(data, '*')) {
        /* already run-length encoded: frame without escaping */
        uint8_t sum = 0;
        for (const char *c = data; *c; c++)
            sum = (uint8_t)(sum + (unsigned char)*c);
        n = snprintf(buf, sizeof buf, "$%s#%02x", data, sum);
    } else {
        n = probe_rsp_frame(data, strlen(data), buf, sizeof buf);
    }
    memcpy(pe->last, buf, (size_t)n);
    pe->lastn = (size_t)n;
    if (corrupt)
        buf[n - 1] = buf[n - 1] == '0' ? '1' : '0';
    psend(pe, fd, buf, (size_t)n);
}

/* memory: byte at address a is (a * 7) & 0xff, except PCSR */
static void mem_reply(peer *pe, char *out, uint32_t addr, uint32_t len)
{
    if (addr == 0xe000101c && len == 4) {
        uint8_t b[4] = {(uint8_t)pe->pcsr, (uint8_t)(pe->pcsr >> 8),
                        (uint8_t)(pe->pcsr >> 16), (uint8_t)(pe->pcsr >> 24)};
        probe_hex_encode(b, 4, out);
        pe->pcsr += (uint32_t)pe->pcsr_step;
        return;
    }
    char *o = out;
    for (uint32_t i = 0; i < len; i++) {
        /* a saturated counter block at 0x14000000 */
        uint8_t b = addr + i - 0x14000000u < 0x20 ? 0xff
                    : pe->rle                     ? 0
                                                  : (uint8_t)((addr + i) * 7);
        probe_hex_encode(&b, 1, o);
        o += 2;
    }
    if (pe->rle) {
        /* "00" * len as '0' followed by runs of at most 97 more */
        size_t total = 2 * len, k = 0;
        char *r = out;
        *r++ = '0';
        k = 1;
        while (k < total) {
            size_t run = total - k > 97 ? 97 : total - k;
            if (run == 6 || run == 7) /* counts '#' and '$' are not allowed */
                run = 5;
            if (run < 3) {
                while (run--) {
                    *r++ = '0';
                    k++;
                }
                break;
            }
            *r++ = '*';
            *r++ = (char)(run + 29);
            k += run;
            if (k < total) {
                *r++ = '0';
                k++;
            }
        }
        *r = 0;
    }
}

static void *peer_main(void *arg)
{
    peer *pe = arg;
    int fd = accept(pe->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    probe_rsp_parser *ps = malloc(sizeof *ps);
    probe_rsp_init(ps);
    int noack = 0, running = 0;
    char buf[4096], out[20000];
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r <= 0)
            break;
        size_t pos = 0;
        while (pos < (size_t)r) {
            size_t used;
            probe_rsp_ev ev = probe_rsp_feed(ps, buf + pos, (size_t)r - pos,
                                             &used);
            pos += used;
            if (ev == PROBE_RSP_EV_NAK) {
                pe->naks++;
                psend(pe, fd, pe->last, pe->lastn);
                continue;
            }
            if (ev == PROBE_RSP_EV_INTR && running) {
                running = 0;
                reply(pe, fd, "T05thread:01;", 0);
                continue;
            }
            if (ev != PROBE_RSP_EV_PACKET)
                continue;
            pe->npackets++;
            if (!noack)
                send(fd, "+", 1, MSG_NOSIGNAL);
            if (pe->mute_after && pe->npackets >= pe->mute_after)
                continue;
            if (pe->close_after && pe->npackets >= pe->close_after) {
                send(fd, "$12345678", 9, MSG_NOSIGNAL);
                goto done;
            }
            const char *d = ps->data;
            if (!strncmp(d, "qSupported", 10)) {
                snprintf(out, sizeof out, "%s%s%s", pe->noack ?
                         "QStartNoAckMode+;" : "",
                         pe->nonstop ? "QNonStop+;" : "", "swbreak+");
                if (pe->pktsize) {
                    size_t l = strlen(out);
                    snprintf(out + l, sizeof out - l, ";PacketSize=%x",
                             pe->pktsize);
                }
                reply(pe, fd, out, 0);
            } else if (!strcmp(d, "QStartNoAckMode")) {
                reply(pe, fd, "OK", 0);
                noack = 1;
            } else if (!strcmp(d, "QNonStop:1")) {
                reply(pe, fd, "OK", 0);
            } else if (!strcmp(d, "?")) {
                reply(pe, fd, "S05", 0);
            } else if (d[0] == 'm') {
                unsigned a, l;
                sscanf(d + 1, "%x,%x", &a, &l);
                if (l > pe->max_m)
                    pe->max_m = l;
                if (l > 8000)
                    l = 8000;
                mem_reply(pe, out, a, l);
                reply(pe, fd, out, pe->corrupt_first_m && pe->nm++ == 0);
            } else if (!strcmp(d, "pf") && !pe->no_p) {
                reply(pe, fd, "34120010", 0);
            } else if (!strcmp(d, "g")) {
                /* r0..r14 = i, r15 (the PC) = 0x10005678 */
                char *o = out;
                for (uint32_t i = 0; i < 16; i++) {
                    uint32_t v = i == 15 ? 0x10005678 : i;
                    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8),
                                    (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
                    probe_hex_encode(b, 4, o);
                    o += 8;
                }
                strcpy(o, "xxxxxxxx");
                reply(pe, fd, out, 0);
            } else if (d[0] == 'M') {
                pe->nwrites++;
                reply(pe, fd, "OK", 0);
            } else if (!strcmp(d, "c")) {
                running = 1;
            } else if (!strcmp(d, "vCont;c") || !strcmp(d, "vCont;t")) {
                reply(pe, fd, "OK", 0);
            } else if (!strcmp(d, "D")) {
                reply(pe, fd, "OK", 0);
            } else {
                reply(pe, fd, "", 0);
            }
        }
    }
done:
    free(ps);
    close(fd);
    return NULL;
}

static int peer_start(peer *pe)
{
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    pe->lfd = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t sl = sizeof sa;
    if (bind(pe->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        listen(pe->lfd, 1) < 0 ||
        getsockname(pe->lfd, (struct sockaddr *)&sa, &sl) < 0)
        return -1;
    pe->port = ntohs(sa.sin_port);
    return pthread_create(&pe->th, NULL, peer_main, pe);
}

static void peer_stop(peer *pe)
{
    shutdown(pe->lfd, SHUT_RDWR);
    pthread_join(pe->th, NULL);
    close(pe->lfd);
}

static probe *peer_open(peer *pe, int nonstop, cp_err *err)
{
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", pe->port);
    probe_opts o = {.timeout_ms = 500, .nonstop = nonstop};
    return probe_open(PROBE_GDB, addr, &o, err);
}

static int check_mem(const uint8_t *b, uint32_t addr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (uint8_t)((addr + i) * 7))
            return 0;
    return 1;
}

static void t_peer_ack_mode_split_replies(void)
{
    peer pe = {.chunk = 3};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    if (!p)
        T_FAIL("%s", err.msg);
    T_ASSERT(p);
    uint8_t b[100];
    T_ASSERT(probe_read(p, 0x20000010, b, sizeof b, &err) == 0);
    T_ASSERT(check_mem(b, 0x20000010, sizeof b));
    T_EQ(probe_packet_size(p), 400); /* none announced: a safe default */
    probe_close(p);
    peer_stop(&pe);
}

static void t_peer_bad_checksum_is_resent(void)
{
    peer pe = {.corrupt_first_m = 1};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    uint8_t b[4];
    T_ASSERT(probe_read(p, 0, b, 4, &err) == 0);
    T_ASSERT(check_mem(b, 0, 4));
    probe_close(p);
    peer_stop(&pe);
    T_EQ(pe.naks, 1);
}

static void t_peer_bad_checksum_noack_is_error(void)
{
    peer pe = {.corrupt_first_m = 1, .noack = 1};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    uint8_t b[4];
    T_EQ(probe_read(p, 0, b, 4, &err), -1);
    T_ASSERT(strstr(err.msg, "bad checksum"));
    probe_close(p);
    peer_stop(&pe);
}

static void t_peer_packet_size_splits_reads(void)
{
    peer pe = {.noack = 1, .pktsize = 0x48};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    T_EQ(probe_packet_size(p), 0x48);
    uint8_t b[1000];
    T_ASSERT(probe_read(p, 0x100, b, sizeof b, &err) == 0);
    T_ASSERT(check_mem(b, 0x100, sizeof b));
    probe_close(p);
    peer_stop(&pe);
    T_ASSERT(pe.max_m <= (0x48 - 8) / 2);
    T_ASSERT(pe.max_m > 0);
}

static void t_peer_run_length_replies(void)
{
    peer pe = {.noack = 1, .rle = 1, .pktsize = 0x4000};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    uint8_t b[1000];
    memset(b, 0x55, sizeof b);
    T_ASSERT(probe_read(p, 0x100, b, sizeof b, &err) == 0);
    for (size_t i = 0; i < sizeof b; i++)
        T_EQ(b[i], 0);
    probe_close(p);
    peer_stop(&pe);
}

static void t_peer_disconnect_mid_reply(void)
{
    peer pe = {.noack = 1, .close_after = 4};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    uint8_t b[4];
    T_EQ(probe_read(p, 0, b, 4, &err), -1);
    T_ASSERT(strstr(err.msg, "closed the connection"));
    probe_close(p);
    peer_stop(&pe);
}

static void t_peer_timeout(void)
{
    peer pe = {.noack = 1, .mute_after = 4};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    uint8_t b[4];
    T_EQ(probe_read(p, 0, b, 4, &err), -1);
    T_ASSERT(strstr(err.msg, "no reply within 500 ms"));
    probe_close(p);
    peer_stop(&pe);
}

static void t_peer_nonstop_required(void)
{
    peer pe = {.noack = 1};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 1, &err);
    T_ASSERT(!p);
    T_ASSERT(strstr(err.msg, "cannot read memory while the target runs"));
    peer_stop(&pe);
}

static void t_peer_halt_sampling(void)
{
    peer pe = {.noack = 1};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    T_ASSERT(probe_is_halted(p));
    T_ASSERT(probe_resume(p, &err) == 0);
    uint32_t pc = 0;
    T_ASSERT(probe_halt(p, &err) == 0);
    T_ASSERT(probe_read_pc(p, &pc, &err) == 0);
    T_EQ(pc, 0x10001234);
    T_ASSERT(probe_resume(p, &err) == 0);
    probe_close(p);
    peer_stop(&pe);
}

static void t_peer_pc_by_g_when_p_unsupported(void)
{
    peer pe = {.noack = 1, .no_p = 1};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    uint32_t pc = 0;
    T_ASSERT(probe_read_pc(p, &pc, &err) == 0);
    T_EQ(pc, 0x10005678);
    T_ASSERT(probe_read_pc(p, &pc, &err) == 0); /* remembered: 'g' again */
    T_EQ(pc, 0x10005678);
    probe_close(p);
    peer_stop(&pe);
}

static int no_wait(void *arg, double *secs, cp_err *err)
{
    (void)arg;
    (void)err;
    *secs = 0.01;
    return 0;
}

static void t_peer_counters_saturated(void)
{
    peer pe = {.noack = 1};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 0, &err);
    T_ASSERT(p);
    probe_ctr_regs r = {0x14000000, 0x04, 0x0c, 0x10, PROBE_FLUSH_REG};
    probe_ctr_result res;
    T_ASSERT(probe_ctr_window(p, &r, no_wait, NULL, &res, &err) == 0);
    T_EQ(res.saturated, 1);
    T_EQ(res.hits, 0xffffffffu);
    T_EQ(pe.nwrites, 3); /* FLUSH, CTR_HIT, CTR_ACC */
    /* a block whose "hits" exceed its "accesses" is not a counter block */
    probe_ctr_regs bad = {0x20000014, 0x04, 0x0c, 0x10, PROBE_FLUSH_NONE};
    T_EQ(probe_ctr_window(p, &bad, no_wait, NULL, &res, &err), -1);
    T_ASSERT(strstr(err.msg, "not XIP cache counters"));
    probe_close(p);
    peer_stop(&pe);
}

static void t_peer_pcsr_constant_is_reported(void)
{
    peer pe = {.noack = 1, .nonstop = 1, .pcsr = 0x10000100};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 1, &err);
    if (!p)
        T_FAIL("%s", err.msg);
    T_ASSERT(p);
    T_ASSERT(probe_reads_while_running(p));
    T_EQ(probe_pcsr_check(p, 0xe000101c, 8, &err), -1);
    T_ASSERT(strstr(err.msg, "reads the same value 0x10000100 8 times"));
    pe.pcsr = 0;
    T_EQ(probe_pcsr_check(p, 0xe000101c, 8, &err), -1);
    T_ASSERT(strstr(err.msg, "reads as 0"));
    pe.pcsr_step = 2;
    pe.pcsr = 0x10000000;
    T_EQ(probe_pcsr_check(p, 0xe000101c, 8, &err), 0);
    probe_close(p);
    peer_stop(&pe);
}

static void t_peer_pcsr_sampling(void)
{
    /* PCSR walks 0x10000000, +2, ...: every sample a new address */
    peer pe = {.noack = 1, .nonstop = 1, .pcsr = 0x10000000, .pcsr_step = 2};
    T_ASSERT(peer_start(&pe) == 0);
    cp_err err;
    probe *p = peer_open(&pe, 1, &err);
    T_ASSERT(p);
    char path[] = "/tmp/cp-probe-XXXXXX";
    int fd = mkstemp(path);
    T_ASSERT(fd >= 0);
    close(fd);
    probe_samples_hdr h = {"probe-pcsr", "rp2350", "", 0};
    probe_samples *s = probe_samples_create(path, &h, &err);
    T_ASSERT(s);
    probe_sampler cfg = {.mode = PROBE_MODE_PCSR, .pcsr_addr = 0xe000101c,
                         .duration_s = 0.2};
    probe_sample_stats st;
    T_ASSERT(probe_sample_run(p, &cfg, s, &st, &err) == 0);
    T_ASSERT(st.samples > 10);
    T_EQ(st.stopped_by, 0);
    uint64_t n = st.samples;
    T_ASSERT(probe_samples_finish(s, st.elapsed_s, &err) == 0);
    /* the file: header, then one line per distinct PC, summing to n */
    FILE *f = fopen(path, "r");
    char line[128];
    uint64_t sum = 0, lines = 0;
    T_ASSERT(fgets(line, sizeof line, f));
    T_STREQ(line, "# codeplace samples 1\n");
    while (fgets(line, sizeof line, f)) {
        unsigned long a;
        unsigned long long c;
        if (line[0] == '#')
            continue;
        T_EQ(sscanf(line, "%lx %llu", &a, &c), 2);
        sum += c;
        lines++;
    }
    fclose(f);
    unlink(path);
    T_EQ(sum, n);
    T_EQ(lines, n);
    probe_close(p);
    peer_stop(&pe);
}

/* ---- QEMU's gdbstub ---- */

static pid_t qemu_start(const char *machine, const char *elf, int *port)
{
    /* a free port: bind 0, read it, release it */
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t sl = sizeof sa;
    bind(s, (struct sockaddr *)&sa, sizeof sa);
    getsockname(s, (struct sockaddr *)&sa, &sl);
    *port = ntohs(sa.sin_port);
    close(s);
    char gdb[64];
    snprintf(gdb, sizeof gdb, "tcp:127.0.0.1:%d", *port);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execlp("qemu-system-arm", "qemu-system-arm", "-M", machine, "-icount",
               "shift=3,sleep=off", "-S", "-gdb", gdb, "-nographic",
               "-monitor", "none", "-serial", "none", "-kernel", elf,
               (char *)NULL);
        _exit(127);
    }
    return pid;
}

static probe *qemu_connect(int port, cp_err *err)
{
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    probe_opts o = {.timeout_ms = 3000};
    for (int i = 0; i < 100; i++) {
        probe *p = probe_open(PROBE_GDB, addr, &o, err);
        if (p || !strstr(err->msg, "refused"))
            return p;
        usleep(50000);
    }
    return NULL;
}

static void qemu_stop(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* Addresses from the firmware's symbol table (tests/fixtures/probe/fw.ld
 * puts .bss at 0x20000000 in this order; t0500 checks them with nm). */
#define FW_MAGIC 0x20000000u
#define FW_ROUNDS 0x20000004u
#define FW_ROUNDS_INV 0x20000008u
#define FW_PATTERN 0x20000020u

static void qemu_memory(const char *machine, const char *elf)
{
    char path[256];
    snprintf(path, sizeof path, "%s/probe/%s", t_fixture_dir(), elf);
    if (access(path, R_OK) != 0) {
        T_FAIL("missing fixture %s (make probe-fixtures)", path);
        return;
    }
    int port;
    pid_t pid = qemu_start(machine, path, &port);
    cp_err err;
    probe *p = qemu_connect(port, &err);
    if (!p) {
        T_FAIL("%s", err.msg);
        qemu_stop(pid);
        return;
    }
    uint32_t v = 0, r1 = 0, inv = 0, r2 = 0;
    int ok = 1;
    ok &= probe_resume(p, &err) == 0;
    usleep(200000);
    ok &= probe_halt(p, &err) == 0;
    ok &= probe_read32(p, FW_MAGIC, &v, &err) == 0;
    ok &= probe_read32(p, FW_ROUNDS, &r1, &err) == 0;
    ok &= probe_read32(p, FW_ROUNDS_INV, &inv, &err) == 0;
    uint8_t *pat = malloc(4096);
    ok &= probe_read(p, FW_PATTERN, pat, 4096, &err) == 0;
    ok &= probe_resume(p, &err) == 0;
    usleep(200000);
    ok &= probe_halt(p, &err) == 0;
    ok &= probe_read32(p, FW_ROUNDS, &r2, &err) == 0;
    ok &= probe_resume(p, &err) == 0;
    probe_close(p);
    qemu_stop(pid);
    if (!ok) {
        free(pat);
        T_FAIL("%s", err.msg);
        return;
    }
    T_EQ(v, 0xc0de9ace);
    T_ASSERT(r1 > 0);
    /* halted between the two stores of a round, the pair may differ by
     * one round; never more */
    T_ASSERT(inv == ~r1 || inv == ~(r1 - 1));
    T_ASSERT(r2 > r1);
    for (uint32_t i = 0; i < 1024; i++) {
        uint32_t w = (uint32_t)pat[4 * i] | (uint32_t)pat[4 * i + 1] << 8 |
                     (uint32_t)pat[4 * i + 2] << 16 |
                     (uint32_t)pat[4 * i + 3] << 24;
        if (w != i * 0x9e3779b9u) {
            T_FAIL("pattern word %u: 0x%08x", i, w);
            break;
        }
    }
    free(pat);
}

static void t_qemu_m0_memory(void)
{
    qemu_memory("microbit", "fw-m0.elf");
}

static void t_qemu_m7_memory(void)
{
    qemu_memory("mps2-an500", "fw-m7.elf");
}

/* With --rate, the next stop is timed from the start of the last one:
 * a stop of 1 ms at 250/s (4 ms) leaves the rate at 250/s. */
static void halt_schedule(void)
{
    double p = 0.004;
    for (int k = 0; k <= 4; k++) {
        double u = k / 4.0 * 0.999;
        double d = probe_halt_due(p, 10.0, 10.001, 0.001, u);
        if (d < 10.0 + 0.5 * p - 1e-12 || d > 10.0 + 1.5 * p)
            T_FAIL("u %.3f: due %.6f, want 10.002..10.006", u, d);
    }
    double avg = 0;
    for (int k = 0; k < 1000; k++)
        avg += probe_halt_due(p, 0, 0.001, 0.001, (k + 0.5) / 1000) / 1000;
    if (avg < 0.00399 || avg > 0.00401)
        T_FAIL("mean gap %.6f s, want the period 0.004", avg);
    /* without a rate: after the end, on average as long as a stop */
    double d = probe_halt_due(0, 10.0, 10.001, 0.001, 0.5);
    if (d < 10.00199 || d > 10.00201)
        T_FAIL("no rate: due %.6f, want 10.002", d);
}

static const t_case cases[] = {
    {"frame_and_escape", t_frame_and_escape},
    {"run_length", t_run_length},
    {"parser_events", t_parser_events},
    {"parser_overflow", t_parser_overflow},
    {"peer_ack_mode_split_replies", t_peer_ack_mode_split_replies},
    {"peer_bad_checksum_is_resent", t_peer_bad_checksum_is_resent},
    {"peer_bad_checksum_noack_is_error", t_peer_bad_checksum_noack_is_error},
    {"peer_packet_size_splits_reads", t_peer_packet_size_splits_reads},
    {"peer_run_length_replies", t_peer_run_length_replies},
    {"peer_disconnect_mid_reply", t_peer_disconnect_mid_reply},
    {"peer_timeout", t_peer_timeout},
    {"peer_nonstop_required", t_peer_nonstop_required},
    {"peer_halt_sampling", t_peer_halt_sampling},
    {"peer_pc_by_g_when_p_unsupported", t_peer_pc_by_g_when_p_unsupported},
    {"peer_counters_saturated", t_peer_counters_saturated},
    {"peer_pcsr_constant_is_reported", t_peer_pcsr_constant_is_reported},
    {"peer_pcsr_sampling", t_peer_pcsr_sampling},
    {"address_forms", t_address_forms},
    {"qemu_m0_memory", t_qemu_m0_memory},
    {"qemu_m7_memory", t_qemu_m7_memory},
    {"halt_schedule", halt_schedule},
    {NULL, NULL},
};

T_MAIN(cases)
