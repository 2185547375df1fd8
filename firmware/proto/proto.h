/*
 * The protocol workload (docs/firmware.md, "The protocol workload"): a
 * device-side broker endpoint. Each iteration a sender (gen.c) builds a
 * batch of binary frames (codec.c, cbor.c) from the iteration number,
 * seals most of them with ChaCha20-Poly1305 (chacha.c, poly1305.c,
 * aead.c) or AES-128-CTR + CMAC (aes.c) under keys from HKDF-SHA-256
 * (sha256.c, keys.c), and sends each in a COBS link packet with a CRC-16
 * (link.c, crc.c). The receiver unwraps, decodes and opens them,
 * dispatches them through a table of handlers (handlers.c, msgs.c,
 * diag.c, jcheck.c), keeps per-topic state (topics.c), answers with
 * HMAC-SHA-256 authenticated frames and logs through vsnprintf into a
 * ring buffer (plog.c). C99 on picolibc; the same sources build for a
 * host for the cross-check (firmware/ref/proto-host.c).
 *
 * Portable by construction: no `long` arithmetic beyond 32 bits, no plain
 * `char` arithmetic, no two random draws in one expression (the order of
 * evaluation is unspecified), every double printed is a multiple of 1/16
 * (exact in decimal with 4 places), floating point only through IEEE 754
 * operations that are correctly rounded (+ - * / sqrt, conversions), so
 * any correct compiler and C library give the same text and the same
 * codeplace_result.
 */
#ifndef PROTO_H
#define PROTO_H

#include <stddef.h>
#include <stdint.h>

/* ---- crypto: chacha.c, poly1305.c, aead.c, sha256.c ---- */

/* RFC 8439 2.3: one 64-byte block for key, counter, nonce. */
void chacha20_block(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12],
                    uint8_t out[64]);
/* RFC 8439 2.4: XOR the key stream from block `counter` into buf. */
void chacha20_xor(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12],
                  uint8_t *buf, size_t len);

struct poly1305 {
    uint32_t r[5], h[5], pad[4];
    uint8_t buf[16];
    size_t fill;
};
/* RFC 8439 2.5 */
void poly1305_init(struct poly1305 *p, const uint8_t key[32]);
void poly1305_update(struct poly1305 *p, const uint8_t *m, size_t len);
void poly1305_finish(struct poly1305 *p, uint8_t tag[16]);

/* RFC 8439 2.8: seal encrypts buf in place and writes the tag; open checks
 * the tag (constant time) and decrypts in place only if it matches:
 * 0, or -1 on a wrong tag. */
void aead_seal(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
               size_t aad_len, uint8_t *buf, size_t len, uint8_t tag[16]);
int aead_open(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
              size_t aad_len, uint8_t *buf, size_t len, const uint8_t tag[16]);

struct sha256 {
    uint32_t h[8];
    uint32_t total_lo, total_hi;
    uint8_t buf[64];
    size_t fill;
};
/* FIPS 180-4 6.2 */
void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[32]);
/* RFC 2104 with SHA-256 */
void hmac_sha256(const uint8_t *key, size_t key_len, const void *msg, size_t len,
                 uint8_t out[32]);
/* RFC 5869: extract and expand, out_len <= 255 * 32 */
void hkdf_sha256(const uint8_t *salt, size_t salt_len, const uint8_t *ikm, size_t ikm_len,
                 const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len);

/* aes.c: FIPS-197 AES-128, SP 800-38A CTR (counter block: nonce then a
 * 32-bit big-endian block number from 1), RFC 4493 CMAC */
struct aes128 { uint8_t rk[176]; };
void aes128_init(struct aes128 *a, const uint8_t key[16]);
void aes128_encrypt(const struct aes128 *a, const uint8_t in[16], uint8_t out[16]);
void aes128_ctr(const struct aes128 *a, const uint8_t nonce[12], uint8_t *buf, size_t len);
struct cmac {
    struct aes128 aes;
    uint8_t k1[16], k2[16], x[16], buf[16];
    size_t fill;
};
void cmac_init(struct cmac *m, const uint8_t key[16]);
void cmac_update(struct cmac *m, const uint8_t *p, size_t len);
void cmac_final(struct cmac *m, uint8_t tag[16]);

/* crc.c: CRC-32 (IEEE 802.3, reflected 0xEDB88320) and CRC-16/CCITT-FALSE */
uint32_t crc32_update(uint32_t crc, const void *data, size_t len);
uint16_t crc16_ccitt(uint16_t crc, const void *data, size_t len);

/* ---- the frame format: codec.c ----
 *
 *   byte 0        type << 4 | flags
 *   varint        the length of the rest of the frame (LEB128, <= 4 bytes)
 *   2 bytes       message id, big-endian
 *   options       CoAP-style (RFC 7252 3.1): delta and length nibbles, 13
 *                 and 14 extend by one and two bytes; odd numbers are
 *                 critical, an unknown critical option rejects the frame
 *   0xff          the payload marker (always present)
 *   payload       sealed frames: ciphertext then a 16-byte Poly1305 tag,
 *                 the header up to and including the marker as AAD
 */
