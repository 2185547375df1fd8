/* GNU ld's order of ARM long-branch stubs (ld 2.40, bfd/elf32-arm.c).
 *
 * ld keeps its stubs in a bfd_hash_table (bfd/hash.c: 4051 buckets, each
 * bucket newest entry first) keyed by a name elf32_arm_stub_name builds:
 * "%08x_%s+%x_%d" (the stub group's section id, the target symbol, the
 * addend, the stub type) for a global target, "%08x_%x:%x+%x_%d" (group
 * id, the target's input-section id, the relocation's symbol index, addend,
 * type) for a local one. elf32_arm_build_stubs lays the stubs out by
 * traversing that table, so their order is the order of the hashes of
 * those names. Section ids come from one counter (bfd/section.c, from
 * 0x10) that every section ld creates takes the next value of: the ARM
 * emulation's four glue sections first, then each input file's sections in
 * the order ld opens the files (plan_ldstub_link_read has the details). */
#ifndef CP_PLAN_LDSTUB_H
#define CP_PLAN_LDSTUB_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* bfd/hash.c DEFAULT_SIZE: the stub table never grows below 3/4 of it. */
#define PLAN_LDSTUB_BUCKETS 4051u

/* enum elf32_arm_stub_type (ld 2.40): arm_stub_long_branch_thumb_only
 * (ARMv6-M: push/ldr/mov/pop, 16 bytes) and
 * arm_stub_long_branch_thumb2_only (ARMv7-M and later: ldr.w pc, 8 bytes). */
enum { PLAN_LDSTUB_THUMB_ONLY = 3, PLAN_LDSTUB_THUMB2_ONLY = 22 };

/* bfd_hash_hash as a 64-bit host (unsigned long of 64 bits) computes it. */
uint64_t plan_ldstub_hash(const char *s);

/* The stub names; both return what snprintf returns. */
int plan_ldstub_name(char *buf, size_t n, uint32_t group_id, const char *sym,
                     int type);
int plan_ldstub_name_local(char *buf, size_t n, uint32_t group_id,
                           uint32_t sec_id, uint32_t rsym, int type);

/* A sort key: stubs sorted by increasing key are in ld's layout order.
 * seq is the order ld created them in (later ones first in a bucket). */
uint64_t plan_ldstub_key(const char *name, uint32_t seq);

/* The section ids of one link, rebuilt from its map file and the input
 * files the map names. */
typedef struct plan_ldstub_link plan_ldstub_link;

/* Reads the map's "Archive member included" list and its LOAD lines, and
 * the section headers of every object and archive they name. Relative
 * paths are relative to the directory the link ran in: build_dir when not
 * NULL, else the current directory or the map's directory or the nearest
 * of its parents under which all of them are. NULL with err naming the
 * file when one cannot be read or the map lacks those parts. */
plan_ldstub_link *plan_ldstub_link_read(const char *map_path,
                                        const char *build_dir, cp_err *err);
void plan_ldstub_link_free(plan_ldstub_link *k);

/* The id of input section secname of path (as the map names it:
 * "dir/x.o" or "dir/libc.a(member.o)"); -1 when not known or when the
 * file has several sections of that name. */
long plan_ldstub_sec_id(const plan_ldstub_link *k, const char *path,
                        const char *secname);

/* One branch relocation (R_ARM_THM_CALL, THM_JUMP24, THM_JUMP19) of an
 * input section, with the symbol it refers to. */
typedef struct plan_ldstub_rel {
    uint32_t offset;     /* r_offset in the section */
    uint32_t index;      /* position among the section's relocations */
    uint32_t rsym;       /* ELF32_R_SYM */
    const char *sym;     /* its name ("" for a section symbol) */
    int local;           /* STB_LOCAL */
    int section_sym;     /* STT_SECTION */
    const char *sym_sec; /* name of the section the symbol is defined in */
} plan_ldstub_rel;

/* Calls fn for each branch relocation of input section secname of path (as
 * the map of k names it). Returns the number seen, or -1 when the file or
 * section cannot be read. */
long plan_ldstub_branches(const plan_ldstub_link *k, const char *path,
                          const char *secname,
                          void (*fn)(const plan_ldstub_rel *, void *),
                          void *ctx);

#endif
