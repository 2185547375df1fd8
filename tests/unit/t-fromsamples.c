/* plan from samples: the Thumb branch decoder that finds busy-wait loops. */
#include "plan/fromsamples.h"

#include "test.h"

typedef struct br_case {
    uint16_t h1, h2;
    int is_branch;
    int32_t delta; /* target - addr */
    uint32_t len;
} br_case;

static void t_thumb_branch(void)
{
    static const br_case c[] = {
        {0xe7fe, 0, 1, 0, 2},         /* b .          T2 */
        {0xe000, 0, 1, 4, 2},         /* b .+4        T2, forward */
        {0xd1fc, 0, 1, -4, 2},        /* bne .-4      T1 */
        {0xd0fe, 0, 1, 0, 2},         /* beq .        T1 */
        {0xdefe, 0, 0, 0, 0},         /* udf (cond 1110) */
        {0xdf00, 0, 0, 0, 0},         /* svc 0 (cond 1111) */
        {0xf7ff, 0xbffe, 1, 0, 4},    /* b.w .        T4 */
        {0xf47f, 0xaffe, 1, 0, 4},    /* bne.w .      T3 */
        {0xf000, 0x8000, 1, 4, 4},    /* beq.w .+4    T3 */
        {0xf7ff, 0xfffe, 0, 0, 0},    /* bl: a call, not a loop */
        {0x4770, 0, 0, 0, 0},         /* bx lr */
        {0x3b01, 0, 0, 0, 0},         /* subs r3, #1 */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        uint8_t b[4] = {(uint8_t)c[i].h1, (uint8_t)(c[i].h1 >> 8),
                        (uint8_t)c[i].h2, (uint8_t)(c[i].h2 >> 8)};
        uint32_t t = 0, len = 0, at = 0x10000100;
        int r = plan_thumb_branch(b, 4, at, &t, &len);
        if (r != c[i].is_branch) {
            T_FAIL("%04x %04x: branch %d, want %d", c[i].h1, c[i].h2, r,
                   c[i].is_branch);
            continue;
        }
        if (!r)
            continue;
        T_EQ((int64_t)t - at, c[i].delta);
        T_EQ(len, c[i].len);
    }
    /* a 32-bit encoding cut short is not decoded */
    uint8_t half[2] = {0xff, 0xf7};
    uint32_t t, len;
    T_EQ(plan_thumb_branch(half, 2, 0x100, &t, &len), 0);
}

static const t_case cases[] = {
    {"thumb_branch", t_thumb_branch},
    {NULL, NULL},
};

T_MAIN(cases)
