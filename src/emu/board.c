/* emu board: the peripheral side of the virtual board (see board.h). */
#include "emu/board.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu_int.h"

struct board {
    emu *e;
    const bd_chip *chip;
    void *cs;           /* the chip model's state */
    bd_reg *regs;       /* open addressing by word address */
    size_t cap, used;
    uint64_t gen;       /* peripheral writes so far */
    uint64_t poll_limit;
    uint8_t *uart[2];
    size_t ulen[2], ucap[2];
};

board *board_new(emu *e, cp_err *err)
{
    board *b = calloc(1, sizeof *b);
    if (!b || !(b->regs = calloc(b->cap = 1024, sizeof *b->regs))) {
        free(b);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    b->e = e;
    b->poll_limit = e->cfg.poll_limit ? e->cfg.poll_limit : 1000000;
    const char *chip = e->cfg.t->chip;
    if (chip && !strcmp(chip, "rp2040"))
        b->chip = &bd_rp2040;
    else if (chip && !strcmp(chip, "rp2350"))
        b->chip = &bd_rp2350;
    if (b->chip && !(b->cs = b->chip->init(e, b, err))) {
        board_free(b);
        return NULL;
    }
    return b;
}

void board_free(board *b)
{
    if (!b)
        return;
    if (b->chip && b->cs)
        b->chip->fini(b->cs);
    free(b->regs);
    free(b->uart[0]);
    free(b->uart[1]);
    free(b);
}

const bd_chip *board_chip(const board *b)
{
    return b->chip;
}

static size_t slot(const board *b, uint32_t addr)
{
    return (size_t)((addr >> 2) * 2654435761u) & (b->cap - 1);
}

static int grow(board *b)
{
    size_t ncap = b->cap * 2;
    bd_reg *n = calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    bd_reg *old = b->regs;
    size_t ocap = b->cap;
    b->regs = n;
    b->cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i].used)
            continue;
        size_t h = slot(b, old[i].addr);
        while (n[h].used)
            h = (h + 1) & (ncap - 1);
        n[h] = old[i];
    }
    free(old);
    return 0;
}

static bd_reg *find(const board *b, uint32_t addr)
{
    for (size_t h = slot(b, addr);; h = (h + 1) & (b->cap - 1)) {
        bd_reg *r = &b->regs[h];
        if (!r->used)
            return NULL;
        if (r->addr == addr)
            return r;
    }
}

bd_reg *board_reg(board *b, uint32_t addr)
{
    bd_reg *r = find(b, addr);
    if (r)
        return r;
    if (2 * (b->used + 1) > b->cap && grow(b))
        return NULL;
    size_t h = slot(b, addr);
    while (b->regs[h].used)
        h = (h + 1) & (b->cap - 1);
    r = &b->regs[h];
    memset(r, 0, sizeof *r);
    r->used = 1;
    r->addr = addr;
    b->used++;
    return r;
}

uint32_t board_get(board *b, uint32_t addr, uint32_t dflt)
{
    bd_reg *r = find(b, addr);
    return r && r->written ? r->val : dflt;
}

void board_forget(board *b, uint32_t base, uint32_t size)
{
    for (size_t i = 0; i < b->cap; i++)
        if (b->regs[i].used && b->regs[i].addr - base < size)
            b->regs[i].written = 0;
}

uint64_t board_cycles(const board *b)
{
    return (uint64_t)((double)b->e->st.insns * b->e->cfg.t->cpi);
}

uint64_t board_us(const board *b)
{
    return board_cycles(b) * 1000000u / b->e->cfg.t->clock_hz;
}

void board_uart_put(board *b, unsigned n, uint8_t c)
{
    if (n > 1 || cp_grow((void **)&b->uart[n], &b->ucap[n], b->ulen[n] + 1, 1))
        return;
    b->uart[n][b->ulen[n]++] = c;
}

const uint8_t *board_uart(const board *b, unsigned n, size_t *len)
{
    *len = n < 2 ? b->ulen[n] : 0;
    return n < 2 ? b->uart[n] : NULL;
}

void board_reg_name(const board *b, uint32_t addr, char *buf, size_t cap)
{
    if (b->chip && b->chip->reg_name(addr, buf, cap))
        return;
    const tgt_mem *m = tgt_mem_at(b->e->cfg.t, addr);
    if (m)
        snprintf(buf, cap, "%s+0x%x", m->name, addr - m->base);
    else
        snprintf(buf, cap, "register");
}

/* The instruction making the current read: the n-th read of the block
 * belongs to the instruction the decoder gave that slot. */
static uint32_t reading_pc(const emu *e)
{
    const binfo *c = e->cur;
    if (c && e->rd_next && e->rd_next - 1 < c->nrd)
        return e->cur_addr + e->rd_pool[c->rd + e->rd_next - 1];
    return e->cur_addr;
}

/* Stops the run at a loop that keeps reading r (modelled: 1 when the
 * board models r and it kept the value v). */
