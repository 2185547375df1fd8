/* qp: what the QEMU recorder needs to know about one Thumb instruction to
 * follow calls, returns and exception handlers: its control-flow class and,
 * for a direct branch or call, its target. Encodings from the ARMv7-M
 * Architecture Reference Manual, A5.2 (16-bit) and A5.3 (32-bit Thumb). */
#ifndef CP_QPLUGIN_THUMB_H
#define CP_QPLUGIN_THUMB_H

#include <stddef.h>
#include <stdint.h>

typedef enum qp_flow {
    QP_PLAIN = 0,  /* no change of control flow the recorder follows */
    QP_BRANCH,     /* B, B<c>, CBZ/CBNZ, B.W (target known), other jumps */
    QP_CALL,       /* BL, BLX Rm: a function call */
    QP_RET,        /* BX LR, MOV PC, LR, POP/LDM with PC, LDR PC, [SP]...:
                      a function return or an exception return */
} qp_flow;

typedef struct qp_insn {
    qp_flow flow;
    uint32_t target; /* direct branches and BL: the target; otherwise 0 */
} qp_insn;

/* Classifies the n (2 or 4) bytes at p, fetched from addr. */
qp_insn qp_decode(const uint8_t *p, size_t n, uint32_t addr);

#endif