enum msg_type {
    MT_CONNECT = 1, MT_CONNACK, MT_PUBLISH, MT_PUBACK, MT_CONFIG, MT_TELEMETRY,
    MT_EVENT, MT_SUBSCRIBE, MT_SUBACK, MT_UNSUBSCRIBE, MT_TIMESYNC, MT_PINGREQ,
    MT_PINGRESP, MT_DIAG, MT_DISCONNECT
};
#define FL_SEALED 0x1u
#define FL_RETAIN 0x2u
#define FL_QOS_SHIFT 2

enum opt_num {
    OPT_KEY = 1, OPT_NONCE = 7, OPT_TOPIC = 11, OPT_CONTENT = 12, OPT_SEQ = 17,
    OPT_TIME = 34, OPT_CLIENT = 41, OPT_PAD = 300
};
/* content formats (OPT_CONTENT) of a PUBLISH */
enum content { CF_TEXT = 0, CF_BINARY = 42, CF_CBOR = 60 };

enum frame_err {
    FE_OK = 0, FE_SHORT, FE_VARINT, FE_LENGTH, FE_OPTION, FE_CRITICAL, FE_MARKER,
    FE_NONCE, FE_KEY, FE_AUTH, FE_TYPE, FE_LINK, FE_COUNT
};

struct frame {
    unsigned type, flags, id;
    const uint8_t *topic;  size_t topic_len;
    const uint8_t *client; size_t client_len;
    const uint8_t *nonce;
    uint32_t content, seq, key_id;
    uint32_t time_hi, time_lo;       /* OPT_TIME: milliseconds since 1970 */
    unsigned options, skipped;       /* options seen, elective ones skipped */
    const uint8_t *aad; size_t aad_len;
    uint8_t *payload; size_t payload_len;   /* sealed: without the tag */
    const uint8_t *tag;
};

/* Split the first frame off buf (len bytes): 0 and *used, or an FE_*
 * code (*used is then the bytes to skip: the whole frame when its length
 * was readable, else all of buf). Does not open sealed payloads. */
int frame_parse(uint8_t *buf, size_t len, struct frame *f, size_t *used);
const char *frame_err_name(int err);

struct fenc {
    uint8_t hdr[192];
    size_t n;
    unsigned last;
    int err;
};
void fenc_begin(struct fenc *e, unsigned id);
void fenc_opt(struct fenc *e, unsigned num, const void *val, size_t len);
void fenc_opt_uint(struct fenc *e, unsigned num, uint32_t hi, uint32_t lo);
/* Write the frame to out: header, options, marker, payload (sealed under
 * key id kid with key and the OPT_NONCE value `nonce` when key is not
 * NULL). Returns its length, or 0 if it does not fit or an option was out
 * of order. */
size_t fenc_finish(struct fenc *e, uint8_t *out, size_t cap, unsigned type, unsigned flags,
                   const uint8_t *payload, size_t plen, unsigned kid, const uint8_t *key,
                   const uint8_t *nonce);

size_t varint_put(uint8_t *out, uint32_t v);
/* 0 on success with *v and *n (bytes read); -1 if cut short or over 5 bytes */
int varint_get(const uint8_t *p, size_t len, uint32_t *v, size_t *n);
uint32_t zigzag(int32_t v);
int32_t unzigzag(uint32_t v);

/* ---- link.c: frame | CRC-16 (big-endian), COBS, a zero byte ---- */
#define LINK_MTU 512
size_t link_wrap(const uint8_t *frame, size_t len, uint8_t *out, size_t cap);
int link_unwrap(const uint8_t *in, size_t len, uint8_t *frame, size_t cap, size_t *flen);

/* ---- cbor.c: an RFC 8949 subset ---- */
struct cbor_w { uint8_t *p; size_t cap, n; int err; };
void cbor_head(struct cbor_w *w, unsigned major, uint32_t v);
void cbor_int(struct cbor_w *w, int32_t v);
void cbor_text(struct cbor_w *w, const char *s);
void cbor_f32(struct cbor_w *w, float f);
void cbor_f16_bits(struct cbor_w *w, uint16_t h);
struct cbor_item {
    unsigned major;          /* 0 uint, 1 negative, 3 text, 4 array, 5 map, 7 float/simple */
    uint32_t val;            /* the head's argument */
    int32_t ival;            /* majors 0 and 1 */
    float f;                 /* major 7, half or single */
    const uint8_t *str;      /* majors 2 and 3: val bytes */
};
int cbor_next(const uint8_t **p, const uint8_t *end, struct cbor_item *it);
int cbor_skip(const uint8_t **p, const uint8_t *end, unsigned depth);

