/* emu: the virtual board on the unicorn engine. A block hook records runs of
 * sequential fetches (instruction counts come from decoding Thumb lengths
 * once per block and caching them); a read hook on the flash window splits
 * the current run at the load, so the order of fetches and data reads is
 * exact. */
#include "emu/emu_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unicorn/unicorn.h>

int emu_cpu_model(const char *cpu)
{
    if (!strcmp(cpu, "cortex-m0plus") || !strcmp(cpu, "cortex-m0"))
        return UC_CPU_ARM_CORTEX_M0;
    if (!strcmp(cpu, "cortex-m3"))
        return UC_CPU_ARM_CORTEX_M3;
    if (!strcmp(cpu, "cortex-m4"))
        return UC_CPU_ARM_CORTEX_M4;
    if (!strcmp(cpu, "cortex-m7"))
        return UC_CPU_ARM_CORTEX_M7;
    /* unicorn has no Cortex-M23: ARMv8-M Baseline code runs unchanged on
     * the Mainline model (Baseline's instructions are a subset of
     * Mainline's, Armv8-M ARM A1.2), so the fetch stream is the same. */
    if (!strcmp(cpu, "cortex-m33") || !strcmp(cpu, "cortex-m23"))
        return UC_CPU_ARM_CORTEX_M33;
    return -1;
}

const char *emu_end_name(emu_end end)
{
    static const char *const n[] = {"done",        "instruction limit",
                                    "time limit",  "interrupted",
                                    "stopped",     "fault"};
    return (unsigned)end < sizeof n / sizeof n[0] ? n[end] : "?";
}

unsigned emu_nwarnings(const emu *e)
{
    return e->nwarn;
}

const char *emu_warning(const emu *e, unsigned i)
{
    return i < e->nwarn ? e->warn[i] : NULL;
}

static double elapsed(const emu *e);

double emu_elapsed(const emu *e)
{
    return elapsed(e);
}

void emu_set_stop_note(emu *e, const char *note)
{
    size_t n = strlen(note);
    if (n >= sizeof e->st.stop_note)
        n = sizeof e->st.stop_note - 1;
    memcpy(e->st.stop_note, note, n);
    e->st.stop_note[n] = 0;
}

const emu_stats *emu_get_stats(const emu *e)
{
    return &e->st;
}

/* The code bytes [addr, addr + size): from the flash copy, or read from
 * the engine for writable memory (code copied to RAM may change). */
static const uint8_t *code_at(emu *e, uint32_t addr, uint32_t size)
{
    region *r = emu_region_at(e, addr);
    if (!r || r->periph || addr + size - r->base > r->size)
        return NULL;
    if (r->host)
        return r->host + (addr - r->base);
    if (size > sizeof e->cbuf || uc_mem_read(e->uc, addr, e->cbuf, size))
        return NULL;
    return e->cbuf;
}

int emu_read(emu *e, uint32_t addr, void *buf, size_t n)
{
    return uc_mem_read(e->uc, addr, buf, n) == UC_ERR_OK ? 0 : -1;
}

/* ---- the trace side ---- */

static void put(emu *e, const trc_rec *r)
{
    if (!e->w || e->werr_set)
        return;
    if (trc_write(e->w, r, &e->werr)) {
        e->werr_set = 1;
        uc_emu_stop(e->uc);
    }
}

static void flush_run(emu *e)
{
    if (!e->run.live)
        return;
    trc_rec r = {TRC_FETCH, e->run.addr, e->run.len, e->run.ninsn,
                 e->run.flags};
    if (r.len)
        put(e, &r);
    e->st.fetch_runs += r.len != 0;
    e->run.live = 0;
}

static void emit_mark(emu *e, uint64_t n)
{
    flush_run(e);
    trc_rec r = {TRC_MARK, (uint32_t)n, 0, 0, 0};
    put(e, &r);
    e->st.marks++;
}

/* Counts the instructions in [addr, addr + size); with upto, only up to and
 * including the one at upto (and *bytes gets their length). */
