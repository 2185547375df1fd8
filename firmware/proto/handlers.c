/*
 * The receiver: split the batch into link packets and those into frames,
 * open the sealed ones with the key their OPT_KEY names, dispatch through the message table, and the
 * authenticated replies (the frame, then the first 8 bytes of its
 * HMAC-SHA-256 under the session key, or the device key before a session).
 */
#include "proto.h"

#include <string.h>

struct msg {
    const char *name;
    handler_fn fn;        /* NULL: a client must not send it */
    unsigned sealed;      /* 1: refused in the clear */
};

static const struct msg msgs[16] = {
    [MT_CONNECT]     = { "CONNECT", h_connect, 0 },
    [MT_CONNACK]     = { "CONNACK", NULL, 0 },
    [MT_PUBLISH]     = { "PUBLISH", h_publish, 1 },
    [MT_PUBACK]      = { "PUBACK", NULL, 0 },
    [MT_CONFIG]      = { "CONFIG", h_config, 1 },
    [MT_TELEMETRY]   = { "TELEMETRY", h_telemetry, 1 },
    [MT_EVENT]       = { "EVENT", h_event, 0 },
    [MT_SUBSCRIBE]   = { "SUBSCRIBE", h_subscribe, 1 },
    [MT_SUBACK]      = { "SUBACK", NULL, 0 },
    [MT_UNSUBSCRIBE] = { "UNSUBSCRIBE", h_unsubscribe, 1 },
    [MT_TIMESYNC]    = { "TIMESYNC", h_timesync, 1 },
    [MT_PINGREQ]     = { "PINGREQ", h_ping, 0 },
    [MT_PINGRESP]    = { "PINGRESP", NULL, 0 },
    [MT_DIAG]        = { "DIAG", h_diag, 0 },
    [MT_DISCONNECT]  = { "DISCONNECT", h_disconnect, 0 },
};

static uint8_t device_key[32];

void ctx_init(struct ctx *c)
{
    memset(c, 0, sizeof *c);
    topics_init(&c->topics);
    c->cfg.rate = 100;
    c->cfg.window = 8;
    c->cfg.gain = 1.0;
    strcpy(c->cfg.name, "unnamed");
    key_device(device_key);
}

static void tx_push(struct ctx *c, const uint8_t *p, size_t n)
{
    if (c->tx_len + n > sizeof c->tx)
        c->tx_len = 0;                 /* the link took the earlier frames */
    memcpy(c->tx + c->tx_len, p, n);
    c->tx_len += n;
    c->tx_crc = crc32_update(c->tx_crc, p, n);
    c->tx_frames++;
}

void tx_reply(struct ctx *c, unsigned type, unsigned id, const char *topic,
              const uint8_t *payload, size_t plen)
{
    uint8_t frame[256], mac[32];
    struct fenc e;
    size_t n;

    fenc_begin(&e, id);
    if (topic)
        fenc_opt(&e, OPT_TOPIC, topic, strlen(topic));
    fenc_opt_uint(&e, OPT_SEQ, 0, c->seq);
    n = fenc_finish(&e, frame, sizeof frame - 8, type, 0, payload, plen, 0, NULL, NULL);
    if (!n) {
        plog(PL_ERROR, "tx: %u-byte reply %u does not fit", (unsigned)plen, id);
        return;
    }
    hmac_sha256(c->have_session ? c->session : device_key, 32, frame, n, mac);
    memcpy(frame + n, mac, 8);
    tx_push(c, frame, n + 8);
}

static int open_frame(struct ctx *c, struct frame *f)
{
    const uint8_t *key;

    if (f->key_id == KEY_DEVICE)
        key = device_key;
    else if (f->key_id == KEY_SESSION && c->have_session)
        key = c->session;
    else if (f->key_id == KEY_SESSION_AES && c->have_session)
        key = c->session_aes;
    else
        return FE_KEY;
    if (unseal(f->key_id, key, f->nonce, f->aad, f->aad_len, f->payload, f->payload_len, f->tag))
        return FE_AUTH;
    return 0;
}

static int dispatch(struct ctx *c, struct frame *f)
{
    const struct msg *m = &msgs[f->type & 15u];

    if (!m->name)
        return FE_TYPE;
    if (!m->fn) {
        plog(PL_WARN, "rx %s id=%u: not from a client, dropped", m->name, f->id);
        return FE_TYPE;
    }
    if (m->sealed && !(f->flags & FL_SEALED)) {
        plog(PL_WARN, "rx %s id=%u: must be sealed, dropped", m->name, f->id);
        return FE_KEY;
    }
    plog(PL_DEBUG, "rx %-11s id=%-4u len=%-3u opts=%u%s%s q%u", m->name, f->id,
         (unsigned)f->payload_len, f->options, f->skipped ? " (skipped one)" : "",
         (f->flags & FL_SEALED) ? " sealed" : "", (f->flags >> FL_QOS_SHIFT) & 3u);
    return m->fn(c, f) ? FE_OPTION : 0;
}

/* one link packet: unwrap, parse, open, dispatch; 0 or an FE_* code */
static int rx_packet(struct ctx *c, const uint8_t *pkt, size_t len, struct frame *f)
{
    static uint8_t frame[LINK_MTU];
    size_t flen, used;
    int r;

    memset(f, 0, sizeof *f);
    if (link_unwrap(pkt, len, frame, sizeof frame, &flen))
        return FE_LINK;
    r = frame_parse(frame, flen, f, &used);
    if (!r && used != flen)
        r = FE_LENGTH;
    if (!r && (f->flags & FL_SEALED))
        r = open_frame(c, f);
    if (!r)
        r = dispatch(c, f);
    if (!r)
        c->rx_crc = crc32_update(c->rx_crc, frame, flen);
    return r;
}

unsigned rx_batch(struct ctx *c, uint8_t *buf, size_t len)
{
    unsigned handled = 0;
    size_t at = 0, end;
    struct frame f;
    int r;

    while (at < len) {
        for (end = at; end < len && buf[end]; end++)
            ;
        r = rx_packet(c, buf + at, end - at, &f);
        if (r) {
            c->rx_bad++;
            c->errors[r]++;
            plog(PL_WARN, "rx packet at %u (%u bytes, type %u): %s", (unsigned)at,
                 (unsigned)(end - at), f.type, frame_err_name(r));
            if (r == FE_AUTH)
                plog_hex(PL_DEBUG, "tag", f.tag, 16);
        } else {
            c->rx_ok++;
            handled++;
        }
        at = end + 1;
    }
    return handled;
}
