/*
 * The message handlers (the dispatch table is in handlers.c). Each logs
 * what it did; every double it prints is a multiple of 1/16.
 */
#define _POSIX_C_SOURCE 200809L   /* gmtime_r */
#include "proto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* sixteenths as a double: exact */
static double d16(int32_t v)
{
    return (double)v / 16.0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* a NUL-terminated copy of an option or payload; -1 if it does not fit */
static int cstr(char *dst, size_t cap, const uint8_t *src, size_t len)
{
    if (len >= cap)
        return -1;
    memcpy(dst, src, len);
    dst[len] = 0;
    return 0;
}

int h_connect(struct ctx *c, struct frame *f)
{
    uint32_t keepalive;
    size_t n;
    uint8_t ack[2] = { 0, 0 };

    if (!f->client || cstr(c->client, sizeof c->client, f->client, f->client_len))
        return -1;
    if (varint_get(f->payload, f->payload_len, &keepalive, &n) || f->payload_len < n + 2)
        return -1;
    c->epoch = f->seq;
    key_session(f->client, f->client_len, c->epoch, c->session);
    key_aes(c->session, c->session_aes);
    c->have_session = 1;
    ack[0] = (uint8_t)(f->payload[n + 1] & 1u);      /* session present */
    plog(PL_INFO, "connect client=%s epoch=%lu keepalive=%lus v%u flags=%02x key=%08lx",
         c->client, (unsigned long)c->epoch, (unsigned long)keepalive, f->payload[n],
         f->payload[n + 1], (unsigned long)be32(c->session));
    tx_reply(c, MT_CONNACK, f->id, NULL, ack, sizeof ack);
    return 0;
}

int h_disconnect(struct ctx *c, struct frame *f)
{
    plog(PL_INFO, "disconnect client=%s after %lu frames (id %u)", c->client,
         (unsigned long)c->rx_ok, f->id);
    memset(c->session, 0, sizeof c->session);
    memset(c->session_aes, 0, sizeof c->session_aes);
    c->have_session = 0;
    return 0;
}

/* days since 1970-01-01 to a civil date (proleptic Gregorian), for
 * days >= 0: eras of 400 years = 146097 days, March-based years */
static void civil(uint32_t days, int *y, unsigned *m, unsigned *d)
{
    uint32_t z = days + 719468u, era = z / 146097u, doe = z - era * 146097u;
    uint32_t yoe = (doe - doe / 1460u + doe / 36524u - doe / 146096u) / 365u;
    uint32_t doy = doe - (365u * yoe + yoe / 4u - yoe / 100u);
    uint32_t mp = (5u * doy + 2u) / 153u;

    *d = doy - (153u * mp + 2u) / 5u + 1u;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int)(yoe + era * 400u) + (*m <= 2);
}

int h_timesync(struct ctx *c, struct frame *f)
{
    uint64_t ms = (uint64_t)f->time_hi << 32 | f->time_lo;
    uint64_t prev = (uint64_t)c->clock_hi << 32 | c->clock_lo;
    uint32_t days = (uint32_t)(ms / 86400000u), in_day = (uint32_t)(ms % 86400000u);
    unsigned mon, day;
    int year;
    time_t secs;
    struct tm tm;

    if (!f->time_hi && !f->time_lo)
        return -1;
    civil(days, &year, &mon, &day);
    secs = (time_t)(ms / 1000u);
    if (!gmtime_r(&secs, &tm) || tm.tm_year + 1900 != year || (unsigned)tm.tm_mon + 1 != mon ||
        (unsigned)tm.tm_mday != day)
        plog(PL_ERROR, "time: gmtime_r disagrees");
    else
        plog(PL_DEBUG, "  day %d of the year, weekday %d", tm.tm_yday + 1, tm.tm_wday);
    plog(PL_INFO, "time %04d-%02u-%02uT%02lu:%02lu:%02lu.%03luZ step %+ld ms", year, mon, day,
         (unsigned long)(in_day / 3600000u), (unsigned long)(in_day / 60000u % 60u),
         (unsigned long)(in_day / 1000u % 60u), (unsigned long)(in_day % 1000u),
         prev ? (long)(int32_t)(uint32_t)(ms - prev) : 0L);
    c->clock_hi = f->time_hi;
    c->clock_lo = f->time_lo;
    return 0;
}

