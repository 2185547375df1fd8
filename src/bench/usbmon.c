#include "bench/usbmon.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "bench/net.h"

#define MAX_FRAMES 64   /* frames per transfer we key */
#define MAX_PENDING 4096

typedef struct outsub {  /* a bulk OUT submission waiting for its C */
    uint64_t id, ts;
    uint64_t keys[MAX_FRAMES];
    unsigned nkeys;
} outsub;

typedef struct pending { /* a request the device took, waiting for a reply */
    uint64_t key, out_s, out_c;
} pending;

struct nb_usbmon {
    nb_usbmon_cfg cfg;
    nb_usbmon_counts c;
    outsub *subs;
    size_t nsubs, capsubs;
    pending *pend;
    size_t npend, cappend;
    nb_usb_echo *echo;
    size_t necho, capecho;
};

nb_usbmon *nb_usbmon_new(const nb_usbmon_cfg *cfg)
{
    nb_usbmon *u = calloc(1, sizeof *u);
    if (u)
        u->cfg = *cfg;
    return u;
}

void nb_usbmon_free(nb_usbmon *u)
{
    if (!u)
        return;
    free(u->subs);
    free(u->pend);
    free(u->echo);
    free(u);
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

int nb_usb_decode(int dlt, const uint8_t *pkt, size_t caplen, nb_usb_ev *ev)
{
    size_t hl = dlt == NB_DLT_USB_LINUX ? 48 : dlt == NB_DLT_USB_LINUX_MMAPPED ? 64 : 0;
    if (!hl || caplen < hl)
        return -1;
    memset(ev, 0, sizeof *ev);
    memcpy(&ev->id, pkt, 8);
    ev->type = (char)pkt[8];
    ev->xfer = pkt[9];
    ev->ep = pkt[10];
    ev->dev = pkt[11];
    memcpy(&ev->bus, pkt + 12, 2);
    int64_t sec;
    int32_t usec;
    memcpy(&sec, pkt + 16, 8);
    memcpy(&usec, pkt + 24, 4);
    ev->ts_ns = (uint64_t)sec * 1000000000ULL + (uint64_t)usec * 1000ULL;
    memcpy(&ev->status, pkt + 28, 4);
    memcpy(&ev->urb_len, pkt + 32, 4);
    uint32_t dlen;
    memcpy(&dlen, pkt + 36, 4);
    size_t off = hl;
    if (hl == 64 && ev->xfer == 0) {
        uint32_t ndesc;
        memcpy(&ndesc, pkt + 60, 4);
        if (ndesc > (caplen - hl) / 16)
            return -1;
        off += (size_t)ndesc * 16;
    }
    size_t have = caplen - off;
    ev->data = pkt + off;
    ev->data_len = (uint32_t)(have < dlen ? have : dlen);
    if (pkt[15] != 0) /* data_flag: no data */
        ev->data_len = 0;
    return 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    return cp_fnv1a(h, &v, sizeof v);
}

/* Keys an Ethernet frame. dir 0: as a request (returns 0 if it is none),
 * dir 1: as a reply (mirrored addresses). Returns the key or 0. */
static uint64_t frame_key(const nb_usbmon *u, const uint8_t *f, size_t len,
                          int reply)
{
    if (len < 14)
        return 0;
    size_t off = 12;
    uint16_t et = be16(f + off);
    while ((et == 0x8100 || et == 0x88a8) && off + 6 <= len) {
        off += 4;
        et = be16(f + off);
    }
    off += 2;
    const uint8_t *ip = f + off;
    size_t il = len - off;
    const uint8_t *src, *dst, *l4;
    size_t alen, l4len;
    int proto;
    if (et == 0x0800) {
        if (il < 20 || (ip[0] >> 4) != 4)
            return 0;
        size_t ihl = (size_t)(ip[0] & 0xf) * 4;
        size_t tot = be16(ip + 2);
        if (ihl < 20 || tot < ihl || tot > il || (be16(ip + 6) & 0x3fff))
            return 0; /* short, or a fragment */
        proto = ip[9];
        src = ip + 12;
        dst = ip + 16;
        alen = 4;
        l4 = ip + ihl;
        l4len = tot - ihl;
    } else if (et == 0x86dd) {
        if (il < 40 || (ip[0] >> 4) != 6)
            return 0;
        size_t pl = be16(ip + 4);
        if (40 + pl > il)
            return 0;
        proto = ip[6];
        src = ip + 8;
        dst = ip + 24;
        alen = 16;
        l4 = ip + 40;
        l4len = pl;
    } else {
        return 0;
    }
    const uint8_t *a = reply ? dst : src, *b = reply ? src : dst;
    uint64_t h = cp_fnv1a(CP_FNV_INIT, a, alen);
    h = cp_fnv1a(h, b, alen);
    if (proto == 17) {
        if (l4len < 8)
            return 0;
        uint16_t sp = be16(l4), dp = be16(l4 + 2);
        if (u->cfg.port && sp != u->cfg.port && dp != u->cfg.port)
            return 0;
        if (reply) {
            uint16_t t = sp;
            sp = dp;
            dp = t;
        }
        h = mix(h, (uint64_t)sp << 16 | dp);
        h = cp_fnv1a(h, l4 + 8, l4len - 8);
    } else if (proto == 1 || proto == 58) {
        if (l4len < 8)
            return 0;
        int want = proto == 1 ? (reply ? 0 : 8) : (reply ? 129 : 128);
        if (l4[0] != want || u->cfg.port)
            return 0;
        h = mix(h, (uint64_t)be16(l4 + 4) << 16 | be16(l4 + 6));
        h = cp_fnv1a(h, l4 + 8, l4len - 8);
    } else {
        return 0;
    }
    return h ? h : 1;
}

/* Calls fn for each Ethernet frame in a transfer: the transfer itself
 * (ECM), or each datagram of an NTB16 (NCM). */
static void frames(nb_usbmon *u, const uint8_t *d, size_t len,
                   void (*fn)(nb_usbmon *, const uint8_t *, size_t, void *),
                   void *arg)
{
    int ncm = u->cfg.mode == NB_USB_NCM ||
              (u->cfg.mode == NB_USB_AUTO && len >= 12 && !memcmp(d, "NCMH", 4));
    if (!ncm) {
        fn(u, d, len, arg);
        return;
    }
    u->c.ncm = 1;
    u->c.ncm_blocks++;
    if (len < 12 || memcmp(d, "NCMH", 4) || le16(d + 4) != 12) {
        u->c.bad_ntb++;
        return;
    }
    size_t block = le16(d + 8);
    if (block == 0 || block > len)
        block = len; /* 0: the block ends with the transfer */
    size_t ndp = le16(d + 10);
    for (int hops = 0; ndp && hops < 16; hops++) {
        if (ndp + 8 > block || (ndp & 3) ||
            (memcmp(d + ndp, "NCM0", 4) && memcmp(d + ndp, "NCM1", 4))) {
            u->c.bad_ntb++;
            return;
        }
        size_t nlen = le16(d + ndp + 4);
        if (nlen < 16 || ndp + nlen > block) {
            u->c.bad_ntb++;
            return;
        }
        for (size_t e = ndp + 8; e + 4 <= ndp + nlen; e += 4) {
            size_t di = le16(d + e), dl = le16(d + e + 2);
            if (di == 0 || dl == 0)
                break;
            if (di + dl > block) {
                u->c.bad_ntb++;
                break;
            }
            fn(u, d + di, dl, arg);
        }
        ndp = le16(d + ndp + 6);
    }
}

static int want_dev(const nb_usbmon *u, const nb_usb_ev *ev)
{
    return (u->cfg.bus < 0 || u->cfg.bus == ev->bus) &&
           (u->cfg.dev < 0 || u->cfg.dev == ev->dev);
}

static void key_out(nb_usbmon *u, const uint8_t *f, size_t len, void *arg)
{
    outsub *s = arg;
    u->c.frames_out++;
    uint64_t k = frame_key(u, f, len, 0);
    if (k && s->nkeys < MAX_FRAMES)
        s->keys[s->nkeys++] = k;
}

typedef struct inctx {
    uint64_t ts;
    int err;
} inctx;

static int add_echo(nb_usbmon *u, uint64_t out_s, uint64_t out_c, uint64_t in_c)
{
    if (cp_grow((void **)&u->echo, &u->capecho, u->necho + 1,
                sizeof *u->echo) < 0)
        return -1;
    u->echo[u->necho++] = (nb_usb_echo){out_s, out_c, in_c};
    u->c.echoes++;
    return 0;
}

static void key_in(nb_usbmon *u, const uint8_t *f, size_t len, void *arg)
{
    inctx *ic = arg;
    u->c.frames_in++;
    uint64_t k = frame_key(u, f, len, 1);
    if (!k)
        return;
    for (size_t i = 0; i < u->npend; i++) {
        if (u->pend[i].key != k)
            continue;
        if (add_echo(u, u->pend[i].out_s, u->pend[i].out_c, ic->ts) < 0)
            ic->err = 1;
        memmove(u->pend + i, u->pend + i + 1,
                (u->npend - i - 1) * sizeof *u->pend);
        u->npend--;
        return;
    }
}

static int push_pending(nb_usbmon *u, uint64_t key, uint64_t s, uint64_t c)
{
    if (u->npend == MAX_PENDING) { /* never answered: forget the oldest */
        memmove(u->pend, u->pend + 1, (u->npend - 1) * sizeof *u->pend);
        u->npend--;
    }
    if (cp_grow((void **)&u->pend, &u->cappend, u->npend + 1,
                sizeof *u->pend) < 0)
        return -1;
    u->pend[u->npend++] = (pending){key, s, c};
    u->c.requests++;
    return 0;
}

int nb_usbmon_feed(nb_usbmon *u, const nb_usb_ev *ev)
{
    u->c.events++;
    if (ev->xfer != 3 || !want_dev(u, ev)) {
        u->c.skipped++;
        return 0;
    }
    int in = ev->ep & 0x80;
    if (!in && ev->type == 'S') {
        if (u->nsubs == MAX_PENDING) {
            memmove(u->subs, u->subs + 1, (u->nsubs - 1) * sizeof *u->subs);
            u->nsubs--;
        }
        if (cp_grow((void **)&u->subs, &u->capsubs, u->nsubs + 1,
                    sizeof *u->subs) < 0)
            return -1;
        outsub *s = &u->subs[u->nsubs++];
        memset(s, 0, sizeof *s);
        s->id = ev->id;
        s->ts = ev->ts_ns;
        if (!u->c.text)
            frames(u, ev->data, ev->data_len, key_out, s);
        else
            s->nkeys = 1; /* text: one echo per transfer, in order */
        return 0;
    }
    if (!in && ev->type == 'C') {
        u->c.bulk_out++;
        for (size_t i = u->nsubs; i-- > 0;) {
            if (u->subs[i].id != ev->id)
                continue;
            outsub s = u->subs[i];
            memmove(u->subs + i, u->subs + i + 1,
                    (u->nsubs - i - 1) * sizeof *u->subs);
            u->nsubs--;
            if (ev->status != 0)
                return 0;
            for (unsigned k = 0; k < s.nkeys; k++)
                if (push_pending(u, s.keys[k], s.ts, ev->ts_ns) < 0)
                    return -1;
            return 0;
        }
        return 0; /* its submission was before the capture started */
    }
    if (in && ev->type == 'C' && ev->status == 0) {
        u->c.bulk_in++;
        if (u->c.text) {
            if (ev->urb_len == 0 || u->npend == 0)
                return 0;
            pending p = u->pend[0];
            memmove(u->pend, u->pend + 1, (u->npend - 1) * sizeof *u->pend);
            u->npend--;
            return add_echo(u, p.out_s, p.out_c, ev->ts_ns);
        }
        inctx ic = {.ts = ev->ts_ns};
        frames(u, ev->data, ev->data_len, key_in, &ic);
        return ic.err ? -1 : 0;
    }
    return 0;
}

const nb_usb_echo *nb_usbmon_echoes(const nb_usbmon *u, size_t *n)
{
    *n = u->necho;
    return u->echo;
}

const nb_usbmon_counts *nb_usbmon_counts_of(const nb_usbmon *u)
{
    ((nb_usbmon *)u)->c.unanswered = u->npend;
    return &u->c;
}

void nb_usbmon_split(const nb_usbmon *u, size_t i, double *echo_us,
                     double *host_us, double *bus_us, double *device_us)
{
    const nb_usb_echo *e = &u->echo[i];
    *echo_us = (double)(int64_t)(e->in_c - e->out_c) / 1000.0;
    *bus_us = (double)(int64_t)(e->out_c - e->out_s) / 1000.0;
    *device_us = *echo_us;
    *host_us = NAN;
    if (i + 1 < u->necho && u->echo[i + 1].out_s >= e->in_c)
        *host_us = (double)(u->echo[i + 1].out_s - e->in_c) / 1000.0;
}

/* ---- pcap input ---- */

typedef struct pcapctx {
    nb_usbmon *u;
    int dlt, err;
} pcapctx;

static void on_packet(u_char *user, const struct pcap_pkthdr *h,
                      const u_char *bytes)
{
    pcapctx *pc = (pcapctx *)user;
    nb_usb_ev ev;
    if (nb_usb_decode(pc->dlt, bytes, h->caplen, &ev) < 0)
        return;
    /* The pcap record's time (nanosecond precision asked for). */
    ev.ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ULL + (uint64_t)h->ts.tv_usec;
    if (nb_usbmon_feed(pc->u, &ev) < 0)
        pc->err = 1;
}

static int run_pcap(nb_usbmon *u, pcap_t *p, const char *name, cp_err *err)
{
    pcapctx pc = {.u = u, .dlt = pcap_datalink(p)};
    if (pc.dlt != NB_DLT_USB_LINUX && pc.dlt != NB_DLT_USB_LINUX_MMAPPED) {
        cp_seterr(err, "'%s': link type %d (%s) is not Linux usbmon (189 or "
                  "220)", name, pc.dlt, pcap_datalink_val_to_name(pc.dlt)
                  ? pcap_datalink_val_to_name(pc.dlt) : "?");
        return -1;
    }
    u->c.dlt = pc.dlt;
    int rc = pcap_loop(p, -1, on_packet, (u_char *)&pc);
    if (rc == -1) {
        cp_seterr(err, "'%s': %s", name, pcap_geterr(p));
        return -1;
    }
    if (pc.err)
        return cp_seterr(err, "out of memory");
    return 0;
}

int nb_usbmon_read_fp(nb_usbmon *u, FILE *f, const char *name, cp_err *err)
{
    unsigned char m[4] = {0};
    size_t got = fread(m, 1, 4, f);
    uint32_t be = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 |
                  (uint32_t)m[2] << 8 | m[3];
    int is_pcap = got == 4 && (be == 0xa1b2c3d4 || be == 0xd4c3b2a1 ||
                               be == 0xa1b23c4d || be == 0x4d3cb2a1 ||
                               be == 0x0a0d0d0a);
    if (!is_pcap) {
        /* Text: read it all. */
        size_t cap = 65536, len = got;
        char *buf = malloc(cap);
        if (!buf) {
            fclose(f);
            return cp_seterr(err, "out of memory");
        }
        memcpy(buf, m, got);
        for (;;) {
            if (len == cap) {
                char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
                if (!nb) {
                    free(buf);
                    fclose(f);
                    return cp_seterr(err, "out of memory");
                }
                buf = nb;
                cap *= 2;
            }
            size_t r = fread(buf + len, 1, cap - len, f);
            if (r == 0)
                break;
            len += r;
        }
        if (ferror(f)) {
            free(buf);
            fclose(f);
            return cp_seterr(err, "cannot read '%s': %s", name, strerror(errno));
        }
        fclose(f);
        int rc = nb_usbmon_parse_text(u, buf, len, name, err);
        free(buf);
        return rc;
    }
    if (fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return cp_seterr(err, "'%s': cannot seek", name);
    }
    char ebuf[PCAP_ERRBUF_SIZE] = "";
    pcap_t *p = pcap_fopen_offline_with_tstamp_precision(
        f, PCAP_TSTAMP_PRECISION_NANO, ebuf);
    if (!p) {
        fclose(f);
        return cp_seterr(err, "'%s': %s", name, ebuf);
    }
    int rc = run_pcap(u, p, name, err);
    pcap_close(p); /* closes f */
    return rc;
}

int nb_usbmon_read(nb_usbmon *u, const char *path, cp_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cp_seterr(err, "cannot open '%s': %s", path, strerror(errno));
    return nb_usbmon_read_fp(u, f, path, err);
}

/* ---- text input ---- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Parses one text line into ev (data into dbuf, up to 64 bytes). Returns 1
 * for an event, 0 for a line to skip, -1 for a malformed line. */
static int text_line(char *line, nb_usb_ev *ev, uint8_t *dbuf)
{
    char *tok[64];
    int nt = 0;
    for (char *p = strtok(line, " \t\r"); p && nt < 64; p = strtok(NULL, " \t\r"))
        tok[nt++] = p;
    if (nt == 0)
        return 0;
    if (nt < 5)
        return -1;
    memset(ev, 0, sizeof *ev);
    char *end;
    ev->id = strtoull(tok[0], &end, 16);
    if (*end)
        return -1;
    ev->ts_ns = strtoull(tok[1], &end, 10) * 1000ULL;
    if (*end)
        return -1;
    if (strlen(tok[2]) != 1 || !strchr("SCE", tok[2][0]))
        return -1;
    ev->type = tok[2][0];
    /* Address: "Bo:1:003:2" (bus given) or "Bo:003:2". */
    const char *a = tok[3];
    if (strlen(a) < 4 || a[2] != ':')
        return -1;
    switch (a[0]) {
    case 'Z': ev->xfer = 0; break;
    case 'I': ev->xfer = 1; break;
    case 'C': ev->xfer = 2; break;
    case 'B': ev->xfer = 3; break;
    default: return -1;
    }
    if (a[1] != 'i' && a[1] != 'o')
        return -1;
    unsigned long f[3];
    int nf = 0;
    const char *p = a + 3;
    while (nf < 3) {
        f[nf++] = strtoul(p, &end, 10);
        if (end == p)
            return -1;
        if (*end != ':')
            break;
        p = end + 1;
    }
    if (*end)
        return -1;
    if (nf == 3) {
        ev->bus = (uint16_t)f[0];
        ev->dev = (uint8_t)f[1];
        ev->ep = (uint8_t)f[2];
    } else if (nf == 2) {
        ev->dev = (uint8_t)f[0];
        ev->ep = (uint8_t)f[1];
    } else {
        return -1;
    }
    if (a[1] == 'i')
        ev->ep |= 0x80;
    int t = 4;
    if (!strcmp(tok[t], "s")) {
        t += 6; /* setup packet: s bmRequestType bRequest wValue wIndex wLength */
        ev->status = 0;
    } else {
        ev->status = (int32_t)strtol(tok[t], &end, 10);
        if (end == tok[t])
            return -1;
        t++;
    }
    if (t >= nt)
        return 1;
    ev->urb_len = (uint32_t)strtoul(tok[t], &end, 10);
    if (*end)
        return -1;
    t++;
    if (t < nt && !strcmp(tok[t], "=")) {
        size_t n = 0;
        for (t++; t < nt && n < 64; t++)
            for (const char *h = tok[t]; h[0] && h[1] && n < 64; h += 2) {
                int hi = hexval(h[0]), lo = hexval(h[1]);
                if (hi < 0 || lo < 0)
                    return -1;
                dbuf[n++] = (uint8_t)(hi << 4 | lo);
            }
        ev->data = dbuf;
        ev->data_len = (uint32_t)n;
    }
    return 1;
}

int nb_usbmon_parse_text(nb_usbmon *u, const char *buf, size_t len,
                         const char *name, cp_err *err)
{
    u->c.text = 1;
    size_t lineno = 0, pos = 0;
    char line[4096];
    uint8_t dbuf[64];
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        lineno++;
        if (l >= sizeof line)
            return cp_seterr(err, "'%s': line %zu is too long for usbmon text",
                             name, lineno);
        memcpy(line, buf + pos, l);
        line[l] = 0;
        pos += l + 1;
        if (memchr(line, 0, l))
            return cp_seterr(err, "'%s': line %zu: not usbmon text (binary "
                             "data)", name, lineno);
        nb_usb_ev ev;
        int rc = text_line(line, &ev, dbuf);
        if (rc < 0)
            return cp_seterr(err, "'%s': line %zu: not a usbmon text event "
                             "(expected 'TAG TIME S|C|E ADDR STATUS LEN ...')",
                             name, lineno);
        if (rc > 0 && nb_usbmon_feed(u, &ev) < 0)
            return cp_seterr(err, "out of memory");
    }
    return 0;
}