/* ---- keys: gen.c and the receiver share the derivation ---- */
#define KEY_DEVICE 0u       /* ChaCha20-Poly1305 */
#define KEY_SESSION 1u      /* ChaCha20-Poly1305 */
#define KEY_SESSION_AES 2u  /* AES-128-CTR then AES-CMAC, keys from the session's */
void key_device(uint8_t key[32]);
void key_session(const uint8_t *client, size_t len, uint32_t epoch, uint8_t key[32]);
void key_aes(const uint8_t session[32], uint8_t key[32]);
/* Seal or open a payload under key id kid (the suite follows from it):
 * seal encrypts buf in place and writes the tag; open checks the tag and
 * decrypts only when it matches (0), else -1. */
void seal(unsigned kid, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
          size_t aad_len, uint8_t *buf, size_t len, uint8_t tag[16]);
int unseal(unsigned kid, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
           size_t aad_len, uint8_t *buf, size_t len, const uint8_t tag[16]);

/* ---- the sender: gen.c ---- */
/* Build iteration seq's batch of frames into out; returns the bytes. */
size_t gen_batch(uint32_t seq, uint8_t *out, size_t cap, unsigned *frames);

/* ---- topics.c ---- */
#define TOPIC_NAME 40
#define TOPICS_MAX 32
#define SUBS_MAX 12
struct topic {
    char name[TOPIC_NAME];
    uint32_t hash, count, bytes, last_seq, digest;
    int32_t min, max;
    int32_t sum_lo;            /* sum of sixteenths, wraps */
    float ewma;                /* smoothed value, alpha = 1/4 */
    uint8_t retained[32];
    uint8_t retained_len, used;
};
struct sub { char filter[TOPIC_NAME]; uint8_t qos, used; uint32_t hits; };
struct topics {
    struct topic t[TOPICS_MAX];
    struct sub s[SUBS_MAX];
    unsigned ntopics;
};
void topics_init(struct topics *ts);
struct topic *topic_find(struct topics *ts, const uint8_t *name, size_t len, int create);
/* MQTT 3.1.1 4.7 wildcards: '+' one level, '#' the rest (last). */
int topic_match(const char *filter, const char *name);
int sub_add(struct topics *ts, const char *filter, unsigned qos);
int sub_remove(struct topics *ts, const char *filter);
void topic_update(struct topic *t, int32_t sixteenths, uint32_t seq, size_t bytes);
uint32_t topics_digest(const struct topics *ts);

/* ---- plog.c: the log ring ---- */
#define PLOG_RING 8192
enum plog_level { PL_DEBUG, PL_INFO, PL_WARN, PL_ERROR };
void plog_init(void);
void plog_tick(uint32_t seq);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void plog(int level, const char *fmt, ...);
void plog_hex(int level, const char *what, const uint8_t *p, size_t len);
uint32_t plog_digest(void);
uint32_t plog_lines(void);
/* the ring and its write position (the oldest byte once it wrapped) */
const char *plog_ring(size_t *head);

/* jcheck.c: read a JSON text back; 0 if it is not one JSON value */
uint32_t json_check(const char *text, size_t len, unsigned *numbers);

/* ---- the receiver: handlers.c (dispatch), msgs.c (the messages) ---- */
struct config {
    uint32_t rate, mask, window;
    int32_t offset;
    int level;
    double gain;
    char name[24];
};
struct ctx {
    struct topics topics;
    struct config cfg;
    uint8_t session[32], session_aes[32];
    int have_session;
    uint32_t epoch, seq;
    char client[24];
    uint8_t tx[2048];
    size_t tx_len;
    uint32_t tx_crc, tx_frames, rx_crc;
    uint32_t rx_ok, rx_bad, errors[FE_COUNT];
    uint32_t clock_hi, clock_lo;   /* last TIMESYNC, ms since 1970 */
};
void ctx_init(struct ctx *c);
/* Decode, open and handle every frame of buf; returns the frames handled. */
unsigned rx_batch(struct ctx *c, uint8_t *buf, size_t len);

typedef int (*handler_fn)(struct ctx *c, struct frame *f);
int h_connect(struct ctx *c, struct frame *f);
int h_publish(struct ctx *c, struct frame *f);
int h_config(struct ctx *c, struct frame *f);
int h_telemetry(struct ctx *c, struct frame *f);
int h_event(struct ctx *c, struct frame *f);
int h_subscribe(struct ctx *c, struct frame *f);
int h_unsubscribe(struct ctx *c, struct frame *f);
int h_timesync(struct ctx *c, struct frame *f);
int h_ping(struct ctx *c, struct frame *f);
int h_diag(struct ctx *c, struct frame *f);
int h_disconnect(struct ctx *c, struct frame *f);
/* Queue a reply frame, authenticated with a truncated HMAC-SHA256. */
void tx_reply(struct ctx *c, unsigned type, unsigned id, const char *topic,
              const uint8_t *payload, size_t plen);

/* xorshift32 seeded from a number: the only source of input. */
static inline uint32_t rng_seed(uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 0x9e3779b9u;
    return s ? s : 1u;
}
static inline uint32_t rng_next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

#endif
