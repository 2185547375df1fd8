/* A static library, so that the placement also reaches into archives. */
#include <stdint.h>

uint32_t lib_mix(uint32_t x);
uint32_t lib_cold(uint32_t x);

__attribute__((noinline)) uint32_t lib_mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    return x;
}

__attribute__((noinline)) uint32_t lib_cold(uint32_t x) { return x >> 1; }