static unsigned count_insns(emu *e, uint32_t addr, uint32_t size, uint32_t upto,
                            uint32_t *bytes)
{
    unsigned n = 0;
    uint32_t off = 0;
    const uint8_t *p = code_at(e, addr, size);
    if (!p)
        return size / 2; /* cannot happen for code unicorn ran */
    while (off < size) {
        uint16_t hw = (uint16_t)(p[off] | p[off + 1] << 8);
        uint32_t at = addr + off;
        off += emu_thumb_len(hw);
        n++;
        if (at == upto)
            break;
    }
    if (bytes)
        *bytes = off;
    return n;
}

static unsigned popcount16(unsigned v)
{
    return (unsigned)__builtin_popcount(v & 0xffffu);
}

/* Memory reads one Thumb instruction makes, the way the emulator issues
 * them (one per register of LDM/POP, two for LDRD). */
static unsigned thumb_reads(uint16_t h, uint16_t h2)
{
    if (emu_thumb_len(h) == 2) {
        unsigned top5 = h >> 11, top7 = h >> 9;
        if (top5 == 0x09)                    /* LDR literal */
            return 1;
        if (top7 >= 0x2b && top7 <= 0x2f)    /* LDRSB..LDRSH register */
            return 1;
        if (top5 == 0x0d || top5 == 0x0f || top5 == 0x11 || top5 == 0x13)
            return 1;                        /* LDR/LDRB/LDRH imm, LDR SP */
        if (top5 == 0x19)                    /* LDM */
            return popcount16(h & 0xff);
        if ((h & 0xfe00) == 0xbc00)          /* POP */
            return popcount16(h & 0xff) + (h >> 8 & 1);
        return 0;
    }
    if ((h & 0xfe50) == 0xe810)              /* LDM.W, LDMDB, POP.W */
        return popcount16(h2);
    if ((h & 0xfff0) == 0xe840)              /* STREX: a compare-and- */
        return 1;                            /* swap, which reads first */
    if ((h & 0xfff0) == 0xe8c0 && ((h2 >> 4 & 0xf) == 4 ||
                                   (h2 >> 4 & 0xf) == 5 ||
                                   (h2 >> 4 & 0xf) == 7))
        return 1;                            /* STREXB, STREXH, STREXD */
    if ((h & 0xfe50) == 0xe850) {            /* LDRD, LDREX*, TBB/TBH */
        if ((h & 0xfff0) == 0xe850)
            return 1;
        if ((h & 0xfff0) == 0xe8d0)
            return (h2 >> 4 & 0xf) == 7 ? 2 : 1;
        return 2;
    }
    if ((h & 0xfe10) == 0xf810) {            /* LDR{B,H,SB,SH,} .W */
        if ((h >> 5 & 3) != 2 && (h2 >> 12) == 0xf)
            return 0;                        /* PLD, PLI: hints */
        return 1;
    }
    if ((h & 0xff30) == 0xed10)              /* VLDR */
        return 1;
    if ((h & 0xfe10) == 0xec10 && (h & 0x0180) && (h2 & 0x0e00) == 0x0a00) {
        unsigned imm8 = h2 & 0xff;           /* VLDM, VPOP */
        return h2 & 0x100 ? imm8 / 2 : imm8;
    }
    return 0;
}

/* Records the offsets of the reads the block at addr makes. */
static void block_reads(emu *e, binfo *b)
{
    b->nrd = 0;
    b->rd = (uint32_t)e->rd_used;
    const uint8_t *p = code_at(e, b->addr, b->size);
    if (!p)
        return;
    for (uint32_t off = 0; off + 2 <= b->size;) {
        uint16_t h = (uint16_t)(p[off] | p[off + 1] << 8);
        uint16_t h2 = off + 4 <= b->size
                          ? (uint16_t)(p[off + 2] | p[off + 3] << 8) : 0;
        unsigned n = thumb_reads(h, h2);
        for (unsigned k = 0; k < n; k++) {
            if (cp_grow((void **)&e->rd_pool, &e->rd_cap, e->rd_used + 1,
                        sizeof *e->rd_pool))
                return;
            e->rd_pool[e->rd_used++] = (uint16_t)off;
            b->nrd++;
        }
        off += emu_thumb_len(h);
    }
}

static int is_self_branch(emu *e, uint32_t a);

/* Offset + 1 of the first SVC (Thumb 0xdfNN) in the block, or 0: unicorn's
 * M-profile model takes no exception for it and goes on after it as if it
 * were a NOP. */
