/*
 * The heavy workload (docs/firmware.md, "The heavy workload"): a log
 * ingester on newlib, libstdc++ and libgcc. C++17, no exceptions, no RTTI,
 * no global constructors.
 */
#ifndef HEAVY_H
#define HEAVY_H

#include <stddef.h>
#include <stdint.h>
#include <string>

namespace heavy {

/* Records per iteration, and the bytes of one text record. */
constexpr unsigned kRecords = 12;
constexpr size_t kLine = 160;

/* One parsed record: a station, a time, four readings, a counter. */
struct record {
    char station[16];
    long long when;      /* seconds since 1970-01-01 UTC (mktime, TZ unset) */
    double temp, press, flow, volt;
    unsigned long count;
    int kind;            /* which text format the record came in */
};

/* xorshift32 seeded from the iteration number: the only source of input. */
struct rng {
    uint32_t s;
    explicit rng(uint32_t seed) : s(seed * 2654435761u + 0x9e3779b9u) { if (!s) s = 1; }
    uint32_t next() { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return s; }
    /* a value in [lo, hi) with 1/1000 steps */
    double range(double lo, double hi) { return lo + (hi - lo) * (double)(next() % 1000u) / 1000.0; }
};

/* records.cpp: make record i of iteration seq as text (snprintf, gmtime_r,
 * strftime); parse it back (sscanf, strtod, strtol, strtoul, mktime). */
size_t make_record(char *out, size_t cap, uint32_t seq, unsigned i);
int parse_record(const char *text, record *r);

/* ledger.cpp: aggregate records per station (std::map<std::string,...>),
 * sort (qsort), render a report into a std::string (snprintf %e %g %f,
 * strftime). Returns the number of stations. */
unsigned build_report(const record *recs, unsigned n, uint32_t seq, std::string &out);

/* check.cpp: read the report back (strtod, strtol, std::string::find) and
 * return a value that depends on every number in it; CRC-32 of bytes. */
uint32_t check_report(const std::string &report);

/* physics.cpp: derived quantities through libm (double and float). */
uint32_t derive(const record *recs, unsigned n);

/* wide.cpp: a wide-character line per record, read back. */
uint32_t wide_summary(const record *recs, unsigned n);

/* index.cpp: an index of the report's words (std::unordered_map,
 * std::set, std::vector + std::sort, erase); a value over it. */
uint32_t index_words(const std::string &report);
uint32_t crc32(uint32_t crc, const void *data, size_t len);

} // namespace heavy

#endif
