/* tgt: target presets. A target is data: CPU, clock, the cached flash
 * window, the cache geometry and timing, fast memories, counter and debug
 * registers. Every stage (trace, sim, plan, counters) reads it from here. */
#ifndef CP_TARGET_H
#define CP_TARGET_H

#include <stdint.h>

#include "util/util.h"

typedef enum tgt_repl {
    TGT_REPL_LRU,
    TGT_REPL_FIFO,
    TGT_REPL_RANDOM,
    TGT_REPL_PLRU,
} tgt_repl;

typedef struct tgt_cache {
    uint32_t size;        /* bytes */
    uint32_t ways;
    uint32_t line;        /* bytes per line, a power of two */
    tgt_repl repl;
    uint32_t hit_cycles;  /* cycles of a hit (pipeline fetch) */
    uint32_t miss_cycles; /* extra cycles of a miss (line fill) */
} tgt_cache;

typedef enum tgt_mem_kind {
    TGT_MEM_FLASH,         /* cached, allocating flash window */
    TGT_MEM_FLASH_NOALLOC, /* flash alias that looks up but never fills */
    TGT_MEM_FLASH_UNCACHED,/* flash alias that bypasses the cache */
    TGT_MEM_SRAM,
    TGT_MEM_ITCM,
    TGT_MEM_DTCM,
    TGT_MEM_PERIPH,        /* peripherals: read as zero in the emulator */
    TGT_MEM_ROM,
} tgt_mem_kind;

typedef struct tgt_mem {
    const char *name;    /* e.g. "flash", "sram", "itcm" */
    tgt_mem_kind kind;
    uint32_t base, size;
    const char *ld_region; /* linker region name emitters use, or NULL */
} tgt_mem;

#define TGT_MAX_MEMS 12

typedef struct tgt {
    const char *name;     /* "rp2040" */
    const char *board;    /* "Raspberry Pi Pico" */
    const char *cpu;      /* "cortex-m0plus", "cortex-m33", "cortex-m7" */
    uint32_t clock_hz;
    double cpi;           /* estimated core cycles per instruction */
    tgt_cache cache;
    const tgt_mem *mems;
    unsigned nmems;
    const char *fast_mem; /* name of the memory plans fill: "sram", "itcm" */
    int icache_only;      /* the cache sees instruction fetches only (data
                             reads from flash go through a separate D-cache) */
    /* Cache counters (0 when the chip has none). */
    uint32_t ctr_base, ctr_flush, ctr_hit, ctr_acc;
    /* Debug: address of DWT_PCSR. */
    uint32_t dwt_pcsr;
} tgt;

/* Presets, or NULL. */
const tgt *tgt_find(const char *name);
/* The i-th preset, or NULL past the end. */
const tgt *tgt_at(unsigned i);

/* Parses "SIZE,WAYS,LINE[,POLICY]" (SIZE takes K/M suffixes; POLICY is
 * lru, fifo, random or plru) into c; other fields of c are kept. */
int tgt_parse_cache(const char *spec, tgt_cache *c, cp_err *err);
const char *tgt_repl_name(tgt_repl r);
int tgt_parse_repl(const char *s, tgt_repl *out);
const char *tgt_mem_kind_name(tgt_mem_kind k);

/* The memory that holds addr, or NULL. */
const tgt_mem *tgt_mem_at(const tgt *t, uint32_t addr);
/* 1 when a fetch from addr goes through (and may fill) the cache. */
int tgt_is_cached(const tgt *t, uint32_t addr);

/* Sets: size / (ways * line). */
uint32_t tgt_cache_sets(const tgt_cache *c);

#endif
