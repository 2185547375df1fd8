/* smp: the on-target profiler's CPDUMP text (docs/formats/dump.md) into
 * samples. The dump travels over a serial console, so it is checked: the E
 * line's count and CRC-32 must match and the header's bucket count must be
 * reached. Console noise before CPDUMP and after E is ignored. */
#include "samples/samples.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

uint32_t smp_crc32(uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

typedef struct dl {
    const char *name;
    size_t line;
    cp_err *err;
} dl;

#define DERR(d, ...)                                                          \
    do {                                                                      \
        char m_[400];                                                         \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                 \
        cp_seterr((d)->err, "%s:%zu: %s", (d)->name, (d)->line, m_);          \
    } while (0)

static int parse_u64(const char *s, int base, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        int c = tolower((unsigned char)*s), d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

/* The header's fields. */
typedef struct dhdr {
    uint64_t buckets, samples, dropped, rate, duration_ms;
    int have_buckets, have_samples;
} dhdr;

static int header(dl *d, char *p, smp *s, dhdr *h)
{
    char *tok = strtok(p, " "); /* "CPDUMP" */
    tok = strtok(NULL, " ");
    if (!tok || strcmp(tok, "1")) {
        DERR(d, "dump version '%.20s' is not supported (this build reads 1)",
             tok ? tok : "");
        return -1;
    }
    while ((tok = strtok(NULL, " "))) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            DERR(d, "header field '%.40s' is not key=value", tok);
            return -1;
        }
        *eq = 0;
        const char *k = tok, *v = eq + 1;
        if (!strcmp(k, "cpu")) {
            snprintf(s->cpu, sizeof s->cpu, "%s", v);
            continue;
        }
        uint64_t n;
        if (parse_u64(v, 10, &n) < 0) {
            if (smp_set_extra(s, k, v, d->err) < 0)
                return -1;
            continue;
        }
        if (!strcmp(k, "buckets")) {
            h->buckets = n;
            h->have_buckets = 1;
        } else if (!strcmp(k, "samples")) {
            h->samples = n;
            h->have_samples = 1;
        } else if (!strcmp(k, "dropped"))
            h->dropped = n;
        else if (!strcmp(k, "rate_hz"))
            h->rate = n;
        else if (!strcmp(k, "duration_ms"))
            h->duration_ms = n;
        else if (smp_set_extra(s, k, v, d->err) < 0)
            return -1;
    }
    if (!h->have_buckets) {
        DERR(d, "CPDUMP header has no buckets= field");
        return -1;
    }
    return 0;
}

static int s_line(dl *d, char *p, smp *s)
{
    char *a = strtok(p + 1, " ");
    char *c = strtok(NULL, " ");
    char *x = strtok(NULL, " ");
    if (!a || !c || x || strlen(a) != 8) {
        DERR(d, "bad sample line (want 'S ADDR COUNT', ADDR 8 hex digits)");
        return -1;
    }
    uint64_t addr, count;
    if (parse_u64(a, 16, &addr) < 0 || parse_u64(c, 16, &count) < 0 ||
        strlen(c) > 16) {
        DERR(d, "bad sample line: '%.8s %.20s' is not hex", a, c);
        return -1;
    }
    /* The profilers count in 32-bit buckets (firmware/profiler/cpprof.h,
     * zephyr/profiler/codeplace_prof.c): a larger count is corruption. */
    if (count > UINT32_MAX) {
        DERR(d, "count 0x%.20s at %.8s is past 2^32: the profiler's buckets "
             "are 32-bit counters", c, a);
        return -1;
    }
    cp_err e2;
    if (smp_add(s, (uint32_t)addr, count, &e2) < 0) {
        DERR(d, "%.300s", e2.msg);
        return -1;
    }
    return 0;
}

