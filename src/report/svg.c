/* rep_svg: the document, primitives, escaping, scales, ticks and axes.
 * Charts built from these live in svg-chart.c. */
#include "report/svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 16

struct rep_svg {
    FILE *f;
    int depth;   /* open <g> elements */
    int bad;     /* nesting went wrong */
};

/* --- escaping and numbers ---------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one
 * (or encodes a character XML forbids). */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0; /* overlong or out of range */
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0; /* surrogates and non-characters XML forbids */
    return n;
}

void rep_svg_escape(FILE *f, const char *text)
{
    const unsigned char *p = (const unsigned char *)(text ? text : "");
    while (*p) {
        unsigned c = *p;
        switch (c) {
        case '&': fputs("&amp;", f); p++; continue;
        case '<': fputs("&lt;", f); p++; continue;
        case '>': fputs("&gt;", f); p++; continue;
        case '"': fputs("&quot;", f); p++; continue;
        case '\'': fputs("&#39;", f); p++; continue;
        case '\t': case '\n': case '\r': fputc((int)c, f); p++; continue;
        default: break;
        }
        if (c < 0x20 || c == 0x7f) {
            fputc('?', f);
            p++;
            continue;
        }
        size_t n = utf8_len(p);
        if (!n) {
            fputc('?', f);
            p++;
            continue;
        }
        fwrite(p, 1, n, f);
        p += n;
    }
}

double rep_svg_text_width(const char *text, double size)
{
    double w = 0;
    if (size <= 0)
        size = 12;
    for (const unsigned char *p = (const unsigned char *)(text ? text : "");
         *p; p++) {
        if ((*p & 0xc0) == 0x80)
            continue; /* UTF-8 continuation: counted with its lead byte */
        /* DejaVu Sans, the widest of the fonts the documents ask for. */
        if (strchr("il.,:;|!'` ", *p))
            w += 0.32;
        else if (*p >= 'A' && *p <= 'Z')
            w += 0.72;
        else if (strchr("mwMW%", *p))
            w += 0.92;
        else
            w += 0.62;
    }
    return w * size;
}

/* Writes a coordinate: at most two decimals, no trailing zeros, no "-0". */
static void num(FILE *f, double v)
{
    char buf[48];
    if (!isfinite(v))
        v = 0;
    double r = round(v * 100) / 100;
    if (r == 0)
        r = 0; /* -0 -> 0 */
    snprintf(buf, sizeof buf, "%.2f", r);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *e = buf + strlen(buf) - 1;
        while (e > dot && *e == '0')
            *e-- = 0;
        if (e == dot)
            *e = 0;
    }
    fputs(buf, f);
}

static void attr_num(FILE *f, const char *name, double v)
{
    fprintf(f, " %s=\"", name);
    num(f, v);
    fputc('"', f);
}

static void attr_str(FILE *f, const char *name, const char *v)
{
    if (!v)
        return;
    fprintf(f, " %s=\"", name);
    rep_svg_escape(f, v);
    fputc('"', f);
}

static void style_attrs(FILE *f, const rep_svg_style *st)
{
    if (!st)
        return;
    attr_str(f, "class", st->cls);
    attr_str(f, "fill", st->fill);
    attr_str(f, "stroke", st->stroke);
    if (st->stroke_width > 0)
        attr_num(f, "stroke-width", st->stroke_width);
    if (st->opacity > 0 && st->opacity < 1)
        attr_num(f, "opacity", st->opacity);
    attr_str(f, "stroke-dasharray", st->dash);
}

/* Ends an element: "/>" or, with a tooltip, "><title>..</title></tag>". */
static void close_el(FILE *f, const char *tag, const rep_svg_style *st)
{
    if (st && st->title) {
        fputs("><title>", f);
        rep_svg_escape(f, st->title);
        fprintf(f, "</title></%s>\n", tag);
    } else {
        fputs("/>\n", f);
    }
}

/* --- document ---------------------------------------------------------- */

rep_svg *rep_svg_begin(FILE *f, double width, double height,
                       const char *title)
{
    rep_svg *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->f = f;
    fputs("<svg xmlns=\"http://www.w3.org/2000/svg\"", f);
    attr_num(f, "width", width);
    attr_num(f, "height", height);
    fputs(" viewBox=\"0 0 ", f);
    num(f, width);
    fputc(' ', f);
    num(f, height);
    fputs("\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
          " font-size=\"12\" role=\"img\"", f);
    attr_str(f, "aria-label", title);
    fputs(">\n", f);
    if (title) {
        fputs("<title>", f);
        rep_svg_escape(f, title);
        fputs("</title>\n", f);
    }
    return s;
}

