/*
 * The protocol workload's cryptography against the published test vectors,
 * on the host: RFC 8439 2.3.2 (ChaCha20 block), 2.4.2 (encryption), 2.5.2
 * (Poly1305), 2.8.2 (AEAD, sealed and opened, a changed byte refused);
 * FIPS 180-2 B.1/B.2 (SHA-256 "abc" and the 448-bit message); RFC 4231
 * test cases 1, 2 and 6 (HMAC-SHA-256); RFC 5869 A.1-A.3 (HKDF); FIPS-197
 * C.1 (AES-128); RFC 4493 examples 1-4 (AES-CMAC);
 * CRC-32 and CRC-16/CCITT-FALSE of "123456789" (0xCBF43926, 0x29B1).
 * Prints one line per vector and exits 1 if any differs.
 */
#include "proto.h"

#include <stdio.h>
#include <string.h>

static int failures;

static size_t unhex(const char *s, uint8_t *out)
{
    size_t n = 0;
    unsigned v;

    while (*s) {
        if (*s == ' ' || *s == ':' || *s == '\n') {
            s++;
            continue;
        }
        if (sscanf(s, "%2x", &v) != 1)
            break;
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

static void check(const char *what, const uint8_t *got, size_t len, const char *want_hex)
{
    uint8_t want[256];
    size_t n = unhex(want_hex, want);
    int ok = n == len && memcmp(got, want, len) == 0;

    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) {
        size_t i;
        printf("  got  ");
        for (i = 0; i < len; i++)
            printf("%02x", got[i]);
        printf("\n  want %s\n", want_hex);
        failures++;
    }
}

static const char sunscreen[] =
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
    "the future, sunscreen would be it.";

static void chacha(void)
{
    uint8_t key[32], nonce[12], out[128];
    unsigned i;

    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    unhex("000000090000004a00000000", nonce);
    chacha20_block(key, 1, nonce, out);
    check("RFC 8439 2.3.2 ChaCha20 block", out, 64,
          "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
          "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e");
    unhex("000000000000004a00000000", nonce);
    memcpy(out, sunscreen, 114);
    chacha20_xor(key, 1, nonce, out, 114);
    check("RFC 8439 2.4.2 ChaCha20 encryption", out, 114,
          "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
          "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
          "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
          "5af90bbf74a35be6b40b8eedf2785e42874d");
}

static void poly(void)
{
    uint8_t key[32], tag[16];
    struct poly1305 p;
    static const char msg[] = "Cryptographic Forum Research Group";

    unhex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b", key);
    poly1305_init(&p, key);
    poly1305_update(&p, (const uint8_t *)msg, 10);          /* in pieces */
    poly1305_update(&p, (const uint8_t *)msg + 10, sizeof msg - 11);
    poly1305_finish(&p, tag);
    check("RFC 8439 2.5.2 Poly1305", tag, 16, "a8061dc1305136c6c22b8baf0c0127a9");
}

static void aead(void)
{
    uint8_t key[32], nonce[12], aad[12], buf[114], tag[16];
    unsigned i;
    int r;

    for (i = 0; i < 32; i++)
        key[i] = (uint8_t)(0x80 + i);
    unhex("070000004041424344454647", nonce);
    unhex("50515253c0c1c2c3c4c5c6c7", aad);
    memcpy(buf, sunscreen, sizeof buf);
    aead_seal(key, nonce, aad, sizeof aad, buf, sizeof buf, tag);
    check("RFC 8439 2.8.2 AEAD ciphertext", buf, sizeof buf,
          "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
          "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
          "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
          "3ff4def08e4b7a9de576d26586cec64b6116");
    check("RFC 8439 2.8.2 AEAD tag", tag, 16, "1ae10b594f09e26a7e902ecbd0600691");
    buf[7] ^= 1;
    r = aead_open(key, nonce, aad, sizeof aad, buf, sizeof buf, tag);
    printf("%s AEAD open refuses a changed ciphertext byte\n", r == -1 ? "ok  " : "FAIL");
    failures += r != -1;
    buf[7] ^= 1;
    r = aead_open(key, nonce, aad, sizeof aad, buf, sizeof buf, tag);
    printf("%s AEAD open restores the plaintext\n",
           r == 0 && memcmp(buf, sunscreen, sizeof buf) == 0 ? "ok  " : "FAIL");
    failures += !(r == 0 && memcmp(buf, sunscreen, sizeof buf) == 0);
}

static void sha(void)
{
    uint8_t out[64], key[131], ikm[80], salt[80], info[80];
    struct sha256 s;
    static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    static const char big[] =
        "This is a test using a larger than block-size key and a larger than block-size "
        "data. The key needs to be hashed before being used by the HMAC algorithm.";
    size_t n;
    unsigned i;

    sha256_init(&s);
    sha256_update(&s, "abc", 3);
    sha256_final(&s, out);
    check("FIPS 180-2 B.1 SHA-256 \"abc\"", out, 32,
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_init(&s);
    sha256_update(&s, two, strlen(two));
    sha256_final(&s, out);
    check("FIPS 180-2 B.2 SHA-256 448 bits", out, 32,
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    memset(key, 0x0b, 20);
    hmac_sha256(key, 20, "Hi There", 8, out);
    check("RFC 4231 4.2 HMAC-SHA-256 case 1", out, 32,
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    hmac_sha256((const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28, out);
    check("RFC 4231 4.3 HMAC-SHA-256 case 2", out, 32,
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(key, 0xaa, 131);
    hmac_sha256(key, 131, big, strlen(big), out);
    check("RFC 4231 4.7 HMAC-SHA-256 case 6 (long key and data)", out, 32,
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");

    memset(ikm, 0x0b, 22);
    unhex("000102030405060708090a0b0c", salt);
    unhex("f0f1f2f3f4f5f6f7f8f9", info);
    hkdf_sha256(salt, 13, ikm, 22, info, 10, out, 42);
    check("RFC 5869 A.1 HKDF-SHA-256", out, 42,
          "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
          "34007208d5b887185865");
    hkdf_sha256(NULL, 0, ikm, 22, NULL, 0, out, 42);
    check("RFC 5869 A.3 HKDF-SHA-256, no salt, no info", out, 42,
          "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
          "9d201395faa4b61a96c8");
    for (i = 0; i < 80; i++) {
        ikm[i] = (uint8_t)i;
        salt[i] = (uint8_t)(0x60 + i);
        info[i] = (uint8_t)(0xb0 + i);
    }
    n = 82;
    {
        uint8_t big_out[82];
        hkdf_sha256(salt, 80, ikm, 80, info, 80, big_out, n);
        check("RFC 5869 A.2 HKDF-SHA-256, longer inputs", big_out, n,
              "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
              "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
              "cc30c58179ec3e87c14c01d5c1f3434f1d87");
    }
}

static void crc(void)
{
    uint32_t c = crc32_update(0, "123456789", 9);
    uint16_t c16 = crc16_ccitt(0xffff, "123456789", 9);
    uint8_t b[6] = { (uint8_t)(c >> 24), (uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c,
                     (uint8_t)(c16 >> 8), (uint8_t)c16 };

    check("CRC-32 and CRC-16/CCITT-FALSE of \"123456789\"", b, 6, "cbf4392629b1");
}

static void aes(void)
{
    uint8_t key[16], in[64], out[16];
    struct aes128 a;
    struct cmac m;
    static const size_t lens[4] = { 0, 16, 40, 64 };
    static const char *const tags[4] = {
        "bb1d6929e95937287fa37d129b756746", "070a16b46b4d4144f79bdd9dd04a287c",
        "dfa66747de9ae63030ca32611497c827", "51f0bebf7e3b9d92fc49741779363cfe",
    };
    static const char *const names[4] = {
        "RFC 4493 4 AES-CMAC example 1 (empty)", "RFC 4493 4 AES-CMAC example 2 (16 bytes)",
        "RFC 4493 4 AES-CMAC example 3 (40 bytes)", "RFC 4493 4 AES-CMAC example 4 (64 bytes)",
    };
    unsigned i;

    unhex("000102030405060708090a0b0c0d0e0f", key);
    unhex("00112233445566778899aabbccddeeff", in);
    aes128_init(&a, key);
    aes128_encrypt(&a, in, out);
    check("FIPS-197 C.1 AES-128", out, 16, "69c4e0d86a7b0430d8cdb78070b4c55a");
    unhex("2b7e151628aed2a6abf7158809cf4f3c", key);
    unhex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
          "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710", in);
    for (i = 0; i < 4; i++) {
        cmac_init(&m, key);
        cmac_update(&m, in, lens[i] / 2);             /* in two pieces */
        cmac_update(&m, in + lens[i] / 2, lens[i] - lens[i] / 2);
        cmac_final(&m, out);
        check(names[i], out, 16, tags[i]);
    }
}

int main(void)
{
    chacha();
    poly();
    aead();
    sha();
    aes();
    crc();
    printf("%d failed\n", failures);
    return failures ? 1 : 0;
}
