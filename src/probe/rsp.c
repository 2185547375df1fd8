#include "probe/rsp.h"

#include <string.h>

enum { ST_IDLE, ST_DATA, ST_CS1, ST_CS2 };

void probe_rsp_init(probe_rsp_parser *p)
{
    p->state = ST_IDLE;
    p->notify = 0;
    p->overflow = 0;
    p->sum = 0;
    p->cs = 0;
    p->rlen = 0;
    p->junk = 0;
    p->len = 0;
    p->data[0] = 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long probe_rsp_decode(const char *raw, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = raw[i];
        if (c == '}') {
            if (i + 1 >= n || o >= cap)
                return -1;
            out[o++] = (char)(raw[++i] ^ 0x20);
        } else if (c == '*') {
            /* Run length: the previous character repeated (count - 29)
             * more times; a run needs a character before it. */
            if (o == 0 || i + 1 >= n)
                return -1;
            int cnt = (unsigned char)raw[++i];
            if (cnt < 30 || cnt > 126)
                return -1;
            size_t rep = (size_t)(cnt - 29);
            if (o + rep > cap)
                return -1;
            memset(out + o, out[o - 1], rep);
            o += rep;
        } else {
            if (o >= cap)
                return -1;
            out[o++] = c;
        }
    }
    return (long)o;
}

probe_rsp_ev probe_rsp_feed(probe_rsp_parser *p, const char *buf, size_t n,
                            size_t *used)
{
    size_t i = 0;
    probe_rsp_ev ev = PROBE_RSP_EV_NONE;
    while (i < n && ev == PROBE_RSP_EV_NONE) {
        unsigned char c = (unsigned char)buf[i++];
        switch (p->state) {
        case ST_IDLE:
            if (c == '$' || c == '%') {
                p->state = ST_DATA;
                p->notify = c == '%';
                p->overflow = 0;
                p->sum = 0;
                p->rlen = 0;
            } else if (c == '+') {
                ev = PROBE_RSP_EV_ACK;
            } else if (c == '-') {
                ev = PROBE_RSP_EV_NAK;
            } else if (c == 0x03) {
                ev = PROBE_RSP_EV_INTR;
            } else {
                p->junk++;
            }
            break;
        case ST_DATA:
            if (c == '#') {
                p->state = ST_CS1;
            } else if (c == '$' && !p->notify) {
                /* A new start inside a packet: the old one was cut off
                 * (a peer that restarted). Start over. */
                p->junk += p->rlen + 1;
                p->sum = 0;
                p->rlen = 0;
                p->overflow = 0;
            } else {
                p->sum = (uint8_t)(p->sum + c);
                if (p->rlen < sizeof p->raw)
                    p->raw[p->rlen++] = (char)c;
                else
                    p->overflow = 1;
            }
            break;
        case ST_CS1: {
            int v = hexval(c);
            if (v < 0) {
                p->state = ST_IDLE;
                ev = PROBE_RSP_EV_BADSUM;
                break;
            }
            p->cs = (uint8_t)(v << 4);
            p->state = ST_CS2;
            break;
        }
        case ST_CS2: {
            int v = hexval(c);
            p->state = ST_IDLE;
            if (v < 0 || (uint8_t)(p->cs | v) != p->sum) {
                ev = PROBE_RSP_EV_BADSUM;
                break;
            }
            if (p->overflow) {
                ev = PROBE_RSP_EV_OVERFLOW;
                break;
            }
            long d = probe_rsp_decode(p->raw, p->rlen, p->data, PROBE_RSP_MAX);
            if (d < 0) {
                p->len = 0;
                p->data[0] = 0;
                ev = PROBE_RSP_EV_BADDATA;
                break;
            }
            p->len = (size_t)d;
            p->data[p->len] = 0;
            ev = p->notify ? PROBE_RSP_EV_NOTIFY : PROBE_RSP_EV_PACKET;
            break;
        }
        }
    }
    *used = i;
    return ev;
}

long probe_rsp_frame(const char *data, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    uint8_t sum = 0;
    static const char hx[] = "0123456789abcdef";
    if (cap < 4)
        return -1;
    out[o++] = '$';
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (c == '$' || c == '#' || c == '}' || c == '*') {
            if (o + 2 > cap)
                return -1;
            out[o++] = '}';
            sum = (uint8_t)(sum + '}');
            c = (char)(c ^ 0x20);
        }
        if (o + 1 > cap)
            return -1;
        out[o++] = c;
        sum = (uint8_t)(sum + (unsigned char)c);
    }
    if (o + 3 > cap)
        return -1;
    out[o++] = '#';
    out[o++] = hx[sum >> 4];
    out[o++] = hx[sum & 15];
    return (long)o;
}

long probe_hex_decode(const char *s, size_t n, uint8_t *out, size_t cap)
{
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n; i += 2) {
        int h = hexval((unsigned char)s[i]), l = hexval((unsigned char)s[i + 1]);
        if (h < 0 || l < 0)
            return -1;
        out[i / 2] = (uint8_t)(h << 4 | l);
    }
    return (long)(n / 2);
}

void probe_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hx[in[i] >> 4];
        out[2 * i + 1] = hx[in[i] & 15];
    }
    out[2 * n] = 0;
}