smp *smp_from_dump(const char *data, size_t len, const char *name,
                   cp_err *err)
{
    dl d = {.name = name ? name : "(dump)", .err = err};
    smp *s = smp_new();
    char *line = malloc(len + 1);
    if (!s || !line) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    snprintf(s->source, sizeof s->source, "dump");
    dhdr h = {0};
    int state = 0; /* 0: before CPDUMP, 1: in the dump, 2: after E */
    uint32_t crc = 0;
    uint64_t nlines = 0;
    size_t pos = 0, hdr_line = 0;
    while (pos < len && state < 2) {
        size_t end = pos;
        while (end < len && data[end] != '\n')
            end++;
        size_t n = end - pos;
        memcpy(line, data + pos, n);
        line[n] = 0;
        int had_nl = end < len;
        pos = end + 1;
        d.line++;
        while (n && line[n - 1] == '\r')
            line[--n] = 0;
        if (memchr(line, 0, n)) {
            if (state == 0)
                continue; /* binary noise before the dump */
            DERR(&d, "NUL byte inside the dump");
            goto fail;
        }
        if (state == 0) {
            char *p = strstr(line, "CPDUMP ");
            if (!p)
                continue;
            if (!had_nl) {
                DERR(&d, "dump cut short: the header line has no end");
                goto fail;
            }
            crc = smp_crc32(0, p, strlen(p));
            crc = smp_crc32(crc, "\n", 1);
            hdr_line = d.line;
            if (header(&d, p, s, &h) < 0)
                goto fail;
            state = 1;
            continue;
        }
        if (line[0] == 'S' && line[1] == ' ') {
            if (!had_nl) {
                DERR(&d, "dump cut short in a sample line (no 'E' line; %"
                     PRIu64 " of %" PRIu64 " sample lines)", nlines,
                     h.buckets);
                goto fail;
            }
            crc = smp_crc32(crc, line, n);
            crc = smp_crc32(crc, "\n", 1);
            if (s_line(&d, line, s) < 0)
                goto fail;
            nlines++;
        } else if (line[0] == 'E' && line[1] == ' ') {
            char *p = line + 2;
            char *ns = strtok(p, " "), *cs = strtok(NULL, " ");
            uint64_t en, ecrc;
            if (!ns || !cs || strtok(NULL, " ") || parse_u64(ns, 10, &en) < 0 ||
                strlen(cs) > 8 || parse_u64(cs, 16, &ecrc) < 0) {
                DERR(&d, "bad end line (want 'E N CRC')");
                goto fail;
            }
            if (en != nlines) {
                DERR(&d, "end line counts %" PRIu64 " sample lines but the "
                     "dump has %" PRIu64, en, nlines);
                goto fail;
            }
            if ((uint32_t)ecrc != crc) {
                DERR(&d, "CRC mismatch: the end line says %08" PRIx64 ", the "
                     "dump's bytes give %08" PRIx32 " (corrupted on the way?)",
                     ecrc, crc);
                goto fail;
            }
            state = 2;
        } else {
            DERR(&d, "unexpected line inside the dump (want 'S ADDR COUNT' "
                 "or 'E N CRC')");
            goto fail;
        }
    }
    if (state == 0) {
        cp_seterr(err, "%s: no dump found (no 'CPDUMP' line)", d.name);
        goto fail;
    }
    if (state == 1) {
        cp_seterr(err, "%s: dump cut short: no 'E' line after %" PRIu64
                  " of %" PRIu64 " sample lines (header at line %zu)", d.name,
                  nlines, h.buckets, hdr_line);
        goto fail;
    }
    if (nlines != h.buckets) {
        cp_seterr(err, "%s: dump header says buckets=%" PRIu64 " but %" PRIu64
                  " sample lines arrived", d.name, h.buckets, nlines);
        goto fail;
    }
    smp_normalize(s);
    uint64_t total = smp_total(s);
    if (h.have_samples && total != h.samples && total + h.dropped != h.samples) {
        cp_seterr(err, "%s: dump header says samples=%" PRIu64 " but the "
                  "sample lines add up to %" PRIu64, d.name, h.samples, total);
        goto fail;
    }
    s->rate_hz = (double)h.rate;
    s->duration_s = (double)h.duration_ms / 1000.0;
    s->dropped = h.dropped;
    free(line);
    return s;
fail:
    free(line);
    smp_free(s);
    return NULL;
}

smp *smp_read_dump(const char *path, cp_err *err)
{
    char *data;
    size_t len;
    if (cp_read_file(path, &data, &len, err) < 0)
        return NULL;
    smp *s = smp_from_dump(data, len, path, err);
    free(data);
    return s;
}
