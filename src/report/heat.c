/* Heat maps of a cache's sets: how many hot lines map to each set, as text
 * and as a self-contained SVG. */
#include "report/heat.h"

#include <string.h>

#include "report/svg.h"

void rep_heat_text(FILE *f, const csim_report *r, unsigned cols)
{
    if (!cols)
        cols = 64;
    for (uint32_t s = 0; s < r->nsets; s += cols) {
        fprintf(f, "  %5u  ", s);
        for (uint32_t k = s; k < s + cols && k < r->nsets; k++) {
            uint32_t h = r->sstat[k].hot;
            fputc(h == 0 ? '.' : h < 10 ? (char)('0' + h) : '*', f);
        }
        fputc('\n', f);
    }
}

/* Fill for a set holding h hot lines in a cache of `ways` ways: greys up
 * to the ways, then orange to red as the set is oversubscribed. */
static const char *colour(uint32_t h, uint32_t ways)
{
    static const char *const fit[] = {"#f2f2f2", "#c6dbef", "#6baed6",
                                      "#2171b5"};
    static const char *const over[] = {"#fdae6b", "#f16913", "#d94801",
                                       "#a63603", "#7f2704"};
    if (h <= ways) {
        if (!h)
            return fit[0];
        uint32_t i = 1 + (h - 1) * 3 / (ways ? ways : 1);
        return fit[i > 3 ? 3 : i];
    }
    uint32_t i = h - ways - 1;
    return over[i > 4 ? 4 : i];
}

int rep_heat_svg(FILE *f, const csim_report *r, const char *title,
                 cp_err *err)
{
    unsigned cols = r->nsets >= 1024 ? 64 : r->nsets >= 64 ? 32 : r->nsets;
    if (!cols)
        return cp_seterr(err, "no cache sets to draw");
    unsigned rows = (r->nsets + cols - 1) / cols;
    const double cell = 12, left = 56, top = 48;
    double w = left + cols * cell + 16, h = top + rows * cell + 64;
    rep_svg *g = rep_svg_begin(f, w, h, title ? title : "cache sets");
    if (!g)
        return cp_seterr(err, "out of memory");
    rep_svg_font big = {.size = 14}, small = {.size = 11};
    rep_svg_font lab = {.size = 11, .anchor = REP_SVG_END};
    rep_svg_text(g, 8, 18, title ? title : "cache sets: hot lines per set",
                 &big);
    rep_svg_textf(g, 8, 36, &small, "%u sets x %u ways, %u-byte lines; %u hot "
                  "lines, %u sets hold more than %u", r->nsets, r->cache.ways,
                  r->cache.line, r->hot_lines, r->overfull_sets,
                  r->cache.ways);
    for (unsigned row = 0; row < rows; row++)
        rep_svg_textf(g, left - 4, top + row * cell + cell - 2, &lab, "%u",
                      row * cols);
    rep_svg_group_begin(g, "sets", NULL);
    for (uint32_t s = 0; s < r->nsets; s++) {
        const csim_sstat *st = &r->sstat[s];
        char tip[128];
        snprintf(tip, sizeof tip, "set %u: %u hot lines, %.1f lines per "
                 "iteration, %llu misses", s, st->hot, st->lines,
                 (unsigned long long)st->misses);
        rep_svg_style sty = {.fill = colour(st->hot, r->cache.ways),
                             .stroke = "#ffffff", .stroke_width = 1,
                             .cls = "set", .title = tip};
        rep_svg_rect(g, left + (s % cols) * cell, top + (s / cols) * cell,
                     cell, cell, &sty);
    }
    rep_svg_group_end(g);
    double ly = top + rows * cell + 20;
    rep_svg_text(g, 8, ly + 10, "hot lines per set:", &small);
    for (uint32_t k = 0; k <= r->cache.ways + 3; k++) {
        double x = 120 + k * 36;
        rep_svg_rect(g, x, ly, cell, cell,
                     &(rep_svg_style){.fill = colour(k, r->cache.ways)});
        rep_svg_textf(g, x + cell + 3, ly + 10, &small, "%u%s", k,
                      k == r->cache.ways + 3 ? "+" : "");
    }
    return rep_svg_end(g, err);
}