int rep_svg_end(rep_svg *s, cp_err *err)
{
    if (!s)
        return cp_seterr(err, "svg: no document");
    int bad = s->bad;
    while (s->depth > 0) {
        fputs("</g>\n", s->f);
        s->depth--;
        bad = 1;
    }
    fputs("</svg>\n", s->f);
    int ioerr = ferror(s->f);
    free(s);
    if (ioerr)
        return cp_seterr(err, "svg: write error");
    if (bad)
        return cp_seterr(err, "svg: groups not closed in order");
    return 0;
}

void rep_svg_rect(rep_svg *s, double x, double y, double w, double h,
                  const rep_svg_style *st)
{
    if (w < 0) {
        x += w;
        w = -w;
    }
    if (h < 0) {
        y += h;
        h = -h;
    }
    fputs("<rect", s->f);
    attr_num(s->f, "x", x);
    attr_num(s->f, "y", y);
    attr_num(s->f, "width", w);
    attr_num(s->f, "height", h);
    style_attrs(s->f, st);
    close_el(s->f, "rect", st);
}

void rep_svg_line(rep_svg *s, double x1, double y1, double x2, double y2,
                  const rep_svg_style *st)
{
    fputs("<line", s->f);
    attr_num(s->f, "x1", x1);
    attr_num(s->f, "y1", y1);
    attr_num(s->f, "x2", x2);
    attr_num(s->f, "y2", y2);
    style_attrs(s->f, st);
    if (!st || !st->stroke)
        fputs(" stroke=\"#000\"", s->f);
    close_el(s->f, "line", st);
}

void rep_svg_circle(rep_svg *s, double cx, double cy, double r,
                    const rep_svg_style *st)
{
    fputs("<circle", s->f);
    attr_num(s->f, "cx", cx);
    attr_num(s->f, "cy", cy);
    attr_num(s->f, "r", r);
    style_attrs(s->f, st);
    close_el(s->f, "circle", st);
}

void rep_svg_polyline(rep_svg *s, const double *xs, const double *ys,
                      size_t n, const rep_svg_style *st)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (!isfinite(xs[i]) || !isfinite(ys[i])))
            i++;
        size_t j = i;
        while (j < n && isfinite(xs[j]) && isfinite(ys[j]))
            j++;
        if (j > i) {
            fputs("<polyline points=\"", s->f);
            for (size_t k = i; k < j; k++) {
                if (k > i)
                    fputc(' ', s->f);
                num(s->f, xs[k]);
                fputc(',', s->f);
                num(s->f, ys[k]);
            }
            fputc('"', s->f);
            style_attrs(s->f, st);
            if (!st || !st->fill)
                fputs(" fill=\"none\"", s->f);
            if (!st || !st->stroke)
                fputs(" stroke=\"#000\"", s->f);
            close_el(s->f, "polyline", st);
        }
        i = j;
    }
}

void rep_svg_text(rep_svg *s, double x, double y, const char *text,
                  const rep_svg_font *font)
{
    static const rep_svg_font plain;
    static const char *const anchors[] = {"start", "middle", "end"};
    if (!font)
        font = &plain;
    fputs("<text", s->f);
    attr_num(s->f, "x", x);
    attr_num(s->f, "y", y);
    attr_str(s->f, "class", font->cls);
    if (font->size > 0 && font->size != 12)
        attr_num(s->f, "font-size", font->size);
    if (font->anchor != REP_SVG_START)
        attr_str(s->f, "text-anchor", anchors[font->anchor % 3]);
    if (font->bold)
        fputs(" font-weight=\"bold\"", s->f);
    if (font->monospace)
        fputs(" font-family=\"DejaVu Sans Mono, monospace\"", s->f);
    attr_str(s->f, "fill", font->fill);
    if (font->rotate != 0) {
        fputs(" transform=\"rotate(", s->f);
        num(s->f, font->rotate);
        fputc(' ', s->f);
        num(s->f, x);
        fputc(' ', s->f);
        num(s->f, y);
        fputs(")\"", s->f);
    }
    fputc('>', s->f);
    rep_svg_escape(s->f, text);
    fputs("</text>\n", s->f);
}

