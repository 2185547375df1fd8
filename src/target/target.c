#include "target/target.h"

#include <stdlib.h>
#include <string.h>

/* RP2040 (Raspberry Pi Pico).
 * Sources: RP2040 Datasheet, 2.2 "Address Map" (ROM 0x00000000, XIP
 * 0x10000000, SRAM 0x20000000, APB 0x40000000, SIO 0xd0000000, PPB
 * 0xe0000000); 2.6.3.1 "XIP Cache": 16 kB, two-way set-associative, 8-byte
 * lines; 2.6.3.2 "Cache flushing and maintenance" and the XIP alias table:
 * 0x10000000 cached and allocating, 0x11000000 cached non-allocating,
 * 0x12000000 uncached, 0x13000000 uncached non-allocating;
 * XIP_CTRL at 0x14000000 (2.2 "Address Map"; the XIP register list that
 * follows 2.6.3, and pico-sdk's rp2040.svd): FLUSH +0x04 (write 1 to flush,
 * a read stalls until done: 2.6.3.2 "Cache Flushing and Maintenance"),
 * CTR_HIT +0x0c, CTR_ACC +0x10: 32-bit saturating counters, write any value
 * to clear (their register descriptions).
 * Miss penalty: ~70 cycles at 125 MHz, derived from measured echo time and
 * miss-count differences on a Pico (shared/DESIGN.md), not a datasheet
 * figure. CPI 1.3 is an estimate for Cortex-M0+ (2-cycle loads and taken
 * branches, Cortex-M0+ TRM 1.6 "Instruction set summary" timings). */
static const tgt_mem rp2040_mems[] = {
    {"rom", TGT_MEM_ROM, 0x00000000, 16 * 1024, NULL},
    {"flash", TGT_MEM_FLASH, 0x10000000, 16 * 1024 * 1024, "FLASH"},
    {"flash_noalloc", TGT_MEM_FLASH_NOALLOC, 0x11000000, 16 * 1024 * 1024, NULL},
    {"flash_nocache", TGT_MEM_FLASH_UNCACHED, 0x12000000, 32 * 1024 * 1024, NULL},
    {"xip_sram", TGT_MEM_SRAM, 0x15000000, 16 * 1024, NULL},
    {"sram", TGT_MEM_SRAM, 0x20000000, 264 * 1024, "RAM"},
    {"periph", TGT_MEM_PERIPH, 0x40000000, 0x20000000, NULL},
    {"sio", TGT_MEM_PERIPH, 0xd0000000, 0x10000000, NULL},
    {"ppb", TGT_MEM_PERIPH, 0xe0000000, 0x10000000, NULL},
};

/* RP2350 (Raspberry Pi Pico 2), Arm cores.
 * Sources: RP2350 Datasheet, 2.2 "Address map" (XIP 0x10000000, SRAM
 * 0x20000000, 520 kB); 4.4 "XIP": 16 kB two-way set-associative cache with
 * 8-byte lines; 4.4.1 address aliases (0x10.. cached, 0x14.. uncached,
 * 0x18.. cache maintenance, 0x1c.. uncached untranslated); XIP_CTRL at
 * 0x400c8000 with CTR_HIT +0x0c, CTR_ACC +0x10 (32-bit saturating, write to
 * clear; the XIP_CTRL register list of the XIP chapter, and pico-sdk's
 * hardware/regs/xip.h for RP2350). There is no FLUSH register: the whole
 * cache is invalidated by set/way through the maintenance alias, a byte
 * write to 0x18000000 + offset (+ op 0) for each 8-byte line of the top
 * 16 kB of the 64 MB XIP space (pico-sdk xip_cache_invalidate_all). The
 * subsection numbers of the RP2350 datasheet were not checked against the
 * text here. The miss penalty (50 cycles at 150 MHz) is an estimate scaled
 * from the RP2040 figure, not measured. */
