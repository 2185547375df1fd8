/*
 * The log: printf-style lines with a prefix (tick, level letter) formatted
 * by vsnprintf, appended to a PLOG_RING-byte ring that wraps; its contents
 * and write position give a CRC-32 digest.
 */
#include "proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char ring[PLOG_RING];
static size_t head;
static uint32_t lines, tick, sub;

void plog_init(void)
{
    memset(ring, 0, sizeof ring);
    head = 0;
    lines = tick = sub = 0;
}

void plog_tick(uint32_t seq)
{
    tick = seq;
    sub = 0;
}

static void append(const char *s, size_t n)
{
    while (n) {
        size_t k = PLOG_RING - head;
        if (k > n)
            k = n;
        memcpy(ring + head, s, k);
        head = (head + k) % PLOG_RING;
        s += k;
        n -= k;
    }
}

void plog(int level, const char *fmt, ...)
{
    static const char letters[] = "DIWE";
    char line[160];
    va_list ap;
    int n, m;

    n = snprintf(line, sizeof line, "[%05lu.%03u] %c ", (unsigned long)tick, (unsigned)sub++,
                 letters[level & 3]);
    if (n < 0)
        return;
    va_start(ap, fmt);
    m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        return;
    n += m;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;      /* cut to the buffer */
    line[n++] = '\n';
    append(line, (size_t)n);
    lines++;
}

void plog_hex(int level, const char *what, const uint8_t *p, size_t len)
{
    char hex[2 * 24 + 1];
    size_t i, n = len < 24 ? len : 24;

    for (i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", p[i]);
    hex[2 * n] = 0;
    plog(level, "%s [%u] %s%s", what, (unsigned)len, hex, len > n ? "..." : "");
}

uint32_t plog_digest(void)
{
    uint32_t c = crc32_update(0, ring, sizeof ring);
    uint8_t h[4] = { (uint8_t)head, (uint8_t)(head >> 8), (uint8_t)lines, (uint8_t)(lines >> 8) };

    return crc32_update(c, h, sizeof h);
}

uint32_t plog_lines(void)
{
    return lines;
}

const char *plog_ring(size_t *at)
{
    *at = head;
    return ring;
}