static unsigned svc_in(emu *e, uint32_t addr, uint32_t size)
{
    const uint8_t *p = code_at(e, addr, size);
    for (uint32_t off = 0; p && off + 2 <= size;) {
        uint16_t hw = (uint16_t)(p[off] | p[off + 1] << 8);
        if ((hw >> 8) == 0xdf)
            return off + 1;
        off += emu_thumb_len(hw);
    }
    return 0;
}

static int bt_grow(emu *e)
{
    size_t ncap = e->bt_cap ? e->bt_cap * 2 : 1 << 12;
    binfo *nb = calloc(ncap, sizeof *nb);
    if (!nb)
        return -1;
    for (size_t i = 0; i < e->bt_cap; i++) {
        binfo *b = &e->bt[i];
        if (!b->ninsn)
            continue;
        size_t h = (b->addr >> 1) & (ncap - 1);
        while (nb[h].ninsn)
            h = (h + 1) & (ncap - 1);
        nb[h] = *b;
    }
    free(e->bt);
    e->bt = nb;
    e->bt_cap = ncap;
    return 0;
}

static const binfo *block_info(emu *e, uint32_t addr, uint32_t size)
{
    size_t h = (addr >> 1) & (e->bt_cap - 1); /* code nearby, slots nearby */
    for (;;) {
        binfo *b = &e->bt[h];
        if (!b->ninsn)
            break;
        if (b->addr == addr && b->size == size)
            return b;
        h = (h + 1) & (e->bt_cap - 1);
    }
    if (2 * (e->bt_used + 1) > e->bt_cap) {
        if (bt_grow(e))
            return NULL;
        return block_info(e, addr, size);
    }
    binfo *b = &e->bt[h];
    b->addr = addr;
    b->size = (uint16_t)size;
    unsigned n = count_insns(e, addr, size, UINT32_MAX, NULL);
    b->ninsn = (uint16_t)(n ? n : 1);
    b->flags = tgt_is_cached(e->cfg.t, addr) ? 0 : TRC_F_UNCACHED;
    block_reads(e, b);
    b->parked = size == 2 && is_self_branch(e, addr);
    b->svc = (uint16_t)svc_in(e, addr, size);
    e->bt_used++;
    return b;
}

static double elapsed(const emu *e)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - e->t0.tv_sec) +
           (double)(t.tv_nsec - e->t0.tv_nsec) / 1e9;
}

static void stop(emu *e, emu_end why)
{
    if (e->st.end == EMU_END_DONE)
        e->st.end = why;
    uc_emu_stop(e->uc);
}

static int push_iter(emu *e)
{
    if (cp_grow((void **)&e->iters, &e->iters_cap, e->st.iterations + 1,
                sizeof *e->iters))
        return -1;
    e->iters[e->st.iterations++] = e->iter_insns;
    e->st.iter_insns = e->iters;
    /* Progress also after iteration 1, 2, 4, 8...: a fast run learns early
     * whether its trace will fit, before the first timed call. */
    uint64_t k = e->st.iterations;
    if (e->cfg.progress && !(k & (k - 1)) &&
        e->cfg.progress(e->cfg.progress_arg, e))
        stop(e, EMU_END_STOPPED);
    return 0;
}

/* A marker hit (free-run): closes the iteration before it, opens the next. */
static void on_mark(emu *e)
{
    if (e->in_iter)
        push_iter(e);
    if (e->st.marks >= e->nmarks_stop) {
        e->in_iter = 0;
        stop(e, EMU_END_DONE);
        return;
    }
    emit_mark(e, e->st.marks);
    e->in_iter = 1;
    e->iter_insns = 0;
}

/* Counts n instructions and applies the guard rails. */
static void account(emu *e, uint64_t n)
{
    e->st.insns += n;
    if (e->in_iter)
        e->iter_insns += n;
    else
        e->st.pre_insns += n;
    if (e->cfg.insn_limit && (e->in_iter ? e->iter_insns : e->st.pre_insns) >
                                 e->cfg.insn_limit)
        stop(e, EMU_END_INSN_LIMIT);
    if (!(++e->st.blocks & 0x3fff)) {
        if (e->cfg.interrupt && *e->cfg.interrupt)
            stop(e, EMU_END_INTERRUPTED);
        double t = elapsed(e);
        if (e->cfg.time_limit > 0 && t > e->cfg.time_limit)
            stop(e, EMU_END_TIME_LIMIT);
        double every = e->cfg.progress_s > 0 ? e->cfg.progress_s : 1.0;
        if (e->cfg.progress && t - e->last_progress >= every) {
            e->last_progress = t;
            if (e->cfg.progress(e->cfg.progress_arg, e))
                stop(e, EMU_END_STOPPED);
        }
    }
}

