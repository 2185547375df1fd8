/* The work the iterations do: table-driven CRC-32, a small sort, a
 * histogram and a division-heavy step, each in its own function so that a
 * plan has sections to move. */
#include <stdint.h>
#include <string.h>

#include "work.h"

uint32_t lib_mix(uint32_t x);

static uint32_t crc_table[256];
static uint8_t buf[1024];
static uint16_t keys[64];
static uint32_t hist[16];

void work_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    for (uint32_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 37u + 11u);
}

__attribute__((noinline, noclone)) uint32_t work_crc(const uint8_t *p, uint32_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--)
        c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

__attribute__((noinline, noclone)) static void fill_keys(uint32_t seed)
{
    for (unsigned i = 0; i < 64; i++) {
        seed = lib_mix(seed + i);
        keys[i] = (uint16_t)seed;
    }
}

__attribute__((noinline, noclone)) void work_sort(void)
{
    for (unsigned i = 1; i < 64; i++) {
        uint16_t v = keys[i];
        unsigned j = i;
        while (j && keys[j - 1] > v) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = v;
    }
}

__attribute__((noinline, noclone)) uint32_t work_hist(void)
{
    memset(hist, 0, sizeof hist);
    for (unsigned i = 0; i < sizeof buf; i++)
        hist[buf[i] >> 4]++;
    uint32_t s = 0;
    for (unsigned i = 0; i < 16; i++)
        s = s * 31u + hist[i];
    return s;
}

__attribute__((noinline, noclone)) uint32_t work_div(uint32_t x)
{
    uint32_t s = 0;
    for (unsigned i = 1; i < 24; i++)
        s += (x + i * 977u) / (i * 3u + 1u) + (uint32_t)((int32_t)(x ^ i) % 7);
    return s;
}

__attribute__((noinline, noclone)) uint32_t work_rarely(uint32_t x) { return x * 5u + 3u; }

uint32_t work_iteration(uint32_t n)
{
    fill_keys(n);
    work_sort();
    buf[n & 1023] ^= (uint8_t)keys[n & 63];
    uint32_t r = work_crc(buf, sizeof buf) ^ work_hist() ^ work_div(n);
    if ((n & 15) == 15)
        r ^= work_rarely(r);
    return r;
}
