/* wfile: output files written whole or not at all. A writer gets a FILE on
 * a temporary file next to the destination; cp_wfile_commit checks every
 * write, flushes it to disk and renames it over the destination, so a full
 * disk or a size limit leaves the old file (or none), never a partial one.
 * Destinations that are not regular files (/dev/null, a pipe) are written
 * directly. */
#ifndef CP_WFILE_H
#define CP_WFILE_H

#include <stdio.h>

#include "util/util.h"

typedef struct cp_wfile {
    FILE *f;    /* write here */
    char *path; /* the destination */
    char *tmp;  /* the temporary file, or NULL when writing directly */
} cp_wfile;

/* Opens the temporary file. 0, or -1 with err naming path. */
int cp_wfile_open(cp_wfile *w, const char *path, cp_err *err);
/* Flushes, syncs, closes and renames. 0, or -1 (err names the destination
 * and the reason; the temporary file is removed). */
int cp_wfile_commit(cp_wfile *w, cp_err *err);
/* Closes and removes the temporary file (after a failed writer). */
void cp_wfile_abort(cp_wfile *w);

/* Writes a whole file through fn (which returns < 0 on failure, err set
 * or not). 0 or -1. */
int cp_wfile_write(const char *path, int (*fn)(FILE *f, void *arg, cp_err *err),
                   void *arg, cp_err *err);

#endif
