/* img: the firmware image model. Reads an ARM Cortex-M ELF (elfutils libelf)
 * and, optionally, the GNU ld map file that came with it: functions with
 * their input section, output section, archive and object; sections; memory
 * regions; segments for loading; a build id or content hash; and a fast
 * address -> function lookup that every later stage uses. */
#ifndef CP_IMAGE_H
#define CP_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef struct img img;

enum img_func_flags {
    IMG_FN_SHARED_SEC = 1 << 0, /* its input section holds other functions */
    IMG_FN_NO_SIZE = 1 << 1,    /* symbol had no size; size was inferred */
    IMG_FN_GLOBAL = 1 << 2,     /* has a global or weak name */
    IMG_FN_LOADED = 1 << 3,     /* VMA differs from LMA (copied at boot) */
};

typedef struct img_func {
    uint32_t addr;             /* run address (VMA), Thumb bit cleared */
    uint32_t size;             /* bytes */
    const char *name;          /* primary name, as the linker knows it */
    const char *pretty;        /* for people: demangled C++, else name */
    const char *const *alias;  /* other names at the same address */
    unsigned nalias;
    const char *isec;     /* input section (".text.foo"), NULL without map */
    uint32_t isec_addr, isec_size;
    const char *osec;     /* output section (".text"), NULL if none */
    const char *archive;  /* archive basename ("libc.a"), NULL if none */
    const char *object;   /* object basename ("strtod.o"), NULL w/o map */
    unsigned flags;       /* IMG_FN_* */
} img_func;

enum img_sec_flags {
    IMG_SEC_ALLOC = 1 << 0,
    IMG_SEC_EXEC = 1 << 1,
    IMG_SEC_WRITE = 1 << 2,
    IMG_SEC_NOBITS = 1 << 3, /* .bss-like: no file contents */
};

typedef struct img_section {
    const char *name;
    uint32_t addr;   /* VMA */
    uint32_t lma;    /* load address (from the program headers) */
    uint32_t size;
    uint32_t align;  /* sh_addralign (1 when the header says 0) */
    unsigned flags;  /* IMG_SEC_* */
    const uint8_t *data; /* contents (NULL for NOBITS); valid while img lives */
} img_section;

/* A PT_LOAD program header. */
typedef struct img_segment {
    uint32_t vaddr, paddr, filesz, memsz;
    unsigned flags; /* PF_R/PF_W/PF_X as in ELF */
    const uint8_t *data; /* filesz bytes */
} img_segment;

/* A memory region from the map file's "Memory Configuration". */
typedef struct img_region {
    const char *name;
    uint32_t origin, length;
    const char *attr;
    uint32_t used; /* bytes of allocated sections placed in it (by VMA or LMA) */
} img_region;

/* An input section from the map file. */
typedef struct img_isec {
    const char *name;
    const char *osec;
    uint32_t addr, size;
    const char *archive; /* basename or NULL */
    const char *object;  /* basename */
    const char *path;    /* file as the map names it */
    uint32_t align;      /* sh_addralign in the object (0: not read yet) */
} img_isec;

/* Opens elf_path and, when map_path is not NULL, the map file. Errors name
 * the file: not ELF, truncated, wrong machine, stripped, map mismatch. */
img *img_open(const char *elf_path, const char *map_path, cp_err *err);
/* The same from memory (the ELF bytes are copied; map_text may be NULL
 * when map_name is). name and map_name are used in messages. */
img *img_open_buffer(const char *name, const void *elf, size_t elf_len,
                     const char *map_name, const char *map_text,
                     size_t map_len, cp_err *err);
void img_free(img *im);

const char *img_path(const img *im);
const char *img_map_path(const img *im); /* NULL without a map */
/* The directory the link ran in, which the map's relative paths of input
 * files are relative to (NULL: found from the map's place, see
 * plan_ldstub_link_read). A copy of dir is kept; -1 when out of memory. */
int img_set_build_dir(img *im, const char *dir);
const char *img_build_dir(const img *im);
/* Build id (hex of .note.gnu.build-id) if present, else "fnv1a64:" and the
 * hash of the loadable contents. */
const char *img_hash(const img *im);
uint32_t img_entry(const img *im);
/* Tag_CPU_arch from .ARM.attributes as text ("v6S-M", "v7E-M"...), or NULL. */
const char *img_cpu_arch(const img *im);

size_t img_nfuncs(const img *im);
const img_func *img_func_at(const img *im, size_t i); /* sorted by address */
/* The function whose [addr, addr+size) holds addr, or NULL. O(log n). */
const img_func *img_lookup(const img *im, uint32_t addr);
/* 1 when name is f's primary name or one of its aliases. */
int img_func_named(const img_func *f, const char *name);
/* By primary name or alias, or NULL. Static functions may share a name:
 * the first by address is returned. */
const img_func *img_find(const img *im, const char *name);
/* Any defined ELF symbol (data objects too, which the function list leaves
 * out): its st_value and st_size (size may be NULL). 0, or -1 with err
 * naming the file and the symbol. */
int img_symbol(const img *im, const char *name, uint32_t *value,
               uint32_t *size, cp_err *err);
/* Every defined symbol of that name (local ones may repeat: one per file,
 * or ld's stubs, one __NAME_veneer per stub group): up to max of their
 * values into values[]; returns how many there are, or -1 when the ELF
 * cannot be read. */
long img_symbol_values(const img *im, const char *name, uint32_t *values,
                       size_t max);

size_t img_nsections(const img *im);
const img_section *img_section_at(const img *im, size_t i); /* file order */
const img_section *img_section_by_name(const img *im, const char *name);
size_t img_nsegments(const img *im);
const img_segment *img_segment_at(const img *im, size_t i);
size_t img_nregions(const img *im); /* 0 without a map */
const img_region *img_region_at(const img *im, size_t i);
size_t img_nisecs(const img *im); /* 0 without a map */
const img_isec *img_isec_at(const img *im, size_t i); /* sorted by address */

/* Reads the alignment of every input section from the object files and
 * archives the map names (when they are still there). Returns how many
 * sections got one; files that can't be read are skipped. */
size_t img_load_isec_align(img *im);

/* Bytes of the image in flash: allocated sections with contents. */
uint32_t img_flash_bytes(const img *im);

/* Functions of the ELF that lie in no input section of the map (0
 * without a map): a map of another or a cut build. */
size_t img_map_unplaced(const img *im);
/* Checks that the map lists all of the ELF it came with: every section the
 * linker wrote (allocated or not, .debug_* too) as an output section of the
 * same size, every function in one of its input sections, and a last line
 * that is whole. img_open already refuses a map whose sections or symbols
 * disagree in address or size; this finds a map cut short (or of a build
 * with fewer sections). 0 (also without a map), or -1 with err naming the
 * map file and what it is missing. */
int img_map_check(const img *im, cp_err *err);
/* Warnings found while reading (e.g. map entries that fit no ELF section). */
size_t img_nwarnings(const img *im);
const char *img_warning(const img *im, size_t i);

/* Reads size bytes at VMA addr from the image's sections; 0 or -1. */
int img_read(const img *im, uint32_t addr, void *buf, size_t size);

#endif
