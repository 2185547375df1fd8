/*
 * The frame format (proto.h): LEB128 varints, CoAP-style options (RFC 7252
 * 3.1: a byte of 4-bit delta and 4-bit length, 13 = one more byte holding
 * value - 13, 14 = two more bytes holding value - 269, 15 reserved), the
 * 0xff payload marker, a sealed payload's 16-byte tag at the end.
 */
#include "proto.h"

#include <string.h>

size_t varint_put(uint8_t *out, uint32_t v)
{
    size_t n = 0;

    do {
        uint8_t b = (uint8_t)(v & 0x7fu);
        v >>= 7;
        out[n++] = (uint8_t)(b | (v ? 0x80u : 0));
    } while (v);
    return n;
}

int varint_get(const uint8_t *p, size_t len, uint32_t *v, size_t *n)
{
    uint32_t r = 0;
    size_t i;

    for (i = 0; i < len && i < 5; i++) {
        r |= (uint32_t)(p[i] & 0x7fu) << (7 * i);
        if (!(p[i] & 0x80u)) {
            *v = r;
            *n = i + 1;
            return 0;
        }
    }
    return -1;
}

uint32_t zigzag(int32_t v)
{
    return v < 0 ? ((uint32_t)-(v + 1) << 1) | 1u : (uint32_t)v << 1;
}

int32_t unzigzag(uint32_t v)
{
    return (v & 1u) ? -(int32_t)(v >> 1) - 1 : (int32_t)(v >> 1);
}

/* ---- encoder ---- */

static void put(struct fenc *e, const void *p, size_t n)
{
    if (e->err || e->n + n > sizeof e->hdr) {
        e->err = 1;
        return;
    }
    memcpy(e->hdr + e->n, p, n);
    e->n += n;
}

static void put_byte(struct fenc *e, unsigned b)
{
    uint8_t v = (uint8_t)b;
    put(e, &v, 1);
}

void fenc_begin(struct fenc *e, unsigned id)
{
    e->n = 0;
    e->last = 0;
    e->err = 0;
    put_byte(e, id >> 8);
    put_byte(e, id);
}

/* nibble for a delta or length, and its extension bytes */
static unsigned nibble(size_t v, uint8_t ext[2], size_t *next)
{
    if (v < 13) {
        *next = 0;
        return (unsigned)v;
    }
    if (v < 269) {
        ext[0] = (uint8_t)(v - 13);
        *next = 1;
        return 13;
    }
    ext[0] = (uint8_t)((v - 269) >> 8);
    ext[1] = (uint8_t)(v - 269);
    *next = 2;
    return 14;
}

void fenc_opt(struct fenc *e, unsigned num, const void *val, size_t len)
{
    uint8_t dx[2], lx[2];
    size_t dn, ln;
    unsigned d, l;

    if (num < e->last || len > 65804) {
        e->err = 1;
        return;
    }
    d = nibble(num - e->last, dx, &dn);
    l = nibble(len, lx, &ln);
    put_byte(e, d << 4 | l);
    put(e, dx, dn);
    put(e, lx, ln);
    put(e, val, len);
    e->last = num;
}

void fenc_opt_uint(struct fenc *e, unsigned num, uint32_t hi, uint32_t lo)
{
    uint8_t b[8];
    unsigned i, skip = 0;

    for (i = 0; i < 4; i++) {
        b[i] = (uint8_t)(hi >> (24 - 8 * i));
        b[4 + i] = (uint8_t)(lo >> (24 - 8 * i));
    }
    while (skip < 8 && b[skip] == 0)     /* RFC 7252 3.2: no leading zeros */
        skip++;
    fenc_opt(e, num, b + skip, 8 - skip);
}

size_t fenc_finish(struct fenc *e, uint8_t *out, size_t cap, unsigned type, unsigned flags,
                   const uint8_t *payload, size_t plen, unsigned kid, const uint8_t *key,
                   const uint8_t *nonce)
{
    size_t body, n, tag = key ? 16 : 0;
    uint8_t lenb[5];
    size_t ln;

    put_byte(e, 0xff);
    if (e->err)
        return 0;
    body = e->n + plen + tag;
    ln = varint_put(lenb, (uint32_t)body);
    n = 1 + ln + body;
    if (n > cap)
        return 0;
    out[0] = (uint8_t)(type << 4 | (flags & 0xfu));
    memcpy(out + 1, lenb, ln);
    memcpy(out + 1 + ln, e->hdr, e->n);
    if (plen)
        memcpy(out + 1 + ln + e->n, payload, plen);
    if (key)
        seal(kid, key, nonce, out, 1 + ln + e->n, out + 1 + ln + e->n, plen,
             out + 1 + ln + e->n + plen);
    return n;
}