static int is_self_branch(emu *e, uint32_t a)
{
    const uint8_t *p = code_at(e, a, 2);
    return p && p[0] == 0xfe && p[1] == 0xe7;
}

/* A jump into the ROM's vector table (initial SP, reset, NMI, HardFault:
 * ARMv6-M ARM B1.5.3): data, never code; a call through a null pointer
 * such as an unset function table. */
static void null_call(emu *e, uint32_t a)
{
    char w1[160], note[320];
    emu_where(e, e->last_block, w1, sizeof w1);
    snprintf(note, sizeof note, "a jump to 0x%08x, the ROM's vector table, "
             "after the block at %s (a call through a null pointer?)", a, w1);
    emu_set_stop_note(e, note);
    stop(e, EMU_END_STOPPED);
}

static void hook_block(uc_engine *uc, uint64_t address, uint32_t size,
                       void *user)
{
    emu *e = user;
    uint32_t a = (uint32_t)address;
    (void)uc;
    if (a == e->mark && e->mark) {
        on_mark(e);
        if (!e->in_iter)
            return; /* stopping at the start of the last iteration */
    }
    if (a < 0x10 && e->rom_vectors) {
        null_call(e, a);
        return;
    }
    e->last_block = a;
    const binfo *b = block_info(e, a, size);
    e->cur = b;
    e->cur_addr = a;
    e->rd_next = 0;
    if (!b) {
        e->werr_set = 1;
        cp_seterr(&e->werr, "out of memory");
        uc_emu_stop(e->uc);
        return;
    }
    if (b->flags)
        e->st.uncached_insns += b->ninsn;
    if (b->svc) {
        /* The board takes no exceptions: the run ends at the SVC. */
        char w1[160];
        uint32_t at = a + b->svc - 1;
        const uint8_t *p = code_at(e, at, 2);
        emu_where(e, at, w1, sizeof w1);
        snprintf(e->st.stop_note, sizeof e->st.stop_note,
                 "the firmware stopped at PC %s: SVC #%u (the board takes no "
                 "exceptions)", w1, p ? p[0] : 0u);
        e->parked = 1;
        stop(e, EMU_END_STOPPED);
        return;
    }
    if (b->parked) {
        /* `b .`: the firmware parked itself (after exit, a fault handler). */
        char w1[160];
        emu_where(e, a, w1, sizeof w1);
        snprintf(e->st.stop_note, sizeof e->st.stop_note,
                 "the firmware stopped at PC %s (a branch to itself)", w1);
        e->parked = 1;
        stop(e, EMU_END_STOPPED);
        return;
    }
    pending *p = &e->run;
    if (p->live && p->addr + p->len == a && p->flags == b->flags) {
        p->len += size;
        p->ninsn += b->ninsn;
    } else {
        flush_run(e);
        p->addr = a;
        p->len = size;
        p->ninsn = b->ninsn;
        p->flags = b->flags;
        p->live = 1;
    }
    account(e, b->ninsn);
}

static void hook_code(uc_engine *uc, uint64_t address, uint32_t size,
                      void *user)
{
    emu *e = user;
    (void)uc;
    uint32_t a = (uint32_t)address;
    if (a == e->mark && e->mark) {
        on_mark(e);
        if (!e->in_iter)
            return;
    }
    if (size == 2 && is_self_branch(e, a)) {
        char w1[160];
        emu_where(e, a, w1, sizeof w1);
        snprintf(e->st.stop_note, sizeof e->st.stop_note,
                 "the firmware stopped at PC %s (a branch to itself)", w1);
        stop(e, EMU_END_STOPPED);
        return;
    }
    e->st.insns++;
    if (e->in_iter)
        e->iter_insns++;
    else
        e->st.pre_insns++;
    if (e->cfg.insn_limit && (e->in_iter ? e->iter_insns : e->st.pre_insns) >
                                 e->cfg.insn_limit)
        stop(e, EMU_END_INSN_LIMIT);
    if (!(e->st.insns & 0xfffff)) {
        if (e->cfg.interrupt && *e->cfg.interrupt)
            stop(e, EMU_END_INTERRUPTED);
        if (e->cfg.time_limit > 0 && elapsed(e) > e->cfg.time_limit)
            stop(e, EMU_END_TIME_LIMIT);
    }
}