/* the filter entries of a SUBSCRIBE (with a QoS byte) or UNSUBSCRIBE */
static int filters(struct ctx *c, struct frame *f, int with_qos, uint8_t *codes, unsigned *nc)
{
    const uint8_t *p = f->payload, *end = p + f->payload_len;
    uint32_t count, len;
    size_t n;
    char filter[TOPIC_NAME];
    unsigned i;

    if (varint_get(p, (size_t)(end - p), &count, &n) || count == 0 || count > 8)
        return -1;
    p += n;
    for (i = 0; i < count; i++) {
        int r;
        unsigned qos = 0;
        if (varint_get(p, (size_t)(end - p), &len, &n) || len > (size_t)(end - p - (ptrdiff_t)n))
            return -1;
        if (cstr(filter, sizeof filter, p + n, len))
            return -1;
        p += n + len;
        if (with_qos) {
            if (p >= end)
                return -1;
            qos = *p++ & 3u;
            r = sub_add(&c->topics, filter, qos);
        } else {
            r = sub_remove(&c->topics, filter);
        }
        codes[i] = r < 0 ? 0x80 : (uint8_t)qos;
        plog(r < 0 ? PL_WARN : PL_INFO, "%s '%s' qos %u: %s", with_qos ? "subscribe" : "unsubscribe",
             filter, qos, r < 0 ? (with_qos ? "refused" : "not subscribed") : "ok");
    }
    *nc = count;
    return 0;
}

int h_subscribe(struct ctx *c, struct frame *f)
{
    uint8_t codes[8];
    unsigned n;

    if (filters(c, f, 1, codes, &n))
        return -1;
    tx_reply(c, MT_SUBACK, f->id, NULL, codes, n);
    return 0;
}

int h_unsubscribe(struct ctx *c, struct frame *f)
{
    uint8_t codes[8];
    unsigned n;

    if (filters(c, f, 0, codes, &n))
        return -1;
    tx_reply(c, MT_SUBACK, f->id, NULL, codes, n);
    return 0;
}

/* a CBOR PUBLISH payload (gen.c's cbor_payload): the value of key 1 in
 * sixteenths; the other keys are logged */
static int cbor_value(const uint8_t *p, const uint8_t *e, int32_t *v)
{
    struct cbor_item map, key, val;
    char unit[8] = "-";
    int32_t battery = -1, rssi = 0, sum = 0;
    double ratio = 0;
    uint32_t i, k, items = 0;
    int found = 0;

    if (cbor_next(&p, e, &map) || map.major != 5)
        return -1;
    for (i = 0; i < map.val; i++) {
        if (cbor_next(&p, e, &key) || key.major != 0)
            return -1;
        if (key.val == 6) {                     /* an array of integers */
            if (cbor_next(&p, e, &val) || val.major != 4)
                return -1;
            for (k = 0; k < val.val; k++) {
                struct cbor_item x;
                if (cbor_next(&p, e, &x) || x.major > 1)
                    return -1;
                sum += x.ival;
            }
            items = val.val;
            continue;
        }
        if (key.val > 6) {
            if (cbor_skip(&p, e, 1))
                return -1;
            continue;
        }
        if (cbor_next(&p, e, &val))
            return -1;
        switch (key.val) {
        case 1:
            if (val.major <= 1)
                *v = val.ival;
            else if (val.major == 7)
                *v = (int32_t)(val.f * 16.0f);
            else
                return -1;
            found = 1;
            break;
        case 2:
            battery = val.ival;
            break;
        case 3:
            rssi = val.ival;
            break;
        case 4:
            if (val.major != 3 || cstr(unit, sizeof unit, val.str, val.val))
                return -1;
            break;
        case 5:
            ratio = val.f;
            break;
        default:
            break;
        }
    }
    plog(PL_DEBUG, "  cbor unit=%s battery=%ld rssi=%ld ratio=%.4f (%.6e) items=%lu sum=%ld",
         unit, (long)battery, (long)rssi, ratio, ratio, (unsigned long)items, (long)sum);
    return found ? 0 : -1;
}

/* a PUBLISH payload's value in sixteenths; -1 if malformed */
static int pub_value(const struct frame *f, int32_t *v)
{
    char text[32], *end;
    const uint8_t *p = f->payload, *e = p + f->payload_len;
    double d;

    switch (f->content) {
    case CF_TEXT:
        if (cstr(text, sizeof text, p, f->payload_len))
            return -1;
        d = strtod(text, &end);
        if (end == text || *end)
            return -1;
        *v = (int32_t)(d * 16.0);
        return 0;
    case CF_BINARY:
        if (f->payload_len != 4)
            return -1;
        *v = (int32_t)be32(p);
        return 0;
    case CF_CBOR:
        return cbor_value(p, e, v);
    default:
        return -1;
    }
}

