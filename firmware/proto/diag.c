/*
 * The diagnostics request: the topic table sorted by traffic (qsort) into
 * the log, and a JSON document of the receiver's state (snprintf with
 * %e and %g, 64-bit integers, escaped strings, a base64 field) whose
 * length and CRC-32 are logged and which goes out as a DIAG reply in
 * pieces.
 */
#include "proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double d16(int32_t v)
{
    return (double)v / 16.0;
}

struct jbuf {
    char *p;
    size_t cap, n;
    int err;
};

static void jprintf(struct jbuf *j, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void jprintf(struct jbuf *j, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (j->err)
        return;
    va_start(ap, fmt);
    n = vsnprintf(j->p + j->n, j->cap - j->n, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= j->cap - j->n)
        j->err = 1;
    else
        j->n += (size_t)n;
}

/* a JSON string (RFC 8259 7): quotes, backslash and controls escaped */
static void jstring(struct jbuf *j, const char *s)
{
    jprintf(j, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            jprintf(j, "\\%c", ch);
        else if (ch < 0x20)
            jprintf(j, "\\u%04x", ch);
        else
            jprintf(j, "%c", ch);
    }
    jprintf(j, "\"");
}

/* RFC 4648 4 base64 with padding */
static void jbase64(struct jbuf *j, const uint8_t *p, size_t len)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char out[5];
    size_t i;

    jprintf(j, "\"");
    for (i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        out[0] = abc[v >> 18];
        out[1] = abc[(v >> 12) & 63u];
        out[2] = i + 1 < len ? abc[(v >> 6) & 63u] : '=';
        out[3] = i + 2 < len ? abc[v & 63u] : '=';
        out[4] = 0;
        jprintf(j, "%s", out);
    }
    jprintf(j, "\"");
}

static size_t render_json(const struct ctx *c, const struct topic *const *list, unsigned n,
                          char *out, size_t cap)
{
    static const char *const names[FE_COUNT] = {
        "ok", "short", "varint", "length", "option", "critical", "marker",
        "nonce", "key", "auth", "type", "link",
    };
    struct jbuf j = { out, cap, 0, 0 };
    unsigned long long ms = (unsigned long long)c->clock_hi << 32 | c->clock_lo;
    unsigned i;

    jprintf(&j, "{\"seq\":%lu,\"clock_ms\":%llu,\"client\":", (unsigned long)c->seq, ms);
    jstring(&j, c->client);
    jprintf(&j, ",\"gain\":%.7g,\"topics\":[", c->cfg.gain);
    for (i = 0; i < n; i++) {
        const struct topic *t = list[i];
        jprintf(&j, "%s{\"name\":", i ? "," : "");
        jstring(&j, t->name);
        jprintf(&j, ",\"n\":%lu,\"min\":%.6e,\"max\":%.7g,\"retained\":%u}",
                (unsigned long)t->count, d16(t->min), d16(t->max), (unsigned)t->retained_len);
    }
    jprintf(&j, "],\"errors\":{");
    for (i = 1; i < FE_COUNT; i++)
        jprintf(&j, "%s\"%s\":%lu", i > 1 ? "," : "", names[i], (unsigned long)c->errors[i]);
    jprintf(&j, "},\"session\":");
    jbase64(&j, c->session, 10);
    jprintf(&j, "}");
    return j.err ? 0 : j.n;
}

static int by_count(const void *a, const void *b)
{
    const struct topic *x = *(const struct topic *const *)a, *y = *(const struct topic *const *)b;

    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);       /* names are unique: a total order */
}

int h_diag(struct ctx *c, struct frame *f)
{
    const struct topic *list[TOPICS_MAX];
    unsigned n = 0, i, subs = 0;
    const uint32_t *e = c->errors;
    static char json[2048];
    size_t len;
    uint32_t check;
    unsigned numbers = 0;

    for (i = 0; i < TOPICS_MAX; i++)
        if (c->topics.t[i].used)
            list[n++] = &c->topics.t[i];
    for (i = 0; i < SUBS_MAX; i++)
        subs += c->topics.s[i].used;
    qsort(list, n, sizeof list[0], by_count);
    plog(PL_INFO, "diag id=%u: %u topics, %u subscriptions, rx %lu ok %lu bad, tx %lu crc %08lx",
         f->id, n, subs, (unsigned long)c->rx_ok, (unsigned long)c->rx_bad,
         (unsigned long)c->tx_frames, (unsigned long)c->tx_crc);
    for (i = 0; i < n && i < 10; i++) {
        const struct topic *t = list[i];
        int32_t avg = (int32_t)(t->sum_lo / (int32_t)t->count);
        plog(PL_INFO, "  %-24s n=%-4lu %6luB %9.4f..%-9.4f avg %9.4f ewma %9.4f #%08lx", t->name,
             (unsigned long)t->count, (unsigned long)t->bytes, d16(t->min), d16(t->max),
             d16(avg), d16((int32_t)(t->ewma * 16.0f)), (unsigned long)t->digest);
    }
    for (i = 0; i < SUBS_MAX; i++)
        if (c->topics.s[i].used)
            plog(PL_DEBUG, "  sub %-22s q%u hits %lu", c->topics.s[i].filter,
                 c->topics.s[i].qos, (unsigned long)c->topics.s[i].hits);
    plog(PL_INFO, "  errors short %lu varint %lu length %lu option %lu critical %lu marker %lu "
         "nonce %lu key %lu auth %lu type %lu link %lu", (unsigned long)e[FE_SHORT],
         (unsigned long)e[FE_VARINT], (unsigned long)e[FE_LENGTH], (unsigned long)e[FE_OPTION],
         (unsigned long)e[FE_CRITICAL], (unsigned long)e[FE_MARKER], (unsigned long)e[FE_NONCE],
         (unsigned long)e[FE_KEY], (unsigned long)e[FE_AUTH], (unsigned long)e[FE_TYPE],
         (unsigned long)e[FE_LINK]);
    plog_hex(PL_DEBUG, "session", c->session, 32);
    len = render_json(c, list, n, json, sizeof json);
    check = json_check(json, len, &numbers);
    plog(check ? PL_INFO : PL_ERROR, "  json %u bytes, %u numbers, crc %08lx, check %08lx: %.40s...",
         (unsigned)len, numbers, (unsigned long)crc32_update(0, json, len),
         (unsigned long)check, json);
    for (i = 0; i < len; i += 200)
        tx_reply(c, MT_DIAG, f->id, NULL, (const uint8_t *)json + i, len - i < 200 ? len - i : 200);
    return 0;
}
