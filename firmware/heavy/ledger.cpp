/*
 * Aggregation and report: per-station statistics in a
 * std::map<std::string, stats>, an hourly histogram in a
 * std::map<long, double>, the records sorted with qsort, a report built
 * in a std::string from snprintf pieces (%e %g %f %lld) and strftime.
 */
#include "heavy.h"

#include <map>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

namespace heavy {

namespace {

struct stats {
    unsigned n = 0;
    double tmin = 1e300, tmax = -1e300, tsum = 0, psum = 0, flow = 0, volt = 0;
    long long first = 0, last = 0;
    unsigned long count = 0;
    std::string kinds;
};

int by_time_then_temp(const void *a, const void *b)
{
    const record *x = static_cast<const record *>(a);
    const record *y = static_cast<const record *>(b);
    if (x->when != y->when)
        return x->when < y->when ? -1 : 1;
    if (x->temp != y->temp)
        return x->temp < y->temp ? -1 : 1;
    return strcmp(x->station, y->station);
}

void append_fmt(std::string &out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void append_fmt(std::string &out, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        out.append(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void append_time(std::string &out, long long when)
{
    time_t t = (time_t)when;
    struct tm tm;
    char buf[48];
    gmtime_r(&t, &tm);
    size_t n = strftime(buf, sizeof buf, "%A %d %B %Y, %H:%M:%S (day %j)", &tm);
    out.append(buf, n);
}

} // namespace

unsigned build_report(const record *recs, unsigned n, uint32_t seq, std::string &out)
{
    record sorted[kRecords];
    if (n > kRecords)
        n = kRecords;
    memcpy(sorted, recs, n * sizeof *recs);
    qsort(sorted, n, sizeof *sorted, by_time_then_temp);

    std::map<std::string, stats> per;
    std::map<long, double> hourly;
    for (unsigned i = 0; i < n; i++) {
        const record &r = sorted[i];
        std::string key(r.station);
        key += r.kind ? "/b" : "/a";
        stats &s = per[key.substr(0, key.find('/'))];
        if (s.n == 0)
            s.first = r.when;
        s.n++;
        s.last = r.when;
        s.tmin = fmin(s.tmin, r.temp);
        s.tmax = fmax(s.tmax, r.temp);
        s.tsum += r.temp;
        s.psum += r.press;
        s.flow += r.flow;
        s.volt += r.volt * r.volt;
        s.count += r.count;
        s.kinds += key.substr(key.find('/') + 1);
        hourly[(long)(r.when / 3600)] += r.flow;
    }

    out.reserve(1024);
    out += "{\"seq\":";
    append_fmt(out, "%lu", (unsigned long)seq);
    out += ",\"from\":\"";
    if (n)
        append_time(out, sorted[0].when);
    out += "\",\"stations\":[";
    bool first = true;
    for (const auto &kv : per) {
        const stats &s = kv.second;
        if (!first)
            out += ',';
        first = false;
        out += "{\"id\":\"" + kv.first + "\"";
        append_fmt(out, ",\"n\":%u,\"tmin\":%.3f,\"tmax\":%.3f,\"tmean\":%.6g",
                   s.n, s.tmin, s.tmax, s.tsum / s.n);
        append_fmt(out, ",\"pmean\":%.2f,\"flow\":%.5e,\"vrms\":%.4f",
                   s.psum / s.n, s.flow, sqrt(s.volt / s.n));
        append_fmt(out, ",\"span\":%lld,\"count\":%lu,\"kinds\":\"%s\"}",
                   s.last - s.first, s.count, s.kinds.c_str());
    }
    out += "],\"hourly\":[";
    first = true;
    for (const auto &kv : hourly) {
        if (!first)
            out += ',';
        first = false;
        append_fmt(out, "[%ld,%g]", kv.first, kv.second);
    }
    out += "],\"to\":\"";
    if (n)
        append_time(out, sorted[n - 1].when);
    out += "\"}";
    return (unsigned)per.size();
}

} // namespace heavy
