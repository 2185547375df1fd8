/* rep_svg: a small SVG writer with no dependency. A document is opened on a
 * FILE, shapes and text are written in order, and rep_svg_end closes it.
 * Every string that reaches the output (text, titles, class names, colours)
 * is XML-escaped here; bytes that XML 1.0 forbids and broken UTF-8 become
 * '?'. Numbers are written with at most two decimals, so output is stable
 * and diffable.
 *
 * On top of the primitives: linear scales with "nice" ticks, axes, bar charts
 * (horizontal and vertical, with optional error bars), an x/y chart (lines,
 * markers, error bars: rates against offered load) and a heat-map grid (one
 * cell per cache set). Charts draw into a box of an open document, so one
 * document can hold several; rep_svg_begin/rep_svg_end around a single chart
 * makes a standalone .svg file, which is also valid inline in HTML5.
 *
 *   rep_svg *s = rep_svg_begin(f, 640, 400, "misses per set");
 *   rep_svg_hbars(s, &(rep_svg_box){0, 0, 640, 400}, bars, n, &opts);
 *   if (rep_svg_end(s, &err) < 0) ...
 *
 * Write errors stick: drawing calls never fail on their own, rep_svg_end
 * reports the first error. Library code: nothing here prints on its own. */
#ifndef CP_REP_SVG_H
#define CP_REP_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "util/util.h"

typedef struct rep_svg rep_svg;

/* A rectangle in document coordinates (y grows downwards). */
typedef struct rep_svg_box {
    double x, y, w, h;
} rep_svg_box;

/* Presentation of a shape. NULL / 0 fields are left out of the output
 * (SVG defaults then apply: black fill, no stroke). */
typedef struct rep_svg_style {
    const char *fill;     /* "#1f77b4", "none", ... */
    const char *stroke;
    double stroke_width;  /* 0: attribute left out */
    double opacity;       /* 0: left out (means 1) */
    const char *cls;      /* class attribute, for tests and CSS */
    const char *title;    /* tooltip: a <title> child */
    const char *dash;     /* stroke-dasharray, e.g. "4 2" */
} rep_svg_style;

typedef enum rep_svg_anchor {
    REP_SVG_START,
    REP_SVG_MIDDLE,
    REP_SVG_END,
} rep_svg_anchor;

typedef struct rep_svg_font {
    double size;           /* px; 0 means 12 */
    rep_svg_anchor anchor;
    int bold;
    double rotate;         /* degrees around (x, y), e.g. -90 */
    const char *fill;      /* NULL: the document's text colour */
    const char *cls;
    int monospace;
} rep_svg_font;

/* --- document and primitives ------------------------------------------- */

/* Writes the <svg> start tag (with xmlns, width, height, viewBox), a default
 * font and a <title> when title is not NULL. NULL on out of memory. */
rep_svg *rep_svg_begin(FILE *f, double width, double height,
                       const char *title);
/* Closes every open group and the document, frees s. 0, or -1 with err set
 * when a write failed or nesting went wrong. */
int rep_svg_end(rep_svg *s, cp_err *err);

void rep_svg_rect(rep_svg *s, double x, double y, double w, double h,
                  const rep_svg_style *st);
void rep_svg_line(rep_svg *s, double x1, double y1, double x2, double y2,
                  const rep_svg_style *st);
void rep_svg_circle(rep_svg *s, double cx, double cy, double r,
                    const rep_svg_style *st);
/* n points; NaN coordinates split the line (gaps). */
void rep_svg_polyline(rep_svg *s, const double *xs, const double *ys,
                      size_t n, const rep_svg_style *st);
void rep_svg_text(rep_svg *s, double x, double y, const char *text,
                  const rep_svg_font *font);
