/* nb sweepfile: the CSV that `bench udp --csv` writes and `bench compare`
 * reads back (docs/formats/sweep.md), both here so the columns cannot
 * drift apart, and the figure a benchmark command printed. */
#ifndef CP_NB_SWEEPFILE_H
#define CP_NB_SWEEPFILE_H

#include <stddef.h>
#include <stdio.h>

#include "bench/udp.h"
#include "util/util.h"

typedef struct nb_sweep_file {
    char label[64];     /* "# label:" header, empty when absent */
    nb_udp_step *steps; /* pass, rate, requested, sent, answered, reply_rate */
    size_t n;
} nb_sweep_file;

/* Parses CSV text (name for messages). Columns are found by name: pass,
 * rate, requested, answered and reply_rate are required, sent is optional
 * (requested when absent). Returns 0 or -1 with err naming the line. */
int nb_sweep_parse(const char *text, size_t len, const char *name,
                   nb_sweep_file *out, cp_err *err);
/* Reads and parses a file. */
int nb_sweep_read(const char *path, nb_sweep_file *out, cp_err *err);
void nb_sweep_free(nb_sweep_file *f);

/* Writes the "# codeplace sweep 1" header lines (label may be NULL) and the
 * column names; then one row per finished step. Empty cells for values that
 * are not finite. */
void nb_sweep_write_header(FILE *o, const char *label, const char *peer,
                           unsigned size, double step_s, double timeout_s);
void nb_sweep_write_row(FILE *o, const nb_udp_step *s);

/* The figure a command printed: the last '"KEY": NUMBER' when key is not
 * NULL, else the last number in the text. Returns 0 or -1 when none. */
int nb_extract_figure(const char *text, const char *key, double *v);

#endif
