/* rep heat: heat maps of a cache's sets (csim_analyze's report): how many
 * hot lines map to each set, where more than the ways means conflicts. */
#ifndef CP_REP_HEAT_H
#define CP_REP_HEAT_H

#include <stdio.h>

#include "cache/cache.h"
#include "util/util.h"

/* Text: one character per set, rows of `cols` sets (64 when 0): '.' none,
 * 1-9 hot lines, '*' ten or more; each row starts with its first set. */
void rep_heat_text(FILE *f, const csim_report *r, unsigned cols);
/* A self-contained SVG, one cell per set coloured by its hot lines, with a
 * tooltip per set. 0, or -1 with err set (a write error). */
int rep_heat_svg(FILE *f, const csim_report *r, const char *title,
                 cp_err *err);

#endif
