#include <stdint.h>
uint32_t work(uint32_t seed);
