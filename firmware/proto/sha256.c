/*
 * SHA-256 (FIPS 180-4 5.3.3, 6.2), HMAC (RFC 2104) and HKDF (RFC 5869)
 * over it.
 */
#include "proto.h"

#include <string.h>

/* FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes */
static const uint32_t K[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u,
    0x923f82a4u, 0xab1c5ed5u, 0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u,
    0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u, 0xe49b69c1u, 0xefbe4786u,
    0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u,
    0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u,
    0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, 0xa2bfe8a1u, 0xa81a664bu,
    0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au,
    0x5b9cca4fu, 0x682e6ff3u, 0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u,
    0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

static uint32_t rotr(uint32_t v, unsigned n)
{
    return (v >> n) | (v << (32 - n));
}

static void compress(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
    unsigned i;

    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; k = h[7];
    for (i = 0; i < 64; i++) {
        t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void sha256_init(struct sha256 *s)
{
    /* FIPS 180-4 5.3.3 */
    static const uint32_t iv[8] = {
        0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
        0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u,
    };
    memcpy(s->h, iv, sizeof iv);
    s->total_lo = s->total_hi = 0;
    s->fill = 0;
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t before = s->total_lo;

    s->total_lo += (uint32_t)len;
    if (s->total_lo < before)
        s->total_hi++;
    while (len) {
        size_t n = 64 - s->fill;
        if (n > len)
            n = len;
        memcpy(s->buf + s->fill, p, n);
        s->fill += n;
        p += n;
        len -= n;
        if (s->fill == 64) {
            compress(s->h, s->buf);
            s->fill = 0;
        }
    }
}

void sha256_final(struct sha256 *s, uint8_t out[32])
{
    uint32_t hi = s->total_hi << 3 | s->total_lo >> 29, lo = s->total_lo << 3;
    unsigned i;

    s->buf[s->fill++] = 0x80;
    if (s->fill > 56) {
        memset(s->buf + s->fill, 0, 64 - s->fill);
        compress(s->h, s->buf);
        s->fill = 0;
    }
    memset(s->buf + s->fill, 0, 56 - s->fill);
    for (i = 0; i < 4; i++) {
        s->buf[56 + i] = (uint8_t)(hi >> (24 - 8 * i));
        s->buf[60 + i] = (uint8_t)(lo >> (24 - 8 * i));
    }
    compress(s->h, s->buf);
    for (i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

/* RFC 2104 2: H(K ^ opad, H(K ^ ipad, text)), keys over 64 bytes hashed */
struct hmac { struct sha256 inner, outer; };

static void hmac_init(struct hmac *m, const uint8_t *key, size_t key_len)
{
    uint8_t k[64], pad[64];
    unsigned i;

    memset(k, 0, sizeof k);
    if (key_len > 64) {
        sha256_init(&m->inner);
        sha256_update(&m->inner, key, key_len);
        sha256_final(&m->inner, k);
    } else {
        memcpy(k, key, key_len);
    }
    for (i = 0; i < 64; i++)
        pad[i] = (uint8_t)(k[i] ^ 0x36);
    sha256_init(&m->inner);
    sha256_update(&m->inner, pad, 64);
    for (i = 0; i < 64; i++)
        pad[i] = (uint8_t)(k[i] ^ 0x5c);
    sha256_init(&m->outer);
    sha256_update(&m->outer, pad, 64);
}

static void hmac_final(struct hmac *m, uint8_t out[32])
{
    uint8_t ih[32];

    sha256_final(&m->inner, ih);
    sha256_update(&m->outer, ih, 32);
    sha256_final(&m->outer, out);
}

void hmac_sha256(const uint8_t *key, size_t key_len, const void *msg, size_t len,
                 uint8_t out[32])
{
    struct hmac m;

    hmac_init(&m, key, key_len);
    sha256_update(&m.inner, msg, len);
    hmac_final(&m, out);
}

void hkdf_sha256(const uint8_t *salt, size_t salt_len, const uint8_t *ikm, size_t ikm_len,
                 const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len)
{
    static const uint8_t nosalt[32];
    uint8_t prk[32], t[32];
    uint8_t ctr = 1;
    size_t tlen = 0, n;
    struct hmac m;

    /* RFC 5869 2.2: PRK = HMAC(salt, IKM), salt defaults to 32 zeros */
    if (!salt_len) {
        salt = nosalt;
        salt_len = sizeof nosalt;
    }
    hmac_sha256(salt, salt_len, ikm, ikm_len, prk);
    /* 2.3: T(i) = HMAC(PRK, T(i-1) | info | i) */
    while (out_len) {
        hmac_init(&m, prk, sizeof prk);
        sha256_update(&m.inner, t, tlen);
        sha256_update(&m.inner, info, info_len);
        sha256_update(&m.inner, &ctr, 1);
        hmac_final(&m, t);
        tlen = 32;
        n = out_len < 32 ? out_len : 32;
        memcpy(out, t, n);
        out += n;
        out_len -= n;
        ctr++;
    }
}
