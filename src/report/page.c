/* rep: the profile as pictures: a standalone SVG and one self-contained HTML
 * page (inline CSS and SVG, a Content-Security-Policy that forbids every
 * load, no scripts). */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"

#ifndef CODEPLACE_VERSION
#define CODEPLACE_VERSION "0.1.0"
#endif

#define PLOT_W 760
#define PLOT_TOP_DEFAULT 15
#define PLOT_LIBS_MAX 12

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* Colour of a library: stable within one report (its rank). */
static const char *lib_color(const rep_profile *p, const char *lib)
{
    for (size_t i = 0; i < p->nlibs; i++)
        if (!strcmp(p->libs[i].name, lib))
            return p->libs[i].functions ? rep_svg_color(i) : "#999999";
    return "#999999";
}

static const rep_profile *sort_prof;
static int cmp_lib_misses(const void *a, const void *b)
{
    const rep_group *x = &sort_prof->libs[*(const size_t *)a];
    const rep_group *y = &sort_prof->libs[*(const size_t *)b];
    if (x->misses != y->misses)
        return x->misses > y->misses ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Bars per library, by samples (or by misses). */
static size_t lib_bars(const rep_profile *p, rep_svg_bar *bars, char tips[][160],
                       int misses)
{
    size_t order[PLOT_LIBS_MAX * 4], no = 0;
    for (size_t i = 0; i < p->nlibs && no < PLOT_LIBS_MAX * 4; i++)
        order[no++] = i;
    if (misses) {
        sort_prof = p;
        qsort(order, no, sizeof order[0], cmp_lib_misses);
    }
    size_t n = 0;
    for (size_t k = 0; k < no && n < PLOT_LIBS_MAX; k++) {
        const rep_group *g = &p->libs[order[k]];
        uint64_t v = misses ? g->misses : g->samples;
        if (!v)
            continue;
        double s = pct(v, misses ? p->total_misses : p->total);
        snprintf(tips[n], 160, "%s: %" PRIu64 " %s (%.1f%%), %zu functions, "
                 "%" PRIu64 " bytes", g->name, v, misses ? "misses" : "samples",
                 s, g->functions, g->bytes);
        bars[n] = (rep_svg_bar){g->name, s, NAN, NAN, lib_color(p, g->name),
                                tips[n]};
        n++;
    }
    return n;
}

static size_t func_bars(rep_profile *p, const rep_view *v, rep_svg_bar *bars,
                        char tips[][200], size_t max, int misses)
{
    rep_view fv = *v;
    fv.top = max;
    fv.sort = misses ? REP_SORT_MISSES : REP_SORT_SAMPLES;
    size_t n, nmatch;
    const rep_row **rows = rep_view_rows(p, &fv, &n, &nmatch);
    if (!rows)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const rep_row *r = rows[i];
        uint64_t val = misses ? r->misses : r->samples;
        if (!val)
            continue;
        double s = pct(val, misses ? p->total_misses : p->total);
        snprintf(tips[k], 200, "%s (%s): %" PRIu64 " %s, %.1f%%, %" PRIu32
                 " bytes", r->name, r->library, val,
                 misses ? "misses" : "samples", s, r->size);
        bars[k] = (rep_svg_bar){r->name, s, NAN, NAN, lib_color(p, r->library),
                                tips[k]};
        k++;
    }
    free(rows);
    rep_prof_sort(p, v->sort);
    return k;
}

static size_t plot_top(const rep_view *v)
{
    return v->top && v->top < 40 ? v->top : PLOT_TOP_DEFAULT;
}

/* The charts of one report, stacked from y; returns the height used. With
 * doc NULL only measures. */
static double charts(rep_svg *doc, rep_profile *p, const rep_view *v,
                     double y, int which)
{
    rep_svg_bar bars[40];
    static char ltips[PLOT_LIBS_MAX][160];
    static char ftips[40][200];
    double used = 0;
    for (int misses = 0; misses <= p->have_misses; misses++) {
        if (which & 1) {
            size_t n = lib_bars(p, bars, ltips, misses);
            double h = 80 + 26.0 * (double)n;
            if (doc) {
                rep_svg_chart c = {
                    .title = misses ? "Cache misses per library"
                                    : "Samples per library",
                    .xlabel = misses ? "share of all misses"
                                     : "share of all samples",
                    .suffix = "%", .value_labels = 1, .value_decimals = 1,
                    .cls = misses ? "chart hbar-chart libs-misses"
                                  : "chart hbar-chart libs"};
                rep_svg_hbars(doc, &(rep_svg_box){0, y + used, PLOT_W, h}, bars,
                              n, &c);
            }
            used += h + 10;
        }
        if (which & 2) {
            size_t n = func_bars(p, v, bars, ftips, plot_top(v), misses);
            double h = 80 + 20.0 * (double)n;
            if (doc) {
                char title[96];
                snprintf(title, sizeof title, "Top %zu functions by %s", n,
                         misses ? "cache misses" : "samples");
                rep_svg_chart c = {
                    .title = title,
                    .xlabel = misses ? "share of all misses"
                                     : "share of all samples",
                    .suffix = "%", .value_labels = 1, .value_decimals = 1,
                    .cls = misses ? "chart hbar-chart top-misses"
                                  : "chart hbar-chart top-functions"};
                rep_svg_hbars(doc, &(rep_svg_box){0, y + used, PLOT_W, h}, bars,
                              n, &c);
            }
            used += h + 10;
        }
    }
    return used;
}

