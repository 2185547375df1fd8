/*
 * The sender: one batch of frames per iteration, everything following from
 * the iteration number through xorshift32. A session (CONNECT, keys),
 * subscriptions, publishes in three content formats, telemetry series,
 * a configuration text, an event, a ping, a diagnostics request, and the
 * faults a receiver must survive: frames with a changed ciphertext or tag
 * byte under either suite, an unknown critical option, a message type a
 * client must not send, a link packet with a bad CRC-16, a frame cut
 * short. Each frame travels in a link packet (link.c).
 */
#include "proto.h"

#include <stdio.h>
#include <string.h>

static const char *const topic_names[] = {
    "plant/a1/temp", "plant/a1/press", "plant/b2/temp", "plant/b2/flow",
    "plant/c3/temp", "fleet/t3/engine/status", "fleet/t7/engine/status",
    "fleet/t7/cargo/temp", "sensors/s04/humidity", "sensors/s11/humidity",
    "sensors/s11/co2", "grid/feeder-2/volt", "grid/feeder-9/volt",
    "$SYS/broker/load", "lab/bench/rig-5/current", "lab/bench/rig-6/current",
};
#define NTOPICS (sizeof topic_names / sizeof topic_names[0])

static const char *const filters[] = {
    "plant/+/temp", "plant/#", "fleet/+/engine/status", "sensors/+/humidity",
    "grid/#", "lab/bench/+/current", "#", "fleet/t7/+/temp", "$SYS/#",
};
#define NFILTERS (sizeof filters / sizeof filters[0])

#define CLEAR 0xffu       /* emit()'s key id for a frame in the clear */

struct batch {
    uint8_t *out;
    size_t cap, len;
    unsigned frames, id;
    uint32_t seq, rng;
    uint8_t keys[3][32];      /* by key id: device, session, session AES */
    unsigned kid;             /* the frame being built: its key id, nonce */
    uint8_t nonce[12];
};

static uint32_t pick(struct batch *b, uint32_t n)
{
    return rng_next(&b->rng) % n;
}

/* a value in sixteenths in [lo, hi) */
static int32_t value16(struct batch *b, int32_t lo, int32_t hi)
{
    return lo * 16 + (int32_t)pick(b, (uint32_t)(hi - lo) * 16u);
}

static void nonce_for(const struct batch *b, uint8_t nonce[12])
{
    unsigned i;

    for (i = 0; i < 4; i++) {
        nonce[i] = 0;
        nonce[4 + i] = (uint8_t)(b->seq >> (24 - 8 * i));
        nonce[8 + i] = (uint8_t)(b->id >> (24 - 8 * i));
    }
}

/* start a frame: its id, the key and nonce options when it is to be sealed
 * under key id kid (not CLEAR), the topic (options go in ascending order) */
static void begin(struct batch *b, struct fenc *e, const char *topic, unsigned kid)
{
    uint8_t k = (uint8_t)kid;

    fenc_begin(e, ++b->id);
    b->kid = kid;
    if (kid != CLEAR) {
        nonce_for(b, b->nonce);
        fenc_opt(e, OPT_KEY, &k, 1);
        fenc_opt(e, OPT_NONCE, b->nonce, 12);
    }
    if (topic)
        fenc_opt(e, OPT_TOPIC, topic, strlen(topic));
}

/* finish the frame begin() started and append it in a link packet; with
 * corrupt, one byte of its ciphertext or tag changes first */
static size_t emit(struct batch *b, struct fenc *e, unsigned type, unsigned flags,
                   const uint8_t *payload, size_t plen, int corrupt)
{
    uint8_t frame[LINK_MTU];
    unsigned kid = b->kid;
    size_t n;

    if (kid != CLEAR)
        flags |= FL_SEALED;
    n = fenc_finish(e, frame, sizeof frame, type, flags, payload, plen, kid,
                    kid != CLEAR ? b->keys[kid] : NULL, b->nonce);
    if (n && corrupt)
        frame[n - 1 - (n > 20 ? 10 : 0)] ^= 0x40;
    if (n)
        n = link_wrap(frame, n, b->out + b->len, b->cap - b->len);
    if (!n) {
        plog(PL_ERROR, "gen: frame %u (type %u) not built", b->id, type);
        return 0;
    }
    b->len += n;
    b->frames++;
    return n;
}

static void send_connect(struct batch *b)
{
    char client[16];
    uint8_t p[8];
    size_t n;
    struct fenc e;

    snprintf(client, sizeof client, "node-%02u", (unsigned)(b->seq % 23u));
    key_session((const uint8_t *)client, strlen(client), b->seq, b->keys[KEY_SESSION]);
    key_aes(b->keys[KEY_SESSION], b->keys[KEY_SESSION_AES]);
    begin(b, &e, NULL, CLEAR);
    fenc_opt_uint(&e, OPT_SEQ, 0, b->seq);
    fenc_opt(&e, OPT_CLIENT, client, strlen(client));
    n = varint_put(p, 30u + pick(b, 600));      /* keep-alive, seconds */
    p[n++] = 4;                                  /* protocol version */
    p[n++] = (uint8_t)pick(b, 4);                /* flags */
    emit(b, &e, MT_CONNECT, 0, p, n, 0);
}

