/* emu: symbol lookup in the ELF symbol table (data objects included, which
 * the image model leaves out) and the vector table search. */
#include "emu/emu.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

int emu_elf_symbol(const char *elf_path, const char *name, uint32_t *value,
                   uint32_t *size, cp_err *err)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return cp_seterr(err, "libelf: %s", elf_errmsg(-1));
    int fd = open(elf_path, O_RDONLY);
    if (fd < 0)
        return cp_seterr(err, "cannot open '%s'", elf_path);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    int found = 0;
    Elf_Scn *scn = NULL;
    while (e && !found && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; d && i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
                continue;
            const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
            if (nm && !strcmp(nm, name)) {
                *value = (uint32_t)s.st_value;
                if (size)
                    *size = (uint32_t)s.st_size;
                found = 1;
                break;
            }
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    if (!found)
        return cp_seterr(err, "'%s': no symbol '%s'", elf_path, name);
    return 0;
}

static const char *const vec_secs[] = {".vectors", ".isr_vector",
                                       ".vector_table", ".vectors_table"};
static const char *const vec_syms[] = {
    "__interrupt_vector", "__vectors", "__isr_vector", "__Vectors",
    "g_pfnVectors", "_vectors", "vector_table", "__VECTOR_TABLE",
    "__vector_table", "_VectorTable",
};

/* A plausible table: an even stack pointer and an odd (Thumb) reset
 * handler inside the image. */
static int plausible(const img *im, uint32_t at)
{
    uint32_t w[2];
    if (img_read(im, at, w, 8))
        return 0;
    uint8_t probe;
    return !(w[0] & 3) && w[0] && (w[1] & 1) &&
           img_read(im, w[1] & ~1u, &probe, 1) == 0;
}

int emu_find_vectors(const img *im, uint32_t *addr, cp_err *err)
{
    for (size_t i = 0; i < sizeof vec_secs / sizeof vec_secs[0]; i++) {
        const img_section *s = img_section_by_name(im, vec_secs[i]);
        if (s && plausible(im, s->addr)) {
            *addr = s->addr;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof vec_syms / sizeof vec_syms[0]; i++) {
        uint32_t v;
        if (!emu_elf_symbol(img_path(im), vec_syms[i], &v, NULL, NULL) &&
            plausible(im, v)) {
            *addr = v;
            return 0;
        }
    }
    uint32_t lo = UINT32_MAX;
    for (size_t i = 0; i < img_nsegments(im); i++) {
        const img_segment *s = img_segment_at(im, i);
        if (s->filesz && s->paddr < lo)
            lo = s->paddr;
    }
    if (lo != UINT32_MAX) {
        if (plausible(im, lo)) {
            *addr = lo;
            return 0;
        }
        if (plausible(im, lo + 0x100)) { /* after RP2040's 256-byte boot2 */
            *addr = lo + 0x100;
            return 0;
        }
    }
    return cp_seterr(err, "'%s': no vector table found (give --entry and "
                          "--sp)", img_path(im));
}