int rep_write_svg(FILE *f, rep_profile *p, const rep_view *v, cp_err *err)
{
    double h = charts(NULL, p, v, 0, 3);
    rep_svg *s = rep_svg_begin(f, PLOT_W, h, "codeplace report: where the "
                               "samples fall");
    if (!s)
        return cp_seterr(err, "out of memory");
    rep_svg_rect(s, 0, 0, PLOT_W, h, &(rep_svg_style){.fill = "#fff"});
    charts(s, p, v, 0, 3);
    if (rep_svg_end(s, err) < 0)
        return -1;
    if (fflush(f) != 0 || ferror(f))
        return cp_seterr(err, "write error");
    return 0;
}

/* --- HTML -------------------------------------------------------------- */

static void esc(FILE *f, const char *s)
{
    rep_svg_escape(f, s ? s : "");
}

static void kv(FILE *f, const char *k, const char *v)
{
    fputs("<tr><th>", f);
    esc(f, k);
    fputs("</th><td>", f);
    esc(f, v);
    fputs("</td></tr>\n", f);
}

static void html_chart(FILE *f, rep_profile *p, const rep_view *v, int which,
                       cp_err *err, int *bad)
{
    double h = charts(NULL, p, v, 0, which);
    fputs("<figure>\n", f);
    rep_svg *s = rep_svg_begin(f, PLOT_W, h, which == 1 ? "samples per library"
                                                        : "top functions");
    if (!s) {
        *bad = 1;
        return;
    }
    charts(s, p, v, 0, which);
    if (rep_svg_end(s, err) < 0)
        *bad = 1;
    fputs("</figure>\n", f);
}

