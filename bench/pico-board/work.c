/* The same code on the board and on the host: 32-bit signed and unsigned
 * division and remainder, 64-bit division, single-precision float (the
 * operations the RP2040 ROM rounds as IEEE 754 does). */
#include "work.h"

uint32_t work(uint32_t seed)
{
    uint32_t h = 2166136261u, x = seed;
    for (int i = 1; i <= 64; i++) {
        x = x * 1103515245u + 12345u;
        int32_t a = (int32_t)x, b = (int32_t)((x >> 7) | 1);
        int32_t bs = (i & 1) ? b : -b;
        h = (h ^ (uint32_t)(a / bs)) * 16777619u;
        h = (h ^ (uint32_t)(a % bs)) * 16777619u;
        uint32_t ub = (x >> (i % 29)) | 1;
        h = (h ^ (x / ub)) * 16777619u;
        h = (h ^ (x % ub)) * 16777619u;
        uint64_t w = ((uint64_t)x << 32) | h;
        h = (h ^ (uint32_t)(w / (ub | 0x10000u))) * 16777619u;
        float f = (float)(int32_t)(x >> 8) / (float)(i * 7 + 1);
        f = f * 1.5f - 3.25f;
        h = (h ^ (uint32_t)(int32_t)f) * 16777619u;
    }
    return h;
}
