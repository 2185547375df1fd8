/* Reading the ELF file with elfutils libelf. */
#include "image/image_int.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int elf_ready;

static int cmp_seg(const void *a, const void *b)
{
    const img_segment *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* The load address of a section: via the segment that holds it. */
static uint32_t section_lma(const img *im, uint32_t addr, uint32_t size)
{
    for (size_t i = 0; i < im->nsegs; i++) {
        const img_segment *s = &im->segs[i];
        if (addr >= s->vaddr && (uint64_t)addr + size <= (uint64_t)s->vaddr + s->memsz)
            return s->paddr + (addr - s->vaddr);
    }
    return addr;
}

/* Tag_CPU_arch (tag 6) from the "aeabi" subsection of .ARM.attributes. */
static void read_cpu_arch(img *im, const unsigned char *d, size_t n)
{
    static const char *const names[] = {
        "pre-v4", "v4", "v4T", "v5T", "v5TE", "v5TEJ", "v6", "v6KZ", "v6T2",
        "v6K", "v7", "v6-M", "v6S-M", "v7E-M", "v8-A", "v8-R", "v8-M.base",
        "v8-M.main", "v8.1-A", "v8.2-A", "v8.3-A", "v8.1-M.main"};
    if (n < 1 || d[0] != 'A')
        return;
    size_t p = 1;
    while (p + 4 <= n) {
        uint32_t len = (uint32_t)d[p] | (uint32_t)d[p + 1] << 8 |
                       (uint32_t)d[p + 2] << 16 | (uint32_t)d[p + 3] << 24;
        if (len < 4 || len > n - p)
            return;
        size_t end = p + len, q = p + 4;
        const char *vendor = (const char *)d + q;
        size_t vlen = strnlen(vendor, end - q);
        q += vlen + 1;
        if (vlen == 5 && !memcmp(vendor, "aeabi", 5)) {
            /* Sub-subsections: tag (1 = file), size, attributes. */
            while (q + 5 <= end) {
                unsigned tag = d[q];
                uint32_t slen = (uint32_t)d[q + 1] | (uint32_t)d[q + 2] << 8 |
                                (uint32_t)d[q + 3] << 16 | (uint32_t)d[q + 4] << 24;
                if (slen < 5 || slen > end - q)
                    return;
                size_t a = q + 5, aend = q + slen;
                if (tag == 1) {
                    while (a < aend) {
                        /* ULEB128 tag, then a ULEB128 or a NUL string. */
                        uint64_t t = 0;
                        unsigned sh = 0;
                        while (a < aend && sh < 63) {
                            t |= (uint64_t)(d[a] & 0x7f) << sh;
                            sh += 7;
                            if (!(d[a++] & 0x80))
                                break;
                        }
                        int is_str = t == 4 || t == 5 || t == 67 ||
                                     (t > 32 && t % 2 == 1);
                        if (is_str) {
                            while (a < aend && d[a])
                                a++;
                            a++;
                            continue;
                        }
                        uint64_t v = 0;
                        sh = 0;
                        while (a < aend && sh < 63) {
                            v |= (uint64_t)(d[a] & 0x7f) << sh;
                            sh += 7;
                            if (!(d[a++] & 0x80))
                                break;
                        }
                        if (t == 6 && v < sizeof names / sizeof names[0]) {
                            snprintf(im->cpu_arch, sizeof im->cpu_arch, "%s",
                                     names[v]);
                            return;
                        }
                    }
                }
                q = aend;
            }
        }
        p = end;
    }
}

static int oom(cp_err *err, const char *path)
{
    return cp_seterr(err, "'%s': out of memory", path);
}

/* What the file says it is, before libelf reads it: a 32-bit
 * little-endian ELF. */
static int check_ident(const img *im, const char *path, cp_err *err)
{
    if (im->file_len < 4 || memcmp(im->file, ELFMAG, SELFMAG))
        return cp_seterr(err, "'%s': not an ELF file", path);
    if (im->file_len < sizeof(Elf32_Ehdr))
        return cp_seterr(err, "'%s': truncated ELF header", path);
    if ((unsigned char)im->file[EI_CLASS] != ELFCLASS32)
        return cp_seterr(err, "'%s': a 64-bit ELF; codeplace reads 32-bit ARM "
                         "Cortex-M images", path);
    if ((unsigned char)im->file[EI_DATA] != ELFDATA2LSB)
        return cp_seterr(err, "'%s': big-endian ELF; Cortex-M images are "
                         "little-endian", path);
    return 0;
}

/* The ELF header: a linked ARM executable; its entry point. */
static int read_header(img *im, Elf *e, const char *path, cp_err *err)
{
    GElf_Ehdr eh;
    if (!gelf_getehdr(e, &eh))
        return cp_seterr(err, "'%s': bad ELF header: %s", path,
                         elf_errmsg(-1));
    if (eh.e_machine != EM_ARM)
        return cp_seterr(err, "'%s': ELF for machine %u, not ARM (40); "
                         "codeplace reads ARM Cortex-M images", path,
                         (unsigned)eh.e_machine);
    if (eh.e_type != ET_EXEC)
        return cp_seterr(err, "'%s': not a linked executable (ELF type %u); "
                         "give the final firmware ELF, not an object file",
                         path, (unsigned)eh.e_type);
    im->entry = (uint32_t)eh.e_entry;
    return 0;
}

/* The loadable segments, by address. */
static int read_segments(img *im, Elf *e, const char *path, cp_err *err)
{
    size_t nph;
    if (elf_getphdrnum(e, &nph) != 0)
        return cp_seterr(err, "'%s': bad program headers: %s", path,
                         elf_errmsg(-1));
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph))
            return cp_seterr(err, "'%s': bad program header %zu: %s", path,
                             i, elf_errmsg(-1));
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
            continue;
        if (ph.p_offset > im->file_len || ph.p_filesz > im->file_len - ph.p_offset)
            return cp_seterr(err, "'%s': truncated: segment %zu reaches past "
                             "the end of the file", path, i);
        if (ph.p_filesz > ph.p_memsz || ph.p_vaddr + ph.p_memsz > 0x100000000ULL)
            return cp_seterr(err, "'%s': segment %zu has impossible sizes",
                             path, i);
        if (cp_grow((void **)&im->segs, &im->csegs, im->nsegs + 1, sizeof *im->segs) < 0)
            return oom(err, path);
        im->segs[im->nsegs++] = (img_segment){
            (uint32_t)ph.p_vaddr, (uint32_t)ph.p_paddr, (uint32_t)ph.p_filesz,
            (uint32_t)ph.p_memsz, (unsigned)ph.p_flags,
            (const uint8_t *)im->file + ph.p_offset};
    }
    if (im->nsegs)
        qsort(im->segs, im->nsegs, sizeof *im->segs, cmp_seg);
    return 0;
}

