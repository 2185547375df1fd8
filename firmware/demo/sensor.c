/*
 * The input side: every iteration "receives" DEMO_SENSORS text lines whose
 * values follow from the iteration number (a xorshift generator seeded with
 * it), in two formats a gateway might see, and parses them back.
 *
 *   key=value: "id=S03 t=21.375 h=48.20 p=1008.64 a=-12,33,1002 f=0x01a4"
 *   CSV:       "S04;-3.250;91.5;1021.07;210;-45;987;1b4"
 *
 * The first is parsed with sscanf, the second with strtod/strtol/strtoul.
 */
#include "demo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t demo_rand(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

static long spread(uint32_t *st, long lo, long hi)
{
    return lo + (long)(demo_rand(st) % (uint32_t)(hi - lo + 1));
}

size_t demo_make_line(char *buf, size_t len, uint32_t seq, unsigned idx)
{
    uint32_t st = (seq * 2654435761u) ^ (idx * 40503u) ^ 0x9e3779b9u;
    long t_milli, h_centi, p_centi, ax, ay, az;
    unsigned flags;
    int n;

    if (st == 0)
        st = 1;
    (void)demo_rand(&st);
    t_milli = spread(&st, -20000, 45000);
    h_centi = spread(&st, 500, 9950);
    p_centi = spread(&st, 95000, 104000);
    ax = spread(&st, -1500, 1500);
    ay = spread(&st, -1500, 1500);
    az = spread(&st, -300, 1800);
    flags = (unsigned)(demo_rand(&st) & 0xffffu);

    if (idx % 3 != 2) {
        n = snprintf(buf, len,
                     "id=S%02u t=%s%ld.%03ld h=%ld.%02ld p=%ld.%02ld a=%ld,%ld,%ld f=0x%04x\n",
                     idx, t_milli < 0 ? "-" : "", labs(t_milli) / 1000,
                     labs(t_milli) % 1000, h_centi / 100, h_centi % 100,
                     p_centi / 100, p_centi % 100, ax, ay, az, flags);
    } else {
        n = snprintf(buf, len, "S%02u;%s%ld.%03ld;%ld.%02ld;%ld.%02ld;%ld;%ld;%ld;%x\n",
                     idx, t_milli < 0 ? "-" : "", labs(t_milli) / 1000,
                     labs(t_milli) % 1000, h_centi / 100, h_centi % 100,
                     p_centi / 100, p_centi % 100, ax, ay, az, flags);
    }
    if (n < 0)
        return 0;
    return (size_t)n < len ? (size_t)n : len - 1;
}

static int parse_kv(const char *line, struct reading *r)
{
    int n = sscanf(line, "id=%7s t=%lf h=%lf p=%lf a=%ld,%ld,%ld f=%x",
                   r->id, &r->temp, &r->hum, &r->press,
                   &r->ax, &r->ay, &r->az, &r->flags);
    return n == 8 ? 0 : -1;
}

static const char *field(const char *p, char sep)
{
    const char *q = strchr(p, sep);
    return q ? q + 1 : NULL;
}

static int parse_csv(const char *line, struct reading *r)
{
    const char *p = line;
    const char *semi = strchr(p, ';');
    char *end;
    size_t idlen;

    if (!semi)
        return -1;
    idlen = (size_t)(semi - p);
    if (idlen == 0 || idlen >= sizeof r->id)
        return -1;
    memcpy(r->id, p, idlen);
    r->id[idlen] = '\0';
    p = semi + 1;
    r->temp = strtod(p, &end);
    if (end == p || !(p = field(end, ';')))
        return -1;
    r->hum = strtod(p, &end);
    if (end == p || !(p = field(end, ';')))
        return -1;
    r->press = strtod(p, &end);
    if (end == p || !(p = field(end, ';')))
        return -1;
    r->ax = strtol(p, &end, 10);
    if (end == p || !(p = field(end, ';')))
        return -1;
    r->ay = strtol(p, &end, 10);
    if (end == p || !(p = field(end, ';')))
        return -1;
    r->az = strtol(p, &end, 10);
    if (end == p || !(p = field(end, ';')))
        return -1;
    r->flags = (unsigned)strtoul(p, &end, 16);
    if (end == p)
        return -1;
    return 0;
}

int demo_parse_line(const char *line, struct reading *r)
{
    memset(r, 0, sizeof *r);
    if (strncmp(line, "id=", 3) == 0)
        return parse_kv(line, r);
    return parse_csv(line, r);
}