int h_publish(struct ctx *c, struct frame *f)
{
    char name[TOPIC_NAME];
    struct topic *t;
    int32_t v;
    unsigned i, delivered = 0, qos = (f->flags >> FL_QOS_SHIFT) & 3u;
    uint8_t ack[2];

    if (!f->topic || cstr(name, sizeof name, f->topic, f->topic_len) || pub_value(f, &v))
        return -1;
    t = topic_find(&c->topics, f->topic, f->topic_len, 1);
    if (!t) {
        plog(PL_ERROR, "publish %s: topic table full", name);
        return -1;
    }
    topic_update(t, v, f->seq, f->payload_len);
    if ((f->flags & FL_RETAIN) && f->payload_len <= sizeof t->retained) {
        memcpy(t->retained, f->payload, f->payload_len);
        t->retained_len = (uint8_t)f->payload_len;
    }
    for (i = 0; i < SUBS_MAX; i++) {
        struct sub *s = &c->topics.s[i];
        if (s->used && topic_match(s->filter, name)) {
            s->hits++;
            delivered++;
            if (s->qos)
                tx_reply(c, MT_PUBLISH, f->id, name, f->payload, f->payload_len);
        }
    }
    plog(PL_INFO, "publish %s = %.4f (n=%lu min=%.4f max=%.4f) cf=%lu%s to %u", name, d16(v),
         (unsigned long)t->count, d16(t->min), d16(t->max), (unsigned long)f->content,
         (f->flags & FL_RETAIN) ? " retained" : "", delivered);
    if (qos) {
        ack[0] = (uint8_t)(f->id >> 8);
        ack[1] = (uint8_t)f->id;
        tx_reply(c, MT_PUBACK, f->id, NULL, ack, 2);
    }
    return 0;
}

