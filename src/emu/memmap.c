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

static uint64_t periph_read(uc_engine *uc, uint64_t offset, unsigned size,
                            void *user)
{
    emu *e = user;
    (void)uc;
    (void)offset;
    (void)size;
    e->st.periph_reads++;
    return 0;
}

static void periph_write(uc_engine *uc, uint64_t offset, unsigned size,
                         uint64_t value, void *user)
{
    emu *e = user;
    (void)uc;
    (void)offset;
    (void)size;
    (void)value;
    e->st.periph_writes++;
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
    r->cached = tgt_is_cached(e->cfg.t, base);
    return 0;
}

int emu_map_target(emu *e, cp_err *err)
{
    const tgt *t = e->cfg.t;
    uint8_t *flash = NULL;
    uint32_t fsize = 0;
    e->flash_lo = UINT32_MAX;
    e->flash_hi = 0;
    for (unsigned i = 0; i < t->nmems; i++) {
        const tgt_mem *m = &t->mems[i];
        if ((m->kind == TGT_MEM_FLASH || m->kind == TGT_MEM_FLASH_NOALLOC ||
             m->kind == TGT_MEM_FLASH_UNCACHED) && m->size > fsize)
            fsize = m->size;
    }
    if (fsize && !(flash = calloc(1, fsize)))
        return cp_seterr(err, "out of memory for %u bytes of flash", fsize);
    int flash_owned = 1;
    for (unsigned i = 0; i < t->nmems; i++) {
        const tgt_mem *m = &t->mems[i];
        uc_err ue;
        switch (m->kind) {
        case TGT_MEM_FLASH:
        case TGT_MEM_FLASH_NOALLOC:
        case TGT_MEM_FLASH_UNCACHED:
            if (add_region(e, m->base, m->size, flash, flash_owned, 0,
                           regname(m), err))
                return -1;
            flash_owned = 0;
            /* Memory of unicorn's own: memory given with uc_mem_map_ptr
             * made stores to RAM take the self-modifying-code path. */
            ue = uc_mem_map(e->uc, m->base, m->size,
                            UC_PROT_READ | UC_PROT_EXEC);
            if (m->base < e->flash_lo)
                e->flash_lo = m->base;
            if (m->base + (m->size - 1) > e->flash_hi)
                e->flash_hi = m->base + (m->size - 1);
            break;
        case TGT_MEM_PERIPH:
            if (add_region(e, m->base, m->size, NULL, 0, 1, regname(m), err))
                return -1;
            ue = uc_mmio_map(e->uc, m->base, m->size, periph_read, e,
                             periph_write, e);
            break;
        default:
            if (add_region(e, m->base, m->size, NULL, 0, 0, regname(m), err))
                return -1;
            /* ROM holds no code of the image: readable, never run. */
            ue = uc_mem_map(e->uc, m->base, m->size,
                            m->kind == TGT_MEM_ROM ? UC_PROT_READ : UC_PROT_ALL);
        }
        if (ue != UC_ERR_OK)
            return cp_seterr(err, "cannot map %s at 0x%08x: %s", m->name,
                             m->base, uc_strerror(ue));
    }
    if (!fsize)
        free(flash);
    for (unsigned i = 0; i < e->cfg.nperiph; i++) {
        const emu_range *p = &e->cfg.periph[i];
        uint32_t b = p->base & ~(PAGE - 1);
        uint32_t s = ((p->base + p->size + PAGE - 1) & ~(PAGE - 1)) - b;
        if (add_region(e, b, s, NULL, 0, 1, "--periph", err))
            return -1;
        uc_err ue = uc_mmio_map(e->uc, b, s, periph_read, e, periph_write, e);
        if (ue != UC_ERR_OK)
            return cp_seterr(err, "cannot map --periph 0x%08x: %s", b,
                             uc_strerror(ue));
    }
    return 0;
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

