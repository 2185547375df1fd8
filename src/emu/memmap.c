/* emu memory map: the target's memories and the image's segments mapped
 * into the engine, and the image loaded into them. */
#include "emu/emu_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *regname(const tgt_mem *m)
{
    return m->name;
}

region *emu_region_at(emu *e, uint32_t addr)
{
    for (unsigned i = 0; i < e->nreg; i++)
        if (addr - e->reg[i].base < e->reg[i].size)
            return &e->reg[i];
    return NULL;
}

/* The engine calls these for peripheral pages only; user is the region
 * (its base turns the offset into an address). */
static uint64_t periph_read(uc_engine *uc, uint64_t offset, unsigned size,
                            void *user)
{
    region *r = user;
    (void)uc;
    return board_read(r->e->bd, r->base + (uint32_t)offset, size);
}

static void periph_write(uc_engine *uc, uint64_t offset, unsigned size,
                         uint64_t value, void *user)
{
    region *r = user;
    (void)uc;
    board_write(r->e->bd, r->base + (uint32_t)offset, size, (uint32_t)value);
}

static int map_periph(emu *e, region *r, cp_err *err)
{
    uc_err ue = uc_mmio_map(e->uc, r->base, r->size, periph_read, r,
                            periph_write, r);
    if (ue != UC_ERR_OK)
        return cp_seterr(err, "cannot map %s at 0x%08x: %s", r->name, r->base,
                         uc_strerror(ue));
    return 0;
}

/* The chip's boot ROM from a file: at most the ROM memory's size. */
static int load_rom(emu *e, const tgt_mem *m, cp_err *err)
{
    const char *path = e->cfg.rom_path;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cp_seterr(err, "--rom '%s': cannot open it", path);
    uint8_t *buf = calloc(1, m->size);
    size_t n = buf ? fread(buf, 1, m->size, f) : 0;
    int more = buf && fgetc(f) != EOF;
    fclose(f);
    int rc = 0;
    if (!buf)
        rc = cp_seterr(err, "out of memory");
    else if (!n)
        rc = cp_seterr(err, "--rom '%s': empty", path);
    else if (more)
        rc = cp_seterr(err, "--rom '%s': larger than the %u bytes of %s's "
                       "%s at 0x%08x", path, m->size, e->cfg.t->name, m->name,
                       m->base);
    else if (uc_mem_write(e->uc, m->base, buf, n) != UC_ERR_OK)
        rc = cp_seterr(err, "--rom '%s': cannot write it", path);
    free(buf);
    return rc;
}
static int add_region(emu *e, uint32_t base, uint32_t size, uint8_t *host,
                      int owned, int periph, const char *name, cp_err *err)
{
    if (e->nreg == MAX_REGIONS)
        return cp_seterr(err, "too many memory regions");
    for (unsigned i = 0; i < e->nreg; i++) {
        region *r = &e->reg[i];
        if (base < r->base + r->size && r->base < base + size)
            return cp_seterr(err, "memory 0x%08x+0x%x (%s) overlaps %s", base,
                             size, name, r->name);
    }
    region *r = &e->reg[e->nreg++];
    r->base = base;
    r->size = size;
    r->host = host;
    r->owned = owned;
    r->periph = periph;
    r->name = name;
    r->e = e;
    r->cached = tgt_is_cached(e->cfg.t, base);
    return 0;
}

/* Maps one of the target's memories. flash is the shared copy of the
 * flash contents; the first flash memory takes ownership (*owned = 0). */
