/*
 * AES-128 encryption (FIPS-197), its S-box computed on first use (the
 * multiplicative inverse in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, then
 * the affine transform of 5.1.1), CTR mode (NIST SP 800-38A 6.5) and
 * CMAC (RFC 4493).
 */
#include "proto.h"

#include <string.h>

static uint8_t sbox[256];
static int have_sbox;

static uint8_t xtime(uint8_t x)
{
    return (uint8_t)((x << 1) ^ ((x & 0x80u) ? 0x1bu : 0));
}

static uint8_t gmul(uint8_t a, uint8_t b)
{
    uint8_t r = 0;

    while (b) {
        if (b & 1u)
            r ^= a;
        a = xtime(a);
        b >>= 1;
    }
    return r;
}

static uint8_t rotl8(uint8_t v, unsigned n)
{
    return (uint8_t)((v << n) | (v >> (8 - n)));
}

static void make_sbox(void)
{
    unsigned x, k;

    for (x = 0; x < 256; x++) {
        uint8_t inv = 0, p = (uint8_t)x;
        if (x) {                    /* x^254 = x^-1: square and multiply */
            inv = 1;
            for (k = 0; k < 7; k++) {
                p = gmul(p, p);
                inv = gmul(inv, p);
            }
        }
        sbox[x] = (uint8_t)(inv ^ rotl8(inv, 1) ^ rotl8(inv, 2) ^ rotl8(inv, 3) ^
                            rotl8(inv, 4) ^ 0x63u);
    }
    have_sbox = 1;
}

/* FIPS-197 5.2: 11 round keys of 16 bytes */
void aes128_init(struct aes128 *a, const uint8_t key[16])
{
    uint8_t *w = a->rk, rcon = 1, t[4];
    unsigned i;

    if (!have_sbox)
        make_sbox();
    memcpy(w, key, 16);
    for (i = 16; i < 176; i += 4) {
        memcpy(t, w + i - 4, 4);
        if (i % 16 == 0) {
            uint8_t t0 = t[0];
            t[0] = (uint8_t)(sbox[t[1]] ^ rcon);
            t[1] = sbox[t[2]];
            t[2] = sbox[t[3]];
            t[3] = sbox[t0];
            rcon = xtime(rcon);
        }
        w[i] = (uint8_t)(w[i - 16] ^ t[0]);
        w[i + 1] = (uint8_t)(w[i - 15] ^ t[1]);
        w[i + 2] = (uint8_t)(w[i - 14] ^ t[2]);
        w[i + 3] = (uint8_t)(w[i - 13] ^ t[3]);
    }
}

/* FIPS-197 5.1: state in column order, as the bytes come */
void aes128_encrypt(const struct aes128 *a, const uint8_t in[16], uint8_t out[16])
{
    uint8_t s[16], t[16];
    unsigned r, i, c;

    for (i = 0; i < 16; i++)
        s[i] = (uint8_t)(in[i] ^ a->rk[i]);
    for (r = 1; r <= 10; r++) {
        /* SubBytes and ShiftRows: row i rotates left by i */
        for (c = 0; c < 4; c++)
            for (i = 0; i < 4; i++)
                t[4 * c + i] = sbox[s[4 * ((c + i) % 4) + i]];
        if (r < 10) {          /* MixColumns (5.1.3) */
            for (c = 0; c < 4; c++) {
                uint8_t *col = t + 4 * c, a0 = col[0], a1 = col[1], a2 = col[2], a3 = col[3];
                uint8_t all = (uint8_t)(a0 ^ a1 ^ a2 ^ a3);
                col[0] = (uint8_t)(a0 ^ all ^ xtime((uint8_t)(a0 ^ a1)));
                col[1] = (uint8_t)(a1 ^ all ^ xtime((uint8_t)(a1 ^ a2)));
                col[2] = (uint8_t)(a2 ^ all ^ xtime((uint8_t)(a2 ^ a3)));
                col[3] = (uint8_t)(a3 ^ all ^ xtime((uint8_t)(a3 ^ a0)));
            }
        }
        for (i = 0; i < 16; i++)
            s[i] = (uint8_t)(t[i] ^ a->rk[16 * r + i]);
    }
    memcpy(out, s, 16);
}

void aes128_ctr(const struct aes128 *a, const uint8_t nonce[12], uint8_t *buf, size_t len)
{
    uint8_t ctr[16], ks[16];
    uint32_t n = 1;
    size_t i, k;

    memcpy(ctr, nonce, 12);
    for (i = 0; i < len; i += 16) {
        ctr[12] = (uint8_t)(n >> 24);
        ctr[13] = (uint8_t)(n >> 16);
        ctr[14] = (uint8_t)(n >> 8);
        ctr[15] = (uint8_t)n;
        n++;
        aes128_encrypt(a, ctr, ks);
        for (k = 0; k < 16 && i + k < len; k++)
            buf[i + k] ^= ks[k];
    }
}

/* RFC 4493 2.3: the subkeys, K1 = L << 1 (^ 0x87), K2 = K1 << 1 (^ 0x87) */
static void dbl(uint8_t b[16])
{
    uint8_t carry = (uint8_t)(b[0] >> 7);
    unsigned i;

    for (i = 0; i < 15; i++)
        b[i] = (uint8_t)(b[i] << 1 | b[i + 1] >> 7);
    b[15] = (uint8_t)(b[15] << 1 ^ (carry ? 0x87u : 0));
}

void cmac_init(struct cmac *m, const uint8_t key[16])
{
    static const uint8_t zero[16];

    aes128_init(&m->aes, key);
    aes128_encrypt(&m->aes, zero, m->k1);
    dbl(m->k1);
    memcpy(m->k2, m->k1, 16);
    dbl(m->k2);
    memset(m->x, 0, 16);
    m->fill = 0;
}

void cmac_update(struct cmac *m, const uint8_t *p, size_t len)
{
    unsigned i;

    while (len) {
        if (m->fill == 16) {         /* a full block that is not the last */
            for (i = 0; i < 16; i++)
                m->x[i] ^= m->buf[i];
            aes128_encrypt(&m->aes, m->x, m->x);
            m->fill = 0;
        }
        m->buf[m->fill++] = *p++;
        len--;
    }
}

void cmac_final(struct cmac *m, uint8_t tag[16])
{
    const uint8_t *k = m->k1;
    unsigned i;

    if (m->fill < 16) {              /* RFC 4493 2.4 step 4: pad 10* and K2 */
        m->buf[m->fill++] = 0x80;
        while (m->fill < 16)
            m->buf[m->fill++] = 0;
        k = m->k2;
    }
    for (i = 0; i < 16; i++)
        m->x[i] ^= (uint8_t)(m->buf[i] ^ k[i]);
    aes128_encrypt(&m->aes, m->x, tag);
}