static void timesync(struct batch *b)
{
    /* 2026-01-01T00:00:00Z = 1767225600 s; an hour and 7 s per iteration */
    uint64_t ms = 1767225600000ull + (uint64_t)b->seq * 3607000u + pick(b, 1000);
    struct fenc e;

    begin(b, &e, NULL, KEY_DEVICE);
    fenc_opt_uint(&e, OPT_TIME, (uint32_t)(ms >> 32), (uint32_t)ms);
    emit(b, &e, MT_TIMESYNC, 0, NULL, 0, 0);
}

static void subscribe(struct batch *b, unsigned type, unsigned count)
{
    uint8_t p[160];
    size_t n = varint_put(p, count);
    unsigned i;
    struct fenc e;

    for (i = 0; i < count; i++) {
        const char *f = filters[pick(b, NFILTERS)];
        size_t len = strlen(f);
        n += varint_put(p + n, (uint32_t)len);
        memcpy(p + n, f, len);
        n += len;
        if (type == MT_SUBSCRIBE)
            p[n++] = (uint8_t)pick(b, 3);
    }
    begin(b, &e, NULL, KEY_SESSION);
    emit(b, &e, type, 0, p, n, 0);
}

/* change a byte of a link packet, never into or out of the zero delimiter
 * (so the packet boundaries stay, and its CRC-16 fails) */
static void flip(uint8_t *p)
{
    *p = (uint8_t)(*p ^ 0x40u) ? (uint8_t)(*p ^ 0x40u) : 0x01u;
}

/* a CBOR map: 1 value (float32 or integer sixteenths), 2 battery per
 * mille, 3 RSSI in dBm, 4 unit, 5 a ratio as a half float, 6 an array */
static size_t cbor_payload(struct batch *b, int32_t v, uint8_t *p, size_t cap)
{
    static const char *const units[] = { "C", "hPa", "l/min", "V", "%RH", "ppm" };
    struct cbor_w w = { p, cap, 0, 0 };
    unsigned battery = 500u + pick(b, 500), unit = pick(b, 6), frac = 1u + pick(b, 255);
    int32_t rssi = -30 - (int32_t)pick(b, 70);
    unsigned i, items = pick(b, 4), exp = 0;

    cbor_head(&w, 5, 6);
    cbor_int(&w, 1);
    if (pick(b, 2))
        cbor_f32(&w, (float)v / 16.0f);
    else
        cbor_int(&w, v);
    cbor_int(&w, 2);
    cbor_int(&w, (int32_t)battery);
    cbor_int(&w, 3);
    cbor_int(&w, rssi);
    cbor_int(&w, 4);
    cbor_text(&w, units[unit]);
    cbor_int(&w, 5);
    /* frac/16 in IEEE 754 binary16: normalise frac to 1.xxxxxxxxxx */
    while ((frac << exp) < 0x400u)
        exp++;
    cbor_f16_bits(&w, (uint16_t)((15u + 10u - 4u - exp) << 10 | ((frac << exp) & 0x3ffu)));
    cbor_int(&w, 6);
    cbor_head(&w, 4, items);
    for (i = 0; i < items; i++)
        cbor_int(&w, (int32_t)pick(b, 2000) - 1000);
    return w.err ? 0 : w.n;
}

static void publish(struct batch *b, unsigned content, int elective, int corrupt)
{
    const char *topic = topic_names[pick(b, NTOPICS)];
    int32_t v = value16(b, -40, 120);
    uint8_t p[64];
    size_t n = 0;
    unsigned flags = pick(b, 2) << FL_QOS_SHIFT;
    struct fenc e;

    if (pick(b, 4) == 0)
        flags |= FL_RETAIN;

    switch (content) {
    case CF_TEXT:
        n = (size_t)snprintf((char *)p, sizeof p, "%s%ld.%04ld", v < 0 ? "-" : "",
                             (long)((v < 0 ? -v : v) / 16), (long)((v < 0 ? -v : v) % 16 * 625));
        break;
    case CF_BINARY:
        p[0] = (uint8_t)((uint32_t)v >> 24);
        p[1] = (uint8_t)((uint32_t)v >> 16);
        p[2] = (uint8_t)((uint32_t)v >> 8);
        p[3] = (uint8_t)v;
        n = 4;
        break;
    default:
        n = cbor_payload(b, v, p, sizeof p);
        break;
    }
    begin(b, &e, topic, corrupt == 2 ? KEY_SESSION_AES : KEY_SESSION);
    if (content != CF_TEXT)
        fenc_opt_uint(&e, OPT_CONTENT, 0, content);
    fenc_opt_uint(&e, OPT_SEQ, 0, b->seq);
    if (elective)      /* an unknown elective option: skipped by the receiver */
        fenc_opt(&e, OPT_PAD, "padding", 7);
    emit(b, &e, MT_PUBLISH, flags, p, n, corrupt);
}

