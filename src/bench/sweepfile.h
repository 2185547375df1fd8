/* nb sweepfile: reading results back. The CSV that `bench udp --csv`
 * writes (docs/formats/sweep.md), and the figure a benchmark command
 * printed, for `bench compare`. */
#ifndef CP_NB_SWEEPFILE_H
#define CP_NB_SWEEPFILE_H

#include <stddef.h>

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

/* The figure a command printed: the last '"KEY": NUMBER' when key is not
 * NULL, else the last number in the text. Returns 0 or -1 when none. */
int nb_extract_figure(const char *text, const char *key, double *v);

#endif
