/* rep_diff: what changed between two builds of the same firmware: functions
 * whose size changed, that appeared or that disappeared (matched by name;
 * static functions that share a name are paired in address order), and how
 * many names of a name list still resolve. */
#ifndef CP_REP_DIFF_H
#define CP_REP_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "image/image.h"
#include "util/util.h"

typedef enum rep_diff_kind {
    REP_DIFF_SAME,
    REP_DIFF_CHANGED, /* size differs */
    REP_DIFF_ADDED,   /* only in the new build */
    REP_DIFF_REMOVED, /* only in the old build */
} rep_diff_kind;

typedef struct rep_diff_row {
    const char *name;
    rep_diff_kind kind;
    uint32_t old_addr, old_size; /* 0 when added */
    uint32_t new_addr, new_size; /* 0 when removed */
} rep_diff_row;

typedef struct rep_diff {
    rep_diff_row *rows; /* changed first (largest change first), then added,
                           removed (largest first), then the same (by name) */
    size_t n;
    size_t nsame, nchanged, nadded, nremoved;
    size_t nnosize; /* of nsame: inferred sizes (no st_size) that differ */
    uint64_t old_bytes, new_bytes; /* code bytes of all functions */
} rep_diff;

rep_diff *rep_diff_build(const img *old_im, const img *new_im, cp_err *err);
void rep_diff_free(rep_diff *d);

/* A name list: one function name per line; '#' starts a comment; blank
 * lines are ignored; the first word of a line is the name. */
typedef struct rep_names {
    char **name;
    size_t *line; /* line number of each name */
    size_t n;
} rep_names;

rep_names *rep_names_parse(const char *data, size_t len, const char *file,
                           cp_err *err);
rep_names *rep_names_read(const char *path, cp_err *err);
void rep_names_free(rep_names *l);

#endif
