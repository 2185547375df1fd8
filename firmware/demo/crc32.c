/*
 * CRC-32 (IEEE 802.3: reflected, polynomial 0xEDB88320, initial and final
 * XOR 0xFFFFFFFF), table-driven; the table is built once in RAM.
 */
#include "demo.h"

static uint32_t crc_table[256];

void demo_crc32_init(void)
{
    uint32_t i, j, c;

    for (i = 0; i < 256; i++) {
        c = i;
        for (j = 0; j < 8; j++)
            c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        crc_table[i] = c;
    }
}

uint32_t demo_crc32(uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;

    crc = ~crc;
    while (len--)
        crc = crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}
