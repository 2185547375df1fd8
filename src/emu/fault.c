/* emu: what a fault or a stop says: the address, the function and the
 * access, and the boot ROM a run needs but was not given. */
#include "emu/emu_int.h"

#include <stdio.h>
#include <string.h>

void emu_where(const emu *e, uint32_t addr, char *buf, size_t cap)
{
    const img_func *f = img_lookup(e->cfg.im, addr);
    const tgt_mem *m = tgt_mem_at(e->cfg.t, addr);
    if (!f && m && m->kind == TGT_MEM_ROM)
        snprintf(buf, cap, "0x%08x (boot ROM)", addr);
    else if (f)
        snprintf(buf, cap, "0x%08x (%s+0x%x)", addr, f->name, addr - f->addr);
    else
        snprintf(buf, cap, "0x%08x (no function)", addr);
}

static const char *access_name(int type)
{
    switch (type) {
    case UC_MEM_READ_UNMAPPED: return "read of unmapped memory";
    case UC_MEM_WRITE_UNMAPPED: return "write to unmapped memory";
    case UC_MEM_FETCH_UNMAPPED: return "jump to unmapped memory";
    case UC_MEM_WRITE_PROT: return "write to read-only memory";
    case UC_MEM_READ_PROT: return "read of unreadable memory";
    case UC_MEM_FETCH_PROT: return "jump to non-executable memory";
    default: return "bad access";
    }
}

/* The firmware called or read the boot ROM, and there is none. */
static int rom_missing(emu *e, cp_err *err)
{
    char w1[160], w2[200] = "";
    uint32_t lr;
    uc_reg_read(e->uc, UC_ARM_REG_LR, &lr);
    const img_func *caller = img_lookup(e->cfg.im, lr & ~1u);
    if (caller)
        snprintf(w2, sizeof w2, ", called from %s+0x%x", caller->name,
                 (lr & ~1u) - caller->addr);
    char how[200], base[16] = "0";
    if (e->rom_missing->base)
        snprintf(base, sizeof base, "0x%x", e->rom_missing->base);
    snprintf(how, sizeof how, "give the chip's boot ROM with --rom FILE "
             "(read it from a board with a probe, e.g. OpenOCD `dump_image "
             "rom.bin %s %u`)", base, e->rom_missing->size);
    if (e->fault_type == UC_MEM_FETCH_UNMAPPED) {
        emu_where(e, e->last_block, w1, sizeof w1);
        return cp_seterr(err, "the firmware calls into the boot ROM at "
                         "0x%08x (after the block at %s%s), and no ROM is "
                         "loaded: %s", e->fault_addr, w1, w2, how);
    }
    emu_where(e, e->fault_pc, w1, sizeof w1);
    return cp_seterr(err, "the firmware reads the boot ROM at 0x%08x (by the "
                     "instruction at PC %s%s), and no ROM is loaded: %s",
                     e->fault_addr, w1, w2, how);
}

/* Turns a unicorn error after uc_emu_start into a message. */
int emu_fault(emu *e, uc_err ue, cp_err *err)
{
    char w1[160], w2[160];
    uint32_t pc;
    uc_reg_read(e->uc, UC_ARM_REG_PC, &pc);
    e->st.end = EMU_END_FAULT;
    if (e->fault && e->rom_missing &&
        e->fault_addr - e->rom_missing->base < e->rom_missing->size)
        return rom_missing(e, err);
    if (e->fault) {
        if (e->fault_type == UC_MEM_FETCH_UNMAPPED ||
            e->fault_type == UC_MEM_FETCH_PROT) {
            emu_where(e, e->last_block, w2, sizeof w2);
            return cp_seterr(err, "%s at 0x%08x (after the block at %s)",
                             access_name(e->fault_type), e->fault_addr, w2);
        }
        emu_where(e, e->fault_pc, w1, sizeof w1);
        return cp_seterr(err, "%s at 0x%08x (%d bytes) by the instruction at "
                         "PC %s", access_name(e->fault_type), e->fault_addr,
                         e->fault_size, w1);
    }
    emu_where(e, pc, w1, sizeof w1);
    if (ue == UC_ERR_INSN_INVALID) {
        uint16_t hw[2] = {0, 0};
        uc_mem_read(e->uc, pc, hw, 4);
        if (emu_thumb_len(hw[0]) == 4)
            return cp_seterr(err, "invalid instruction for %s at PC %s: "
                             "%04x %04x", e->cfg.t->cpu, w1, hw[0], hw[1]);
        return cp_seterr(err, "invalid instruction for %s at PC %s: %04x",
                         e->cfg.t->cpu, w1, hw[0]);
    }
    return cp_seterr(err, "%s at PC %s", uc_strerror(ue), w1);
}

