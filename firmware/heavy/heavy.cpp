/*
 * The heavy workload's entry points. One codeplace_iteration() ingests
 * heavy::kRecords text records (two formats), parses them, aggregates them
 * per station, renders and re-reads a report, and folds a CRC-32 of
 * everything into codeplace_result:
 *   result = (result ^ crc) * 16777619 + stations
 * starting from 0x811c9dc5. The inputs follow from the iteration number
 * alone; the arithmetic is IEEE double (soft float on both CPUs).
 */
extern "C" {
#include "codeplace.h"
}
#include "heavy.h"

#include <string.h>

extern "C" volatile uint32_t codeplace_result;
volatile uint32_t codeplace_result;

namespace {
uint32_t seq;
char text[heavy::kLine];
heavy::record recs[heavy::kRecords];
}

extern "C" void codeplace_init(void)
{
    codeplace_runtime_init();
    seq = 0;
    codeplace_result = 0x811c9dc5u;
}

extern "C" void codeplace_iteration(void)
{
    unsigned i, n = 0;
    uint32_t crc = 0;

    seq++;
    for (i = 0; i < heavy::kRecords; i++) {
        size_t len = heavy::make_record(text, sizeof text, seq, i);
        crc = heavy::crc32(crc, text, len);
        if (heavy::parse_record(text, &recs[n]) == 0)
            n++;
    }
    std::string report;
    unsigned stations = heavy::build_report(recs, n, seq, report);
    crc = heavy::crc32(crc, report.data(), report.size());
    uint32_t chk = heavy::check_report(report);
    crc = heavy::crc32(crc, &chk, sizeof chk);
    uint32_t more[3] = {
        heavy::derive(recs, n),
        heavy::wide_summary(recs, n),
        heavy::index_words(report),
    };
    crc = heavy::crc32(crc, more, sizeof more);
    codeplace_result = (codeplace_result ^ crc) * 16777619u + stations + n;
}
