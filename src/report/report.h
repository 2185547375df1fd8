/* rep: writing a flat profile out: text tables, CSV, JSON, folded stacks,
 * speedscope JSON, SVG plots and one self-contained HTML page. Writers take
 * an open FILE and never print elsewhere; they return 0, or -1 with err set
 * when the FILE reports a write error. */
#ifndef CP_REP_REPORT_H
#define CP_REP_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "report/profile.h"
#include "util/util.h"

/* What to show and the facts for the header. */
typedef struct rep_view {
    size_t top;             /* functions shown; 0: all */
    const char *lib_glob;   /* only functions whose library matches */
    const char *func_glob;  /* only functions whose name or an alias match */
    int all;                /* also functions without samples (or misses) */
    rep_sort sort;
    /* Header facts (NULL / 0 when unknown). */
    const char *samples_path, *image_path, *map_path, *trace_path;
    const char *source, *target;
    double rate_hz, duration_s;
    uint64_t dropped;
    const char *misses_note; /* why misses are not shown, or NULL */
    const char *cache_desc;  /* the cache misses were counted in */
} rep_view;

/* The rows the view selects, in sort order (the profile is sorted here);
 * *nmatch gets how many matched before --top. Free the array. */
const rep_row **rep_view_rows(rep_profile *p, const rep_view *v, size_t *n,
                              size_t *nmatch);

/* Which table CSV writes. */
typedef enum rep_table {
    REP_TABLE_FUNCS,
    REP_TABLE_LIBS,
    REP_TABLE_SECS,
} rep_table;

int rep_write_text(FILE *f, rep_profile *p, const rep_view *v, cp_err *err);
int rep_write_csv(FILE *f, rep_profile *p, const rep_view *v, rep_table t,
                  cp_err *err);
int rep_write_json(FILE *f, rep_profile *p, const rep_view *v, cp_err *err);
/* Brendan Gregg's folded stacks: "library;function count" per line. */
int rep_write_folded(FILE *f, rep_profile *p, const rep_view *v, cp_err *err);
/* speedscope's file format (a "sampled" profile, one stack per row:
 * library, function; weights are sample counts). */
int rep_write_speedscope(FILE *f, rep_profile *p, const rep_view *v,
                         cp_err *err);
/* A standalone SVG: samples per library and the top functions. */
int rep_write_svg(FILE *f, rep_profile *p, const rep_view *v, cp_err *err);
/* One HTML page, no external resources: summary, plots (inline SVG) and
 * tables. */
int rep_write_html(FILE *f, rep_profile *p, const rep_view *v, cp_err *err);

/* Shares as text: "12.3%"; "<0.1%" for small non-zero shares. */
const char *rep_pct(char *buf, uint64_t part, uint64_t whole);
/* The view's sample rate ("13.7 MHz") into buf (at least 32 bytes). A rate
 * made from a trace (source "trace": samples over simulated time) is good
 * to one sample in the total: a digit fewer than the total has (5,305
 * samples: 3 digits, the last good to +-1); a rate a recorder states (the
 * one asked for) gets up to 6. */
const char *rep_rate(char *buf, const rep_profile *p, const rep_view *v);
/* The one-line summary per library: "62 % libc.a, 30 % libgcc.a, ...". */
void rep_lib_summary(char *buf, size_t n, const rep_profile *p, size_t max);

#endif