/* The GNU build ID of a .note.gnu.build-id section, as hex, is the
 * image's hash when there is one. */
static void read_build_id(img *im, const GElf_Shdr *sh)
{
    const unsigned char *d = (const unsigned char *)im->file + sh->sh_offset;
    uint32_t namesz = d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24;
    uint32_t descsz = d[4] | d[5] << 8 | d[6] << 16 | (uint32_t)d[7] << 24;
    uint32_t off = 12 + ((namesz + 3) & ~3u);
    if (namesz < 64 && descsz && descsz <= 20 && off + descsz <= sh->sh_size) {
        char *h = im->hash;
        for (uint32_t k = 0; k < descsz; k++)
            h += sprintf(h, "%02x", d[off + k]);
    }
}

/* A section that takes memory at run time; its contents go into the
 * image's hash. */
static int add_alloc_section(img *im, const GElf_Shdr *sh, const char *name,
                             uint64_t *hash, const char *path, cp_err *err)
{
    if (sh->sh_addr + sh->sh_size > 0x100000000ULL)
        return cp_seterr(err, "'%s': section '%s' lies past 4 GiB", path,
                         name);
    if (cp_grow((void **)&im->secs, &im->csecs, im->nsecs + 1, sizeof *im->secs) < 0)
        return oom(err, path);
    img_section *s = &im->secs[im->nsecs++];
    s->name = cp_pool_str(im->pool, name);
    s->addr = (uint32_t)sh->sh_addr;
    s->size = (uint32_t)sh->sh_size;
    s->align = sh->sh_addralign > 1 && sh->sh_addralign <= 0x80000000u
                   ? (uint32_t)sh->sh_addralign : 1;
    s->flags = IMG_SEC_ALLOC;
    if (sh->sh_flags & SHF_EXECINSTR)
        s->flags |= IMG_SEC_EXEC;
    if (sh->sh_flags & SHF_WRITE)
        s->flags |= IMG_SEC_WRITE;
    if (sh->sh_type == SHT_NOBITS) {
        s->flags |= IMG_SEC_NOBITS;
        s->data = NULL;
    } else {
        s->data = (const uint8_t *)im->file + sh->sh_offset;
        *hash = cp_fnv1a(*hash, &s->addr, sizeof s->addr);
        *hash = cp_fnv1a(*hash, s->data, s->size);
    }
    s->lma = section_lma(im, s->addr, s->size);
    if (!s->name)
        return oom(err, path);
    return 0;
}

/* One section header: the CPU architecture, the build ID, the linked
 * sections' names and sizes, the allocated sections. */
