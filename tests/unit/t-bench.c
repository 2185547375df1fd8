/* bench: statistics, rate lists, addresses, the usbmon readers (captures
 * written here with libpcap's pcap_dump) and the SVG writer. */
#include "util/stats.h"
#include "bench/net.h"
#include "bench/udp.h"
#include "bench/usbmon.h"

#include <math.h>
#include <unistd.h>

#include "test.h"
#include "../bench/usbcap.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static void percentiles(void)
{
    double v[] = {5, 1, 4, 2, 3};
    cp_sort(v, 5);
    static const struct { double p, want; } t[] = {
        {0, 1}, {25, 2}, {50, 3}, {75, 4}, {100, 5}, {10, 1.4}, {90, 4.6},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!NEAR(cp_pct_sorted(v, 5, t[i].p), t[i].want))
            T_FAIL("p%g = %g, want %g", t[i].p, cp_pct_sorted(v, 5, t[i].p),
                   t[i].want);
    T_ASSERT(isnan(cp_pct_sorted(v, 0, 50)));
    T_ASSERT(NEAR(cp_mean(v, 5), 3));
    T_ASSERT(NEAR(cp_sd(v, 5), sqrt(2.5)));
    T_ASSERT(NEAR(cp_sd(v, 1), 0));
    cp_summary s;
    T_EQ(cp_summarize(v, 5, &s), 0);
    T_ASSERT(NEAR(s.median, 3) && NEAR(s.min, 1) && NEAR(s.max, 5));
}

static void histogram(void)
{
    double v[] = {0, 0.5, 1, 1.5, 2, 9.99, 10, -3};
    uint64_t c[5];
    cp_histogram(v, 8, 0, 10, 5, c);
    /* bins of 2: [0,2) [2,4) ... ; below lo -> 0; at/above hi -> last */
    T_EQ(c[0], 5);
    T_EQ(c[1], 1);
    T_EQ(c[2], 0);
    T_EQ(c[4], 2);
}

static void bootstrap(void)
{
    double a[] = {10, 11, 9, 10, 12, 10, 11}, b[] = {20, 21, 19, 20, 22, 20};
    double lo, hi, lo2, hi2;
    T_EQ(cp_boot_median(a, 7, 2000, 0.95, 42, &lo, &hi), 0);
    T_ASSERT(lo <= 10 && hi >= 10 && lo >= 9 && hi <= 12);
    T_EQ(cp_boot_median(a, 7, 2000, 0.95, 42, &lo2, &hi2), 0);
    T_ASSERT(lo == lo2 && hi == hi2); /* seeded: the same every run */
    T_EQ(cp_boot_median_diff(a, 7, b, 6, 2000, 0.95, 7, &lo, &hi), 0);
    T_ASSERT(lo > 0); /* clearly different: 0 is outside */
    T_EQ(cp_boot_median_diff(a, 7, a, 7, 2000, 0.95, 7, &lo, &hi), 0);
    T_ASSERT(lo <= 0 && hi >= 0); /* the same: inside the noise */
    T_EQ(cp_boot_median(a, 0, 100, 0.95, 1, &lo, &hi), -1);
}

static void linfit(void)
{
    /* t = 2 + 3 * f0/f exactly */
    double x[] = {1, 1.25, 2.5}, y[] = {5, 5.75, 9.5}, a, b, r2;
    T_EQ(cp_linfit(x, y, 3, &a, &b, &r2), 0);
    T_ASSERT(NEAR(a, 2) && NEAR(b, 3) && NEAR(r2, 1));
    double same[] = {1, 1};
    T_EQ(cp_linfit(same, y, 2, &a, &b, NULL), -1);
}