static const tgt_mem rp2350_mems[] = {
    {"rom", TGT_MEM_ROM, 0x00000000, 32 * 1024, NULL},
    {"flash", TGT_MEM_FLASH, 0x10000000, 0x04000000, "FLASH"},
    {"flash_nocache", TGT_MEM_FLASH_UNCACHED, 0x14000000, 0x04000000, NULL},
    {"sram", TGT_MEM_SRAM, 0x20000000, 520 * 1024, "RAM"},
    {"periph", TGT_MEM_PERIPH, 0x40000000, 0x20000000, NULL},
    {"sio", TGT_MEM_PERIPH, 0xd0000000, 0x10000000, NULL},
    {"ppb", TGT_MEM_PERIPH, 0xe0000000, 0x10000000, NULL},
};

/* i.MX RT1062 (Teensy 4.1), Cortex-M7 at 600 MHz.
 * Sources: i.MX RT1060 Reference Manual, 2.1 "Memory map" (ITCM 0x00000000,
 * DTCM 0x20000000, OCRAM 0x20200000, FlexSPI 0x60000000); 1.3 "Features":
 * 32 KB L1 I-cache and 32 KB L1 D-cache; Arm Cortex-M7 TRM (DDI 0489), 5.3
 * "L1 caches": the instruction cache is two-way set-associative with 32-byte
 * lines. FlexRAM is 512 KB shared between ITCM, DTCM and OCRAM in 32 KB banks
 * (RM 31.1); Teensy 4.1's default gives ITCM what code needs, so 512 KB is
 * the upper bound. The miss penalty (100 cycles at 600 MHz for a 32-byte
 * line from QSPI flash at 133 MHz) is an estimate. */
static const tgt_mem imxrt1062_mems[] = {
    {"itcm", TGT_MEM_ITCM, 0x00000000, 512 * 1024, "ITCM"},
    {"dtcm", TGT_MEM_DTCM, 0x20000000, 512 * 1024, "DTCM"},
    {"ocram", TGT_MEM_SRAM, 0x20200000, 512 * 1024, "RAM"},
    {"periph", TGT_MEM_PERIPH, 0x40000000, 0x20000000, NULL},
    {"flash", TGT_MEM_FLASH, 0x60000000, 8 * 1024 * 1024, "FLASH"},
    {"ppb", TGT_MEM_PERIPH, 0xe0000000, 0x10000000, NULL},
};

#define NMEM(a) (unsigned)(sizeof a / sizeof a[0])

static const tgt presets[] = {
    {
        .name = "rp2040",
        .board = "Raspberry Pi Pico",
        .cpu = "cortex-m0plus",
        .clock_hz = 125000000,
        .cpi = 1.3,
        .cache = {16 * 1024, 2, 8, TGT_REPL_LRU, 1, 70},
        .mems = rp2040_mems,
        .nmems = NMEM(rp2040_mems),
        .fast_mem = "sram",
        .ctr_base = 0x14000000,
        .ctr_flush = 0x04,
        .ctr_hit = 0x0c,
        .ctr_acc = 0x10,
        /* DWT_PCSR is optional on ARMv6-M (ARMv6-M Architecture Reference
         * Manual, DDI 0419C, C1.7.2 "Program counter sampling support");
         * the Cortex-M0+ implements it with its DWT (Cortex-M0+ TRM 7.1.3),
         * which the RP2040 has (RP2040 datasheet 2.4.7 "Debug": 2
         * watchpoints). */
        .dwt_pcsr = 0xe000101c,
    },
    {
        .name = "rp2350",
        .board = "Raspberry Pi Pico 2",
        .cpu = "cortex-m33",
        .clock_hz = 150000000,
        .cpi = 1.2,
        .cache = {16 * 1024, 2, 8, TGT_REPL_LRU, 1, 50},
        .mems = rp2350_mems,
        .nmems = NMEM(rp2350_mems),
        .fast_mem = "sram",
        .ctr_base = 0x400c8000,
        .ctr_flush = 0, /* flush by set/way writes to the maintenance alias */
        .ctr_hit = 0x0c,
        .ctr_acc = 0x10,
        .dwt_pcsr = 0xe000101c,
    },
    {
        .name = "imxrt1062",
        .board = "Teensy 4.1",
        .cpu = "cortex-m7",
        .clock_hz = 600000000,
        .cpi = 1.0,
        .cache = {32 * 1024, 2, 32, TGT_REPL_LRU, 1, 100},
        .mems = imxrt1062_mems,
        .nmems = NMEM(imxrt1062_mems),
        .fast_mem = "itcm",
        /* Cortex-M7 TRM 5.3: separate instruction and data caches. */
        .icache_only = 1,
        .dwt_pcsr = 0xe000101c,
    },
};

