/* rep_prof: a flat profile. PC samples are attributed to the image's
 * functions and summed per function, per library (the archive the map file
 * names) and per output section. Samples outside every function keep rows of
 * their own: "(halted)" for 0xffffffff, "(no function in .text)" for gaps in
 * a section of the image, "(memory NAME)" for a target memory (ROM, SRAM),
 * "(outside the image)" for the rest. Nothing is dropped: the rows always
 * add up to the total. Cache misses per function can be attached when a
 * trace has been replayed through a cache model. */
#ifndef CP_REP_PROFILE_H
#define CP_REP_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "image/image.h"
#include "samples/samples.h"
#include "target/target.h"
#include "util/util.h"

typedef struct rep_row {
    const char *name;     /* function, or "(halted)" etc. for other rows */
    const img_func *fn;   /* NULL for the other rows */
    uint32_t addr, size;  /* size 0 for the other rows */
    uint64_t samples;
    uint64_t misses;      /* valid when the profile has misses */
    const char *library;  /* archive, "(objects)", "(no map)", or the row
                             name for other rows */
    const char *section;  /* output section, or the row name */
} rep_row;

typedef struct rep_group {
    const char *name;
    uint64_t samples, misses, bytes;
    size_t functions;     /* functions of the image in the group */
} rep_group;

typedef struct rep_profile {
    rep_row *rows;        /* every function of the image, then the other
                             rows; sorted by rep_prof_sort */
    size_t nrows;
    rep_group *libs, *secs;  /* sorted by samples, then name */
    size_t nlibs, nsecs;
    uint64_t total;       /* all samples */
    uint64_t outside;     /* samples in the other rows */
    uint64_t halted;      /* of which at 0xffffffff */
    int have_misses;
    uint64_t total_misses;  /* misses are sums over miss_iters iterations */
    uint64_t miss_iters;    /* the warm iterations; writers print misses per
                               iteration (0 is taken as 1) */
    cp_pool *pool;
} rep_profile;

/* tg may be NULL (then "(memory ...)" rows are not named by target). */
rep_profile *rep_prof_build(const img *im, const smp *s, const tgt *tg,
                            cp_err *err);
void rep_prof_free(rep_profile *p);

/* Misses of one function (f), or of code outside every function (f NULL,
 * counted in the other row named name). */
typedef struct rep_miss {
    const img_func *f;
    const char *name;
    uint64_t misses;
} rep_miss;

/* Attaches misses (from a cache simulation of a trace) to the rows and
 * rebuilds the library and section sums. */
int rep_prof_set_misses(rep_profile *p, const rep_miss *m, size_t n,
                        cp_err *err);

typedef enum rep_sort {
    REP_SORT_SAMPLES,  /* most samples first */
    REP_SORT_DENSITY,  /* samples per byte */
    REP_SORT_SIZE,
    REP_SORT_NAME,
    REP_SORT_ADDR,
    REP_SORT_MISSES,
    REP_SORT_MISS_DENSITY,
} rep_sort;

/* "samples", "density", "size", "name", "addr", "misses", "miss-density";
 * -1 when unknown. */
int rep_sort_parse(const char *s, rep_sort *out);
void rep_prof_sort(rep_profile *p, rep_sort key);

/* Whether a row is an "other" row (no function). */
static inline int rep_row_other(const rep_row *r)
{
    return r->fn == NULL;
}

#endif