static void hook_read(uc_engine *uc, uc_mem_type type, uint64_t address,
                      int size, int64_t value, void *user)
{
    emu *e = user;
    (void)uc;
    (void)type;
    (void)value;
    uint32_t a = (uint32_t)address;
    /* Which instruction reads: the n-th read of the block belongs to the
     * instruction the decoder gave that slot (the PC unicorn reports in a
     * memory hook is the block's start). */
    const binfo *b = e->cur;
    uint32_t insn = UINT32_MAX;
    if (b && e->rd_next < b->nrd)
        insn = e->cur_addr + e->rd_pool[b->rd + e->rd_next];
    else if (b)
        e->st.unplaced_reads++;
    e->rd_next++;
    if (a < e->flash_lo || a > e->flash_hi)
        return;
    const tgt_mem *m = tgt_mem_at(e->cfg.t, a);
    unsigned fl = 0;
    if (m && m->kind == TGT_MEM_FLASH_NOALLOC)
        fl = TRC_F_NOALLOC;
    else if (m && m->kind != TGT_MEM_FLASH)
        fl = TRC_F_UNCACHED;
    e->st.dreads++;
    if (!e->w)
        return;
    pending *p = &e->run;
    if (p->live && insn - p->addr < p->len) {
        /* The load is inside the pending run: its fetch comes first. */
        uint32_t bytes;
        unsigned n = count_insns(e, p->addr, p->len, insn, &bytes);
        trc_rec r = {TRC_FETCH, p->addr, bytes, n, p->flags};
        put(e, &r);
        e->st.fetch_runs++;
        p->addr += bytes;
        p->len -= bytes;
        p->ninsn -= n;
        if (!p->len)
            p->live = 0;
    }
    trc_rec r = {TRC_DREAD, a, (uint32_t)size, 0, fl};
    put(e, &r);
}

static bool hook_bad(uc_engine *uc, uc_mem_type type, uint64_t address,
                     int size, int64_t value, void *user)
{
    emu *e = user;
    (void)value;
    uint32_t pc;
    uc_reg_read(uc, UC_ARM_REG_PC, &pc);
    if (!e->fault) {
        e->fault = 1;
        e->fault_addr = (uint32_t)address;
        e->fault_pc = pc;
        /* unicorn reports the block's start as the PC: find the reading
         * instruction as the read hook does (the faulting read did not
         * reach it). */
        if ((type == UC_MEM_READ_UNMAPPED || type == UC_MEM_READ_PROT) &&
            e->cur && e->rd_next < e->cur->nrd)
            e->fault_pc = e->cur_addr + e->rd_pool[e->cur->rd + e->rd_next];
        e->fault_size = size;
        e->fault_type = type;
    }
    return false;
}

/* ---- set-up ---- */

emu *emu_new(const emu_cfg *cfg, cp_err *err)
{
    int model = emu_cpu_model(cfg->t->cpu);
    if (model < 0) {
        cp_seterr(err, "target %s: no emulator model for CPU %s", cfg->t->name,
                  cfg->t->cpu);
        return NULL;
    }
    emu *e = calloc(1, sizeof *e);
    if (!e) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    e->cfg = *cfg;
    /* UC_MODE_MCLASS would force a Cortex-M33 in unicorn 2.0; the M-profile
     * models carry their own feature set (ARMv6-M for the M0). */
    uc_err ue = uc_open(UC_ARCH_ARM, UC_MODE_THUMB, &e->uc);
    if (ue == UC_ERR_OK)
        ue = uc_ctl_set_cpu_model(e->uc, model);
    if (ue != UC_ERR_OK) {
        cp_seterr(err, "unicorn: %s", uc_strerror(ue));
        emu_free(e);
        return NULL;
    }
    if (!(e->bd = board_new(e, err))) {
        emu_free(e);
        return NULL;
    }
    if (bt_grow(e) || emu_map_target(e, err) || emu_map_segments(e, err)) {
        if (!e->bt)
            cp_seterr(err, "out of memory");
        emu_free(e);
        return NULL;
    }
    uc_hook h;
    if (cfg->count_each)
        ue = uc_hook_add(e->uc, &h, UC_HOOK_CODE, (void *)hook_code, e, 1, 0);
    else
        ue = uc_hook_add(e->uc, &h, UC_HOOK_BLOCK, (void *)hook_block, e, 1, 0);
    if (ue == UC_ERR_OK && !cfg->count_each && e->flash_lo <= e->flash_hi)
        ue = uc_hook_add(e->uc, &h, UC_HOOK_MEM_READ, (void *)hook_read, e, 1,
                         0);
    if (ue == UC_ERR_OK)
        ue = uc_hook_add(e->uc, &h, UC_HOOK_MEM_INVALID, (void *)hook_bad, e,
                         1, 0);
    if (ue != UC_ERR_OK) {
        cp_seterr(err, "unicorn: %s", uc_strerror(ue));
        emu_free(e);
        return NULL;
    }
    return e;
}

