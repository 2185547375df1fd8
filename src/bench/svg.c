#include "bench/svg.h"

#include <math.h>
#include <string.h>

#define W 720
#define H 440
#define ML 80
#define MR 150
#define MT 40
#define MB 60

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c",
                                      "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#7f7f7f"};
#define NCOL (sizeof colours / sizeof colours[0])

static void text_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* A "nice" axis maximum and tick step for values up to max. */
static double nice_step(double max, double *top)
{
    if (!(max > 0))
        max = 1;
    double raw = max / 5, mag = pow(10, floor(log10(raw))), step;
    double r = raw / mag;
    step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
    *top = ceil(max / step - 1e-9) * step;
    return step;
}

static void frame(FILE *f, const nb_chart *c, double xtop, double xstep,
                  double ytop, double ystep, int xticks)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
            "font-size=\"12\">\n<rect width=\"%d\" height=\"%d\" "
            "fill=\"white\"/>\n", W, H, W, H, W, H);
    fputs("<text x=\"360\" y=\"22\" text-anchor=\"middle\" "
          "font-size=\"15\">", f);
    text_escaped(f, c->title);
    fputs("</text>\n", f);
    int pw = W - ML - MR, ph = H - MT - MB;
    for (double v = 0; v <= ytop + 1e-9; v += ystep) {
        double y = MT + ph - v / ytop * ph;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
                "text-anchor=\"end\">%g</text>\n", ML, y, ML + pw, y, ML - 6,
                y + 4, v);
    }
    if (xticks)
        for (double v = 0; v <= xtop + 1e-9; v += xstep) {
            double x = ML + v / xtop * pw;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                    "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" "
                    "text-anchor=\"middle\">%g</text>\n", x, MT, x, MT + ph,
                    x, MT + ph + 16, v);
        }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
            "fill=\"none\" stroke=\"black\"/>\n", ML, MT, pw, ph);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", ML + pw / 2,
            H - 18);
    text_escaped(f, c->xlabel);
    fprintf(f, "</text>\n<text transform=\"translate(18,%d) rotate(-90)\" "
            "text-anchor=\"middle\">", MT + ph / 2);
    text_escaped(f, c->ylabel);
    fputs("</text>\n", f);
}

int nb_svg_lines(FILE *f, const nb_chart *c, const nb_series *s, size_t ns)
{
    double xmax = 0, ymax = 0;
    for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            if (isfinite(s[k].x[i]) && s[k].x[i] > xmax)
                xmax = s[k].x[i];
            if (isfinite(s[k].y[i]) && s[k].y[i] > ymax)
                ymax = s[k].y[i];
        }
    if (c->diagonal && xmax > ymax)
        ymax = xmax;
    double xtop, ytop;
    double xstep = nice_step(xmax, &xtop), ystep = nice_step(ymax, &ytop);
    frame(f, c, xtop, xstep, ytop, ystep, 1);
    int pw = W - ML - MR, ph = H - MT - MB;
#define PX(v) (ML + (v) / xtop * pw)
#define PY(v) (MT + ph - (v) / ytop * ph)
    if (c->diagonal) {
        double d = xtop < ytop ? xtop : ytop;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#999\" stroke-dasharray=\"4,4\"/>\n", PX(0.0),
                PY(0.0), PX(d), PY(d));
    }
    for (size_t k = 0; k < ns; k++) {
        const char *col = colours[k % NCOL];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                "points=\"", col);
        for (size_t i = 0; i < s[k].n; i++)
            if (isfinite(s[k].y[i]))
                fprintf(f, "%.1f,%.1f ", PX(s[k].x[i]), PY(s[k].y[i]));
        fputs("\"/>\n", f);
        for (size_t i = 0; i < s[k].n; i++)
            if (isfinite(s[k].y[i]))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
                        "fill=\"%s\"/>\n", PX(s[k].x[i]), PY(s[k].y[i]), col);
        double ly = MT + 10 + 18.0 * (double)k;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-width=\"2\"/><text x=\"%d\" "
                "y=\"%.1f\">", W - MR + 12, ly, W - MR + 32, ly, col,
                W - MR + 38, ly + 4);
        text_escaped(f, s[k].name);
        fputs("</text>\n", f);
    }
#undef PX
#undef PY
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

int nb_svg_bars(FILE *f, const nb_chart *c, const char *const *name,
                const double *value, const double *err, size_t n)
{
    double ymax = 0;
    for (size_t i = 0; i < n; i++) {
        double v = value[i] + (err && isfinite(err[i]) ? err[i] : 0);
        if (isfinite(v) && v > ymax)
            ymax = v;
    }
    double ytop, ystep = nice_step(ymax, &ytop);
    frame(f, c, 1, 1, ytop, ystep, 0);
    int pw = W - ML - MR, ph = H - MT - MB;
    double slot = n ? (double)pw / (double)n : pw, bw = slot * 0.6;
    for (size_t i = 0; i < n; i++) {
        double x = ML + slot * (double)i + (slot - bw) / 2;
        double v = isfinite(value[i]) ? value[i] : 0;
        double y = MT + ph - v / ytop * ph;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                "fill=\"%s\"/>\n", x, y, bw, MT + ph - y, colours[i % NCOL]);
        if (err && isfinite(err[i]) && err[i] > 0) {
            double cx = x + bw / 2;
            double y1 = MT + ph - (v + err[i]) / ytop * ph;
            double y2 = MT + ph - (v - err[i] > 0 ? v - err[i] : 0) / ytop * ph;
            fprintf(f, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh12M%.1f %.1fh12\" "
                    "stroke=\"black\" stroke-width=\"1.5\"/>\n", cx, y1, y2,
                    cx - 6, y1, cx - 6, y2);
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
                x + bw / 2, MT + ph + 16);
        text_escaped(f, name[i]);
        fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"middle\">%.0f</text>\n", x + bw / 2, y - 6, v);
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
