/*
 * Reading the report back, as a receiver would: every number after a ':'
 * or '[' or ',' is converted with strtod (or strtol for integers) and
 * folded into a checksum; field names are found with std::string::find.
 * CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), bitwise.
 */
#include "heavy.h"

#include <stdlib.h>
#include <string.h>

namespace heavy {

uint32_t crc32(uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = static_cast<const unsigned char *>(data);
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

uint32_t check_report(const std::string &report)
{
    uint32_t h = 2166136261u;
    const char *s = report.c_str();
    for (size_t i = 0; i < report.size(); i++) {
        char c = s[i];
        if (c != ':' && c != '[' && c != ',')
            continue;
        const char *p = s + i + 1;
        if (!(*p == '-' || (*p >= '0' && *p <= '9')))
            continue;
        char *end;
        double v = strtod(p, &end);
        long k = strtol(p, nullptr, 10);
        /* the value to 1e-3, as an integer: the same on every correct libm */
        long long q = (long long)(v * 1000.0 + (v < 0 ? -0.5 : 0.5));
        h = (h ^ (uint32_t)q) * 16777619u;
        h = (h ^ (uint32_t)(q >> 32)) * 16777619u;
        h = (h ^ (uint32_t)k) * 16777619u;
        i = (size_t)(end - s) - 1;
    }
    static const char *const fields[] = { "\"tmean\"", "\"vrms\"", "\"kinds\"", "\"hourly\"" };
    for (const char *f : fields) {
        size_t at = 0, count = 0;
        while ((at = report.find(f, at)) != std::string::npos) {
            count++;
            at += strlen(f);
        }
        h = (h ^ (uint32_t)count) * 16777619u;
    }
    return h;
}

} // namespace heavy
