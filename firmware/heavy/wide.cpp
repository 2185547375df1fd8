/*
 * A wide-character summary line per record, as a display or a UTF-16
 * protocol wants it: swprintf (newlib's wide printf engine, soft-float
 * %f %e), then read back with wcstod, wcstol and wcsstr, and counted with
 * wcslen. Returns a value over every number read back.
 */
#include "heavy.h"

#include <wchar.h>

namespace heavy {

uint32_t wide_summary(const record *recs, unsigned n)
{
    wchar_t buf[160];
    uint32_t h = 0x01000193u;
    for (unsigned i = 0; i < n; i++) {
        const record &r = recs[i];
        int len = swprintf(buf, sizeof buf / sizeof buf[0],
                           L"%s T=%.2f P=%.1e F=%g N=%lu K=%d",
                           r.station, r.temp, r.press, r.flow, r.count, r.kind);
        if (len < 0)
            continue;
        h = (h ^ (uint32_t)wcslen(buf)) * 16777619u;
        const wchar_t *at = wcsstr(buf, L"T=");
        if (!at)
            continue;
        wchar_t *end;
        double v = wcstod(at + 2, &end);
        h = (h ^ (uint32_t)(long)(v * 100.0 + (v < 0 ? -0.5 : 0.5))) * 16777619u;
        at = wcsstr(end, L"P=");
        if (at) {
            v = wcstod(at + 2, &end);
            h = (h ^ (uint32_t)(long)(v * 10.0 + 0.5)) * 16777619u;
        }
        at = wcsstr(end, L"N=");
        if (at)
            h = (h ^ (uint32_t)wcstol(at + 2, nullptr, 10)) * 16777619u;
    }
    return h;
}

} // namespace heavy