void rep_svg_textf(rep_svg *s, double x, double y, const rep_svg_font *font,
                   const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rep_svg_text(s, x, y, buf, font);
}

void rep_svg_errbar(rep_svg *s, double x, double ylo, double yhi, double cap,
                    const rep_svg_style *st)
{
    rep_svg_group_begin(s, st && st->cls ? st->cls : "errbar", NULL);
    rep_svg_style ls = st ? *st : (rep_svg_style){0};
    ls.cls = NULL;
    if (!ls.stroke)
        ls.stroke = "#333";
    rep_svg_line(s, x, ylo, x, yhi, &ls);
    ls.title = NULL;
    rep_svg_line(s, x - cap / 2, ylo, x + cap / 2, ylo, &ls);
    rep_svg_line(s, x - cap / 2, yhi, x + cap / 2, yhi, &ls);
    rep_svg_group_end(s);
}

void rep_svg_herrbar(rep_svg *s, double y, double xlo, double xhi, double cap,
                     const rep_svg_style *st)
{
    rep_svg_group_begin(s, st && st->cls ? st->cls : "errbar", NULL);
    rep_svg_style ls = st ? *st : (rep_svg_style){0};
    ls.cls = NULL;
    if (!ls.stroke)
        ls.stroke = "#333";
    rep_svg_line(s, xlo, y, xhi, y, &ls);
    ls.title = NULL;
    rep_svg_line(s, xlo, y - cap / 2, xlo, y + cap / 2, &ls);
    rep_svg_line(s, xhi, y - cap / 2, xhi, y + cap / 2, &ls);
    rep_svg_group_end(s);
}

void rep_svg_group_begin(rep_svg *s, const char *cls, const char *id)
{
    if (s->depth >= MAX_GROUPS) {
        s->bad = 1;
        return;
    }
    fputs("<g", s->f);
    attr_str(s->f, "class", cls);
    attr_str(s->f, "id", id);
    fputs(">\n", s->f);
    s->depth++;
}

void rep_svg_group_end(rep_svg *s)
{
    if (s->depth <= 0) {
        s->bad = 1;
        return;
    }
    fputs("</g>\n", s->f);
    s->depth--;
}

void rep_svg_comment(rep_svg *s, const char *text)
{
    fputs("<!-- ", s->f);
    for (const char *p = text ? text : ""; *p; p++) {
        if (*p == '-' && (p[1] == '-' || p[1] == 0))
            fputs("- ", s->f);
        else if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
            fputc('?', s->f);
        else
            fputc(*p, s->f);
    }
    fputs(" -->\n", s->f);
}

/* --- scales and ticks -------------------------------------------------- */

double rep_svg_map(const rep_svg_scale *sc, double v)
{
    if (sc->d1 == sc->d0)
        return (sc->r0 + sc->r1) / 2;
    return sc->r0 + (v - sc->d0) * (sc->r1 - sc->r0) / (sc->d1 - sc->d0);
}

/* The nice step (1, 2, 5 x 10^k) for a span over at most maxticks-1
 * intervals. */
static double nice_step(double span, size_t maxticks)
{
    double raw = span / (double)(maxticks - 1);
    double mag = pow(10, floor(log10(raw)));
    static const double m[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (m[i] * mag >= raw * (1 - 1e-9))
            return m[i] * mag;
    return 10 * mag;
}

size_t rep_svg_ticks(double lo, double hi, size_t maxticks, double *ticks,
                     size_t cap, double *lo_out, double *hi_out)
{
    if (maxticks < 2)
        maxticks = 2;
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0;
        hi = 1;
    }
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (hi == lo) {
        double d = lo == 0 ? 1 : fabs(lo) * 0.1;
        hi = lo + d;
        if (lo != 0)
            lo -= d;
    }
    double step = nice_step(hi - lo, maxticks);
    double a = floor(lo / step + 1e-9) * step;
    double b = ceil(hi / step - 1e-9) * step;
    /* Rounding out may need one more interval than asked: widen the step. */
    while ((b - a) / step + 1 > (double)maxticks + 1e-9) {
        step = nice_step(b - a, maxticks);
        a = floor(lo / step + 1e-9) * step;
        b = ceil(hi / step - 1e-9) * step;
    }
    size_t n = 0;
    for (double v = a; v <= b + step * 1e-6 && n < cap; v += step) {
        double r = round(v / step) * step; /* no 0.30000000000000004 */
        ticks[n++] = fabs(r) < step * 1e-9 ? 0 : r;
    }
    if (lo_out)
        *lo_out = a;
    if (hi_out)
        *hi_out = b;
    return n;
}

