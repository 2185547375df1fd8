/*
 * Records as text and back: what a gateway receiving sensor logs does.
 * Two formats, chosen per record:
 *   A  ST-07|2021-03-04T05:06:07Z|t=21.375|p=1008.64|f=1.2345e+01|v=3.3|n=4711
 *   B  ST-02;Thu, 04 Mar 2021 05:06:07;-3.25000;991.5;1.234500e+01;3.3;0x1b4
 * Made with gmtime_r, strftime and snprintf (soft-float %f %e %g); parsed
 * with sscanf (%[, %d, %lf), strtod, strtol, strtoul and mktime.
 */
#include "heavy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

namespace heavy {

namespace {

const char *const kMonths[12] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun",
    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

int month_index(const char *m)
{
    for (int k = 0; k < 12; k++)
        if (strncmp(m, kMonths[k], 3) == 0)
            return k;
    return -1;
}

/* mktime with TZ unset reads the struct as UTC (newlib: no TZ is GMT). */
int to_epoch(int y, int mo, int d, int h, int mi, int s, long long *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    tm.tm_isdst = 0;
    time_t t = mktime(&tm);
    if (t == (time_t)-1)
        return -1;
    *out = (long long)t;
    return 0;
}

} // namespace

size_t make_record(char *out, size_t cap, uint32_t seq, unsigned i)
{
    rng g(seq * 131u + i);
    time_t when = (time_t)(1600000000LL + (long long)seq * 25213LL + (long long)i * 613LL
                           + (long long)(g.next() % 86400u));
    struct tm tm;
    char stamp[40];
    gmtime_r(&when, &tm);
    unsigned station = g.next() % 9u;
    double temp = g.range(-30.0, 45.0);
    double press = g.range(950.0, 1050.0);
    double flow = g.range(0.0, 250.0) * g.range(0.001, 1.0);
    double volt = g.range(2.7, 3.6);
    unsigned long count = g.next() % 100000u;
    int n;

    if ((g.next() & 3u) != 0) {
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
        n = snprintf(out, cap, "ST-%02u|%s|t=%.3f|p=%.2f|f=%.4e|v=%g|n=%lu",
                     station, stamp, temp, press, flow, volt, count);
    } else {
        strftime(stamp, sizeof stamp, "%a, %d %b %Y %H:%M:%S", &tm);
        n = snprintf(out, cap, "ST-%02u;%s;%+.5f;%.1f;%e;%.6g;%#lx",
                     station, stamp, temp, press, flow, volt, count);
    }
    if (n < 0)
        return 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

int parse_record(const char *text, record *r)
{
    int y, mo, d, h, mi, s, used = 0;
    char mon[4];

    memset(r, 0, sizeof *r);
    if (sscanf(text, "%15[^|;]%n", r->station, &used) != 1)
        return -1;
    const char *p = text + used;
    if (*p == '|') {
        r->kind = 0;
        if (sscanf(p, "|%d-%d-%dT%d:%d:%dZ|t=%lf|p=%lf|%n",
                   &y, &mo, &d, &h, &mi, &s, &r->temp, &r->press, &used) != 8)
            return -1;
        p += used;
        if (strncmp(p, "f=", 2) != 0)
            return -1;
        char *end;
        r->flow = strtod(p + 2, &end);
        if (strncmp(end, "|v=", 3) != 0)
            return -1;
        r->volt = strtod(end + 3, &end);
        if (strncmp(end, "|n=", 3) != 0)
            return -1;
        r->count = strtoul(end + 3, &end, 10);
        mo -= 1;
    } else if (*p == ';') {
        r->kind = 1;
        char day[4];
        if (sscanf(p, ";%3s %d %3s %d %d:%d:%d;%n", day, &d, mon, &y, &h, &mi, &s, &used) != 7)
            return -1;
        mo = month_index(mon);
        if (mo < 0)
            return -1;
        p += used;
        char *end;
        r->temp = strtod(p, &end);
        if (*end != ';')
            return -1;
        r->press = strtod(end + 1, &end);
        if (*end != ';')
            return -1;
        if (sscanf(end + 1, "%lf;%lf;%n", &r->flow, &r->volt, &used) != 2)
            return -1;
        r->count = strtoul(end + 1 + used, &end, 0);
    } else {
        return -1;
    }
    if (strlen(r->station) < 4 || strtol(r->station + 3, nullptr, 10) < 0)
        return -1;
    return to_epoch(y, mo, d, h, mi, s, &r->when);
}

} // namespace heavy
