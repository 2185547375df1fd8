/*
 * Poly1305 (RFC 8439 2.5): the accumulator h and the clamped key r in five
 * 26-bit limbs, products in 64 bits; reduction modulo p = 2^130 - 5 uses
 * 2^130 = 5 (mod p), so the limbs that wrap are multiplied by 5.
 */
#include "proto.h"

#define M26 0x3ffffffu

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void poly1305_init(struct poly1305 *p, const uint8_t key[32])
{
    unsigned i;

    /* r &= 0x0ffffffc0ffffffc0ffffffc0fffffff (RFC 8439 2.5.1), split */
    p->r[0] = le32(key) & 0x3ffffffu;
    p->r[1] = (le32(key + 3) >> 2) & 0x3ffff03u;
    p->r[2] = (le32(key + 6) >> 4) & 0x3ffc0ffu;
    p->r[3] = (le32(key + 9) >> 6) & 0x3f03fffu;
    p->r[4] = (le32(key + 12) >> 8) & 0x00fffffu;
    for (i = 0; i < 5; i++)
        p->h[i] = 0;
    for (i = 0; i < 4; i++)
        p->pad[i] = le32(key + 16 + 4 * i);
    p->fill = 0;
}

/* h = (h + m + hibit * 2^128) * r mod p for one 16-byte block */
static void block(struct poly1305 *p, const uint8_t *m, uint32_t hibit)
{
    const uint32_t *r = p->r;
    uint32_t *h = p->h;
    uint32_t s1 = r[1] * 5, s2 = r[2] * 5, s3 = r[3] * 5, s4 = r[4] * 5;
    uint64_t d0, d1, d2, d3, d4;
    uint32_t c;

    h[0] += le32(m) & M26;
    h[1] += (le32(m + 3) >> 2) & M26;
    h[2] += (le32(m + 6) >> 4) & M26;
    h[3] += (le32(m + 9) >> 6) & M26;
    h[4] += (le32(m + 12) >> 8) | hibit;

    d0 = (uint64_t)h[0] * r[0] + (uint64_t)h[1] * s4 + (uint64_t)h[2] * s3 +
         (uint64_t)h[3] * s2 + (uint64_t)h[4] * s1;
    d1 = (uint64_t)h[0] * r[1] + (uint64_t)h[1] * r[0] + (uint64_t)h[2] * s4 +
         (uint64_t)h[3] * s3 + (uint64_t)h[4] * s2;
    d2 = (uint64_t)h[0] * r[2] + (uint64_t)h[1] * r[1] + (uint64_t)h[2] * r[0] +
         (uint64_t)h[3] * s4 + (uint64_t)h[4] * s3;
    d3 = (uint64_t)h[0] * r[3] + (uint64_t)h[1] * r[2] + (uint64_t)h[2] * r[1] +
         (uint64_t)h[3] * r[0] + (uint64_t)h[4] * s4;
    d4 = (uint64_t)h[0] * r[4] + (uint64_t)h[1] * r[3] + (uint64_t)h[2] * r[2] +
         (uint64_t)h[3] * r[1] + (uint64_t)h[4] * r[0];

    c = (uint32_t)(d0 >> 26); h[0] = (uint32_t)d0 & M26;
    d1 += c; c = (uint32_t)(d1 >> 26); h[1] = (uint32_t)d1 & M26;
    d2 += c; c = (uint32_t)(d2 >> 26); h[2] = (uint32_t)d2 & M26;
    d3 += c; c = (uint32_t)(d3 >> 26); h[3] = (uint32_t)d3 & M26;
    d4 += c; c = (uint32_t)(d4 >> 26); h[4] = (uint32_t)d4 & M26;
    h[0] += c * 5; c = h[0] >> 26; h[0] &= M26;
    h[1] += c;
}

void poly1305_update(struct poly1305 *p, const uint8_t *m, size_t len)
{
    while (len) {
        if (p->fill == 0 && len >= 16) {
            block(p, m, 1u << 24);
            m += 16;
            len -= 16;
            continue;
        }
        p->buf[p->fill++] = *m++;
        len--;
        if (p->fill == 16) {
            block(p, p->buf, 1u << 24);
            p->fill = 0;
        }
    }
}

void poly1305_finish(struct poly1305 *p, uint8_t tag[16])
{
    uint32_t *h = p->h, g[5], c, mask, w[4];
    uint64_t f;
    unsigned i;

    if (p->fill) {
        /* the last partial block: a 1 byte after the message, no 2^128 */
        p->buf[p->fill++] = 1;
        while (p->fill < 16)
            p->buf[p->fill++] = 0;
        block(p, p->buf, 0);
    }
    /* carry fully */
    c = h[1] >> 26; h[1] &= M26;
    for (i = 2; i < 5; i++) {
        h[i] += c; c = h[i] >> 26; h[i] &= M26;
    }
    h[0] += c * 5; c = h[0] >> 26; h[0] &= M26;
    h[1] += c;
    /* g = h + 5 - 2^130: take g when h >= p */
    g[0] = h[0] + 5; c = g[0] >> 26; g[0] &= M26;
    for (i = 1; i < 4; i++) {
        g[i] = h[i] + c; c = g[i] >> 26; g[i] &= M26;
    }
    g[4] = h[4] + c - (1u << 26);
    mask = (g[4] >> 31) - 1u;    /* all ones when no borrow: h >= p */
    for (i = 0; i < 5; i++)
        h[i] = (h[i] & ~mask) | (g[i] & mask);
    /* h mod 2^128 in four words, plus s (the pad) */
    w[0] = h[0] | h[1] << 26;
    w[1] = h[1] >> 6 | h[2] << 20;
    w[2] = h[2] >> 12 | h[3] << 14;
    w[3] = h[3] >> 18 | h[4] << 8;
    f = 0;
    for (i = 0; i < 4; i++) {
        f += (uint64_t)w[i] + p->pad[i];
        w[i] = (uint32_t)f;
        f >>= 32;
        tag[4 * i] = (uint8_t)w[i];
        tag[4 * i + 1] = (uint8_t)(w[i] >> 8);
        tag[4 * i + 2] = (uint8_t)(w[i] >> 16);
        tag[4 * i + 3] = (uint8_t)(w[i] >> 24);
    }
}