/* ---- decoder ---- */

static const char *const err_names[FE_COUNT] = {
    "ok", "short", "varint", "length", "option", "critical", "marker",
    "nonce", "key", "auth", "type", "link",
};

const char *frame_err_name(int err)
{
    return err >= 0 && err < FE_COUNT ? err_names[err] : "?";
}

/* an extended delta or length: 0 or -1 when cut short or reserved */
static int ext(unsigned nib, const uint8_t **p, const uint8_t *end, size_t *v)
{
    if (nib < 13) {
        *v = nib;
        return 0;
    }
    if (nib == 13 && end - *p >= 1) {
        *v = 13u + (*p)[0];
        *p += 1;
        return 0;
    }
    if (nib == 14 && end - *p >= 2) {
        *v = 269u + ((size_t)(*p)[0] << 8 | (*p)[1]);
        *p += 2;
        return 0;
    }
    return -1;
}

static uint32_t opt_uint(const uint8_t *v, size_t len, uint32_t *hi)
{
    uint32_t lo = 0, h = 0;
    size_t i;

    for (i = 0; i < len; i++) {
        h = h << 8 | lo >> 24;
        lo = lo << 8 | v[i];
    }
    if (hi)
        *hi = h;
    return lo;
}

/* one option: 0, or an FE_* code */
static int take_option(struct frame *f, unsigned num, const uint8_t *v, size_t len)
{
    f->options++;
    switch (num) {
    case OPT_TOPIC:
        if (len == 0 || len >= TOPIC_NAME)
            return FE_OPTION;
        f->topic = v;
        f->topic_len = len;
        return 0;
    case OPT_CONTENT:
        f->content = opt_uint(v, len, NULL);
        return len <= 2 ? 0 : FE_OPTION;
    case OPT_SEQ:
        f->seq = opt_uint(v, len, NULL);
        return len <= 4 ? 0 : FE_OPTION;
    case OPT_KEY:
        f->key_id = opt_uint(v, len, NULL);
        return len <= 1 ? 0 : FE_OPTION;
    case OPT_NONCE:
        f->nonce = v;
        return len == 12 ? 0 : FE_NONCE;
    case OPT_TIME:
        f->time_lo = opt_uint(v, len, &f->time_hi);
        return len <= 8 ? 0 : FE_OPTION;
    case OPT_CLIENT:
        f->client = v;
        f->client_len = len;
        return len && len < 24 ? 0 : FE_OPTION;
    default:
        if (num & 1u)
            return FE_CRITICAL;      /* RFC 7252 5.4.1: odd = critical */
        f->skipped++;
        return 0;
    }
}

static int parse_options(struct frame *f, const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    unsigned num = 0;
    int r;

    while (p < end && *p != 0xff) {
        unsigned b = *p++;
        size_t delta, len;
        if (ext(b >> 4, &p, end, &delta) || ext(b & 0xfu, &p, end, &len))
            return FE_OPTION;
        if ((size_t)(end - p) < len)
            return FE_OPTION;
        num += (unsigned)delta;
        r = take_option(f, num, p, len);
        if (r)
            return r;
        p += len;
    }
    if (p == end)
        return FE_MARKER;
    *pp = p + 1;
    return 0;
}

int frame_parse(uint8_t *buf, size_t len, struct frame *f, size_t *used)
{
    uint32_t body;
    size_t n;
    const uint8_t *p, *end;
    int r;

    memset(f, 0, sizeof *f);
    *used = len;
    if (len < 2)
        return FE_SHORT;
    if (varint_get(buf + 1, len - 1, &body, &n) || n > 4)
        return FE_VARINT;
    if (body > len - 1 - n)
        return FE_LENGTH;
    *used = 1 + n + body;
    f->type = buf[0] >> 4;
    f->flags = buf[0] & 0xfu;
    if (f->type == 0)
        return FE_TYPE;
    if (body < 3)
        return FE_SHORT;
    p = buf + 1 + n;
    end = p + body;
    f->id = (unsigned)p[0] << 8 | p[1];
    p += 2;
    r = parse_options(f, &p, end);
    if (r)
        return r;
    f->aad = buf;
    f->aad_len = (size_t)(p - buf);
    f->payload = (uint8_t *)p;
    f->payload_len = (size_t)(end - p);
    if (f->flags & FL_SEALED) {
        if (f->payload_len < 16)
            return FE_SHORT;
        if (!f->nonce)
            return FE_NONCE;
        f->payload_len -= 16;
        f->tag = f->payload + f->payload_len;
    }
    return 0;
}