void emu_free(emu *e)
{
    if (!e)
        return;
    if (e->uc)
        uc_close(e->uc);
    board_free(e->bd);
    for (unsigned i = 0; i < e->nreg; i++)
        if (e->reg[i].owned)
            free(e->reg[i].host);
    free(e->bt);
    free(e->rd_pool);
    free(e->iters);
    free(e);
}

/* ---- running ---- */

static int wr_ok(emu *e, cp_err *err)
{
    if (e->werr_set) {
        e->st.end = EMU_END_FAULT;
        return cp_seterr(err, "%s", e->werr.msg);
    }
    return 0;
}

static uint32_t trap_addr(emu *e)
{
    /* The last word of the cached flash window: never part of an image. */
    for (unsigned i = 0; i < e->cfg.t->nmems; i++) {
        const tgt_mem *m = &e->cfg.t->mems[i];
        if (m->kind == TGT_MEM_FLASH)
            return m->base + m->size - 4;
    }
    return e->reg[0].base + e->reg[0].size - 4;
}

/* Runs from begin until the PC reaches until (or the run stops). unicorn
 * leaves the run at a WFE or WFI hint with the PC after it; the board
 * resumes there: a WFE may complete at any time (ARMv6-M ARM B1.5.19,
 * "Wait For Event"), and the time the firmware waits for advances with
 * the instructions of its loop. */
static uc_err run(emu *e, uint32_t begin, uint32_t until)
{
    for (;;) {
        uc_err ue = uc_emu_start(e->uc, begin | 1, until, 0, 0);
        if (ue != UC_ERR_INSN_INVALID && ue != UC_ERR_EXCEPTION)
            return ue;
        if (e->st.end != EMU_END_DONE || e->fault)
            return ue;
        uint32_t pc;
        uint16_t hw;
        uc_reg_read(e->uc, UC_ARM_REG_PC, &pc);
        if (emu_read(e, pc - 2, &hw, 2) ||
            (hw != 0xbf20 && hw != 0xbf30)) /* WFE, WFI */
            return ue;
        e->st.waits++;
        begin = pc;
    }
}

/* Calls fn with LR = trap; runs until it returns. */
static int call(emu *e, uint32_t fn, uint32_t sp, cp_err *err)
{
    uint32_t trap = trap_addr(e), lr = trap | 1, pc = fn | 1;
    uint32_t zero = 0;
    for (int r = UC_ARM_REG_R0; r <= UC_ARM_REG_R12; r++)
        if (r != UC_ARM_REG_SP && r != UC_ARM_REG_LR && r != UC_ARM_REG_PC)
            uc_reg_write(e->uc, r, &zero);
    uc_reg_write(e->uc, UC_ARM_REG_SP, &sp);
    uc_reg_write(e->uc, UC_ARM_REG_LR, &lr);
    uc_err ue = run(e, pc, trap);
    flush_run(e);
    if (wr_ok(e, err))
        return -1;
    if (ue != UC_ERR_OK)
        return emu_fault(e, ue, err);
    if (e->st.end != EMU_END_DONE)
        return 0;
    uint32_t now;
    uc_reg_read(e->uc, UC_ARM_REG_PC, &now);
    if (now != trap) {
        char w1[160];
        emu_where(e, now, w1, sizeof w1);
        e->st.end = EMU_END_FAULT;
        return cp_seterr(err, "the call of 0x%08x stopped at PC %s without "
                         "returning", fn, w1);
    }
    return 0;
}

