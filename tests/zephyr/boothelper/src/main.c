/* A loop over a few stages of mixing, each a few hundred bytes of code, and
 * a helper, mix32(), that the start-up also runs: z_arm_platform_init()
 * (CONFIG_PLATFORM_SPECIFIC_INIT) seeds the loop with it before Zephyr
 * clears .bss and copies the relocated code to SRAM. In SRAM, mix32 would
 * be zeroes when the reset handler calls it. Its name is on no list of
 * start-up functions: only the trace shows that it runs there. */
#include <stdint.h>
#include <zephyr/kernel.h>

/* Kept across the .bss clearing. */
static __noinit uint32_t boot_seed;
volatile uint32_t loop_sink;

#define MIX(x) ((x) = ((x) ^ ((x) >> 15)) * 0x2c1b3c6dU + 0x297a2d39U)
#define MIX4(x) MIX(x); MIX(x); MIX(x); MIX(x)
#define MIX16(x) MIX4(x); MIX4(x); MIX4(x); MIX4(x)

__attribute__((noinline)) uint32_t mix32(uint32_t x)
{
    MIX16(x);
    MIX16(x);
    return x;
}

void z_arm_platform_init(void)
{
    boot_seed = mix32(0x9e3779b9U);
}

#define STAGE(name, k)                                                      \
    __attribute__((noinline)) uint32_t name(uint32_t x)                     \
    {                                                                       \
        x += k;                                                             \
        MIX16(x);                                                           \
        MIX16(x);                                                           \
        return mix32(x);                                                    \
    }
STAGE(stage_a, 0x11U)
STAGE(stage_b, 0x22U)
STAGE(stage_c, 0x33U)
STAGE(stage_d, 0x44U)
STAGE(stage_e, 0x55U)

/* The iteration mark (trace --qemu --mark loop_mark). */
__attribute__((noinline)) void loop_mark(uint32_t v)
{
    loop_sink = v;
}

int main(void)
{
    uint32_t x = boot_seed;
    for (;;) {
        x = stage_e(stage_d(stage_c(stage_b(stage_a(x)))));
        loop_mark(x);
    }
    return 0;
}
