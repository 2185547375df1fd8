/* nb ctrfile: the JSON that `codeplace counters --json` writes (kind
 * "codeplace counters 1"), read back for `bench compare`: misses per echo
 * and echo rate of one image (its label), next to sweep results. */
#ifndef CP_NB_CTRFILE_H
#define CP_NB_CTRFILE_H

#include "util/util.h"

typedef struct nb_ctr_file {
    char label[64];         /* "label", or "" */
    double misses_per_echo; /* or misses_per_event without --ping */
    double echo_rate_hz;    /* NAN without --ping */
} nb_ctr_file;

/* 1 when text is a counters JSON document. */
int nb_ctr_is_counters(const char *text);
/* Parses one (name for messages). Fails when the per-echo figure is null
 * (a counter saturated, or no events) or missing. */
int nb_ctr_parse(const char *text, const char *name, nb_ctr_file *out,
                 cp_err *err);

#endif
