/* wdir: a directory of output files replaced as a set (util/wfile.h does
 * one file). The writer fills a temporary directory beside the destination;
 * cp_wdir_commit puts it in the destination's place in one rename, so a full
 * disk or an error half-way leaves the old set (or no directory), never a
 * mix of old and new files. Files of the old directory that the new set
 * does not have are kept (hard-linked into the new one); a destination
 * holding anything but regular files is refused before anything is
 * written. */
#ifndef CP_WDIR_H
#define CP_WDIR_H

#include "util/util.h"

typedef struct cp_wdir {
    char *path; /* the destination (a symbolic link resolved) */
    char *tmp;  /* the temporary directory: write the files here */
} cp_wdir;

/* Makes the temporary directory. 0, or -1 with err naming path. */
int cp_wdir_open(cp_wdir *w, const char *path, cp_err *err);
/* Replaces the destination with the temporary directory and removes the
 * old one. 0, or -1 (err set; the temporary directory is removed and the
 * destination is as it was). */
int cp_wdir_commit(cp_wdir *w, cp_err *err);
/* Removes the temporary directory and what was written in it. */
void cp_wdir_abort(cp_wdir *w);

#endif
