/* emu: the virtual board. Runs a firmware image's own machine code in the
 * unicorn engine with the memory map of a target preset and records what
 * the cache sees (instruction fetch runs, data reads from the flash window,
 * iteration marks) into a trace (trace/trace.h). */
#ifndef CP_EMU_H
#define CP_EMU_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"
#include "target/target.h"
#include "trace/trace.h"
#include "util/util.h"

typedef struct emu emu;

typedef struct emu_range {
    uint32_t base, size;
} emu_range;

typedef enum emu_end {
    EMU_END_DONE,        /* all iterations ran */
    EMU_END_INSN_LIMIT,  /* an iteration ran past the instruction limit */
    EMU_END_TIME_LIMIT,  /* the wall-clock limit passed */
    EMU_END_INTERRUPTED, /* *interrupt was set (Ctrl-C) */
    EMU_END_STOPPED,     /* the firmware stopped by itself (free-run) */
    EMU_END_FAULT,       /* an error: unmapped access, invalid instruction */
} emu_end;

typedef struct emu_cfg {
    const img *im;
    const tgt *t;
    const emu_range *periph; /* extra peripheral ranges (read as zero) */
    unsigned nperiph;
    uint64_t insn_limit;     /* per iteration, and for init / start-up; 0: none */
    double time_limit;       /* seconds for the whole run; 0: none */
    volatile sig_atomic_t *interrupt; /* set asynchronously to stop; or NULL */
    /* Count with a hook on every instruction instead of recording blocks:
     * an independent count for checking (no trace is written). */
    int count_each;
    /* Harness mode: what the iteration function should return (counted in
     * emu_stats.ret_mismatches otherwise). */
    uint32_t expect_ret;
    /* Called about every progress_s seconds of the run (0: 1 s); a non-zero
     * return stops it (EMU_END_STOPPED, with the note emu_set_stop_note
     * left). May be NULL. */
    int (*progress)(void *arg, emu *e);
    void *progress_arg;
    double progress_s;
    /* The chip's boot ROM image (mapped at the target's rom memory), or
     * NULL. On a chip target without it, the ROM is not mapped: code that
     * calls or reads it stops with an error saying how to get one. */
    const char *rom_path;
    /* Reads of one unmodelled register, with no peripheral write between,
     * that stop the run as a polling loop (0: 1,000,000). */
    uint64_t poll_limit;
    /* Harness mode: run the image's own start-up from reset until the PC
     * reaches this address (main, or the init function) before the first
     * call; 0: copy .data and zero .bss instead. */
    uint32_t boot_until;
} emu_cfg;

/* A peripheral register read without a model. */
typedef struct emu_unmod {
    uint32_t addr;
    char name[40];
    uint64_t reads;
} emu_unmod;

typedef struct emu_stats {
    uint64_t insns;          /* all instructions run */
    uint64_t pre_insns;      /* before the first iteration (init, start-up) */
    uint64_t blocks;
    uint64_t fetch_runs, dreads, marks;
    uint64_t uncached_insns; /* run from memory the cache does not see */
    uint64_t periph_reads, periph_writes;
    uint64_t waits;          /* WFE/WFI hints the firmware waited at */
    int booted;              /* harness: the start-up reached boot_until */
    /* Reads the decoder did not foresee in their block (conditional loads
     * skipped in an IT block shift the rest): placed at the block's end. */
    uint64_t unplaced_reads;
    uint64_t iterations;     /* complete iterations */
    const uint64_t *iter_insns; /* instructions of each complete iteration */
    emu_end end;
    char stop_note[256];     /* EMU_END_STOPPED: where and why */
    /* Harness mode: r0 when the functions returned (meaningless for void
     * functions). Iterations whose return differs from emu_cfg.expect_ret,
     * and the first of them (its number and value). */
    uint32_t init_ret;
    uint64_t ret_mismatches;
    uint64_t first_mismatch;
    uint32_t first_mismatch_ret;
} emu_stats;

/* Sets up the engine: CPU model from the target, the target's memories and
 * the image's load segments. Errors name the image. */
emu *emu_new(const emu_cfg *cfg, cp_err *err);
void emu_free(emu *e);

/* Harness mode: copies .data and zeroes .bss (as start-up code would), calls
 * init once (when not 0), then iter n times, each returning to a trap
 * address; a MARK precedes each iteration. w may be NULL (count only).
 * 0 when the run ended (see emu_get_stats()->end), -1 on a fault (err
 * names the PC, the function and the address). */
int emu_run_harness(emu *e, trc_writer *w, uint32_t init, uint32_t iter,
                    uint64_t n, cp_err *err);
/* The stack pointer each harness call starts with (default: the vector
 * table's). */
void emu_set_sp(emu *e, uint32_t sp);
/* Free-run mode: starts at entry with sp, as after reset, and marks an
 * iteration each time the PC reaches mark; stops at the start of
 * iteration n. entry 0: from reset as the chip starts (on an RP2040 image
 * with a boot2 stage, boot2 in SRAM where the boot ROM leaves it, RP2040
 * datasheet 2.8.1; else the vector table's reset handler and stack). */
int emu_run_free(emu *e, trc_writer *w, uint32_t entry, uint32_t sp,
                 uint32_t mark, uint64_t n, cp_err *err);

/* Bytes UART n (0, 1) sent; NULL with *len 0 when none. */
const uint8_t *emu_uart(const emu *e, unsigned n, size_t *len);
/* The unmodelled registers read, most-read first (up to max into out);
 * *total and *nregs get all reads and registers. Returns how many. */
size_t emu_unmodelled(const emu *e, emu_unmod *out, size_t max,
                      uint64_t *total, size_t *nregs);
/* The chip the board models ("rp2040"), or NULL. */
const char *emu_chip(const emu *e);

/* The vector table: from a section or symbol the usual start-up files use,
 * else the lowest load address (skipping an RP2040 boot2 stage). */
int emu_find_vectors(const img *im, uint32_t *addr, cp_err *err);
/* One entry of a vector table whose value is the Thumb start of a
 * function of the image: its exception number and the handler. */
typedef struct emu_vec {
    uint32_t exc, handler;
} emu_vec;
/* The entries first..last-1 of the vector table at vt that are handlers
 * (emu_vec), in order, up to cap into out; returns how many. */
size_t emu_vector_handlers(const img *im, uint32_t vt, uint32_t first,
                           uint32_t last, emu_vec *out, size_t cap);
/* Reads the emulated memory. 0 or -1. */
int emu_read(emu *e, uint32_t addr, void *buf, size_t n);
const emu_stats *emu_get_stats(const emu *e);
/* Seconds since the run started. */
double emu_elapsed(const emu *e);
/* The note an EMU_END_STOPPED end reports (from a progress callback). */
void emu_set_stop_note(emu *e, const char *note);
/* Notes from the set-up (parts of the image outside the target's memory). */
unsigned emu_nwarnings(const emu *e);
const char *emu_warning(const emu *e, unsigned i);
const char *emu_end_name(emu_end end);
/* unicorn's CPU model for a target's CPU name, or -1. */
int emu_cpu_model(const char *cpu);
/* Instruction bytes of the Thumb instruction whose first halfword is hw. */
static inline unsigned emu_thumb_len(uint16_t hw)
{
    return (hw >> 11) >= 0x1d ? 4 : 2;
}

#endif