void emu_set_sp(emu *e, uint32_t sp)
{
    e->sp = sp;
}

static int harness_sp(emu *e, uint32_t *sp, cp_err *err)
{
    uint32_t vt;
    if (e->sp) {
        *sp = e->sp;
        return 0;
    }
    if (emu_find_vectors(e->cfg.im, &vt, err) || emu_read(e, vt, sp, 4))
        return -1;
    return 0;
}

/* CRC-32 as the RP2040 boot ROM checks boot2 (datasheet 2.8.1.3.1,
 * "Checksum"): polynomial 0x04c11db7, initial 0xffffffff, most significant
 * bit first, no final XOR. */
static uint32_t boot2_crc(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= (uint32_t)p[i] << 24;
        for (int k = 0; k < 8; k++)
            c = c & 0x80000000u ? (c << 1) ^ 0x04c11db7u : c << 1;
    }
    return c;
}

/* Where a run from reset starts, after the image is loaded. */
static int reset_entry(emu *e, uint32_t *pc, uint32_t *sp, uint32_t *lr,
                       cp_err *err)
{
    const img_section *b2 = img_section_by_name(e->cfg.im, ".boot2");
    const char *chip = e->cfg.t->chip;
    if (chip && !strcmp(chip, "rp2040") && b2 && b2->size == 256) {
        uint8_t code[256];
        if (uc_mem_read(e->uc, b2->addr, code, sizeof code))
            return cp_seterr(err, "cannot read boot2 at 0x%08x", b2->addr);
        uint32_t want = (uint32_t)code[252] | (uint32_t)code[253] << 8 |
                        (uint32_t)code[254] << 16 | (uint32_t)code[255] << 24;
        uint32_t got = boot2_crc(code, 252);
        if (got != want)
            return cp_seterr(err, "'%s': boot2 at 0x%08x fails the boot ROM's "
                             "CRC-32 check (0x%08x, stored 0x%08x): the chip "
                             "would not boot this image", img_path(e->cfg.im),
                             b2->addr, got, want);
        /* 2.8.1.3: the ROM copies boot2 from the start of flash to the top
         * 256 bytes of SRAM5 (0x20041f00) and enters it with LR 0, its own
         * stack just below; boot2 then vectors into flash itself. */
        if (uc_mem_write(e->uc, 0x20041f00, code, sizeof code))
            return cp_seterr(err, "cannot write boot2 to SRAM");
        *pc = 0x20041f00;
        *sp = 0x20041f00;
        *lr = 0;
        return 0;
    }
    uint32_t vt, v[2];
    if (emu_find_vectors(e->cfg.im, &vt, err) || emu_read(e, vt, v, 8))
        return -1;
    *pc = v[1] & ~1u;
    *sp = v[0];
    *lr = 0xffffffffu;
    return 0;
}

/* Runs from reset to the PC at until (harness mode's start-up). */
static int boot_to(emu *e, uint32_t until, cp_err *err)
{
    uint32_t pc, sp, lr;
    if (reset_entry(e, &pc, &sp, &lr, err)) {
        e->st.end = EMU_END_FAULT;
        return -1;
    }
    uc_reg_write(e->uc, UC_ARM_REG_SP, &sp);
    uc_reg_write(e->uc, UC_ARM_REG_MSP, &sp);
    uc_reg_write(e->uc, UC_ARM_REG_LR, &lr);
    uc_err ue = run(e, pc, until);
    flush_run(e);
    if (wr_ok(e, err))
        return -1;
    if (ue != UC_ERR_OK)
        return emu_fault(e, ue, err);
    if (e->st.end != EMU_END_DONE)
        return 0;
    uint32_t now;
    uc_reg_read(e->uc, UC_ARM_REG_PC, &now);
    if (now != until) {
        char w1[160], w2[160];
        emu_where(e, now, w1, sizeof w1);
        emu_where(e, until, w2, sizeof w2);
        e->st.end = EMU_END_FAULT;
        return cp_seterr(err, "the start-up stopped at PC %s before it "
                         "reached %s", w1, w2);
    }
    e->st.booted = 1;
    return 0;
}