static int map_mem(emu *e, const tgt_mem *m, uint8_t *flash, int *owned,
                   cp_err *err)
{
    uc_err ue;
    switch (m->kind) {
    case TGT_MEM_FLASH:
    case TGT_MEM_FLASH_NOALLOC:
    case TGT_MEM_FLASH_UNCACHED:
        if (add_region(e, m->base, m->size, flash, *owned, 0, regname(m), err))
            return -1;
        *owned = 0;
        /* Memory of unicorn's own: memory given with uc_mem_map_ptr made
         * stores to RAM take the self-modifying-code path. */
        ue = uc_mem_map(e->uc, m->base, m->size, UC_PROT_READ | UC_PROT_EXEC);
        if (m->base < e->flash_lo)
            e->flash_lo = m->base;
        if (m->base + (m->size - 1) > e->flash_hi)
            e->flash_hi = m->base + (m->size - 1);
        break;
    case TGT_MEM_PERIPH:
        if (add_region(e, m->base, m->size, NULL, 0, 1, regname(m), err))
            return -1;
        return map_periph(e, &e->reg[e->nreg - 1], err);
    case TGT_MEM_ROM:
        if (!e->cfg.rom_path && e->cfg.t->chip) {
            /* No ROM: left unmapped, so that code calling or reading it
             * stops there instead of running on zeros. */
            e->rom_missing = m;
            return 0;
        }
        if (add_region(e, m->base, m->size, NULL, 0, 0, regname(m), err))
            return -1;
        ue = uc_mem_map(e->uc, m->base, m->size,
                        e->cfg.rom_path ? UC_PROT_READ | UC_PROT_EXEC
                                        : UC_PROT_READ);
        if (ue == UC_ERR_OK && e->cfg.rom_path && load_rom(e, m, err))
            return -1;
        e->rom_vectors = e->cfg.rom_path && m->base == 0;
        break;
    default:
        if (add_region(e, m->base, m->size, NULL, 0, 0, regname(m), err))
            return -1;
        ue = uc_mem_map(e->uc, m->base, m->size, UC_PROT_ALL);
    }
    if (ue != UC_ERR_OK)
        return cp_seterr(err, "cannot map %s at 0x%08x: %s", m->name, m->base,
                         uc_strerror(ue));
    return 0;
}

/* The chip's windows outside the target's memory list, and --periph. */
static int map_extra(emu *e, cp_err *err)
{
    const bd_chip *c = board_chip(e->bd);
    for (unsigned i = 0; c && c->windows[2 * i + 1]; i++) {
        uint32_t b = c->windows[2 * i], s = c->windows[2 * i + 1];
        if (emu_region_at(e, b))
            continue;
        if (add_region(e, b, s, NULL, 0, 1, c->name, err) ||
            map_periph(e, &e->reg[e->nreg - 1], err))
            return -1;
    }
    for (unsigned i = 0; i < e->cfg.nperiph; i++) {
        const emu_range *p = &e->cfg.periph[i];
        uint32_t b = p->base & ~(PAGE - 1);
        uint32_t s = ((p->base + p->size + PAGE - 1) & ~(PAGE - 1)) - b;
        if (add_region(e, b, s, NULL, 0, 1, "--periph", err) ||
            map_periph(e, &e->reg[e->nreg - 1], err))
            return -1;
    }
    return 0;
}

int emu_map_target(emu *e, cp_err *err)
{
    const tgt *t = e->cfg.t;
    uint8_t *flash = NULL;
    uint32_t fsize = 0;
    int has_rom = 0;
    e->flash_lo = UINT32_MAX;
    e->flash_hi = 0;
    for (unsigned i = 0; i < t->nmems; i++) {
        const tgt_mem *m = &t->mems[i];
        if ((m->kind == TGT_MEM_FLASH || m->kind == TGT_MEM_FLASH_NOALLOC ||
             m->kind == TGT_MEM_FLASH_UNCACHED) && m->size > fsize)
            fsize = m->size;
        has_rom |= m->kind == TGT_MEM_ROM;
    }
    if (e->cfg.rom_path && !has_rom)
        return cp_seterr(err, "--rom: target %s has no rom memory", t->name);
    if (fsize && !(flash = calloc(1, fsize)))
        return cp_seterr(err, "out of memory for %u bytes of flash", fsize);
    int owned = 1;
    for (unsigned i = 0; i < t->nmems; i++)
        if (map_mem(e, &t->mems[i], flash, &owned, err)) {
            if (owned)
                free(flash);
            return -1;
        }
    if (owned)
        free(flash);
    return map_extra(e, err);
}

