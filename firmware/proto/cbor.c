/*
 * A CBOR subset (RFC 8949): unsigned and negative integers, text strings,
 * arrays, maps, half- and single-precision floats, simple values, heads
 * up to 32-bit arguments; the reader skips nested items it does not want.
 */
#include "proto.h"

#include <string.h>

static void w_byte(struct cbor_w *w, unsigned b)
{
    if (w->n >= w->cap) {
        w->err = 1;
        return;
    }
    w->p[w->n++] = (uint8_t)b;
}

/* RFC 8949 3: initial byte major << 5 | additional information */
void cbor_head(struct cbor_w *w, unsigned major, uint32_t v)
{
    unsigned i, bytes;

    if (v < 24) {
        w_byte(w, major << 5 | v);
        return;
    }
    bytes = v <= 0xffu ? 1 : v <= 0xffffu ? 2 : 4;
    w_byte(w, major << 5 | (bytes == 1 ? 24u : bytes == 2 ? 25u : 26u));
    for (i = bytes; i-- > 0;)
        w_byte(w, (v >> (8 * i)) & 0xffu);
}

void cbor_int(struct cbor_w *w, int32_t v)
{
    if (v >= 0)
        cbor_head(w, 0, (uint32_t)v);
    else
        cbor_head(w, 1, (uint32_t)(-(v + 1)));
}

void cbor_text(struct cbor_w *w, const char *s)
{
    size_t n = strlen(s), i;

    cbor_head(w, 3, (uint32_t)n);
    for (i = 0; i < n; i++)
        w_byte(w, (uint8_t)s[i]);
}

void cbor_f32(struct cbor_w *w, float f)
{
    uint32_t bits;
    unsigned i;

    memcpy(&bits, &f, 4);
    w_byte(w, 0xfa);
    for (i = 4; i-- > 0;)
        w_byte(w, (bits >> (8 * i)) & 0xffu);
}

void cbor_f16_bits(struct cbor_w *w, uint16_t h)
{
    w_byte(w, 0xf9);
    w_byte(w, h >> 8);
    w_byte(w, h & 0xffu);
}

/* RFC 8949 Appendix D: half precision to a float, exactly */
static float half_to_float(uint16_t h)
{
    unsigned exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    float v;

    if (exp == 0)
        v = (float)mant / 16777216.0f;                 /* mant * 2^-24 */
    else if (exp != 31) {
        v = (float)(mant + 1024u);
        if (exp >= 25) {
            unsigned k;
            for (k = 25; k < exp; k++)
                v *= 2.0f;
        } else {
            unsigned k;
            for (k = exp; k < 25; k++)
                v *= 0.5f;
        }
    } else
        v = mant ? 0.0f : 131008.0f;          /* NaN as 0, infinity as 2 x the largest half */
    return (h & 0x8000u) ? -v : v;
}

int cbor_next(const uint8_t **pp, const uint8_t *end, struct cbor_item *it)
{
    const uint8_t *p = *pp;
    unsigned ai, bytes, i;
    uint32_t v = 0;

    if (p >= end)
        return -1;
    it->major = *p >> 5;
    ai = *p++ & 0x1fu;
    if (ai < 24) {
        bytes = 0;
        v = ai;
    } else if (ai <= 26) {
        bytes = 1u << (ai - 24);
    } else {
        return -1;              /* 64-bit arguments and indefinite lengths */
    }
    if ((size_t)(end - p) < bytes)
        return -1;
    for (i = 0; i < bytes; i++)
        v = v << 8 | *p++;
    it->val = v;
    it->str = NULL;
    it->f = 0;
    switch (it->major) {
    case 1:
        it->ival = -(int32_t)(v & 0x7fffffffu) - 1;
        break;
    case 2:
    case 3:
        if ((size_t)(end - p) < v)
            return -1;
        it->str = p;
        p += v;
        break;
    case 7:
        if (ai == 25)
            it->f = half_to_float((uint16_t)v);
        else if (ai == 26)
            memcpy(&it->f, &v, 4);
        break;
    default:
        it->ival = (int32_t)(v & 0x7fffffffu);
        break;
    }
    *pp = p;
    return 0;
}

int cbor_skip(const uint8_t **pp, const uint8_t *end, unsigned depth)
{
    struct cbor_item it;
    uint32_t n, i;

    if (depth > 4 || cbor_next(pp, end, &it))
        return -1;
    if (it.major == 4 || it.major == 5) {
        n = it.major == 5 ? it.val * 2 : it.val;
        for (i = 0; i < n; i++)
            if (cbor_skip(pp, end, depth + 1))
                return -1;
    }
    return 0;
}