static void rates(void)
{
    static const struct { const char *s; int ok; size_t n; double first, last; } t[] = {
        {"50:3000:50", 1, 60, 50, 3000}, {"100:1000:100", 1, 10, 100, 1000},
        {"100,200,5000", 1, 3, 100, 5000}, {"100000", 1, 1, 100000, 100000},
        {"100001", 0, 0, 0, 0}, {"0:10:1", 0, 0, 0, 0}, {"10:5:1", 0, 0, 0, 0},
        {"10:20", 0, 0, 0, 0}, {"10:20:0", 0, 0, 0, 0}, {"abc", 0, 0, 0, 0},
        {"100,,200", 0, 0, 0, 0}, {"1:100000:1", 1, 100000, 1, 100000},
        {"1.5:3:0.5", 1, 4, 1.5, 3},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        double *r;
        size_t n;
        cp_err err;
        int ok = nb_parse_rates(t[i].s, &r, &n, &err) == 0;
        if (ok != t[i].ok || (ok && (n != t[i].n || !NEAR(r[0], t[i].first) ||
                                     !NEAR(r[n - 1], t[i].last))))
            T_FAIL("'%s': ok=%d n=%zu", t[i].s, ok, n);
        if (ok)
            free(r);
    }
}

static void resolve(void)
{
    static const struct { const char *s; int ok; const char *want; } t[] = {
        {"127.0.0.1", 1, "127.0.0.1:7"}, {"127.0.0.1:9000", 1, "127.0.0.1:9000"},
        {"[::1]:53", 1, "[::1]:53"}, {"::1", 1, "[::1]:7"},
        {"127.0.0.1:0", 0, NULL}, {"127.0.0.1:70000", 0, NULL},
        {"127.0.0.1:", 0, NULL}, {"[::1", 0, NULL}, {"", 0, NULL},
        {"localhost:5", 1, NULL},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct sockaddr_storage a;
        socklen_t l;
        cp_err err;
        char buf[80];
        int ok = nb_resolve(t[i].s, 7, SOCK_DGRAM, &a, &l, &err) == 0;
        if (ok != t[i].ok)
            T_FAIL("'%s': ok=%d", t[i].s, ok);
        else if (ok && t[i].want && strcmp(nb_addr_str(&a, buf, sizeof buf), t[i].want))
            T_FAIL("'%s' -> %s", t[i].s, buf);
    }
}

static void pacing_clock(void)
{
    uint64_t t = nb_now_ns() + 2000000;
    uint64_t w = nb_wait_until(t, 20000);
    T_ASSERT(w >= t); /* never early; lateness is for make bench */
}

/* usbmon: every capture variant gives the scenario's exact timings. */
static void usbmon_variants(void)
{
    static const struct {
        int dlt, ncm, icmp, swap, text, lose, n;
        unsigned echoes, unanswered;
        double dev_med, host_n;
    } t[] = {
        {220, 0, 0, 0, 0, 0, 20, 20, 0, 410, 19},
        {189, 0, 0, 0, 0, 0, 20, 20, 0, 410, 19},
        {220, 0, 0, 1, 0, 0, 20, 20, 0, 410, 19},
        {189, 0, 1, 1, 0, 0, 9, 9, 0, 410, 8},
        {220, 1, 0, 0, 0, 0, 20, 20, 0, 410, 14},
        {189, 1, 1, 1, 0, 0, 20, 20, 0, 410, 14},
        {220, 0, 1, 0, 0, 4, 20, 15, 5, 410, 14},
        {220, 1, 0, 0, 0, 3, 20, 14, 6, 405, 11},
        {220, 0, 0, 0, 1, 0, 20, 20, 0, 410, 19},
    };
    char dir[] = "/tmp/cp-usbmon-XXXXXX";
    T_ASSERT(mkdtemp(dir));
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char path[128], host[140];
        snprintf(path, sizeof path, "%s/c%zu", dir, i);
        snprintf(host, sizeof host, "%s.host", path);
        uc_opts op = {.dlt = t[i].dlt, .ncm = t[i].ncm, .icmp = t[i].icmp,
                      .n = t[i].n, .lose = t[i].lose};
        int a = uc_write(t[i].swap ? host : path, &op, t[i].text);
        T_ASSERT(a >= 0);
        if (t[i].swap) {
            T_ASSERT(uc_swap_file(host, path) == 0);
            remove(host);
        }
        nb_usbmon_cfg cfg = {.bus = -1, .dev = -1};
        nb_usbmon *u = nb_usbmon_new(&cfg);
        cp_err err;
        if (nb_usbmon_read(u, path, &err) < 0) {
            T_FAIL("case %zu: %s", i, err.msg);
            nb_usbmon_free(u);
            continue;
        }
        const nb_usbmon_counts *c = nb_usbmon_counts_of(u);
        size_t n;
        nb_usbmon_echoes(u, &n);
        double dev[64], host_t[64], bus[64];
        size_t nh = 0;
        for (size_t k = 0; k < n && k < 64; k++) {
            double e, h, b, d;
            nb_usbmon_split(u, k, &e, &h, &b, &d);
            dev[k] = d;
            bus[k] = b;
            if (isfinite(h))
                host_t[nh++] = h;
        }
        cp_summary sd, sb, sh;
        cp_summarize(dev, n, &sd);
        cp_summarize(bus, n, &sb);
        cp_summarize(host_t, nh, &sh);
        if (c->echoes != t[i].echoes || c->unanswered != t[i].unanswered ||
            !NEAR(sd.median, t[i].dev_med) || !NEAR(sb.median, UC_BUS_US) ||
            !NEAR(sb.max, UC_BUS_US) || nh != t[i].host_n ||
            !NEAR(sh.median, UC_HOST_US) || (c->ncm != t[i].ncm && !t[i].text) ||
            (c->dlt != (t[i].text ? 0 : t[i].dlt)))
            T_FAIL("case %zu: echoes %llu unanswered %llu dev %g bus %g "
                   "host %g (n %zu) ncm %d dlt %d", i,
                   (unsigned long long)c->echoes,
                   (unsigned long long)c->unanswered, sd.median, sb.median,
                   sh.median, nh, c->ncm, c->dlt);
        /* The answered count the writer reports matches. */
        if ((unsigned)a != t[i].echoes)
            T_FAIL("case %zu: writer answered %d", i, a);
        nb_usbmon_free(u);
        remove(path);
    }
    rmdir(dir);
}

