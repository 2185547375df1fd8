/* qp: Thumb control-flow classes (see thumb.h). */
#include "qplugin/thumb.h"

#include "isa/thumb.h"

static uint32_t sext(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    return (v ^ m) - m;
}

static qp_insn mk(qp_flow f, uint32_t target)
{
    qp_insn i = {f, target};
    return i;
}

static qp_insn decode16(uint32_t hw, uint32_t addr)
{
    if (hw == 0x4770 || hw == 0x46f7) /* BX LR; MOV PC, LR */
        return mk(QP_RET, 0);
    if ((hw & 0xff87) == 0x4780) /* BLX Rm (A7.7.19) */
        return mk(QP_CALL, 0);
    if ((hw & 0xff87) == 0x4700) /* BX Rm, Rm != LR: a jump */
        return mk(QP_BRANCH, 0);
    if ((hw & 0xff00) == 0xbd00) /* POP {..., PC} (A7.7.99) */
        return mk(QP_RET, 0);
    if ((hw & 0xff87) == 0x4687) /* MOV PC, Rm: a jump */
        return mk(QP_BRANCH, 0);
    if ((hw & 0xff87) == 0x4487) /* ADD PC, Rm (A7.7.4 T2): a jump */
        return mk(QP_BRANCH, 0);
    if ((hw & 0xf000) == 0xd000 && ((hw >> 8) & 0xf) < 0xe) /* B<c> T1 */
        return mk(QP_BRANCH, addr + 4 + sext((hw & 0xff) << 1, 9));
    if ((hw & 0xf800) == 0xe000) /* B T2 */
        return mk(QP_BRANCH, addr + 4 + sext((hw & 0x7ff) << 1, 12));
    if ((hw & 0xf500) == 0xb100) /* CBZ, CBNZ (A7.7.21) */
        return mk(QP_BRANCH,
                  addr + 4 + ((hw >> 3 & 0x1f) << 1) + ((hw >> 9 & 1) << 6));
    return mk(QP_PLAIN, 0);
}

static qp_insn decode32(uint32_t h1, uint32_t h2, uint32_t addr)
{
    uint32_t t;
    int lb = thumb_long_branch(h1, h2, addr, &t);
    if (lb) /* BL T1, B.W T4 (isa/thumb.h) */
        return mk(lb == THUMB_BL ? QP_CALL : QP_BRANCH, t);
    if ((h1 & 0xf800) == 0xf000 && (h2 & 0x8000)) {
        uint32_t s = h1 >> 10 & 1, j1 = h2 >> 13 & 1, j2 = h2 >> 11 & 1;
        if ((h2 & 0x5000) == 0 && ((h1 >> 6) & 0xf) < 0xe) {
            /* B<c>.W T3 */
            uint32_t imm = s << 20 | j2 << 19 | j1 << 18 | (h1 & 0x3f) << 12 |
                           (h2 & 0x7ff) << 1;
            return mk(QP_BRANCH, addr + 4 + sext(imm, 21));
        }
        return mk(QP_PLAIN, 0);
    }
    /* LDM/LDMDB/POP.W with PC in the list (A7.7.41, A7.7.42) */
    if (((h1 & 0xffd0) == 0xe890 || (h1 & 0xffd0) == 0xe910) && (h2 & 0x8000))
        return mk(QP_RET, 0);
    /* LDR PC, [...] (A7.7.43): from the stack a return, else a jump */
    if (((h1 & 0xfff0) == 0xf8d0 || (h1 & 0xfff0) == 0xf850) &&
        (h2 >> 12) == 0xf)
        return mk((h1 & 0xf) == 13 ? QP_RET : QP_BRANCH, 0);
    /* TBB, TBH (A7.7.185) */
    if ((h1 & 0xfff0) == 0xe8d0 && (h2 & 0xffe0) == 0xf000)
        return mk(QP_BRANCH, 0);
    return mk(QP_PLAIN, 0);
}

qp_insn qp_decode(const uint8_t *p, size_t n, uint32_t addr)
{
    uint32_t h1 = (uint32_t)p[0] | (uint32_t)p[1] << 8;
    if (n < 4)
        return decode16(h1, addr);
    uint32_t h2 = (uint32_t)p[2] | (uint32_t)p[3] << 8;
    return decode32(h1, h2, addr);
}
