/*
 * Key derivation shared by the sender and the receiver (HKDF-SHA-256,
 * RFC 5869): the device key from a provisioning secret, a session key per
 * CONNECT from the device key, the client id (salt) and the epoch, and
 * the AES suite's pair of keys from a session key; sealing and opening
 * under either suite.
 */
#include "proto.h"

/* a provisioning secret, as a factory would write to the device */
static const uint8_t secret[16] = {
    0x3a, 0x91, 0x5c, 0x07, 0xe2, 0x48, 0xbd, 0x16,
    0x7f, 0xc4, 0x29, 0x80, 0x5e, 0xa3, 0x0b, 0xd8,
};

void key_device(uint8_t key[32])
{
    static const uint8_t salt[] = "codeplace-proto/v1";
    static const uint8_t info[] = "device";

    hkdf_sha256(salt, sizeof salt - 1, secret, sizeof secret, info, sizeof info - 1, key, 32);
}

void key_session(const uint8_t *client, size_t len, uint32_t epoch, uint8_t key[32])
{
    uint8_t dev[32], info[11] = { 's', 'e', 's', 's', 'i', 'o', 'n', 0, 0, 0, 0 };
    unsigned i;

    for (i = 0; i < 4; i++)
        info[7 + i] = (uint8_t)(epoch >> (24 - 8 * i));
    key_device(dev);
    hkdf_sha256(client, len, dev, sizeof dev, info, sizeof info, key, 32);
}

void key_aes(const uint8_t session[32], uint8_t key[32])
{
    static const uint8_t salt[] = "aes";
    static const uint8_t info[] = "ctr+cmac";

    hkdf_sha256(salt, sizeof salt - 1, session, 32, info, sizeof info - 1, key, 32);
}

/* AES suite: CTR with the first 16 key bytes, then a CMAC with the other
 * 16 over the AAD length (2 bytes, big-endian), the AAD and the ciphertext */
static void aes_tag(const uint8_t key[32], const uint8_t *aad, size_t aad_len,
                    const uint8_t *ct, size_t len, uint8_t tag[16])
{
    struct cmac m;
    uint8_t l[2] = { (uint8_t)(aad_len >> 8), (uint8_t)aad_len };

    cmac_init(&m, key + 16);
    cmac_update(&m, l, 2);
    cmac_update(&m, aad, aad_len);
    cmac_update(&m, ct, len);
    cmac_final(&m, tag);
}

void seal(unsigned kid, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
          size_t aad_len, uint8_t *buf, size_t len, uint8_t tag[16])
{
    struct aes128 a;

    if (kid != KEY_SESSION_AES) {
        aead_seal(key, nonce, aad, aad_len, buf, len, tag);
        return;
    }
    aes128_init(&a, key);
    aes128_ctr(&a, nonce, buf, len);
    aes_tag(key, aad, aad_len, buf, len, tag);
}

int unseal(unsigned kid, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
           size_t aad_len, uint8_t *buf, size_t len, const uint8_t tag[16])
{
    struct aes128 a;
    uint8_t want[16], diff = 0;
    unsigned i;

    if (kid != KEY_SESSION_AES)
        return aead_open(key, nonce, aad, aad_len, buf, len, tag);
    aes_tag(key, aad, aad_len, buf, len, want);
    for (i = 0; i < 16; i++)
        diff |= (uint8_t)(want[i] ^ tag[i]);
    if (diff)
        return -1;
    aes128_init(&a, key);
    aes128_ctr(&a, nonce, buf, len);
    return 0;
}
