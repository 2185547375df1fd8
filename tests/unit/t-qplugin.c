/* qp: the Thumb control-flow classes the QEMU recorder follows calls,
 * returns and handler entries with. Encodings and targets as GNU as
 * assembles them and objdump prints them (arm-none-eabi, -mcpu=cortex-m3). */
#include "qplugin/thumb.h"

#include "test.h"

typedef struct dcase {
    uint32_t addr;
    uint16_t h1, h2; /* h2 0: a 16-bit instruction */
    qp_flow flow;
    uint32_t target;
    const char *what;
} dcase;

static const dcase cases_t[] = {
    {0x00, 0x4770, 0, QP_RET, 0, "bx lr"},
    {0x02, 0xbd10, 0, QP_RET, 0, "pop {r4, pc}"},
    {0x04, 0x46f7, 0, QP_RET, 0, "mov pc, lr"},
    {0x06, 0x4798, 0, QP_CALL, 0, "blx r3"},
    {0x08, 0x4718, 0, QP_BRANCH, 0, "bx r3"},
    {0x0a, 0xf001, 0xf816, QP_CALL, 0x103a, "bl 103a"},
    {0x0e, 0xf001, 0xb815, QP_BRANCH, 0x103c, "b.w 103c"},
    {0x12, 0xd0f5, 0, QP_BRANCH, 0x0, "beq.n 0"},
    {0x14, 0xf041, 0x8011, QP_BRANCH, 0x103a, "bne.w 103a"},
    {0x18, 0xb108, 0, QP_BRANCH, 0x1e, "cbz r0, 1e"},
    {0x1a, 0xf85d, 0xfb04, QP_RET, 0, "ldr.w pc, [sp], #4"},
    {0x1e, 0xe8bd, 0x8ff0, QP_RET, 0, "ldmia.w sp!, {r4-r11, pc}"},
    {0x22, 0xe8df, 0xf000, QP_BRANCH, 0, "tbb [pc, r0]"},
    {0x26, 0x4408, 0, QP_PLAIN, 0, "add r0, r1"},
    {0x28, 0xf8d1, 0x0000, QP_PLAIN, 0, "ldr.w r0, [r1]"},
    {0x2c, 0xe7e8, 0, QP_BRANCH, 0x0, "b.n 0"},
    {0x2e, 0xf8d0, 0xf004, QP_BRANCH, 0, "ldr.w pc, [r0, #4]"},
    {0x32, 0xb909, 0, QP_BRANCH, 0x38, "cbnz r1, 38"},
    {0x34, 0xbf00, 0, QP_PLAIN, 0, "nop"},
    {0x36, 0x4487, 0, QP_BRANCH, 0, "add pc, r0"},
    {0x2002, 0xf7fd, 0xfffd, QP_CALL, 0x0, "bl 0 (backwards)"},
    {0x2006, 0xf7fd, 0xbffb, QP_BRANCH, 0x0, "b.w 0 (backwards)"},
    {0x200a, 0xf6fd, 0xaff9, QP_BRANCH, 0x0, "blt.w 0 (backwards)"},
    {0x40, 0xf3ef, 0x8009, QP_PLAIN, 0, "mrs r0, psp (not a branch)"},
};

static void decode(void)
{
    for (size_t i = 0; i < sizeof cases_t / sizeof cases_t[0]; i++) {
        const dcase *c = &cases_t[i];
        uint8_t b[4] = {(uint8_t)c->h1, (uint8_t)(c->h1 >> 8), (uint8_t)c->h2,
                        (uint8_t)(c->h2 >> 8)};
        qp_insn d = qp_decode(b, c->h2 || (c->h1 >> 11) >= 0x1d ? 4 : 2,
                              c->addr);
        if (d.flow != c->flow || d.target != c->target)
            T_FAIL("%s: flow %d target 0x%x, want %d 0x%x", c->what,
                   (int)d.flow, d.target, (int)c->flow, c->target);
    }
}

static const t_case cases[] = {
    {"decode", decode},
    {NULL, NULL},
};

T_MAIN(cases)
