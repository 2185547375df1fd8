/* thumb: the Thumb long branches GNU ld may route through a stub. */
#ifndef CP_ISA_THUMB_H
#define CP_ISA_THUMB_H

#include <stdint.h>

enum thumb_long { THUMB_NONE = 0, THUMB_BL = 1, THUMB_BW = 2 };

/* The halfwords h1, h2 at addr as a BL (encoding T1, ARMv7-M Architecture
 * Reference Manual A7.7.18; ARMv6-M A6.7.13) or a B.W (encoding T4,
 * A7.7.12): THUMB_BL or THUMB_BW with *target the branch's destination,
 * or THUMB_NONE. These are the only branches GNU ld gives a long-branch
 * stub: a call through a register (BLX Rm, a function pointer) reaches
 * any address and never goes through one. */
int thumb_long_branch(uint32_t h1, uint32_t h2, uint32_t addr,
                      uint32_t *target);

#endif