static const char css[] =
    "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:2em;"
    "color:#222;max-width:1100px}\n"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:"
    "1.6em;border-bottom:1px solid #ccc}\n"
    "table{border-collapse:collapse;font-size:.9em}\n"
    "table.data th,table.data td{padding:.2em .6em;border-bottom:1px solid "
    "#eee}\n"
    "table.data th{text-align:left;background:#f4f4f4}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "tr.other td{color:#777;font-style:italic}\n"
    "table.kv th{text-align:left;padding-right:1em;font-weight:normal;"
    "color:#555}\n"
    "figure{margin:1em 0}p.libsum{font-size:1.1em}\n"
    "footer{margin-top:3em;color:#888;font-size:.8em}\n";

int rep_write_html(FILE *f, rep_profile *p, const rep_view *v, cp_err *err)
{
    char b1[64], b2[64], line[512];
    int bad = 0, m = p->have_misses;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"
          "\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
          "'none'; style-src 'unsafe-inline'\">\n<meta name=\"viewport\" "
          "content=\"width=device-width, initial-scale=1\">\n<title>codeplace "
          "report: ", f);
    esc(f, v->image_path ? v->image_path : "profile");
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
    fputs("<h1>codeplace report</h1>\n", f);

    fputs("<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"kv\">\n",
          f);
    kv(f, "samples", v->samples_path);
    if (v->source && v->source[0])
        kv(f, "source", v->source);
    kv(f, "image", v->image_path);
    if (v->map_path)
        kv(f, "map", v->map_path);
    if (v->trace_path)
        kv(f, "trace", v->trace_path);
    snprintf(line, sizeof line, "%" PRIu64, p->total);
    kv(f, "total samples", line);
    if (v->rate_hz > 0) {
        kv(f, "rate", rep_rate(b1, p, v));
    }
    if (v->duration_s > 0) {
        snprintf(line, sizeof line, "%.3f s", v->duration_s);
        kv(f, "duration", line);
    }
    snprintf(line, sizeof line, "%" PRIu64 " (%s), %" PRIu64 " of them halted",
             p->outside, rep_pct(b1, p->outside, p->total), p->halted);
    kv(f, "in no function", line);
    if (v->dropped) {
        snprintf(line, sizeof line, "%" PRIu64, v->dropped);
        kv(f, "dropped by the profiler", line);
    }
    if (m) {
        snprintf(line, sizeof line, "%" PRIu64 "%s%s", p->total_misses,
                 v->cache_desc ? " in " : "", v->cache_desc ? v->cache_desc : "");
        kv(f, "cache misses", line);
    } else if (v->misses_note) {
        snprintf(line, sizeof line, "not counted: %s", v->misses_note);
        kv(f, "cache misses", line);
    }
    fputs("</table>\n", f);
    rep_lib_summary(line, sizeof line, p, 5);
    if (line[0]) {
        fputs("<p class=\"libsum\">", f);
        esc(f, line);
        fputs("</p>\n", f);
    }
    fputs("</section>\n", f);

    fputs("<section id=\"plots\">\n<h2>Where the time goes</h2>\n", f);
    html_chart(f, p, v, 1, err, &bad);
    html_chart(f, p, v, 2, err, &bad);
    fputs("</section>\n", f);

    size_t n, nmatch;
    const rep_row **rows = rep_view_rows(p, v, &n, &nmatch);
    if (!rows)
        return cp_seterr(err, "out of memory");
    fputs("<section id=\"functions\">\n<h2>Functions</h2>\n", f);
    fprintf(f, "<p>%zu of %zu rows with samples%s.</p>\n", n, nmatch,
            v->func_glob || v->lib_glob ? " that match the filters" : "");
    fputs("<table class=\"data\">\n<thead><tr><th>function</th><th>samples"
          "</th><th>share</th><th>bytes</th><th>samples/byte</th>", f);
    if (m)
        fputs("<th>misses</th><th>misses/byte</th>", f);
    fputs("<th>library</th><th>object</th><th>address</th></tr></thead>\n"
          "<tbody>\n", f);
    for (size_t i = 0; i < n; i++) {
        const rep_row *r = rows[i];
        fprintf(f, "<tr%s><td>", r->fn ? "" : " class=\"other\"");
        esc(f, r->name);
        fprintf(f, "</td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">"
                "%s</td>", r->samples, rep_pct(b1, r->samples, p->total));
        if (r->size)
            fprintf(f, "<td class=\"num\">%" PRIu32 "</td><td class=\"num\">"
                    "%.3f</td>", r->size, (double)r->samples / r->size);
        else
            fputs("<td class=\"num\">-</td><td class=\"num\">-</td>", f);
        if (m) {
            if (r->size)
                fprintf(f, "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">"
                        "%.3f</td>", r->misses, (double)r->misses / r->size);
            else
                fprintf(f, "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">"
                        "-</td>", r->misses);
        }
        fputs("<td>", f);
        esc(f, r->fn ? r->library : "");
        fputs("</td><td>", f);
        esc(f, r->fn ? r->fn->object : "");
        if (r->fn)
            fprintf(f, "</td><td>0x%08" PRIx32 "</td></tr>\n", r->addr);
        else
            fputs("</td><td></td></tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</section>\n", f);
    free(rows);

    for (int t = 0; t < 2; t++) {
        const rep_group *g = t ? p->secs : p->libs;
        size_t ng = t ? p->nsecs : p->nlibs;
        fprintf(f, "<section id=\"%s\">\n<h2>%s</h2>\n<table class=\"data\">\n"
                "<thead><tr><th>%s</th><th>samples</th><th>share</th>"
                "<th>functions</th><th>bytes</th>%s</tr></thead>\n<tbody>\n",
                t ? "sections" : "libraries", t ? "Sections" : "Libraries",
                t ? "section" : "library", m ? "<th>misses</th>" : "");
        for (size_t i = 0; i < ng; i++) {
            if (!g[i].samples && !g[i].misses && !v->all)
                continue;
            fputs("<tr><td>", f);
            esc(f, g[i].name);
            fprintf(f, "</td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">"
                    "%s</td><td class=\"num\">%zu</td><td class=\"num\">%" PRIu64
                    "</td>", g[i].samples, rep_pct(b2, g[i].samples, p->total),
                    g[i].functions, g[i].bytes);
            if (m)
                fprintf(f, "<td class=\"num\">%" PRIu64 "</td>", g[i].misses);
            fputs("</tr>\n", f);
        }
        fputs("</tbody>\n</table>\n</section>\n", f);
    }
    fputs("<footer>Generated by codeplace " CODEPLACE_VERSION
          " (codeplace report --html).</footer>\n</body>\n</html>\n", f);
    if (bad)
        return -1;
    if (fflush(f) != 0 || ferror(f))
        return cp_seterr(err, "write error");
    return 0;
}
