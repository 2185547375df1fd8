/* thumb: Thumb branch decoding shared by the trace recorder, the cache
 * model and the planner (see thumb.h). */
#include "isa/thumb.h"

int thumb_long_branch(uint32_t h1, uint32_t h2, uint32_t addr,
                      uint32_t *target)
{
    if ((h1 & 0xf800) != 0xf000)
        return THUMB_NONE;
    int bl = (h2 & 0xd000) == 0xd000, bw = (h2 & 0xd000) == 0x9000;
    if (!bl && !bw)
        return THUMB_NONE;
    /* imm32 = SignExtend(S:I1:I2:imm10:imm11:'0'), I1 = NOT(J1 EOR S),
     * I2 = NOT(J2 EOR S). */
    uint32_t S = (h1 >> 10) & 1, J1 = (h2 >> 13) & 1, J2 = (h2 >> 11) & 1;
    uint32_t I1 = !(J1 ^ S), I2 = !(J2 ^ S);
    uint32_t imm = S << 24 | I1 << 23 | I2 << 22 | (h1 & 0x3ff) << 12 |
                   (h2 & 0x7ff) << 1;
    if (S)
        imm |= 0xfe000000u;
    *target = addr + 4 + imm;
    return bl ? THUMB_BL : THUMB_BW;
}