static void polled(board *b, bd_reg *r, int modelled, uint32_t v)
{
    emu *e = b->e;
    char name[40], fn[96], n1[32];
    board_reg_name(b, r->addr, name, sizeof name);
    uint32_t pc = reading_pc(e);
    const img_func *f = img_lookup(e->cfg.im, pc);
    if (f)
        snprintf(fn, sizeof fn, "%s+0x%x", f->name, pc - f->addr);
    else
        snprintf(fn, sizeof fn, "0x%08x", pc);
    char note[320];
    if (modelled)
        snprintf(note, sizeof note, "polling %s 0x%08x in %s, %s times, "
                 "always 0x%08x with no peripheral write between (nothing "
                 "on the virtual board changes it: no input, no other core, "
                 "no interrupts)", name, r->addr, fn,
                 cp_commas(n1, r->same), v);
    else
        snprintf(note, sizeof note, "polling %s 0x%08x in %s, %s times (a "
                 "register the virtual board does not model)", name, r->addr,
                 fn, cp_commas(n1, r->streak));
    emu_set_stop_note(e, note);
    if (e->st.end == EMU_END_DONE)
        e->st.end = EMU_END_STOPPED;
    uc_emu_stop(e->uc);
}

void board_stop(board *b, const char *why)
{
    emu *e = b->e;
    char fn[96], note[320];
    uint32_t pc = e->cur_addr;
    const img_func *f = img_lookup(e->cfg.im, pc);
    if (f)
        snprintf(fn, sizeof fn, "%s+0x%x", f->name, pc - f->addr);
    else
        snprintf(fn, sizeof fn, "0x%08x", pc);
    snprintf(note, sizeof note, "%s, in the block at %s", why, fn);
    emu_set_stop_note(e, note);
    if (e->st.end == EMU_END_DONE)
        e->st.end = EMU_END_STOPPED;
    uc_emu_stop(e->uc);
}

static int has_alias(const board *b, uint32_t addr)
{
    return b->chip && b->chip->has_aliases && b->chip->has_aliases(addr);
}

uint32_t board_read(board *b, uint32_t addr, unsigned size)
{
    emu *e = b->e;
    e->st.periph_reads++;
    uint32_t word = addr & ~3u, v;
    if (has_alias(b, word))
        word &= ~0x3000u; /* reads through an alias read the register */
    int how = b->chip ? b->chip->read(b->cs, word, &v) : 0;
    if (!how) {
        bd_reg *r = board_reg(b, word);
        if (!r)
            return 0;
        v = r->written ? r->val : 0;
        r->unmod++;
        if (r->gen != b->gen) {
            r->gen = b->gen;
            r->streak = 0;
        }
        if (++r->streak >= b->poll_limit)
            polled(b, r, 0, v);
    } else if (how == 1) {
        /* A modelled register read again and again with the same value
         * and nothing written: the firmware waits for something that
         * cannot happen here (UART input, core 1, a held spinlock). */
        bd_reg *r = board_reg(b, word);
        if (r) {
            if (r->sgen != b->gen || r->last != v) {
                r->sgen = b->gen;
                r->last = v;
                r->same = 0;
            }
            if (++r->same >= b->poll_limit)
                polled(b, r, 1, v);
        }
    }
    v >>= 8 * (addr & 3);
    return size >= 4 ? v : v & ((1u << (8 * size)) - 1);
}

void board_write(board *b, uint32_t addr, unsigned size, uint32_t v)
{
    emu *e = b->e;
    e->st.periph_writes++;
    b->gen++;
    uint32_t word = addr & ~3u;
    unsigned op = 0;
    if (has_alias(b, word)) {
        op = (word >> 12) & 3;
        word &= ~0x3000u;
    }
    /* Narrow writes: the bus replicates the byte or halfword across the
     * word (RP2040 datasheet 2.1.4 "Narrow IO Register Writes"). */
    if (size == 1)
        v = (v & 0xff) * 0x01010101u;
    else if (size == 2)
        v = (v & 0xffff) * 0x00010001u;
    if (b->chip) {
        b->chip->write(b->cs, word, v, op);
        return;
    }
    bd_reg *r = board_reg(b, word);
    if (r) {
        r->val = v;
        r->written = 1;
    }
}

static int by_reads(const void *a, const void *c)
{
    const emu_unmod *x = a, *y = c;
    if (x->reads != y->reads)
        return x->reads < y->reads ? 1 : -1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

size_t board_unmodelled(const board *b, emu_unmod *out, size_t max,
                        uint64_t *total_reads, size_t *nregs)
{
    size_t n = 0, all = 0;
    uint64_t tot = 0;
    emu_unmod *tmp = calloc(b->used + 1, sizeof *tmp);
    for (size_t i = 0; i < b->cap; i++) {
        const bd_reg *r = &b->regs[i];
        if (!r->used || !r->unmod)
            continue;
        all++;
        tot += r->unmod;
        if (tmp) {
            tmp[n].addr = r->addr;
            tmp[n].reads = r->unmod;
            n++;
        }
    }
    if (tmp)
        qsort(tmp, n, sizeof *tmp, by_reads);
    if (n > max)
        n = max;
    for (size_t i = 0; i < n; i++) {
        out[i] = tmp[i];
        board_reg_name(b, out[i].addr, out[i].name, sizeof out[i].name);
    }
    free(tmp);
    *total_reads = tot;
    *nregs = all;
    return n;
}
