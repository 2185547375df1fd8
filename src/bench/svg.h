/* nb svg: the two charts the benchmarks draw, written with fprintf into a
 * self-contained SVG file: lines (y against x, one series per pass, with an
 * optional y = x diagonal) and bars with error bars. */
#ifndef CP_NB_SVG_H
#define CP_NB_SVG_H

#include <stddef.h>
#include <stdio.h>

typedef struct nb_series {
    const char *name;
    const double *x, *y;
    size_t n;
} nb_series;

typedef struct nb_chart {
    const char *title, *xlabel, *ylabel;
    int diagonal; /* draw y = x */
} nb_chart;

/* Returns 0, or -1 when writing fails. */
int nb_svg_lines(FILE *f, const nb_chart *c, const nb_series *s, size_t ns);
/* Bars: value[i] with +- err[i] (err may be NULL), labelled name[i]. */
int nb_svg_bars(FILE *f, const nb_chart *c, const char *const *name,
                const double *value, const double *err, size_t n);

#endif
