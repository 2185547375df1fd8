/* rep_svg charts: bar charts, x/y charts and the heat-map grid, drawn with
 * the primitives of svg.c into a box of an open document. */
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAXTICKS 16

const char *rep_svg_color(size_t i)
{
    /* Okabe-Ito order, with two extra greys. */
    static const char *const pal[] = {
        "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7",
        "#56b4e9", "#f0e442", "#000000", "#999999", "#666666",
    };
    return pal[i % (sizeof pal / sizeof pal[0])];
}

const char *rep_svg_heat_color(double t, char *buf)
{
    static const double stop[4][3] = {
        {255, 255, 255}, {255, 224, 102}, {240, 140, 0}, {139, 0, 0},
    };
    if (!isfinite(t) || t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    double pos = t * 3;
    int k = (int)pos;
    if (k > 2)
        k = 2;
    double f = pos - k;
    int c[3];
    for (int i = 0; i < 3; i++)
        c[i] = (int)lround(stop[k][i] + (stop[k + 1][i] - stop[k][i]) * f);
    snprintf(buf, 8, "#%02x%02x%02x", c[0] & 0xff, c[1] & 0xff, c[2] & 0xff);
    return buf;
}

static int has_err(const rep_svg_bar *b)
{
    return isfinite(b->err_lo) && isfinite(b->err_hi);
}

/* The value domain of bars, rounded out to nice ticks. */
static size_t bar_domain(const rep_svg_bar *bars, size_t n,
                         const rep_svg_chart *c, double *ticks, double *lo,
                         double *hi)
{
    double a = 0, b = 0;
    if (c && (c->vmin != 0 || c->vmax != 0)) {
        a = c->vmin;
        b = c->vmax;
    } else {
        for (size_t i = 0; i < n; i++) {
            double v = isfinite(bars[i].value) ? bars[i].value : 0;
            if (v < a)
                a = v;
            if (v > b)
                b = v;
            if (has_err(&bars[i])) {
                if (bars[i].err_lo < a)
                    a = bars[i].err_lo;
                if (bars[i].err_hi > b)
                    b = bars[i].err_hi;
            }
        }
    }
    return rep_svg_ticks(a, b, 6, ticks, MAXTICKS, lo, hi);
}

static void value_label(char *buf, size_t n, double v, const rep_svg_chart *c)
{
    int dec = c && c->value_decimals >= 0 && c->value_decimals <= 6
                  ? c->value_decimals : 0;
    snprintf(buf, n, "%.*f%s", dec, v, c && c->suffix ? c->suffix : "");
}

static void bar_title(char *buf, size_t n, const rep_svg_bar *b,
                      const rep_svg_chart *c)
{
    char v[64];
    if (b->title) {
        snprintf(buf, n, "%s", b->title);
        return;
    }
    value_label(v, sizeof v, b->value, c);
    snprintf(buf, n, "%s: %s", b->label ? b->label : "", v);
}

/* Shortens s to fit maxw px at size px, ending it with "..". */
static void fit_label(char *out, size_t n, const char *s, double maxw,
                      double size)
{
    snprintf(out, n, "%s", s ? s : "");
    size_t len = strlen(out);
    if (rep_svg_text_width(out, size) <= maxw)
        return;
    while (len > 1) {
        len--;
        while (len > 0 && ((unsigned char)out[len] & 0xc0) == 0x80)
            len--; /* never cut a UTF-8 sequence */
        out[len] = 0;
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%s..", out);
        if (rep_svg_text_width(tmp, size) <= maxw || len <= 1) {
            snprintf(out, n, "%s", tmp);
            return;
        }
    }
}

static double draw_title(rep_svg *s, const rep_svg_box *box,
                         const rep_svg_chart *c)
{
    if (!c || !c->title)
        return 0;
    rep_svg_font tf = {.size = 14, .bold = 1, .anchor = REP_SVG_MIDDLE,
                       .cls = "chart-title"};
    rep_svg_text(s, box->x + box->w / 2, box->y + 16, c->title, &tf);
    return 26;
}

void rep_svg_hbars(rep_svg *s, const rep_svg_box *box, const rep_svg_bar *bars,
                   size_t n, const rep_svg_chart *c)
{
    double ticks[MAXTICKS], lo, hi;
    char lab[256], tip[512];
    rep_svg_group_begin(s, c && c->cls ? c->cls : "chart hbar-chart", NULL);
    double top = draw_title(s, box, c);
    size_t nt = bar_domain(bars, n, c, ticks, &lo, &hi);

    double lw = 0, vw = 0;
    for (size_t i = 0; i < n; i++) {
        double w = rep_svg_text_width(bars[i].label, 12);
        if (w > lw)
            lw = w;
        if (c && c->value_labels) {
            value_label(lab, sizeof lab, bars[i].value, c);
            w = rep_svg_text_width(lab, 11);
            if (w > vw)
                vw = w;
        }
    }
    if (lw > box->w * 0.45)
        lw = box->w * 0.45;
    double bottom = c && c->xlabel ? 42 : 26;
    rep_svg_box plot = {box->x + lw + 12, box->y + top + 4,
                        box->w - lw - 12 - vw - 14, 0};
    plot.h = box->h - top - 4 - bottom;
    if (plot.w < 10)
        plot.w = 10;
    if (plot.h < 10)
        plot.h = 10;
    rep_svg_scale sc = {lo, hi, plot.x, plot.x + plot.w};
    rep_svg_axis(s, &plot, REP_SVG_BOTTOM, &sc, ticks, nt,
                 c ? c->suffix : NULL, c ? c->xlabel : NULL, 1);

    double slot = n ? plot.h / (double)n : plot.h;
    double bh = slot * 0.72;
    rep_svg_font lf = {.anchor = REP_SVG_END, .cls = "bar-label"};
    rep_svg_font vf = {.size = 11, .fill = "#333", .cls = "bar-value"};
    rep_svg_group_begin(s, "bars", NULL);
    for (size_t i = 0; i < n; i++) {
        const rep_svg_bar *b = &bars[i];
        double y = plot.y + slot * (double)i + (slot - bh) / 2;
        double v = isfinite(b->value) ? b->value : 0;
        double x0 = rep_svg_map(&sc, lo < 0 && hi > 0 ? 0 : lo);
        double x1 = rep_svg_map(&sc, v);
        bar_title(tip, sizeof tip, b, c);
        rep_svg_style st = {.fill = b->color ? b->color : rep_svg_color(0),
                            .cls = "bar", .title = tip};
        rep_svg_rect(s, x0, y, x1 - x0, bh, &st);
        fit_label(lab, sizeof lab, b->label, lw, 12);
        rep_svg_text(s, plot.x - 6, y + bh / 2 + 4, lab, &lf);
        double vx = x1;
        if (has_err(b)) {
            double e0 = rep_svg_map(&sc, b->err_lo), e1 = rep_svg_map(&sc, b->err_hi);
            rep_svg_herrbar(s, y + bh / 2, e0, e1, bh * 0.6, NULL);
            if (e1 > vx)
                vx = e1;
        }
        if (c && c->value_labels) {
            value_label(lab, sizeof lab, b->value, c);
            rep_svg_text(s, vx + 4, y + bh / 2 + 4, lab, &vf);
        }
    }
    rep_svg_group_end(s);
    rep_svg_group_end(s);
}

void rep_svg_vbars(rep_svg *s, const rep_svg_box *box, const rep_svg_bar *bars,
                   size_t n, const rep_svg_chart *c)
{
    double ticks[MAXTICKS], lo, hi;
    char lab[256], tip[512], b32[32];
    rep_svg_group_begin(s, c && c->cls ? c->cls : "chart vbar-chart", NULL);
    double top = draw_title(s, box, c);
    size_t nt = bar_domain(bars, n, c, ticks, &lo, &hi);

    double tw = 0;
    for (size_t i = 0; i < nt; i++) {
        snprintf(lab, sizeof lab, "%s%s", rep_svg_fmt_num(ticks[i], b32),
                 c && c->suffix ? c->suffix : "");
        double w = rep_svg_text_width(lab, 11);
        if (w > tw)
            tw = w;
    }
    double left = tw + 14 + (c && c->ylabel ? 20 : 0);
    double plotw = box->w - left - 10;
    double slot = n ? plotw / (double)n : plotw;
    double lw = 0;
    for (size_t i = 0; i < n; i++) {
        double w = rep_svg_text_width(bars[i].label, 11);
        if (w > lw)
            lw = w;
    }
    int rotate = lw > slot * 0.95;
    double maxlab = box->h * 0.35;
    double labh = rotate ? (lw * 0.71 + 8 < maxlab ? lw * 0.71 + 8 : maxlab)
                         : 16;
    double bottom = labh + 8 + (c && c->xlabel ? 18 : 0);
    double vtop = c && c->value_labels ? 14 : 0;
    rep_svg_box plot = {box->x + left, box->y + top + 6 + vtop, plotw, 0};
    plot.h = box->h - top - 6 - vtop - bottom;
    if (plot.h < 10)
        plot.h = 10;
    rep_svg_scale sc = {lo, hi, plot.y + plot.h, plot.y};
    rep_svg_axis(s, &plot, REP_SVG_LEFT, &sc, ticks, nt,
                 c ? c->suffix : NULL, c ? c->ylabel : NULL, 1);
    const rep_svg_style axis = {.stroke = "#444", .stroke_width = 1};
    rep_svg_line(s, plot.x, plot.y + plot.h, plot.x + plot.w, plot.y + plot.h,
                 &axis);

    double bw = slot * 0.7;
    rep_svg_font vf = {.size = 11, .fill = "#333", .anchor = REP_SVG_MIDDLE,
                       .cls = "bar-value"};
    rep_svg_group_begin(s, "bars", NULL);
    for (size_t i = 0; i < n; i++) {
        const rep_svg_bar *b = &bars[i];
        double cx = plot.x + slot * ((double)i + 0.5);
        double v = isfinite(b->value) ? b->value : 0;
        double y0 = rep_svg_map(&sc, lo < 0 && hi > 0 ? 0 : lo);
        double y1 = rep_svg_map(&sc, v);
        bar_title(tip, sizeof tip, b, c);
        rep_svg_style st = {.fill = b->color ? b->color : rep_svg_color(0),
                            .cls = "bar", .title = tip};
        rep_svg_rect(s, cx - bw / 2, y1, bw, y0 - y1, &st);
        double vy = y1;
        if (has_err(b)) {
            double e0 = rep_svg_map(&sc, b->err_lo), e1 = rep_svg_map(&sc, b->err_hi);
            rep_svg_errbar(s, cx, e0, e1, bw * 0.5, NULL);
            if (e1 < vy)
                vy = e1;
        }
        if (c && c->value_labels) {
            value_label(lab, sizeof lab, b->value, c);
            rep_svg_text(s, cx, vy - 4, lab, &vf);
        }
        double ly = plot.y + plot.h + 14;
        if (rotate) {
            rep_svg_font lf = {.size = 11, .anchor = REP_SVG_END,
                               .rotate = -45, .cls = "bar-label"};
            fit_label(lab, sizeof lab, b->label, (labh - 8) / 0.71, 11);
            rep_svg_text(s, cx + 3, ly - 4, lab, &lf);
        } else {
            rep_svg_font lf = {.size = 11, .anchor = REP_SVG_MIDDLE,
                               .cls = "bar-label"};
            rep_svg_text(s, cx, ly, b->label, &lf);
        }
    }
    rep_svg_group_end(s);
    if (c && c->xlabel) {
        rep_svg_font xf = {.anchor = REP_SVG_MIDDLE, .cls = "axis-label"};
        rep_svg_text(s, plot.x + plot.w / 2, box->y + box->h - 4, c->xlabel,
                     &xf);
    }
    rep_svg_group_end(s);
}

void rep_svg_xy(rep_svg *s, const rep_svg_box *box, const rep_svg_series *ser,
                size_t nser, const rep_svg_chart *c)
{
    double xt[MAXTICKS], yt[MAXTICKS], xlo, xhi, ylo, yhi;
    char b32[32], lab[64];
    rep_svg_group_begin(s, c && c->cls ? c->cls : "chart xy-chart", NULL);
    double top = draw_title(s, box, c);
    double xa = INFINITY, xb = -INFINITY, ya = 0, yb = 0;
    for (size_t k = 0; k < nser; k++) {
        for (size_t i = 0; i < ser[k].n; i++) {
            double x = ser[k].x[i], y = ser[k].y[i];
            if (isfinite(x)) {
                xa = x < xa ? x : xa;
                xb = x > xb ? x : xb;
            }
            if (isfinite(y)) {
                ya = y < ya ? y : ya;
                yb = y > yb ? y : yb;
            }
            if (ser[k].yerr_lo && isfinite(ser[k].yerr_lo[i]) &&
                ser[k].yerr_lo[i] < ya)
                ya = ser[k].yerr_lo[i];
            if (ser[k].yerr_hi && isfinite(ser[k].yerr_hi[i]) &&
                ser[k].yerr_hi[i] > yb)
                yb = ser[k].yerr_hi[i];
        }
    }
    if (!isfinite(xa)) {
        xa = 0;
        xb = 1;
    }
    if (c && (c->vmin != 0 || c->vmax != 0)) {
        ya = c->vmin;
        yb = c->vmax;
    }
    size_t nxt = rep_svg_ticks(xa, xb, 8, xt, MAXTICKS, &xlo, &xhi);
    size_t nyt = rep_svg_ticks(ya, yb, 6, yt, MAXTICKS, &ylo, &yhi);
    double tw = 0;
    for (size_t i = 0; i < nyt; i++) {
        snprintf(lab, sizeof lab, "%s%s", rep_svg_fmt_num(yt[i], b32),
                 c && c->suffix ? c->suffix : "");
        double w = rep_svg_text_width(lab, 11);
        tw = w > tw ? w : tw;
    }
    double left = tw + 14 + (c && c->ylabel ? 20 : 0);
    double bottom = c && c->xlabel ? 42 : 26;
    rep_svg_box plot = {box->x + left, box->y + top + 8, box->w - left - 16,
                        box->h - top - 8 - bottom};
    rep_svg_scale sx = {xlo, xhi, plot.x, plot.x + plot.w};
    rep_svg_scale sy = {ylo, yhi, plot.y + plot.h, plot.y};
    rep_svg_axis(s, &plot, REP_SVG_LEFT, &sy, yt, nyt, c ? c->suffix : NULL,
                 c ? c->ylabel : NULL, 1);
    rep_svg_axis(s, &plot, REP_SVG_BOTTOM, &sx, xt, nxt, NULL,
                 c ? c->xlabel : NULL, 0);

    for (size_t k = 0; k < nser; k++) {
        const rep_svg_series *r = &ser[k];
        const char *col = r->color ? r->color : rep_svg_color(k);
        rep_svg_group_begin(s, "series", NULL);
        double px[256], py[256];
        /* Draw the line in chunks (polyline points in a bounded buffer). */
        if (!r->no_line) {
            size_t i = 0;
            while (i < r->n) {
                size_t m = 0, start = i;
                if (start > 0) { /* join with the previous chunk */
                    px[m] = rep_svg_map(&sx, r->x[start - 1]);
                    py[m++] = rep_svg_map(&sy, r->y[start - 1]);
                }
                while (i < r->n && m < 256) {
                    px[m] = isfinite(r->x[i]) ? rep_svg_map(&sx, r->x[i]) : NAN;
                    py[m++] = isfinite(r->y[i]) ? rep_svg_map(&sy, r->y[i]) : NAN;
                    i++;
                }
                rep_svg_style ls = {.stroke = col, .stroke_width = 2,
                                    .cls = "line"};
                rep_svg_polyline(s, px, py, m, &ls);
            }
        }
        for (size_t i = 0; i < r->n; i++) {
            if (!isfinite(r->x[i]) || !isfinite(r->y[i]))
                continue;
            double x = rep_svg_map(&sx, r->x[i]), y = rep_svg_map(&sy, r->y[i]);
            if (r->yerr_lo && r->yerr_hi && isfinite(r->yerr_lo[i]) &&
                isfinite(r->yerr_hi[i])) {
                rep_svg_style es = {.stroke = col};
                rep_svg_errbar(s, x, rep_svg_map(&sy, r->yerr_lo[i]),
                               rep_svg_map(&sy, r->yerr_hi[i]), 6, &es);
            }
            if (r->markers || r->no_line) {
                char tip[160], bx[32], by[32];
                snprintf(tip, sizeof tip, "%s%s%s, %s", r->name ? r->name : "",
                         r->name ? ": " : "", rep_svg_fmt_num(r->x[i], bx),
                         rep_svg_fmt_num(r->y[i], by));
                rep_svg_style ms = {.fill = col, .cls = "point", .title = tip};
                rep_svg_circle(s, x, y, 3, &ms);
            }
        }
        rep_svg_group_end(s);
    }
    /* Legend, top right inside the plot. */
    if (nser > 1 || (nser == 1 && ser[0].name)) {
        double lw = 0;
        for (size_t k = 0; k < nser; k++) {
            double w = rep_svg_text_width(ser[k].name, 11);
            lw = w > lw ? w : lw;
        }
        double lx = plot.x + plot.w - lw - 34, ly = plot.y + 6;
        rep_svg_group_begin(s, "legend", NULL);
        rep_svg_style bg = {.fill = "#fff", .stroke = "#ccc", .opacity = 0.9};
        rep_svg_rect(s, lx - 6, ly, lw + 38, 16 * (double)nser + 6, &bg);
        rep_svg_font lf = {.size = 11};
        for (size_t k = 0; k < nser; k++) {
            const char *col = ser[k].color ? ser[k].color : rep_svg_color(k);
            double y = ly + 12 + 16 * (double)k;
            rep_svg_style ls = {.stroke = col, .stroke_width = 2};
            rep_svg_line(s, lx, y - 4, lx + 20, y - 4, &ls);
            rep_svg_text(s, lx + 26, y, ser[k].name ? ser[k].name : "", &lf);
        }
        rep_svg_group_end(s);
    }
    rep_svg_group_end(s);
}

void rep_svg_heatmap(rep_svg *s, const rep_svg_box *box, const double *values,
                     size_t n, const rep_svg_heat *h)
{
    unsigned cols = h && h->cols ? h->cols : 32;
    size_t rows = (n + cols - 1) / cols;
    char col[8], tip[160], b32[32];
    rep_svg_group_begin(s, "chart heatmap", NULL);
    double top = 0;
    if (h && h->title) {
        rep_svg_font tf = {.size = 14, .bold = 1, .anchor = REP_SVG_MIDDLE,
                           .cls = "chart-title"};
        rep_svg_text(s, box->x + box->w / 2, box->y + 16, h->title, &tf);
        top = 26;
    }
    double vmin = h ? h->vmin : 0, vmax = h ? h->vmax : 0;
    if (vmin == vmax) {
        vmin = INFINITY;
        vmax = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(values[i]))
                continue;
            vmin = values[i] < vmin ? values[i] : vmin;
            vmax = values[i] > vmax ? values[i] : vmax;
        }
        if (!isfinite(vmin)) {
            vmin = 0;
            vmax = 1;
        }
        if (vmin > 0)
            vmin = 0;
    }
    double span = vmax > vmin ? vmax - vmin : 1;
    char rl[64];
    snprintf(rl, sizeof rl, "%s%zu", h && h->row_label ? h->row_label : "",
             n ? n - 1 : 0);
    double left = h && h->label_every ? rep_svg_text_width(rl, 10) + 8 : 0;
    double legend_w = 70;
    double aw = box->w - left - legend_w, ah = box->h - top - 4;
    double cell = rows ? ah / (double)rows : ah;
    if (aw / cols < cell)
        cell = aw / cols;
    if (cell < 0.5)
        cell = 0.5;
    double gx = box->x + left, gy = box->y + top + 4;
    rep_svg_group_begin(s, "cells", NULL);
    for (size_t i = 0; i < n; i++) {
        size_t r = i / cols, cc = i % cols;
        double v = values[i];
        rep_svg_heat_color(isfinite(v) ? (v - vmin) / span : 0, col);
        if (h && h->cell_title)
            h->cell_title(h->ctx, i, v, tip, sizeof tip);
        else
            snprintf(tip, sizeof tip, "%zu: %s", i, rep_svg_fmt_num(v, b32));
        rep_svg_style st = {.fill = col, .cls = "cell", .title = tip};
        rep_svg_rect(s, gx + cell * (double)cc, gy + cell * (double)r, cell,
                     cell, &st);
    }
    rep_svg_group_end(s);
    rep_svg_style frame = {.fill = "none", .stroke = "#888"};
    rep_svg_rect(s, gx, gy, cell * cols, cell * (double)rows, &frame);
    if (h && h->label_every) {
        rep_svg_font lf = {.size = 10, .anchor = REP_SVG_END,
                           .cls = "row-label"};
        for (size_t r = 0; r < rows; r += h->label_every)
            rep_svg_textf(s, gx - 4, gy + cell * (double)r + cell / 2 + 3, &lf,
                          "%s%zu", h->row_label ? h->row_label : "",
                          r * cols);
    }
    /* Colour legend: ten steps from vmax (top) to vmin (bottom). */
    double lx = gx + cell * cols + 12, lh = cell * (double)rows;
    if (lh < 60)
        lh = 60;
    if (lh > 240)
        lh = 240;
    rep_svg_group_begin(s, "legend", NULL);
    for (int k = 0; k < 10; k++) {
        rep_svg_heat_color(1 - k / 9.0, col);
        rep_svg_style st = {.fill = col};
        rep_svg_rect(s, lx, gy + lh / 10 * k, 14, lh / 10 + 0.5, &st);
    }
    rep_svg_style lframe = {.fill = "none", .stroke = "#888"};
    rep_svg_rect(s, lx, gy, 14, lh, &lframe);
    rep_svg_font lf = {.size = 10};
    rep_svg_text(s, lx + 18, gy + 8, rep_svg_fmt_num(vmax, b32), &lf);
    rep_svg_text(s, lx + 18, gy + lh, rep_svg_fmt_num(vmin, b32), &lf);
    if (h && h->legend) {
        rep_svg_font cf = {.size = 10, .rotate = -90, .anchor = REP_SVG_MIDDLE};
        rep_svg_text(s, lx + 50, gy + lh / 2, h->legend, &cf);
    }
    rep_svg_group_end(s);
    rep_svg_group_end(s);
}