const tgt *tgt_find(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(presets[i].name, name))
            return &presets[i];
    return NULL;
}

const tgt *tgt_at(unsigned i)
{
    return i < sizeof presets / sizeof presets[0] ? &presets[i] : NULL;
}

static const char *const repl_names[] = {"lru", "fifo", "random", "plru"};

const char *tgt_repl_name(tgt_repl r)
{
    return (unsigned)r < 4 ? repl_names[r] : "?";
}

int tgt_parse_repl(const char *s, tgt_repl *out)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, repl_names[i])) {
            *out = (tgt_repl)i;
            return 0;
        }
    return -1;
}

const char *tgt_mem_kind_name(tgt_mem_kind k)
{
    static const char *const n[] = {"flash", "flash-noalloc", "flash-uncached",
                                    "sram", "itcm", "dtcm", "periph", "rom"};
    return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

static int is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

int tgt_parse_cache(const char *spec, tgt_cache *c, cp_err *err)
{
    char buf[128];
    if (strlen(spec) >= sizeof buf)
        return cp_seterr(err, "cache geometry '%s' is too long", spec);
    strcpy(buf, spec);
    char *parts[5];
    int n = 0;
    for (char *s = strtok(buf, ","); s && n < 5; s = strtok(NULL, ","))
        parts[n++] = s;
    if (n < 3 || n > 4)
        return cp_seterr(err, "cache geometry '%s': expected SIZE,WAYS,LINE"
                         "[,POLICY], e.g. 16K,2,8", spec);
    uint64_t size, ways, line;
    if (cp_parse_u64(parts[0], 1, &size) < 0 || size == 0 || size > (1u << 30))
        return cp_seterr(err, "cache geometry '%s': bad size '%s'", spec, parts[0]);
    if (cp_parse_u64(parts[1], 0, &ways) < 0 || ways == 0 || ways > 64)
        return cp_seterr(err, "cache geometry '%s': ways must be 1..64", spec);
    if (cp_parse_u64(parts[2], 0, &line) < 0 || !is_pow2(line) || line < 2 ||
        line > 4096)
        return cp_seterr(err, "cache geometry '%s': line bytes must be a power "
                         "of two from 2 to 4096", spec);
    if (size % (ways * line) || !is_pow2(size / (ways * line)))
        return cp_seterr(err, "cache geometry '%s': size / (ways * line) must "
                         "be a power of two", spec);
    tgt_repl r = c->repl;
    if (n == 4 && tgt_parse_repl(parts[3], &r) < 0)
        return cp_seterr(err, "cache geometry '%s': policy must be lru, fifo, "
                         "random or plru", spec);
    if (r == TGT_REPL_PLRU && !is_pow2(ways))
        return cp_seterr(err, "cache geometry '%s': tree-PLRU needs a power-of-"
                         "two number of ways", spec);
    c->size = (uint32_t)size;
    c->ways = (uint32_t)ways;
    c->line = (uint32_t)line;
    c->repl = r;
    return 0;
}

const tgt_mem *tgt_mem_at(const tgt *t, uint32_t addr)
{
    for (unsigned i = 0; i < t->nmems; i++)
        if (addr - t->mems[i].base < t->mems[i].size)
            return &t->mems[i];
    return NULL;
}

int tgt_is_cached(const tgt *t, uint32_t addr)
{
    const tgt_mem *m = tgt_mem_at(t, addr);
    return m && m->kind == TGT_MEM_FLASH;
}

uint32_t tgt_cache_sets(const tgt_cache *c)
{
    return c->size / (c->ways * c->line);
}
