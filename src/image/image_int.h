/* Private to src/image: the layout of img and the steps of img_open. */
#ifndef CP_IMAGE_INT_H
#define CP_IMAGE_INT_H

#include "image/image.h"

/* A function symbol as read from .symtab, before aliases are merged. */
typedef struct img_sym {
    uint32_t addr, size;
    const char *name;
    unsigned char bind; /* STB_* */
    int shndx;
} img_sym;

/* A symbol line of the map ("0xADDR name"). */
typedef struct img_map_sym {
    const char *name;
    uint32_t addr;
} img_map_sym;

typedef struct img_map_osec {
    const char *name;
    uint32_t addr, size;
} img_map_osec;

/* A section of the ELF that the map must list as an output section: every
 * one the linker wrote (allocated or not, e.g. .debug_info), with a size,
 * but for the symbol, string and relocation tables. */
typedef struct img_linked_sec {
    const char *name;
    uint32_t size;
} img_linked_sec;

struct img {
    cp_pool *pool;
    const char *path, *map_path;
    const char *build_dir; /* where the link ran (img_set_build_dir), or NULL */
    char *file;   /* the ELF file's bytes */
    size_t file_len;
    char hash[64];
    char cpu_arch[16];
    uint32_t entry;

    img_sym *syms;
    size_t nsyms, csyms;

    img_func *funcs;
    size_t nfuncs;

    img_section *secs;
    size_t nsecs, csecs;
    img_segment *segs;
    size_t nsegs, csegs;

    img_region *regions;
    size_t nregions, cregions;
    img_isec *isecs;
    size_t nisecs, cisecs;
    img_map_osec *mosecs;
    size_t nmosecs, cmosecs;
    img_map_sym *msyms;
    size_t nmsyms, cmsyms;
    img_linked_sec *lsecs;
    size_t nlsecs, clsecs;
    int map_cut_line;    /* the last line has no newline: the file is cut */
    int map_output;      /* has the OUTPUT(FILE FORMAT) line ld writes */

    const char **warnings;
    size_t nwarnings, cwarnings;
    size_t map_unplaced;  /* functions in no input section of the map */

    const char **alias_store;
    size_t nalias_store;
};

/* elf.c: reads im->file (already loaded); fills path, hash, entry, syms,
 * secs, segs. */
int img_read_elf(img *im, const char *path, cp_err *err);
/* map.c: parses a GNU ld map file into regions, isecs, mosecs. */
int img_parse_map(img *im, const char *path, const char *text, size_t len,
                  cp_err *err);
/* image.c */
int img_add_warning(img *im, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
