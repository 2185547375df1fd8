/* Writes usbmon captures of a USB network device answering echoes, with
 * libpcap's own writer (pcap_open_dead + pcap_dump), in the formats Linux
 * produces: DLT_USB_LINUX (189) and DLT_USB_LINUX_MMAPPED (220), in host
 * byte order or swapped (as a big-endian host writes it), and the usbmon
 * text format. The timings are exact and known, so tests can check every
 * figure codeplace derives from them.
 *
 * Echo i (closed loop, times in microseconds from T0):
 *   OUT submit   s_i
 *   OUT complete s_i + BUS_US                        (bus)
 *   IN complete  s_i + BUS_US + DEV_US + 10 * (i % 3) (device)
 *   next OUT submit = IN complete + HOST_US          (host)
 * Between echoes: an ARP frame from the device and an interrupt-endpoint
 * notification, which must be ignored. NCM captures put two requests in one
 * NTB16 (two NDP entries) every other echo pair. */
#ifndef CP_TEST_USBCAP_H
#define CP_TEST_USBCAP_H

#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UC_T0_S 1700000000ULL
#define UC_BUS_US 50
#define UC_DEV_US 400
#define UC_HOST_US 200
#define UC_BUS 1
#define UC_DEV 5

typedef struct uc_opts {
    int dlt;      /* 189 or 220 */
    int ncm;      /* NTB16 transfers */
    int icmp;     /* ICMP echo instead of UDP port 7 */
    int n;        /* echoes */
    int lose;     /* every lose-th request gets no reply (0: none) */
} uc_opts;

static size_t uc_frame(uint8_t *f, int reply, int icmp, int seq)
{
    static const uint8_t host_mac[6] = {2, 0, 0, 0, 0, 1};
    static const uint8_t dev_mac[6] = {2, 0, 0, 0, 0, 2};
    memcpy(f, reply ? host_mac : dev_mac, 6);
    memcpy(f + 6, reply ? dev_mac : host_mac, 6);
    f[12] = 0x08;
    f[13] = 0x00;
    uint8_t *ip = f + 14;
    size_t pl = 40; /* payload bytes */
    size_t l4 = 8 + pl;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    ip[2] = (uint8_t)((20 + l4) >> 8);
    ip[3] = (uint8_t)(20 + l4);
    ip[4] = (uint8_t)(seq >> 8);
    ip[5] = (uint8_t)(seq + (reply ? 100 : 0));
    ip[8] = 64;
    ip[9] = icmp ? 1 : 17;
    uint8_t a[4] = {192, 168, 7, 1}, b[4] = {192, 168, 7, 2};
    memcpy(ip + 12, reply ? b : a, 4);
    memcpy(ip + 16, reply ? a : b, 4);
    uint8_t *t = ip + 20;
    memset(t, 0, l4);
    if (icmp) {
        t[0] = reply ? 0 : 8;
        t[4] = 0x12;
        t[5] = 0x34;
        t[6] = (uint8_t)(seq >> 8);
        t[7] = (uint8_t)seq;
    } else {
        uint16_t hp = 40000, dp = 7;
        uint16_t sp = reply ? dp : hp, tp = reply ? hp : dp;
        t[0] = (uint8_t)(sp >> 8); t[1] = (uint8_t)sp;
        t[2] = (uint8_t)(tp >> 8); t[3] = (uint8_t)tp;
        t[4] = (uint8_t)(l4 >> 8); t[5] = (uint8_t)l4;
    }
    for (size_t k = 0; k < pl; k++)
        t[8 + k] = (uint8_t)(seq * 7 + k);
    return 14 + 20 + l4;
}

static size_t uc_arp(uint8_t *f)
{
    memset(f, 0xff, 6);
    memset(f + 6, 2, 6);
    f[12] = 0x08;
    f[13] = 0x06;
    memset(f + 14, 0, 28);
    return 42;
}

