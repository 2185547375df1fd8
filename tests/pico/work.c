/* The work the iterations do: table-driven CRC-32, a small sort, a
 * histogram, a division-heavy step and 40 mixing stages of about 400 bytes
 * each (more code per iteration than the RP2040's 16 KiB XIP cache holds,
 * some stages every iteration, some every other), each in its own function
 * so that a plan has sections to move. */
#include <stdint.h>
#include <string.h>

#include "work.h"

uint32_t lib_mix(uint32_t x);

static uint32_t crc_table[256];
static uint8_t buf[1024];
static uint16_t keys[64];
static uint32_t hist[16];

void work_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    for (uint32_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 37u + 11u);
}

__attribute__((noinline, noclone)) uint32_t work_crc(const uint8_t *p, uint32_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--)
        c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

__attribute__((noinline, noclone)) static void fill_keys(uint32_t seed)
{
    for (unsigned i = 0; i < 64; i++) {
        seed = lib_mix(seed + i);
        keys[i] = (uint16_t)seed;
    }
}

__attribute__((noinline, noclone)) void work_sort(void)
{
    for (unsigned i = 1; i < 64; i++) {
        uint16_t v = keys[i];
        unsigned j = i;
        while (j && keys[j - 1] > v) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = v;
    }
}

__attribute__((noinline, noclone)) uint32_t work_hist(void)
{
    for (unsigned i = 0; i < sizeof buf; i++)
        hist[buf[i] >> 4]++;
    uint32_t s = 0;
    for (unsigned i = 0; i < 16; i++) {
        s = s * 31u + hist[i];
        hist[i] = 0; /* cleared for the next call, without memset */
    }
    return s;
}

__attribute__((noinline, noclone)) uint32_t work_div(uint32_t x)
{
    uint32_t s = 0;
    for (unsigned i = 1; i < 24; i++)
        s += (x + i * 977u) / (i * 3u + 1u) + (uint32_t)((int32_t)(x ^ i) % 7);
    return s;
}

/* One stage: 24 multiply-xor-shift steps with the stage's own constants. */
#define STEP(k) x = (x ^ (x >> ((k) % 13 + 3))) * (0x9e3779b1u + (k) * 2u);
#define STEPS(n) STEP(n * 24 + 0) STEP(n * 24 + 1) STEP(n * 24 + 2) \
    STEP(n * 24 + 3) STEP(n * 24 + 4) STEP(n * 24 + 5) STEP(n * 24 + 6) \
    STEP(n * 24 + 7) STEP(n * 24 + 8) STEP(n * 24 + 9) STEP(n * 24 + 10) \
    STEP(n * 24 + 11) STEP(n * 24 + 12) STEP(n * 24 + 13) STEP(n * 24 + 14) \
    STEP(n * 24 + 15) STEP(n * 24 + 16) STEP(n * 24 + 17) STEP(n * 24 + 18) \
    STEP(n * 24 + 19) STEP(n * 24 + 20) STEP(n * 24 + 21) STEP(n * 24 + 22) \
    STEP(n * 24 + 23)
#define STAGE(n) \
    __attribute__((noinline, noclone)) static uint32_t stage_##n(uint32_t x) \
    { STEPS(n) return x; }
STAGE(0) STAGE(1) STAGE(2) STAGE(3) STAGE(4) STAGE(5) STAGE(6) STAGE(7)
STAGE(8) STAGE(9) STAGE(10) STAGE(11) STAGE(12) STAGE(13) STAGE(14) STAGE(15)
STAGE(16) STAGE(17) STAGE(18) STAGE(19) STAGE(20) STAGE(21) STAGE(22)
STAGE(23) STAGE(24) STAGE(25) STAGE(26) STAGE(27) STAGE(28) STAGE(29)
STAGE(30) STAGE(31) STAGE(32) STAGE(33) STAGE(34) STAGE(35) STAGE(36)
STAGE(37) STAGE(38) STAGE(39)

static uint32_t (*const stages[40])(uint32_t) = {
    stage_0, stage_1, stage_2, stage_3, stage_4, stage_5, stage_6, stage_7,
    stage_8, stage_9, stage_10, stage_11, stage_12, stage_13, stage_14,
    stage_15, stage_16, stage_17, stage_18, stage_19, stage_20, stage_21,
    stage_22, stage_23, stage_24, stage_25, stage_26, stage_27, stage_28,
    stage_29, stage_30, stage_31, stage_32, stage_33, stage_34, stage_35,
    stage_36, stage_37, stage_38, stage_39,
};

/* The stages: the first 24 every iteration, the others every other one,
 * each a few times. */
__attribute__((noinline, noclone)) uint32_t work_stages(uint32_t x, uint32_t n)
{
    for (unsigned i = 0; i < 40; i++)
        if (i < 24 || ((i + n) & 1))
            for (unsigned r = 0; r < 1 + (i % 3); r++)
                x = stages[i](x + r);
    return x;
}

/* A static function of the same name as one in main.c: a name list cannot
 * say which one it means. */
__attribute__((noinline, noclone)) static uint32_t twice(uint32_t x)
{
    return x * 2u + 1u;
}

static const char *const words[4] = {"ping", "echo", "request", "reply"};

__attribute__((noinline, noclone)) uint32_t work_rarely(uint32_t x) { return x * 5u + 3u; }

uint32_t work_iteration(uint32_t n)
{
    fill_keys(n);
    work_sort();
    buf[n & 1023] ^= (uint8_t)keys[n & 63];
    uint32_t r = work_crc(buf, sizeof buf) ^ work_hist() ^ work_div(n);
    r = work_stages(r, n);
    r += twice((uint32_t)strlen(words[n & 3])); /* strlen: libc's, from -lc */
    /* libgcc's __paritysi2, which memmap_default.ld runs from RAM, called
     * from flash through a stub the stock image has. */
    r ^= (uint32_t)__builtin_parity(r);
    if ((n & 15) == 15)
        r ^= work_rarely(r);
    return r;
}