static void usbmon_bad_input(void)
{
    char dir[] = "/tmp/cp-usbmon-XXXXXX";
    T_ASSERT(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/eth.pcap", dir);
    /* An Ethernet capture is not usbmon. */
    pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t *d = pcap_dump_open(p, path);
    pcap_dump_close(d);
    pcap_close(p);
    nb_usbmon_cfg cfg = {.bus = -1, .dev = -1};
    nb_usbmon *u = nb_usbmon_new(&cfg);
    cp_err err;
    T_EQ(nb_usbmon_read(u, path, &err), -1);
    T_ASSERT(strstr(err.msg, "is not Linux usbmon"));
    nb_usbmon_free(u);
    /* Text that is not usbmon names the line. */
    u = nb_usbmon_new(&cfg);
    const char *txt = "ffff8800 12345 S Bo:1:005:2 -115 31 = 55534243\n"
                      "hello world\n";
    T_EQ(nb_usbmon_parse_text(u, txt, strlen(txt), "x.txt", &err), -1);
    T_ASSERT(strstr(err.msg, "line 2"));
    nb_usbmon_free(u);
    /* A short packet is refused by the decoder. */
    uint8_t pkt[40] = {0};
    nb_usb_ev ev;
    T_EQ(nb_usb_decode(220, pkt, sizeof pkt, &ev), -1);
    T_EQ(nb_usb_decode(189, pkt, sizeof pkt, &ev), -1);
    T_EQ(nb_usb_decode(1, pkt, sizeof pkt, &ev), -1);
    /* A missing file. */
    u = nb_usbmon_new(&cfg);
    T_EQ(nb_usbmon_read(u, "/nonexistent/x.pcap", &err), -1);
    T_ASSERT(strstr(err.msg, "cannot open"));
    nb_usbmon_free(u);
    remove(path);
    rmdir(dir);
}

static const t_case cases[] = {
    {"percentiles", percentiles},
    {"histogram", histogram},
    {"bootstrap", bootstrap},
    {"linfit", linfit},
    {"rates", rates},
    {"resolve", resolve},
    {"pacing_clock", pacing_clock},
    {"usbmon_variants", usbmon_variants},
    {"usbmon_bad_input", usbmon_bad_input},
    {NULL, NULL},
};

T_MAIN(cases)