/* ---- live ---- */

int nb_usbmon_live(nb_usbmon *u, const char *ifname, double duration_s,
                   volatile sig_atomic_t *stop, cp_err *err)
{
    char ebuf[PCAP_ERRBUF_SIZE] = "";
    pcap_t *p = pcap_create(ifname, ebuf);
    if (!p)
        return cp_seterr(err, "cannot capture on '%s': %s", ifname, ebuf);
    pcap_set_snaplen(p, 65535);
    pcap_set_timeout(p, 100);
    pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO);
    int rc = pcap_activate(p);
    if (rc < 0) {
        cp_seterr(err, "cannot capture on '%s': %s (needs root and the "
                  "usbmon module)", ifname, pcap_geterr(p));
        pcap_close(p);
        return -1;
    }
    pcapctx pc = {.u = u, .dlt = pcap_datalink(p)};
    if (pc.dlt != NB_DLT_USB_LINUX && pc.dlt != NB_DLT_USB_LINUX_MMAPPED) {
        pcap_close(p);
        return cp_seterr(err, "'%s' is not a usbmon interface (link type %d)",
                         ifname, pc.dlt);
    }
    u->c.dlt = pc.dlt;
    uint64_t end = nb_now_ns() + (uint64_t)(duration_s * 1e9);
    while (!(stop && *stop) && nb_now_ns() < end) {
        if (pcap_dispatch(p, -1, on_packet, (u_char *)&pc) < 0) {
            cp_seterr(err, "capture on '%s': %s", ifname, pcap_geterr(p));
            pcap_close(p);
            return -1;
        }
        if (pc.err) {
            pcap_close(p);
            return cp_seterr(err, "out of memory");
        }
    }
    pcap_close(p);
    return 0;
}