static int read_section(img *im, const GElf_Shdr *sh, const char *name,
                        uint64_t *hash, const char *path, cp_err *err)
{
    if (sh->sh_type != SHT_NOBITS && sh->sh_size &&
        (sh->sh_offset > im->file_len ||
         sh->sh_size > im->file_len - sh->sh_offset))
        return cp_seterr(err, "'%s': truncated: section '%s' reaches past "
                         "the end of the file", path, name);
    if (sh->sh_type == SHT_ARM_ATTRIBUTES && sh->sh_size)
        read_cpu_arch(im, (const unsigned char *)im->file + sh->sh_offset,
                      sh->sh_size);
    if (sh->sh_type == SHT_NOTE && !strcmp(name, ".note.gnu.build-id") &&
        sh->sh_size > 16)
        read_build_id(im, sh);
    if (sh->sh_size && sh->sh_type != SHT_NULL && sh->sh_type != SHT_SYMTAB &&
        sh->sh_type != SHT_STRTAB && sh->sh_type != SHT_REL &&
        sh->sh_type != SHT_RELA && name[0] && sh->sh_size <= 0xffffffffu) {
        if (cp_grow((void **)&im->lsecs, &im->clsecs, im->nlsecs + 1,
                    sizeof *im->lsecs) < 0)
            return oom(err, path);
        img_linked_sec *l = &im->lsecs[im->nlsecs++];
        l->name = cp_pool_str(im->pool, name);
        l->size = (uint32_t)sh->sh_size;
        if (!l->name)
            return oom(err, path);
    }
    if (!(sh->sh_flags & SHF_ALLOC) || sh->sh_size == 0)
        return 0;
    return add_alloc_section(im, sh, name, hash, path, err);
}

/* The sections, and the image's hash: its build ID, else a hash of the
 * allocated sections' addresses and contents. */
static int read_sections(img *im, Elf *e, const char *path, cp_err *err)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(e, &shstrndx) != 0)
        return cp_seterr(err, "'%s': no section name table: %s", path,
                         elf_errmsg(-1));
    uint64_t hash = CP_FNV_INIT;
    int have_symtab = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return cp_seterr(err, "'%s': bad section header: %s", path,
                             elf_errmsg(-1));
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        if (!name)
            name = "";
        if (sh.sh_type == SHT_SYMTAB)
            have_symtab = 1;
        if (read_section(im, &sh, name, &hash, path, err) < 0)
            return -1;
    }
    if (!im->hash[0])
        snprintf(im->hash, sizeof im->hash, "fnv1a64:%016llx",
                 (unsigned long long)hash);
    if (!have_symtab)
        return cp_seterr(err, "'%s': no symbol table (stripped?); give the "
                         "unstripped ELF the build produced", path);
    return 0;
}

/* The function symbols of the symbol table. */
static int read_functions(img *im, Elf *e, const char *path, cp_err *err)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || sh.sh_entsize == 0)
            return cp_seterr(err, "'%s': unreadable symbol table: %s", path,
                             elf_errmsg(-1));
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t k = 1; k < n; k++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)k, &sym))
                break;
            if (GELF_ST_TYPE(sym.st_info) != STT_FUNC)
                continue;
            if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
                continue;
            const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
            if (!name || !*name)
                continue;
            if (cp_grow((void **)&im->syms, &im->csyms, im->nsyms + 1,
                        sizeof *im->syms) < 0)
                return oom(err, path);
            img_sym *s = &im->syms[im->nsyms++];
            s->addr = (uint32_t)sym.st_value & ~1u;
            s->size = (uint32_t)sym.st_size;
            s->name = cp_pool_str(im->pool, name);
            s->bind = GELF_ST_BIND(sym.st_info);
            s->shndx = sym.st_shndx;
            if (!s->name)
                return oom(err, path);
        }
    }
    return 0;
}

int img_read_elf(img *im, const char *path, cp_err *err)
{
    if (!elf_ready) {
        if (elf_version(EV_CURRENT) == EV_NONE)
            return cp_seterr(err, "libelf is out of date");
        elf_ready = 1;
    }
    im->path = cp_pool_str(im->pool, path);
    if (check_ident(im, path, err) < 0)
        return -1;
    Elf *e = elf_memory(im->file, im->file_len);
    if (!e)
        return cp_seterr(err, "'%s': %s", path, elf_errmsg(-1));
    int rc = read_header(im, e, path, err) < 0 ||
             read_segments(im, e, path, err) < 0 ||
             read_sections(im, e, path, err) < 0 ||
             read_functions(im, e, path, err) < 0 ? -1 : 0;
    elf_end(e);
    return rc;
}

/* The defined symbols named name in file order: up to max of their values
 * (and sizes) into value[] and size[] (either may be NULL); returns how
 * many there are, or -1 when libelf fails. */
static long symbols_named(const img *im, const char *name, uint32_t *value,
                          uint32_t *size, size_t max)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return -1;
    Elf *e = elf_memory(im->file, im->file_len);
    if (!e)
        return -1;
    long found = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
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
            if (!nm || strcmp(nm, name))
                continue;
            if ((size_t)found < max) {
                if (value)
                    value[found] = (uint32_t)s.st_value;
                if (size)
                    size[found] = (uint32_t)s.st_size;
            }
            found++;
        }
    }
    elf_end(e);
    return found;
}

int img_symbol(const img *im, const char *name, uint32_t *value,
               uint32_t *size, cp_err *err)
{
    long n = symbols_named(im, name, value, size, 1);
    if (n < 0)
        return cp_seterr(err, "libelf: %s", elf_errmsg(-1));
    if (!n)
        return cp_seterr(err, "'%s': no symbol '%s'", im->path, name);
    return 0;
}

long img_symbol_values(const img *im, const char *name, uint32_t *values,
                       size_t max)
{
    return symbols_named(im, name, values, NULL, max);
}
