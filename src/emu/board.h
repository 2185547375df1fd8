/* Private to src/emu: the peripherals of the virtual board. Every
 * peripheral access lands here (the engine calls back only for the
 * peripheral pages, so the fetch path stays free of hooks). A chip model
 * (rp2040.c) answers the registers it models; every other read is counted
 * per register, and a loop that keeps reading one of them is stopped with
 * the register, the PC and the function named. */
#ifndef CP_EMU_BOARD_H
#define CP_EMU_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "emu/emu.h"

typedef struct board board;

/* One register the firmware touched (by its word address, atomic aliases
 * folded). */
typedef struct bd_reg {
    uint32_t addr;
    uint32_t val;       /* last value written (or the model's state) */
    uint8_t used;       /* slot taken */
    uint8_t written;
    uint64_t unmod;     /* reads the model could not answer */
    uint64_t streak;    /* of them since the last peripheral write */
    uint64_t gen;       /* the write generation the streak belongs to */
    uint32_t last;      /* modelled: the value the last read returned */
    uint64_t same;      /* modelled: reads of that value in a row, with no
                           peripheral write between */
    uint64_t sgen;
} bd_reg;

/* A chip model: answers reads and takes writes of the registers it models.
 * read returns 1 with *v when it models the register, 2 when it models it
 * and the value follows the simulated time (a timer: never a stuck
 * poll), 0 otherwise. addr is
 * the word address with the atomic alias folded (write: op is the alias,
 * 0 normal, 1 XOR, 2 SET, 3 CLR, and v the value as written). */
typedef struct bd_chip {
    const char *name;
    void *(*init)(emu *e, board *b, cp_err *err);
    void (*fini)(void *cs);
    int (*read)(void *cs, uint32_t addr, uint32_t *v);
    void (*write)(void *cs, uint32_t addr, uint32_t v, unsigned op);
    /* The name of the register at addr into buf ("XOSC_STATUS"), or 0. */
    int (*reg_name)(uint32_t addr, char *buf, size_t cap);
    /* Extra peripheral windows the chip has outside the target's memory
     * list (base, size pairs; size 0 ends). */
    const uint32_t *windows;
    /* 1 when addr is in a block with atomic set/clear aliases. */
    int (*has_aliases)(uint32_t addr);
} bd_chip;

extern const bd_chip bd_rp2040;
/* RP2350: its boot ROM handled as the RP2040's (unmapped without --rom);
 * no register model yet, every read counted. */
extern const bd_chip bd_rp2350;

/* Creates the board for e's target (a chip model when the target names
 * one). NULL and err on failure. */
board *board_new(emu *e, cp_err *err);
void board_free(board *b);
const bd_chip *board_chip(const board *b);
/* The engine's callbacks, for a window at base. */
uint32_t board_read(board *b, uint32_t addr, unsigned size);
void board_write(board *b, uint32_t addr, unsigned size, uint32_t v);
/* The register store: the entry for addr (created), or NULL on no memory. */
bd_reg *board_reg(board *b, uint32_t addr);
/* The stored value of addr, or dflt when it was never written. */
uint32_t board_get(board *b, uint32_t addr, uint32_t dflt);
/* Forgets every register in [base, base + size) (a block reset). */
void board_forget(board *b, uint32_t base, uint32_t size);
/* Simulated time: core cycles so far (instructions x the target's cpi). */
uint64_t board_cycles(const board *b);
/* Microseconds of simulated time at the target's clock. */
uint64_t board_us(const board *b);
/* Bytes a UART sent (n: 0 or 1). */
void board_uart_put(board *b, unsigned n, uint8_t c);
const uint8_t *board_uart(const board *b, unsigned n, size_t *len);
/* Registers read without a model, most-read first. */
size_t board_unmodelled(const board *b, emu_unmod *out, size_t max,
                        uint64_t *total_reads, size_t *nregs);
/* Stops the run with why and the block that was running. */
void board_stop(board *b, const char *why);
/* Names a register ("XOSC_STATUS", else "periph+0x..."). */
void board_reg_name(const board *b, uint32_t addr, char *buf, size_t cap);

#endif