int emu_run_harness(emu *e, trc_writer *w, uint32_t init, uint32_t iter,
                    uint64_t n, cp_err *err)
{
    uint32_t sp, r0;
    int boot = e->cfg.boot_until != 0;
    /* A failure before the first iteration ends the run as a fault, never
     * as "done". */
    if (emu_load(e, !boot, err) || harness_sp(e, &sp, err)) {
        e->st.end = EMU_END_FAULT;
        return -1;
    }
    e->w = e->cfg.count_each ? NULL : w;
    clock_gettime(CLOCK_MONOTONIC, &e->t0);
    if (boot && boot_to(e, e->cfg.boot_until, err))
        return -1;
    if (e->st.end != EMU_END_DONE)
        return 0;
    if (init) {
        if (call(e, init, sp, err))
            return -1;
        uc_reg_read(e->uc, UC_ARM_REG_R0, &r0);
        e->st.init_ret = r0;
    }
    for (uint64_t i = 0; i < n && e->st.end == EMU_END_DONE; i++) {
        emit_mark(e, i);
        e->in_iter = 1;
        e->iter_insns = 0;
        if (call(e, iter, sp, err))
            return -1;
        e->in_iter = 0;
        if (e->st.end == EMU_END_DONE) {
            uc_reg_read(e->uc, UC_ARM_REG_R0, &r0);
            if (r0 != e->cfg.expect_ret && !e->st.ret_mismatches++) {
                e->st.first_mismatch = i;
                e->st.first_mismatch_ret = r0;
            }
            if (push_iter(e))
                return cp_seterr(err, "out of memory");
            /* Stopped between iterations (progress): a closing mark shows
             * readers that the last one finished. */
            if (e->st.end == EMU_END_STOPPED)
                emit_mark(e, i + 1);
        }
    }
    return wr_ok(e, err);
}

int emu_run_free(emu *e, trc_writer *w, uint32_t entry, uint32_t sp,
                 uint32_t mark, uint64_t n, cp_err *err)
{
    if (emu_load(e, 0, err)) {
        e->st.end = EMU_END_FAULT;
        return -1;
    }
    e->w = e->cfg.count_each ? NULL : w;
    e->mark = mark;
    e->nmarks_stop = n;
    clock_gettime(CLOCK_MONOTONIC, &e->t0);
    uint32_t lr = 0xffffffffu;
    if (!entry && reset_entry(e, &entry, &sp, &lr, err)) {
        e->st.end = EMU_END_FAULT;
        return -1;
    }
    uc_reg_write(e->uc, UC_ARM_REG_SP, &sp);
    uint32_t msp = sp;
    uc_reg_write(e->uc, UC_ARM_REG_MSP, &msp);
    uc_reg_write(e->uc, UC_ARM_REG_LR, &lr);
    uc_err ue = run(e, entry, 0xffffffff);
    flush_run(e);
    if (wr_ok(e, err))
        return -1;
    if (e->st.end != EMU_END_DONE || (ue == UC_ERR_OK && !n))
        return 0;
    if (ue == UC_ERR_OK && e->st.marks >= n)
        return 0;
    if (ue == UC_ERR_OK || ue == UC_ERR_EXCEPTION) {
        /* The firmware stopped (BKPT, an exit, a fault it cannot take). */
        uint32_t pc;
        char w1[160];
        uc_reg_read(e->uc, UC_ARM_REG_PC, &pc);
        emu_where(e, pc, w1, sizeof w1);
        snprintf(e->st.stop_note, sizeof e->st.stop_note,
                 "the firmware stopped at PC %s (%s)", w1,
                 ue == UC_ERR_OK ? "returned" : "CPU exception");
        e->st.end = EMU_END_STOPPED;
        return 0;
    }
    return emu_fault(e, ue, err);
}

const uint8_t *emu_uart(const emu *e, unsigned n, size_t *len)
{
    return board_uart(e->bd, n, len);
}

size_t emu_unmodelled(const emu *e, emu_unmod *out, size_t max,
                      uint64_t *total, size_t *nregs)
{
    return board_unmodelled(e->bd, out, max, total, nregs);
}

const char *emu_chip(const emu *e)
{
    const bd_chip *c = board_chip(e->bd);
    return c ? c->name : NULL;
}