static void telemetry(struct batch *b)
{
    const char *topic = topic_names[pick(b, NTOPICS)];
    uint8_t p[256];
    unsigned count = 16 + pick(b, 40), i;
    int32_t v = value16(b, 0, 80), prev = 0;
    size_t n = varint_put(p, count);
    struct fenc e;

    for (i = 0; i < count; i++) {
        n += varint_put(p + n, zigzag(v - prev));
        prev = v;
        v += (int32_t)pick(b, 65) - 32;
    }
    begin(b, &e, topic, KEY_SESSION_AES);
    fenc_opt_uint(&e, OPT_SEQ, 0, b->seq);
    emit(b, &e, MT_TELEMETRY, 0, p, n, 0);
}

static void config(struct batch *b)
{
    char text[192];
    /* drawn one by one: the order of a call's arguments is unspecified */
    int32_t gain = value16(b, 0, 4);
    unsigned rate = 50 + pick(b, 950), mask = pick(b, 256);
    int level = (int)pick(b, 4), offset = (int)pick(b, 200) - 100;
    unsigned window = 4 + pick(b, 60), extra = pick(b, 3) == 0;
    int n;
    struct fenc e;

    n = snprintf(text, sizeof text,
                 "rate=%u;gain=%ld.%04ld;mask=0x%02x;name=node-%02u;level=%d;offset=%d;window=%u%s",
                 rate, (long)(gain / 16), (long)(gain % 16 * 625), mask,
                 (unsigned)(b->seq % 23u), level, offset, window, extra ? ";colour=blue" : "");
    begin(b, &e, NULL, KEY_DEVICE);
    emit(b, &e, MT_CONFIG, 0, (const uint8_t *)text, (size_t)n, 0);
}

static void event(struct batch *b)
{
    static const char *const what[] = { "door", "valve", "breaker", "pump", "fan" };
    uint8_t p[64];
    int n;
    unsigned code = pick(b, 0x10000), sev = pick(b, 4), thing = pick(b, 5);
    unsigned unit = pick(b, 12), opened = pick(b, 2), after = pick(b, 3600);
    struct fenc e;

    p[0] = (uint8_t)sev;
    p[1] = (uint8_t)(code >> 8);
    p[2] = (uint8_t)code;
    n = snprintf((char *)p + 3, sizeof p - 3, "%s %u %s after %u s", what[thing], unit,
                 opened ? "opened" : "closed", after);
    begin(b, &e, NULL, CLEAR);
    emit(b, &e, MT_EVENT, 0, p, 3 + (size_t)n, 0);
}

static void plain(struct batch *b, unsigned type)
{
    struct fenc e;

    begin(b, &e, NULL, CLEAR);
    emit(b, &e, type, 0, NULL, 0, 0);
}

static void critical(struct batch *b)
{
    struct fenc e;

    begin(b, &e, topic_names[0], CLEAR);
    fenc_opt(&e, 57, "x", 1);                  /* unknown, odd: critical */
    emit(b, &e, MT_PUBLISH, 0, (const uint8_t *)"1.0", 3, 0);
}

/* a link packet whose frame is cut short, with a good CRC-16 */
static void cut(struct batch *b)
{
    uint8_t frame[64];
    struct fenc e;
    size_t n;

    begin(b, &e, topic_names[1], CLEAR);
    n = fenc_finish(&e, frame, sizeof frame, MT_PUBLISH, 0, (const uint8_t *)"12.5", 4, 0,
                    NULL, NULL);
    if (n > 4)
        b->len += link_wrap(frame, n - 3, b->out + b->len, b->cap - b->len);
}

size_t gen_batch(uint32_t seq, uint8_t *out, size_t cap, unsigned *frames)
{
    struct batch b;
    unsigned i;
    size_t at;

    memset(&b, 0, sizeof b);
    b.out = out;
    b.cap = cap;
    b.seq = seq;
    b.rng = rng_seed(seq);
    key_device(b.keys[KEY_DEVICE]);

    send_connect(&b);
    timesync(&b);
    subscribe(&b, MT_SUBSCRIBE, 2 + pick(&b, 2));
    for (i = 0; i < 6; i++)
        publish(&b, i % 3 == 0 ? CF_TEXT : i % 3 == 1 ? CF_BINARY : CF_CBOR, i == 4, 0);
    telemetry(&b);
    telemetry(&b);
    config(&b);
    event(&b);
    plain(&b, MT_PINGREQ);
    publish(&b, CF_TEXT, 0, 1);                /* refused: authentication */
    publish(&b, CF_CBOR, 0, 2);                /* refused: authentication (AES) */
    critical(&b);                              /* refused: critical option */
    plain(&b, MT_PUBACK);                      /* refused: not from a client */
    at = b.len;
    plain(&b, MT_PINGREQ);                     /* refused: link CRC */
    if (b.len > at + 2)
        flip(out + at + 2);
    cut(&b);                                   /* refused: frame length */
    subscribe(&b, MT_UNSUBSCRIBE, 1);
    plain(&b, MT_DIAG);
    plain(&b, MT_DISCONNECT);
    *frames = b.frames;
    return b.len;
}
