/*
 * AEAD_CHACHA20_POLY1305 (RFC 8439 2.6, 2.8): the one-time Poly1305 key is
 * the first 32 bytes of ChaCha20 block 0; the payload is encrypted from
 * block 1; the tag covers aad | pad16 | ciphertext | pad16 | aad length |
 * ciphertext length (64-bit little-endian each).
 */
#include "proto.h"

static const uint8_t zeros[16];

static void put_le64(uint8_t *p, size_t v)
{
    unsigned i;
    uint32_t lo = (uint32_t)v;

    for (i = 0; i < 4; i++)
        p[i] = (uint8_t)(lo >> (8 * i));
    for (i = 4; i < 8; i++)
        p[i] = 0;
}

static void mac(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                size_t aad_len, const uint8_t *ct, size_t len, uint8_t tag[16])
{
    uint8_t otk[64], lens[16];
    struct poly1305 p;

    chacha20_block(key, 0, nonce, otk);      /* RFC 8439 2.6 */
    poly1305_init(&p, otk);
    poly1305_update(&p, aad, aad_len);
    poly1305_update(&p, zeros, (16 - aad_len % 16) % 16);
    poly1305_update(&p, ct, len);
    poly1305_update(&p, zeros, (16 - len % 16) % 16);
    put_le64(lens, aad_len);
    put_le64(lens + 8, len);
    poly1305_update(&p, lens, 16);
    poly1305_finish(&p, tag);
}

void aead_seal(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
               size_t aad_len, uint8_t *buf, size_t len, uint8_t tag[16])
{
    chacha20_xor(key, 1, nonce, buf, len);
    mac(key, nonce, aad, aad_len, buf, len, tag);
}

int aead_open(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
              size_t aad_len, uint8_t *buf, size_t len, const uint8_t tag[16])
{
    uint8_t want[16], diff = 0;
    unsigned i;

    mac(key, nonce, aad, aad_len, buf, len, want);
    for (i = 0; i < 16; i++)
        diff |= (uint8_t)(want[i] ^ tag[i]);
    if (diff)
        return -1;
    chacha20_xor(key, 1, nonce, buf, len);
    return 0;
}