/* Wraps frames into an NTB16: NTH16, the datagrams, one NDP16. */
static size_t uc_ntb(uint8_t *out, uint8_t frames[][128], const size_t *lens,
                     int nf, int seqno)
{
    size_t off = 12;
    size_t idx[4];
    for (int i = 0; i < nf; i++) {
        off = (off + 3) & ~(size_t)3;
        idx[i] = off;
        memcpy(out + off, frames[i], lens[i]);
        off += lens[i];
    }
    off = (off + 3) & ~(size_t)3;
    size_t ndp = off, ndplen = 8 + 4 * ((size_t)nf + 1);
    memcpy(out + ndp, "NCM0", 4);
    out[ndp + 4] = (uint8_t)ndplen;
    out[ndp + 5] = 0;
    out[ndp + 6] = out[ndp + 7] = 0;
    for (int i = 0; i < nf; i++) {
        uint8_t *e = out + ndp + 8 + 4 * i;
        e[0] = (uint8_t)idx[i]; e[1] = (uint8_t)(idx[i] >> 8);
        e[2] = (uint8_t)lens[i]; e[3] = (uint8_t)(lens[i] >> 8);
    }
    memset(out + ndp + 8 + 4 * nf, 0, 4);
    size_t total = ndp + ndplen;
    memcpy(out, "NCMH", 4);
    out[4] = 12; out[5] = 0;
    out[6] = (uint8_t)seqno; out[7] = (uint8_t)(seqno >> 8);
    out[8] = (uint8_t)total; out[9] = (uint8_t)(total >> 8);
    out[10] = (uint8_t)ndp; out[11] = (uint8_t)(ndp >> 8);
    return total;
}

/* One event sink: pcap or text. */
typedef struct uc_out {
    pcap_dumper_t *d;
    int dlt;
    FILE *text;
} uc_out;

static void uc_event(uc_out *o, uint64_t id, char type, uint8_t xfer,
                     uint8_t ep, uint64_t t_us, int32_t status,
                     uint32_t urb_len, const uint8_t *data, uint32_t dlen)
{
    if (o->text) {
        const char *kind = xfer == 3 ? "B" : xfer == 1 ? "I" : "C";
        fprintf(o->text, "%08llx %llu %c %s%c:%d:%03d:%d %d %u",
                (unsigned long long)(id & 0xffffffff),
                (unsigned long long)(t_us % 4294967296ULL), type, kind,
                ep & 0x80 ? 'i' : 'o', UC_BUS, UC_DEV, ep & 0x7f, status,
                urb_len);
        if (dlen) {
            fputs(" =", o->text);
            for (uint32_t k = 0; k < dlen && k < 32; k++)
                fprintf(o->text, "%s%02x", k % 4 ? "" : " ", data[k]);
        } else {
            fputs(ep & 0x80 ? (type == 'S' ? " <" : "") : (type == 'C' ? " >" : ""),
                  o->text);
        }
        fputc('\n', o->text);
        return;
    }
    uint8_t pkt[64 + 2048];
    size_t hl = o->dlt == 189 ? 48 : 64;
    memset(pkt, 0, hl);
    memcpy(pkt, &id, 8);
    pkt[8] = (uint8_t)type;
    pkt[9] = xfer;
    pkt[10] = ep;
    pkt[11] = UC_DEV;
    uint16_t bus = UC_BUS;
    memcpy(pkt + 12, &bus, 2);
    pkt[14] = '-';             /* no setup packet */
    pkt[15] = dlen ? 0 : '<';  /* data flag */
    int64_t sec = (int64_t)(t_us / 1000000);
    int32_t usec = (int32_t)(t_us % 1000000);
    memcpy(pkt + 16, &sec, 8);
    memcpy(pkt + 24, &usec, 4);
    memcpy(pkt + 28, &status, 4);
    memcpy(pkt + 32, &urb_len, 4);
    memcpy(pkt + 36, &dlen, 4);
    if (dlen)
        memcpy(pkt + hl, data, dlen);
    struct pcap_pkthdr h;
    h.ts.tv_sec = (time_t)sec;
    h.ts.tv_usec = usec;
    h.caplen = h.len = (bpf_u_int32)(hl + dlen);
    pcap_dump((u_char *)o->d, &h, pkt);
}

