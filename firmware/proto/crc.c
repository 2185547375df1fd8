/*
 * CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, initial and final
 * XOR 0xFFFFFFFF), table built on first use; CRC-16/CCITT-FALSE
 * (polynomial 0x1021, initial value from the caller, bitwise).
 */
#include "proto.h"

static uint32_t table[256];
static int have_table;

uint32_t crc32_update(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = data;
    unsigned i, k;

    if (!have_table) {
        for (i = 0; i < 256; i++) {
            uint32_t c = i;
            for (k = 0; k < 8; k++)
                c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        have_table = 1;
    }
    crc = ~crc;
    while (len--)
        crc = table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

uint16_t crc16_ccitt(uint16_t crc, const void *data, size_t len)
{
    const uint8_t *p = data;
    unsigned k;

    while (len--) {
        crc ^= (uint16_t)(*p++ << 8);
        for (k = 0; k < 8; k++)
            crc = (uint16_t)((crc & 0x8000u) ? ((unsigned)crc << 1) ^ 0x1021u : (unsigned)crc << 1);
    }
    return crc;
}
