/* The image model: merging symbols into functions, attributing them to
 * input sections and archives from the map, and the lookups. */
#include "image/image_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>

int img_add_warning(img *im, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (cp_grow((void **)&im->warnings, &im->cwarnings, im->nwarnings + 1,
                sizeof *im->warnings) < 0)
        return -1;
    const char *s = cp_pool_str(im->pool, buf);
    if (!s)
        return -1;
    im->warnings[im->nwarnings++] = s;
    return 0;
}

static int lead_underscores(const char *s)
{
    int n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

static int bind_rank(unsigned char b)
{
    return b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2;
}

/* Orders symbols by address, then best name first. */
static int cmp_sym(const void *a, const void *b)
{
    const img_sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    int r = bind_rank(x->bind) - bind_rank(y->bind);
    if (r)
        return r;
    r = lead_underscores(x->name) - lead_underscores(y->name);
    if (r)
        return r;
    size_t lx = strlen(x->name), ly = strlen(y->name);
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_isec(const void *a, const void *b)
{
    const img_isec *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->size < y->size ? -1 : x->size > y->size;
}

static const img_section *exec_section_at(const img *im, uint32_t addr)
{
    for (size_t i = 0; i < im->nsecs; i++) {
        const img_section *s = &im->secs[i];
        if ((s->flags & IMG_SEC_EXEC) && addr - s->addr < s->size)
            return s;
    }
    return NULL;
}

static int build_functions(img *im)
{
    if (im->nsyms)
        qsort(im->syms, im->nsyms, sizeof *im->syms, cmp_sym);
    im->funcs = calloc(im->nsyms ? im->nsyms : 1, sizeof *im->funcs);
    im->alias_store = calloc(im->nsyms ? im->nsyms : 1, sizeof *im->alias_store);
    if (!im->funcs || !im->alias_store)
        return -1;
    size_t i = 0;
    while (i < im->nsyms) {
        size_t j = i + 1;
        while (j < im->nsyms && im->syms[j].addr == im->syms[i].addr)
            j++;
        const img_sym *s = &im->syms[i];
        const img_section *sec = exec_section_at(im, s->addr);
        if (!sec) {
            i = j;
            continue;
        }
        img_func *f = &im->funcs[im->nfuncs++];
        memset(f, 0, sizeof *f);
        f->addr = s->addr;
        f->name = s->name;
        f->pretty = s->name;
        char *dm = cp_demangle(s->name);
        if (dm) {
            const char *p = cp_pool_str(im->pool, dm);
            free(dm);
            if (!p)
                return -1;
            f->pretty = p;
        }
        f->osec = sec->name;
        if (sec->lma != sec->addr)
            f->flags |= IMG_FN_LOADED;
        for (size_t k = i; k < j; k++) {
            if (im->syms[k].size > f->size)
                f->size = im->syms[k].size;
            if (im->syms[k].bind != STB_LOCAL)
                f->flags |= IMG_FN_GLOBAL;
        }
        f->alias = im->alias_store + im->nalias_store;
        for (size_t k = i + 1; k < j; k++) {
            /* The same name twice (local and global copies) is one name. */
            int dup = !strcmp(im->syms[k].name, f->name);
            for (unsigned q = 0; q < f->nalias && !dup; q++)
                dup = !strcmp(f->alias[q], im->syms[k].name);
            if (!dup) {
                im->alias_store[im->nalias_store++] = im->syms[k].name;
                f->nalias++;
            }
        }
        i = j;
    }
    /* Sizes the symbols did not give: up to the next function or the end of
     * the section. */
    for (size_t k = 0; k < im->nfuncs; k++) {
        img_func *f = &im->funcs[k];
        if (f->size)
            continue;
        const img_section *sec = exec_section_at(im, f->addr);
        uint32_t end = sec->addr + sec->size;
        if (k + 1 < im->nfuncs && im->funcs[k + 1].addr < end)
            end = im->funcs[k + 1].addr;
        f->size = end - f->addr;
        f->flags |= IMG_FN_NO_SIZE;
    }
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    const img_map_sym *x = a, *y = b;
    return strcmp(x->name, y->name);
}

/* Every map symbol that names a global function of the ELF must give the
 * same address: two builds rarely agree on all of them. */
static int check_map_symbols(img *im, cp_err *err)
{
    size_t n = 0, cap = 0;
    img_map_sym *names = NULL;
    for (size_t i = 0; i < im->nfuncs; i++) {
        const img_func *f = &im->funcs[i];
        if (!(f->flags & IMG_FN_GLOBAL))
            continue;
        for (unsigned k = 0; k <= f->nalias; k++) {
            if (cp_grow((void **)&names, &cap, n + 1, sizeof *names) < 0) {
                free(names);
                return cp_seterr(err, "out of memory");
            }
            names[n].name = k ? f->alias[k - 1] : f->name;
            names[n++].addr = f->addr;
        }
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_name);
    int rc = 0;
    for (size_t i = 0; i < im->nmsyms && rc == 0; i++) {
        const img_map_sym *m = &im->msyms[i];
        img_map_sym *hit = n ? bsearch(m, names, n, sizeof *names, cmp_name)
                             : NULL;
        if (!hit)
            continue;
        /* Local functions of the same name may differ; look at all equal
         * names before calling it a mismatch. */
        int ok = 0;
        for (img_map_sym *q = hit; q >= names && !strcmp(q->name, m->name); q--)
            ok |= q->addr == (m->addr & ~1u);
        for (img_map_sym *q = hit; q < names + n && !strcmp(q->name, m->name); q++)
            ok |= q->addr == (m->addr & ~1u);
        if (!ok)
            rc = cp_seterr(err, "map file '%s' does not match '%s': %s is at "
                           "0x%08x in the map but at 0x%08x in the ELF (a map "
                           "from another build?)", im->map_path, im->path,
                           m->name, m->addr, hit->addr);
    }
    free(names);
    return rc;
}

static const img_section *alloc_section_named(const img *im, const char *name)
{
    for (size_t i = 0; i < im->nsecs; i++)
        if (!strcmp(im->secs[i].name, name))
            return &im->secs[i];
    return NULL;
}

/* Checks the map against the ELF, keeps the input sections of allocated
 * output sections, and attributes functions to them. */
static int apply_map(img *im, cp_err *err)
{
    size_t matched = 0;
    for (size_t i = 0; i < im->nmosecs; i++) {
        const img_map_osec *o = &im->mosecs[i];
        const img_section *s = alloc_section_named(im, o->name);
        if (!s)
            continue;
        if (s->addr != o->addr || s->size != o->size)
            return cp_seterr(err, "map file '%s' does not match '%s': section "
                             "%s is at 0x%08x size 0x%x in the map but at "
                             "0x%08x size 0x%x in the ELF (a map from "
                             "another build?)", im->map_path, im->path,
                             o->name, o->addr, o->size, s->addr, s->size);
        matched++;
    }
    if (matched == 0 && im->nsecs)
        return cp_seterr(err, "map file '%s' does not match '%s': none of "
                         "the ELF's sections appear in it", im->map_path,
                         im->path);
    if (check_map_symbols(im, err) < 0)
        return -1;

    size_t keep = 0;
    for (size_t i = 0; i < im->nisecs; i++) {
        img_isec *s = &im->isecs[i];
        const img_section *o = alloc_section_named(im, s->osec);
        if (!o || s->size == 0)
            continue;
        if (s->addr < o->addr || (uint64_t)s->addr + s->size >
                                     (uint64_t)o->addr + o->size) {
            img_add_warning(im, "map file '%s': input section %s (0x%08x) lies "
                            "outside its output section %s", im->map_path,
                            s->name, s->addr, o->name);
            continue;
        }
        im->isecs[keep++] = *s;
    }
    im->nisecs = keep;
    if (im->nisecs)
        qsort(im->isecs, im->nisecs, sizeof *im->isecs, cmp_isec);

    size_t unplaced = 0;
    size_t *count = calloc(im->nisecs ? im->nisecs : 1, sizeof *count);
    size_t *which = calloc(im->nfuncs ? im->nfuncs : 1, sizeof *which);
    if (!count || !which) {
        free(count);
        free(which);
        return cp_seterr(err, "out of memory");
    }
    for (size_t k = 0; k < im->nfuncs; k++) {
        img_func *f = &im->funcs[k];
        /* Last input section starting at or before f->addr. */
        size_t lo = 0, hi = im->nisecs;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (im->isecs[mid].addr <= f->addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        which[k] = (size_t)-1;
        if (lo == 0 || f->addr - im->isecs[lo - 1].addr >= im->isecs[lo - 1].size) {
            unplaced++;
            continue;
        }
        const img_isec *s = &im->isecs[lo - 1];
        f->isec = s->name;
        f->isec_addr = s->addr;
        f->isec_size = s->size;
        f->archive = s->archive;
        f->object = s->object;
        count[lo - 1]++;
        which[k] = lo - 1;
    }
    for (size_t k = 0; k < im->nfuncs; k++)
        if (which[k] != (size_t)-1 && count[which[k]] > 1)
            im->funcs[k].flags |= IMG_FN_SHARED_SEC;
    free(count);
    free(which);
    im->map_unplaced = unplaced; /* reported by img_map_check */

    /* Region use, by run address and, for copied sections, load address. */
    for (size_t r = 0; r < im->nregions; r++) {
        img_region *g = &im->regions[r];
        for (size_t i = 0; i < im->nsecs; i++) {
            const img_section *s = &im->secs[i];
            if (s->addr - g->origin < g->length)
                g->used += s->size;
            else if (!(s->flags & IMG_SEC_NOBITS) && s->lma != s->addr &&
                     s->lma - g->origin < g->length)
                g->used += s->size;
        }
    }
    return 0;
}

/* Takes ownership of elf (malloc'd, NUL-terminated past len). */
static img *open_common(const char *elf_name, char *elf, size_t elf_len,
                        const char *map_name, const char *map_text,
                        size_t map_len, cp_err *err)
{
    img *im = calloc(1, sizeof *im);
    if (!im || !(im->pool = cp_pool_new())) {
        free(im);
        free(elf);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    im->file = elf;
    im->file_len = elf_len;
    if (img_read_elf(im, elf_name, err) < 0)
        goto fail;
    if (build_functions(im) < 0) {
        cp_seterr(err, "'%s': out of memory", elf_name);
        goto fail;
    }
    if (im->nfuncs == 0) {
        cp_seterr(err, "'%s': no functions in executable sections", elf_name);
        goto fail;
    }
    if (map_name) {
        im->map_path = cp_pool_str(im->pool, map_name);
        if (img_parse_map(im, map_name, map_text, map_len, err) < 0 ||
            apply_map(im, err) < 0)
            goto fail;
    }
    return im;
fail:
    img_free(im);
    return NULL;
}

img *img_open(const char *elf_path, const char *map_path, cp_err *err)
{
    char *elf, *map = NULL;
    size_t elf_len, map_len = 0;
    if (cp_read_file(elf_path, &elf, &elf_len, err) < 0)
        return NULL;
    if (map_path && cp_read_file(map_path, &map, &map_len, err) < 0) {
        free(elf);
        return NULL;
    }
    img *im = open_common(elf_path, elf, elf_len, map_path, map, map_len, err);
    free(map);
    return im;
}

img *img_open_buffer(const char *name, const void *elf, size_t elf_len,
                     const char *map_name, const char *map_text,
                     size_t map_len, cp_err *err)
{
    char *copy = malloc(elf_len + 1);
    if (!copy) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    if (elf_len)
        memcpy(copy, elf, elf_len);
    copy[elf_len] = 0;
    return open_common(name, copy, elf_len, map_name, map_text, map_len, err);
}

void img_free(img *im)
{
    if (!im)
        return;
    free(im->file);
    free(im->syms);
    free(im->funcs);
    free(im->secs);
    free(im->segs);
    free(im->regions);
    free(im->isecs);
    free(im->mosecs);
    free(im->msyms);
    free(im->lsecs);
    free(im->warnings);
    free(im->alias_store);
    cp_pool_free(im->pool);
    free(im);
}

const char *img_path(const img *im) { return im->path; }
const char *img_map_path(const img *im) { return im->map_path; }
const char *img_build_dir(const img *im) { return im->build_dir; }

int img_set_build_dir(img *im, const char *dir)
{
    im->build_dir = dir ? cp_pool_str(im->pool, dir) : NULL;
    return dir && !im->build_dir ? -1 : 0;
}
const char *img_hash(const img *im) { return im->hash; }
uint32_t img_entry(const img *im) { return im->entry; }
const char *img_cpu_arch(const img *im)
{
    return im->cpu_arch[0] ? im->cpu_arch : NULL;
}

size_t img_nfuncs(const img *im) { return im->nfuncs; }
const img_func *img_func_at(const img *im, size_t i)
{
    return i < im->nfuncs ? &im->funcs[i] : NULL;
}

const img_func *img_lookup(const img *im, uint32_t addr)
{
    size_t lo = 0, hi = im->nfuncs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (im->funcs[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Nested or overlapping symbols: walk back a little to an enclosing one. */
    for (size_t k = lo, steps = 0; k > 0 && steps < 4; k--, steps++) {
        const img_func *f = &im->funcs[k - 1];
        if (addr - f->addr < f->size)
            return f;
    }
    return NULL;
}

int img_func_named(const img_func *f, const char *name)
{
    if (!strcmp(f->name, name))
        return 1;
    for (unsigned k = 0; k < f->nalias; k++)
        if (!strcmp(f->alias[k], name))
            return 1;
    return 0;
}

const img_func *img_find(const img *im, const char *name)
{
    for (size_t i = 0; i < im->nfuncs; i++)
        if (img_func_named(&im->funcs[i], name))
            return &im->funcs[i];
    return NULL;
}

size_t img_nsections(const img *im) { return im->nsecs; }
const img_section *img_section_at(const img *im, size_t i)
{
    return i < im->nsecs ? &im->secs[i] : NULL;
}
const img_section *img_section_by_name(const img *im, const char *name)
{
    return alloc_section_named(im, name);
}
size_t img_nsegments(const img *im) { return im->nsegs; }
const img_segment *img_segment_at(const img *im, size_t i)
{
    return i < im->nsegs ? &im->segs[i] : NULL;
}
size_t img_nregions(const img *im) { return im->nregions; }
const img_region *img_region_at(const img *im, size_t i)
{
    return i < im->nregions ? &im->regions[i] : NULL;
}
size_t img_nisecs(const img *im) { return im->nisecs; }
const img_isec *img_isec_at(const img *im, size_t i)
{
    return i < im->nisecs ? &im->isecs[i] : NULL;
}

uint32_t img_flash_bytes(const img *im)
{
    uint32_t n = 0;
    for (size_t i = 0; i < im->nsecs; i++)
        if (!(im->secs[i].flags & IMG_SEC_NOBITS))
            n += im->secs[i].size;
    return n;
}

size_t img_nwarnings(const img *im) { return im->nwarnings; }
size_t img_map_unplaced(const img *im) { return im->map_unplaced; }
const char *img_warning(const img *im, size_t i)
{
    return i < im->nwarnings ? im->warnings[i] : NULL;
}

int img_read(const img *im, uint32_t addr, void *buf, size_t size)
{
    for (size_t i = 0; i < im->nsecs; i++) {
        const img_section *s = &im->secs[i];
        if (!s->data || addr < s->addr)
            continue;
        uint64_t off = addr - s->addr;
        if (off + size <= s->size) {
            memcpy(buf, s->data + off, size);
            return 0;
        }
    }
    return -1;
}