/* Load segments outside every target memory get memory of their own. */
int emu_map_segments(emu *e, cp_err *err)
{
    const img *im = e->cfg.im;
    for (size_t i = 0; i < img_nsegments(im); i++) {
        const img_segment *s = img_segment_at(im, i);
        uint32_t addrs[2] = {s->paddr, s->vaddr};
        uint32_t lens[2] = {s->filesz, s->memsz};
        for (int k = 0; k < 2; k++) {
            if (!lens[k])
                continue;
            uint32_t a = addrs[k], end = a + lens[k];
            region *r = emu_region_at(e, a);
            if (r && end - r->base <= r->size)
                continue;
            if (r)
                return cp_seterr(err, "'%s': segment 0x%08x+0x%x runs past "
                                 "the end of %s", img_path(im), a, lens[k],
                                 r->name);
            uint32_t b = a & ~(PAGE - 1);
            uint32_t sz = ((end + PAGE - 1) & ~(PAGE - 1)) - b;
            if (e->nwarn < 4)
                snprintf(e->warn[e->nwarn++], sizeof e->warn[0],
                         "'%s': 0x%08x+0x%x lies outside every memory of %s: "
                         "mapped as RAM (not behind the cache)", img_path(im),
                         a, lens[k], e->cfg.t->name);
            if (add_region(e, b, sz, NULL, 0, 0, "image", err))
                return -1;
            if (uc_mem_map(e->uc, b, sz, UC_PROT_ALL) != UC_ERR_OK)
                return cp_seterr(err, "cannot map 0x%08x", b);
        }
    }
    return 0;
}

/* Puts n bytes at addr: into the flash copy, or into the engine. */
static int put_bytes(emu *e, uint32_t addr, const uint8_t *data, uint32_t n,
                     int zero, cp_err *err)
{
    region *r = emu_region_at(e, addr);
    if (!r || r->periph || addr + n - r->base > r->size)
        return cp_seterr(err, "'%s': segment 0x%08x+0x%x is not in memory",
                         img_path(e->cfg.im), addr, n);
    if (r->host) {
        uint32_t off = addr - r->base;
        if (zero)
            memset(r->host + off, 0, n);
        else
            memcpy(r->host + off, data, n);
        if (off + n > e->flash_used)
            e->flash_used = off + n;
        return 0;
    }
    static const uint8_t zeros[4096];
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done;
        if (zero && k > sizeof zeros)
            k = sizeof zeros;
        if (uc_mem_write(e->uc, addr + done, zero ? zeros : data + done, k))
            return cp_seterr(err, "cannot write 0x%08x", addr + done);
        done += k;
    }
    return 0;
}

int emu_load(emu *e, int harness, cp_err *err)
{
    const img *im = e->cfg.im;
    for (size_t i = 0; i < img_nsegments(im); i++) {
        const img_segment *s = img_segment_at(im, i);
        if (s->filesz && put_bytes(e, s->paddr, s->data, s->filesz, 0, err))
            return -1;
        if (!harness || s->vaddr == s->paddr || !s->memsz)
            continue;
        /* What start-up code does: copy .data, zero .bss. */
        if ((s->filesz && put_bytes(e, s->vaddr, s->data, s->filesz, 0, err)) ||
            (s->memsz > s->filesz &&
             put_bytes(e, s->vaddr + s->filesz, NULL, s->memsz - s->filesz, 1,
                       err)))
            return -1;
    }
    /* Every flash alias shows the same contents. */
    for (unsigned i = 0; i < e->nreg; i++) {
        region *r = &e->reg[i];
        uint32_t n = e->flash_used < r->size ? e->flash_used : r->size;
        if (r->host && n && uc_mem_write(e->uc, r->base, r->host, n))
            return cp_seterr(err, "cannot write flash at 0x%08x", r->base);
    }
    return 0;
}

