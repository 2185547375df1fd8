/* Private to src/emu: the virtual board's state, shared by the engine's
 * hooks (emu.c) and the memory map (memmap.c). */
#ifndef CP_EMU_INT_H
#define CP_EMU_INT_H

#include <stdint.h>
#include <time.h>
#include <unicorn/unicorn.h>

#include "emu/board.h"
#include "emu/emu.h"

#define MAX_REGIONS 32
#define PAGE 0x1000u

typedef struct region {
    uint32_t base, size;
    uint8_t *host; /* flash: our copy of its (read-only) contents */
    int cached;    /* fetches go through the cache (tgt_is_cached) */
    int periph;
    int owned;     /* host is ours to free */
    const char *name;
    struct emu *e;
} region;

/* Cached facts about one translated block. */
typedef struct binfo {
    uint32_t addr;
    uint16_t size;
    uint16_t ninsn; /* 0: empty slot */
    uint8_t flags;  /* TRC_F_* of its fetches */
    uint8_t parked; /* the block is `b .` */
    uint16_t svc;   /* offset + 1 of an SVC in the block, or 0 */
    uint16_t nrd;   /* data reads its instructions make, in order */
    uint32_t rd;    /* index in emu.rd_pool: offset of each read's insn */
} binfo;

/* The run being built: fetched, not yet written. */
typedef struct pending {
    uint32_t addr, len, ninsn;
    unsigned flags;
    int live;
} pending;

struct emu {
    emu_cfg cfg;
    uc_engine *uc;
    region reg[MAX_REGIONS];
    unsigned nreg;
    uint32_t flash_lo, flash_hi; /* span of flash-window memories */
    binfo *bt;
    size_t bt_cap, bt_used;
    uint16_t *rd_pool;       /* per read: offset of its instruction */
    size_t rd_used, rd_cap;
    const binfo *cur;        /* the block running now */
    uint32_t cur_addr;
    unsigned rd_next;        /* reads seen in it so far */
    uint8_t cbuf[8192];      /* code read from writable memory */
    uint32_t flash_used;     /* bytes of the flash copy the image fills */
    uint32_t sp;             /* emu_set_sp, or 0 */
    double last_progress;    /* elapsed() at the last progress call */
    char warn[4][160];       /* set-up notes for the user */
    unsigned nwarn;
    pending run;
    trc_writer *w;
    cp_err werr;
    int werr_set;
    emu_stats st;
    uint64_t *iters;
    size_t iters_cap;
    uint64_t iter_insns;     /* instructions of the current iteration */
    int in_iter;
    uint32_t mark;           /* free-run marker address, 0: none */
    uint64_t nmarks_stop;    /* stop when this many marks were seen */
    uint32_t last_block;
    int parked;              /* stopped at a branch to itself */
    struct timespec t0;
    board *bd;               /* the peripherals */
    const tgt_mem *rom_missing; /* the chip's ROM, not given (unmapped) */
    int rom_vectors;         /* a ROM's vector table is at 0 */
    /* Fault details from the memory hooks. */
    int fault;
    uint32_t fault_addr, fault_pc;
    int fault_size, fault_type;
};

/* The region holding addr, or NULL. */
region *emu_region_at(emu *e, uint32_t addr);
/* Maps the target's memories (flash copy, RAM, peripherals as counted MMIO,
 * --periph windows). */
int emu_map_target(emu *e, cp_err *err);
/* Load segments outside every target memory get RAM of their own (and a
 * warning); one that runs past the end of a memory is an error. */
int emu_map_segments(emu *e, cp_err *err);
/* Loads the segments at their load addresses; in harness mode also does
 * what start-up code would (.data copied, .bss zeroed). */
int emu_load(emu *e, int harness, cp_err *err);

/* "0x... (function+0x..)" for addr, into buf (fault.c). */
void emu_where(const emu *e, uint32_t addr, char *buf, size_t cap);
/* Turns a unicorn error after a run into err (the fault the memory hooks
 * saw, a missing ROM, an invalid instruction); ends the run as a fault.
 * Returns -1. */
int emu_fault(emu *e, uc_err ue, cp_err *err);

#endif