static uint32_t isqrt64(uint64_t v)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;

    while (bit > v)
        bit >>= 2;
    while (bit) {
        if (v >= r + bit) {
            v -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return (uint32_t)r;
}

/* a value as sixteenths, rounded to nearest (ties away from zero): the
 * same result on any IEEE 754 double implementation */
static int32_t to16(double x)
{
    double y = x * 16.0;

    return (int32_t)(y < 0 ? y - 0.5 : y + 0.5);
}

/* Welford's running mean and variance and a least-squares slope, in
 * double; logged in sixteenths */
static void trend(const char *name, const int32_t *s, uint32_t count)
{
    double mean = 0, m2 = 0, sx = 0, sy = 0, sxy = 0, sxx = 0, slope = 0, rms;
    uint32_t i;

    for (i = 0; i < count; i++) {
        double y = (double)s[i] / 16.0, d = y - mean, x = (double)i;
        mean += d / (double)(i + 1);
        m2 += d * (y - mean);
        sx += x;
        sy += y;
        sxy += x * y;
        sxx += x * x;
    }
    if (count > 1) {
        double den = (double)count * sxx - sx * sx;
        slope = den != 0 ? ((double)count * sxy - sx * sy) / den : 0;
    }
    rms = sqrt(m2 / (double)count);
    plog(PL_DEBUG, "  trend %s mean %.4f rms %.4f slope %+.4f per sample", name, d16(to16(mean)),
         d16(to16(rms)), d16(to16(slope)));
}

int h_telemetry(struct ctx *c, struct frame *f)
{
    const uint8_t *p = f->payload, *e = p + f->payload_len;
    int32_t s[64], v = 0, mn = INT32_MAX, mx = INT32_MIN, mean;
    int64_t sum = 0;
    uint64_t sq = 0;
    uint32_t count, x, sd;
    unsigned hist[8] = { 0 }, i;
    size_t n;
    char name[TOPIC_NAME];
    struct topic *t;

    if (!f->topic || cstr(name, sizeof name, f->topic, f->topic_len))
        return -1;
    if (varint_get(p, (size_t)(e - p), &count, &n) || count == 0 || count > 64)
        return -1;
    p += n;
    for (i = 0; i < count; i++) {
        if (varint_get(p, (size_t)(e - p), &x, &n))
            return -1;
        p += n;
        v += unzigzag(x);
        s[i] = v;
        sum += v;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    mean = (int32_t)(sum / (int64_t)count);
    for (i = 0; i < count; i++) {
        int64_t d = (int64_t)s[i] - mean;
        sq += (uint64_t)(d * d);
        hist[(uint32_t)(s[i] - mn) * 8u / (uint32_t)(mx - mn + 1)]++;
    }
    sd = isqrt64(sq / count);
    trend(name, s, count);
    t = topic_find(&c->topics, f->topic, f->topic_len, 1);
    if (t)
        topic_update(t, mean, f->seq, f->payload_len);
    plog(PL_INFO, "telemetry %s n=%lu min=%.4f max=%.4f mean=%.4f sd=%.4f", name,
         (unsigned long)count, d16(mn), d16(mx), d16(mean), d16((int32_t)sd));
    plog(PL_DEBUG, "  hist %u %u %u %u %u %u %u %u", hist[0], hist[1], hist[2], hist[3],
         hist[4], hist[5], hist[6], hist[7]);
    return 0;
}

/* one key=value of a CONFIG text: 0, or -1 for an unknown key or value */
static int config_pair(struct config *cfg, const char *key, const char *val)
{
    char *end;

    if (!strcmp(key, "rate")) {
        cfg->rate = (uint32_t)strtoul(val, &end, 10);
    } else if (!strcmp(key, "gain")) {
        cfg->gain = strtod(val, &end);
    } else if (!strcmp(key, "mask")) {
        cfg->mask = (uint32_t)strtoul(val, &end, 0);
    } else if (!strcmp(key, "window")) {
        cfg->window = (uint32_t)strtoul(val, &end, 10);
    } else if (!strcmp(key, "level")) {
        cfg->level = (int)strtol(val, &end, 10);
    } else if (!strcmp(key, "offset")) {
        cfg->offset = (int32_t)strtol(val, &end, 10);
    } else if (!strcmp(key, "name")) {
        if (strlen(val) >= sizeof cfg->name)
            return -1;
        strcpy(cfg->name, val);
        return 0;
    } else {
        return -1;
    }
    return end == val || *end ? -1 : 0;
}

int h_config(struct ctx *c, struct frame *f)
{
    char text[200], *p, *semi, *eq;
    unsigned bad = 0, good = 0;

    if (cstr(text, sizeof text, f->payload, f->payload_len))
        return -1;
    for (p = text; p && *p; p = semi) {
        semi = strchr(p, ';');
        if (semi)
            *semi++ = 0;
        eq = strchr(p, '=');
        if (!eq || (*eq = 0, config_pair(&c->cfg, p, eq + 1))) {
            plog(PL_WARN, "config: '%s' ignored", p);
            bad++;
        } else {
            good++;
        }
    }
    plog(PL_INFO, "config %s rate=%lu gain=%.4f mask=0x%08lx window=%lu level=%d offset=%+ld (%u set, %u ignored)",
         c->cfg.name, (unsigned long)c->cfg.rate, c->cfg.gain, (unsigned long)c->cfg.mask,
         (unsigned long)c->cfg.window, c->cfg.level, (long)c->cfg.offset, good, bad);
    return 0;
}

int h_event(struct ctx *c, struct frame *f)
{
    static const int level[4] = { PL_DEBUG, PL_INFO, PL_WARN, PL_ERROR };
    char text[64], thing[16], state[8];
    unsigned code, unit, after;

    (void)c;
    if (f->payload_len < 3 || cstr(text, sizeof text, f->payload + 3, f->payload_len - 3))
        return -1;
    code = (unsigned)f->payload[1] << 8 | f->payload[2];
    plog(level[f->payload[0] & 3u], "event sev=%u code=0x%04x \"%s\"", f->payload[0], code, text);
    if (sscanf(text, "%15s %u %7s after %u s", thing, &unit, state, &after) == 4)
        plog(PL_DEBUG, "  %s #%u %s, %u min %02u s", thing, unit, state, after / 60, after % 60);
    else
        plog(PL_WARN, "  event text not understood");
    return 0;
}

int h_ping(struct ctx *c, struct frame *f)
{
    plog(PL_DEBUG, "ping id=%u, %lu replies so far", f->id, (unsigned long)c->tx_frames);
    tx_reply(c, MT_PINGRESP, f->id, NULL, NULL, 0);
    return 0;
}
