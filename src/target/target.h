/* tgt: targets. A target is data: CPU, clock, the cached flash window, the
 * cache geometry and timing, fast memories, counter and debug registers.
 * Targets live in text files (docs/formats/target.md), one per board or
 * QEMU machine: targets/NAME.target in the source tree, installed under
 * $(PREFIX)/share/codeplace/targets. Every stage (trace, sim, plan,
 * counters) reads them through this module.
 *
 *   cp_err err;
 *   const tgt *t = tgt_load("rp2040", &err);        // by name
 *   const tgt *u = tgt_load("boards/my.target", &err); // a user's file
 *   const tgt_mem *w = tgt_cached_window(t);       // base, size of flash
 */
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

enum tgt_flush_by {
    TGT_FLUSH_NONE,   /* the cache cannot be flushed from outside */
    TGT_FLUSH_REG,    /* write 1 to counters.base + counters.flush */
    TGT_FLUSH_SETWAY, /* invalidate by set/way through the maintenance
                         alias (RP2350) */
};

typedef struct tgt_mem {
    const char *name;    /* e.g. "flash", "sram", "itcm" */
    tgt_mem_kind kind;
    uint32_t base, size;
    const char *ld_region; /* linker region name emitters use, or NULL */
} tgt_mem;

#define TGT_MAX_MEMS 32
#define TGT_NAME_MAX 22 /* so that "NAME@HASH" fits a trace header */

typedef struct tgt {
    const char *name;     /* "rp2040" */
    const char *board;    /* "Raspberry Pi Pico" */
    const char *cpu;      /* "cortex-m0plus", "cortex-m23", "cortex-m33", ... */
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
    /* How a probe flushes the cache: TGT_FLUSH_*. */
    int ctr_flush_by;
    /* The chip whose peripherals the virtual board models ("rp2040"), or
     * NULL: peripherals read as zero (counted). */
    const char *chip;
    /* Debug: address of DWT_PCSR. */
    uint32_t dwt_pcsr;
    /* Where it came from. */
    const char *path;     /* the file it was read from */
    uint64_t hash;        /* FNV-1a 64 of the file's bytes */
    int by_path;          /* loaded from a path the user gave, not by name */
} tgt;

/* Parses a target file held in memory (text need not be NUL-terminated);
 * path names it in errors ("path:line: what is wrong"). Returns a target
 * to free with tgt_free, or NULL and err. */
tgt *tgt_parse(const char *path, const char *text, size_t len, cp_err *err);
void tgt_free(tgt *t);

/* Loads a target. spec is a NAME (NAME.target looked up in the search
 * directories, see tgt_dir_at) or a PATH (contains '/' or ends in
 * ".target"). The target stays loaded until tgt_unload_all: loading the
 * same spec again returns the same pointer. NULL and err when it cannot be
 * found or the file is wrong. */
const tgt *tgt_load(const char *spec, cp_err *err);
/* tgt_load without the error message. */
const tgt *tgt_find(const char *name);
/* Frees every loaded target (pointers from tgt_load become invalid). */
void tgt_unload_all(void);

/* The search directories, in order: each entry of $CODEPLACE_TARGETS
 * (colon-separated), <root>/targets when the binary runs from <root>/build/,
 * then the installed directory. NULL past the end. */
const char *tgt_dir_at(unsigned i);
/* Every target file (*.target) in the search directories, sorted by name;
 * a name in an earlier directory hides the same name in a later one.
 * *out (free it) holds the targets that loaded; *nbad counts files that did
 * not, with the first one's error in err. Returns 0, or -1 on no memory. */
int tgt_list(const tgt ***out, size_t *n, size_t *nbad, cp_err *err);
/* The i-th entry of tgt_list, or NULL past the end. */
const tgt *tgt_at(unsigned i);

/* What a trace header stores to name t: its name, and for a target read
 * from a user's file also the file's hash, "NAME@0123abcd". */
void tgt_header_name(const tgt *t, char *buf, size_t size);
/* 1 when a trace header's target string hdr names t (same name, and the
 * same hash when hdr carries one). */
int tgt_header_matches(const tgt *t, const char *hdr);
/* The name part of a header string, into buf. */
void tgt_header_base(const char *hdr, char *buf, size_t size);

/* Takes what --as copies from another target: the cache (geometry,
 * policy, hit and miss cycles), whether it sees data reads (icache_only)
 * and the cycles per instruction. The memory map stays dst's. */
void tgt_take_timing(tgt *dst, const tgt *from);

/* Parses "SIZE,WAYS,LINE[,POLICY]" (SIZE takes K/M suffixes; POLICY is
 * lru, fifo, random or plru) into c; other fields of c are kept. */
int tgt_parse_cache(const char *spec, tgt_cache *c, cp_err *err);
const char *tgt_repl_name(tgt_repl r);
int tgt_parse_repl(const char *s, tgt_repl *out);
const char *tgt_mem_kind_name(tgt_mem_kind k);

/* The first cached, allocating flash memory (the cached window), or NULL. */
const tgt_mem *tgt_cached_window(const tgt *t);
/* The memory named name, or NULL. */
const tgt_mem *tgt_mem_named(const tgt *t, const char *name);
/* The memory that holds addr, or NULL. */
const tgt_mem *tgt_mem_at(const tgt *t, uint32_t addr);
/* 1 when a fetch from addr goes through (and may fill) the cache. */
int tgt_is_cached(const tgt *t, uint32_t addr);

/* How an access meets t's cache. */
typedef enum tgt_via {
    TGT_VIA_NONE,   /* not through it: fast memory, an uncached alias,
                       peripherals, no memory */
    TGT_VIA_CACHE,  /* the cached window: looked up, filled on a miss */
    TGT_VIA_NOFILL, /* a non-allocating alias of the window: looked up in
                       the window's lines, never filled */
} tgt_via;

/* The one address-to-line span: the cache lines [*first, *last] (line
 * numbers, address >> line_shift) that len bytes at addr (len 0 counts
 * as 1) go through in t's cache, and how. An alias's address is moved to
 * the window it reads (the RP2040's 0x11000000 to 0x10000000). With
 * TGT_VIA_NONE *first and *last are left as they were. */
tgt_via tgt_line_span(const tgt *t, uint32_t addr, uint32_t len,
                      unsigned line_shift, uint32_t *first, uint32_t *last);
/* Its first half: where addr is looked up, *at (the address in the cached
 * window; addr itself with TGT_VIA_NONE). */
tgt_via tgt_cache_addr(const tgt *t, uint32_t addr, uint32_t *at);

/* 1 for an ARMv6-M core (cortex-m0, cortex-m0plus): no Thumb-2 long
 * branches, no DWT_PCSR. */
int tgt_is_armv6m(const tgt *t);

/* 1 when GNU ld's Thumb long-branch stub for the core is the Thumb-2 one,
 * "ldr.w pc, [pc]" and a literal (8 bytes, one instruction): ARMv7-M and
 * ARMv8-M Mainline. 0 for ARMv6-M and ARMv8-M Baseline (cortex-m23), which
 * have no ldr.w pc: their stub is push {r0}; ldr r0, [pc]; mov ip, r0;
 * pop {r0}; bx ip, a nop and a literal (16 bytes, five instructions). */
int tgt_stub_thumb2(const tgt *t);
/* The bytes of one such stub. */
unsigned tgt_stub_bytes(const tgt *t);

/* Sets: size / (ways * line). */
uint32_t tgt_cache_sets(const tgt_cache *c);

#endif
