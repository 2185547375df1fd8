/*
 * ChaCha20 (RFC 8439 2.1-2.4): the quarter round on a 4x4 matrix of
 * 32-bit words, 20 rounds (10 column + diagonal double rounds), the input
 * added back, serialised little-endian.
 */
#include "proto.h"

static uint32_t rotl(uint32_t v, unsigned n)
{
    return (v << n) | (v >> (32 - n));
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* RFC 8439 2.1 */
static void quarter(uint32_t *x, unsigned a, unsigned b, unsigned c, unsigned d)
{
    x[a] += x[b]; x[d] ^= x[a]; x[d] = rotl(x[d], 16);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = rotl(x[b], 12);
    x[a] += x[b]; x[d] ^= x[a]; x[d] = rotl(x[d], 8);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = rotl(x[b], 7);
}

void chacha20_block(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12],
                    uint8_t out[64])
{
    /* RFC 8439 2.3: the constants "expand 32-byte k" */
    uint32_t in[16] = { 0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u };
    uint32_t x[16];
    unsigned i;

    for (i = 0; i < 8; i++)
        in[4 + i] = le32(key + 4 * i);
    in[12] = counter;
    for (i = 0; i < 3; i++)
        in[13 + i] = le32(nonce + 4 * i);
    for (i = 0; i < 16; i++)
        x[i] = in[i];
    for (i = 0; i < 10; i++) {
        quarter(x, 0, 4, 8, 12);
        quarter(x, 1, 5, 9, 13);
        quarter(x, 2, 6, 10, 14);
        quarter(x, 3, 7, 11, 15);
        quarter(x, 0, 5, 10, 15);
        quarter(x, 1, 6, 11, 12);
        quarter(x, 2, 7, 8, 13);
        quarter(x, 3, 4, 9, 14);
    }
    for (i = 0; i < 16; i++) {
        uint32_t v = x[i] + in[i];
        out[4 * i] = (uint8_t)v;
        out[4 * i + 1] = (uint8_t)(v >> 8);
        out[4 * i + 2] = (uint8_t)(v >> 16);
        out[4 * i + 3] = (uint8_t)(v >> 24);
    }
}

void chacha20_xor(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12],
                  uint8_t *buf, size_t len)
{
    uint8_t ks[64];
    size_t i, n;

    while (len) {
        chacha20_block(key, counter++, nonce, ks);
        n = len < 64 ? len : 64;
        for (i = 0; i < n; i++)
            buf[i] ^= ks[i];
        buf += n;
        len -= n;
    }
}