static void trim_zeros(char *buf)
{
    char *dot = strchr(buf, '.');
    if (!dot)
        return;
    char *e = buf + strlen(buf) - 1;
    while (e > dot && *e == '0')
        *e-- = 0;
    if (e == dot)
        *e = 0;
}

const char *rep_svg_fmt_num(double v, char *buf)
{
    static const struct { double div; const char *sfx; } units[] = {
        {1e9, "G"}, {1e6, "M"}, {1e3, "k"},
    };
    double a = fabs(v);
    if (!isfinite(v)) {
        strcpy(buf, "?");
        return buf;
    }
    for (size_t i = 0; i < 3; i++) {
        if (a >= units[i].div * (i == 2 ? 10 : 1)) {
            snprintf(buf, 32, "%.2f", v / units[i].div);
            trim_zeros(buf);
            strcat(buf, units[i].sfx);
            return buf;
        }
    }
    if (a >= 100 || a == 0)
        snprintf(buf, 32, "%.0f", v);
    else if (a >= 1)
        snprintf(buf, 32, "%.2f", v);
    else
        snprintf(buf, 32, "%.4f", v);
    trim_zeros(buf);
    if (!strcmp(buf, "-0"))
        strcpy(buf, "0");
    return buf;
}

void rep_svg_axis(rep_svg *s, const rep_svg_box *plot, rep_svg_side side,
                  const rep_svg_scale *sc, const double *ticks, size_t nticks,
                  const char *suffix, const char *label, int grid)
{
    const rep_svg_style axis = {.stroke = "#444", .stroke_width = 1};
    const rep_svg_style gridst = {.stroke = "#ddd", .stroke_width = 1};
    rep_svg_font tf = {.size = 11, .fill = "#333"};
    char b[32], lab[64];
    rep_svg_group_begin(s, side == REP_SVG_BOTTOM ? "axis x-axis"
                                                  : "axis y-axis", NULL);
    if (side == REP_SVG_BOTTOM) {
        double y = plot->y + plot->h;
        tf.anchor = REP_SVG_MIDDLE;
        for (size_t i = 0; i < nticks; i++) {
            double x = rep_svg_map(sc, ticks[i]);
            if (grid)
                rep_svg_line(s, x, plot->y, x, y, &gridst);
            rep_svg_line(s, x, y, x, y + 5, &axis);
            snprintf(lab, sizeof lab, "%s%s", rep_svg_fmt_num(ticks[i], b),
                     suffix ? suffix : "");
            rep_svg_text(s, x, y + 17, lab, &tf);
        }
        rep_svg_line(s, plot->x, y, plot->x + plot->w, y, &axis);
        if (label) {
            rep_svg_font lf = {.anchor = REP_SVG_MIDDLE, .cls = "axis-label"};
            rep_svg_text(s, plot->x + plot->w / 2, y + 34, label, &lf);
        }
    } else {
        double x = plot->x;
        tf.anchor = REP_SVG_END;
        double maxw = 0;
        for (size_t i = 0; i < nticks; i++) {
            double y = rep_svg_map(sc, ticks[i]);
            if (grid)
                rep_svg_line(s, x, y, x + plot->w, y, &gridst);
            rep_svg_line(s, x - 5, y, x, y, &axis);
            snprintf(lab, sizeof lab, "%s%s", rep_svg_fmt_num(ticks[i], b),
                     suffix ? suffix : "");
            double w = rep_svg_text_width(lab, 11);
            if (w > maxw)
                maxw = w;
            rep_svg_text(s, x - 8, y + 4, lab, &tf);
        }
        rep_svg_line(s, x, plot->y, x, plot->y + plot->h, &axis);
        if (label) {
            rep_svg_font lf = {.anchor = REP_SVG_MIDDLE, .rotate = -90,
                               .cls = "axis-label"};
            rep_svg_text(s, x - maxw - 18, plot->y + plot->h / 2, label, &lf);
        }
    }
    rep_svg_group_end(s);
}
