/* Heat maps of the sets: how many hot lines map to each set, as text and
 * as a self-contained SVG (written directly; no dependencies). */
#include "cache/cache.h"

#include <string.h>

void csim_heat_text(FILE *f, const csim_report *r, unsigned cols)
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

static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

int csim_heat_svg(FILE *f, const csim_report *r, const char *title)
{
    unsigned cols = r->nsets >= 1024 ? 64 : r->nsets >= 64 ? 32 : r->nsets;
    if (!cols)
        return -1;
    unsigned rows = (r->nsets + cols - 1) / cols;
    const unsigned cell = 12, left = 56, top = 48;
    unsigned w = left + cols * cell + 16, h = top + rows * cell + 64;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
               "height=\"%u\" viewBox=\"0 0 %u %u\" font-family=\"sans-serif\" "
               "font-size=\"11\">\n", w, h, w, h);
    fprintf(f, "<rect width=\"%u\" height=\"%u\" fill=\"#ffffff\"/>\n", w, h);
    fputs("<text x=\"8\" y=\"18\" font-size=\"14\">", f);
    esc(f, title ? title : "cache sets: hot lines per set");
    fputs("</text>\n", f);
    fprintf(f, "<text x=\"8\" y=\"36\">%u sets x %u ways, %u-byte lines; "
               "%u hot lines, %u sets hold more than %u</text>\n",
            r->nsets, r->cache.ways, r->cache.line, r->hot_lines,
            r->overfull_sets, r->cache.ways);
    for (unsigned row = 0; row < rows; row++)
        fprintf(f, "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">%u</text>\n",
                left - 4, top + row * cell + cell - 2, row * cols);
    for (uint32_t s = 0; s < r->nsets; s++) {
        const csim_sstat *st = &r->sstat[s];
        fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
                   "fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"1\">"
                   "<title>set %u: %u hot lines, %.1f lines per iteration, "
                   "%llu misses</title></rect>\n",
                left + (s % cols) * cell, top + (s / cols) * cell, cell, cell,
                colour(st->hot, r->cache.ways), s, st->hot, st->lines,
                (unsigned long long)st->misses);
    }
    /* Legend. */
    unsigned ly = top + rows * cell + 20;
    fprintf(f, "<text x=\"8\" y=\"%u\">hot lines per set:</text>\n", ly + 10);
    for (uint32_t k = 0; k <= r->cache.ways + 3; k++) {
        unsigned x = 120 + k * 36;
        fprintf(f, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" "
                   "fill=\"%s\"/>\n<text x=\"%u\" y=\"%u\">%u%s</text>\n",
                x, ly, cell, cell, colour(k, r->cache.ways), x + cell + 3,
                ly + 10, k, k == r->cache.ways + 3 ? "+" : "");
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
