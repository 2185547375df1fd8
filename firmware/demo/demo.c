/*
 * The demo workload's entry points. One codeplace_iteration() handles one
 * batch of DEMO_SENSORS text lines: make (stands in for receiving), parse,
 * filter, sort, report as JSON, CRC-32 of the JSON; the CRC is folded into
 * codeplace_result. The inputs follow from the iteration number alone, so
 * the result after N iterations is the same on every board that runs the
 * same object code (the arithmetic is IEEE double/float, no randomness,
 * no timers, no uninitialised state).
 */
#include "codeplace.h"
#include "demo.h"

#include <string.h>

volatile uint32_t codeplace_result;

static uint32_t seq;
static char line[DEMO_LINE];
static char json[DEMO_JSON];
static struct reading batch[DEMO_SENSORS];

void codeplace_init(void)
{
    seq = 0;
    codeplace_result = 0x811c9dc5u;
    demo_crc32_init();
    demo_filter_init();
}

void codeplace_iteration(void)
{
    unsigned i, n = 0;
    uint32_t crc = 0;
    size_t len;

    seq++;
    for (i = 0; i < DEMO_SENSORS; i++) {
        len = demo_make_line(line, sizeof line, seq, i);
        crc = demo_crc32(crc, line, len);
        if (demo_parse_line(line, &batch[n]) == 0)
            n++;
    }
    demo_filter(batch, n, seq);
    len = demo_report(json, sizeof json, batch, n, seq);
    crc = demo_crc32(crc, json, len);
    codeplace_result = (codeplace_result ^ crc) * 16777619u + n;
}