/* Writes the scenario to o. Returns the number of echoes answered. */
static int uc_scenario(uc_out *o, const uc_opts *op)
{
    uint64_t t = UC_T0_S * 1000000ULL, id = 0xffff880000001000ULL;
    int answered = 0;
    uint8_t frames[4][128], buf[2048];
    size_t lens[4];
    int i = 0, ntbseq = 0;
    while (i < op->n) {
        int batch = op->ncm && (i / 2) % 2 == 1 && i + 1 < op->n ? 2 : 1;
        /* The IN URB is waiting before the request goes out. */
        uint64_t in_id = id++, out_id = id++;
        uc_event(o, in_id, 'S', 3, 0x81, t - 5, -115, 2048, NULL, 0);
        for (int k = 0; k < batch; k++)
            lens[k] = uc_frame(frames[k], 0, op->icmp, i + k);
        size_t len;
        if (op->ncm)
            len = uc_ntb(buf, frames, lens, batch, ntbseq++);
        else {
            memcpy(buf, frames[0], lens[0]);
            len = lens[0];
        }
        uc_event(o, out_id, 'S', 3, 0x02, t, -115, (uint32_t)len, buf,
                 (uint32_t)len);
        uint64_t oc = t + UC_BUS_US;
        uc_event(o, out_id, 'C', 3, 0x02, oc, 0, (uint32_t)len, NULL, 0);
        /* Noise: an interrupt notification (ignored by the pairing). */
        uint8_t note[8] = {0xa1, 0x00, 1, 0, 0, 0, 0, 0};
        uc_event(o, id++, 'C', 1, 0x83, oc + 1, 0, 8, note, 8);
        uint64_t ic = oc + UC_DEV_US + 10 * (uint64_t)(i % 3);
        int nrep = 0;
        for (int k = 0; k < batch; k++)
            if (!(op->lose && (i + k) % op->lose == op->lose - 1))
                lens[nrep] = uc_frame(frames[nrep], 1, op->icmp, i + k), nrep++;
        if (nrep == 0) {
            /* The device sends an ARP instead of the lost reply. */
            lens[0] = uc_arp(frames[0]);
            nrep = 1;
        } else {
            answered += nrep;
        }
        if (op->ncm)
            len = uc_ntb(buf, frames, lens, nrep, ntbseq++);
        else {
            memcpy(buf, frames[0], lens[0]);
            len = lens[0];
        }
        uc_event(o, in_id, 'C', 3, 0x81, ic, 0, (uint32_t)len, buf,
                 (uint32_t)len);
        t = ic + UC_HOST_US;
        i += batch;
    }
    return answered;
}

/* Byte-swaps a pcap file written on this host into the other byte order,
 * usbmon headers included (the fields libpcap swaps on reading). */
static int uc_swap_file(const char *in, const char *out)
{
    FILE *f = fopen(in, "rb");
    if (!f)
        return -1;
    uint8_t *b = malloc(1 << 22);
    size_t n = fread(b, 1, 1 << 22, f);
    fclose(f);
#define SW(p, w) do { uint8_t *q_ = (p); for (int k_ = 0; k_ < (w) / 2; k_++) { \
        uint8_t t_ = q_[k_]; q_[k_] = q_[(w) - 1 - k_]; q_[(w) - 1 - k_] = t_; } } while (0)
    uint32_t lt;
    memcpy(&lt, b + 20, 4);
    SW(b, 4); SW(b + 4, 2); SW(b + 6, 2); SW(b + 8, 4); SW(b + 12, 4);
    SW(b + 16, 4); SW(b + 20, 4);
    size_t off = 24;
    while (off + 16 <= n) {
        uint32_t cap;
        memcpy(&cap, b + off + 8, 4);
        uint8_t *r = b + off;
        SW(r, 4); SW(r + 4, 4); SW(r + 8, 4); SW(r + 12, 4);
        uint8_t *u = b + off + 16;
        SW(u, 8); SW(u + 12, 2); SW(u + 16, 8); SW(u + 24, 4); SW(u + 28, 4);
        SW(u + 32, 4); SW(u + 36, 4);
        if (lt == 220) {
            SW(u + 48, 4); SW(u + 52, 4); SW(u + 56, 4); SW(u + 60, 4);
        }
        off += 16 + cap;
    }
#undef SW
    f = fopen(out, "wb");
    if (!f) {
        free(b);
        return -1;
    }
    fwrite(b, 1, n, f);
    free(b);
    return fclose(f);
}

/* Writes a capture file. Returns the echoes answered, or -1. */
static int uc_write(const char *path, const uc_opts *op, int text)
{
    uc_out o = {.dlt = op->dlt};
    if (text) {
        o.text = fopen(path, "w");
        if (!o.text)
            return -1;
        int a = uc_scenario(&o, op);
        return fclose(o.text) == 0 ? a : -1;
    }
    pcap_t *p = pcap_open_dead(op->dlt, 65535);
    if (!p)
        return -1;
    o.d = pcap_dump_open(p, path);
    if (!o.d) {
        pcap_close(p);
        return -1;
    }
    int a = uc_scenario(&o, op);
    pcap_dump_close(o.d);
    pcap_close(p);
    return a;
}

#endif