/* printf-style text (formatted, then escaped). */
void rep_svg_textf(rep_svg *s, double x, double y, const rep_svg_font *font,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A vertical error bar at x from ylo to yhi with caps cap px wide. */
void rep_svg_errbar(rep_svg *s, double x, double ylo, double yhi, double cap,
                    const rep_svg_style *st);
/* A horizontal one, at y from xlo to xhi. */
void rep_svg_herrbar(rep_svg *s, double y, double xlo, double xhi, double cap,
                     const rep_svg_style *st);
/* <g> with optional class and id (both escaped); groups nest (up to 16). */
void rep_svg_group_begin(rep_svg *s, const char *cls, const char *id);
void rep_svg_group_end(rep_svg *s);
/* A comment (a "--" inside is broken up). */
void rep_svg_comment(rep_svg *s, const char *text);

/* Writes text escaped for XML character data and attribute values. */
void rep_svg_escape(FILE *f, const char *text);
/* Estimated width in px of text at font size px (for layout only). */
double rep_svg_text_width(const char *text, double size);

/* --- scales, ticks, axes ----------------------------------------------- */

/* Maps the domain [d0, d1] linearly onto the range [r0, r1]. */
typedef struct rep_svg_scale {
    double d0, d1, r0, r1;
} rep_svg_scale;

double rep_svg_map(const rep_svg_scale *sc, double v);
/* "Nice" tick values (1, 2, 5 x 10^k steps) covering [lo, hi], at most
 * maxticks of them (>= 2) written to ticks (room for cap). Returns the
 * count; *lo_out and *hi_out (may be NULL) get the rounded-out domain. */
size_t rep_svg_ticks(double lo, double hi, size_t maxticks, double *ticks,
                     size_t cap, double *lo_out, double *hi_out);
/* Formats a tick value compactly: 1500 -> "1.5k", 2e6 -> "2M", 0.25 ->
 * "0.25". buf has at least 32 bytes. */
const char *rep_svg_fmt_num(double v, char *buf);

typedef enum rep_svg_side {
    REP_SVG_BOTTOM, /* x axis below the plot: ticks point down */
    REP_SVG_LEFT,   /* y axis left of the plot */
} rep_svg_side;

/* An axis along the plot box `plot` on side `side`, with ticks at the given
 * values (mapped through sc), light grid lines across the plot when grid,
 * tick labels (rep_svg_fmt_num, with suffix appended, e.g. "%") and a
 * label. */
void rep_svg_axis(rep_svg *s, const rep_svg_box *plot, rep_svg_side side,
                  const rep_svg_scale *sc, const double *ticks, size_t nticks,
                  const char *suffix, const char *label, int grid);

/* --- charts ------------------------------------------------------------ */

/* One bar. err_lo/err_hi: error bar ends in value units (both NaN for
 * none). color NULL: the palette colour of the bar's series (0). */
typedef struct rep_svg_bar {
    const char *label;
    double value;
    double err_lo, err_hi;
    const char *color;
    const char *title; /* tooltip; NULL: "label: value" */
} rep_svg_bar;

typedef struct rep_svg_chart {
    const char *title;   /* drawn above the plot; NULL: none */
    const char *xlabel;
    const char *ylabel;
    const char *suffix;  /* after value labels and ticks ("%", " KiB") */
    int value_labels;    /* write each bar's value next to it */
    int value_decimals;  /* decimals of value labels (0..6) */
    double vmin, vmax;   /* value axis; both 0: from the data (from 0) */
    const char *cls;     /* class of the chart's <g> */
} rep_svg_chart;

/* The palette: 10 distinguishable colours (colour-blind friendly order). */
const char *rep_svg_color(size_t i);

/* Bars left to right, labels under them (rotated when crowded). */
void rep_svg_vbars(rep_svg *s, const rep_svg_box *box, const rep_svg_bar *bars,
                   size_t n, const rep_svg_chart *c);
/* Bars top to bottom, labels on the left: best for function names. */
void rep_svg_hbars(rep_svg *s, const rep_svg_box *box, const rep_svg_bar *bars,
                   size_t n, const rep_svg_chart *c);

/* A series of an x/y chart. yerr_lo/yerr_hi: NULL, or n values (absolute
 * ends of the error bar: y - sd, y + sd). */
typedef struct rep_svg_series {
    const char *name;
    const double *x, *y;
    const double *yerr_lo, *yerr_hi;
    size_t n;
    const char *color;   /* NULL: palette */
    int markers;         /* draw a circle at each point */
    int no_line;         /* points only */
} rep_svg_series;

/* Lines with markers and error bars, a legend when there are several series
 * (or one with a name). */
void rep_svg_xy(rep_svg *s, const rep_svg_box *box, const rep_svg_series *ser,
                size_t nser, const rep_svg_chart *c);

/* A heat-map grid: values[i] drawn as cell i, row-major with `cols` cells a
 * row (the last row may be short). Colour runs from white (vmin) through
 * yellow and orange to dark red (vmax); vmin == vmax: from the data. Rows
 * are labelled with the index of their first cell every label_every rows
 * (0: never), and a colour legend is drawn on the right. */
typedef struct rep_svg_heat {
    const char *title;
    unsigned cols;
    double vmin, vmax;
    unsigned label_every;
    const char *row_label;  /* prefix of row labels, e.g. "set " */
    const char *legend;     /* legend caption, e.g. "misses" */
    /* Tooltip of a cell: writes into buf (size n). NULL: "i: value". */
    void (*cell_title)(void *ctx, size_t i, double v, char *buf, size_t n);
    void *ctx;
} rep_svg_heat;

void rep_svg_heatmap(rep_svg *s, const rep_svg_box *box, const double *values,
                     size_t n, const rep_svg_heat *h);
/* The heat-map colour of t in [0, 1] as "#rrggbb" into buf (8 bytes). */
const char *rep_svg_heat_color(double t, char *buf);

#endif
