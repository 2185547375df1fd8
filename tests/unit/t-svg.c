/* rep_svg: escaping, numbers, ticks, and that every chart is well-formed
 * XML (checked by a small tag-balance parser here; the CLI tests also parse
 * the output with Python's XML parser and load it in Chromium). */
#include "report/svg.h"

#include <math.h>

#include "test.h"

/* Collects what f receives. */
typedef struct buf {
    char *data;
    size_t len;
    FILE *f;
} buf;

static void buf_open(buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->f = open_memstream(&b->data, &b->len);
}

static char *buf_close(buf *b)
{
    fclose(b->f);
    return b->data;
}

/* 1 when the tags balance, attribute values are quoted and no raw '<' or
 * '&' appears outside markup and entities. */
static int well_formed(const char *s)
{
    char stack[64][32];
    int depth = 0;
    while (*s) {
        if (*s == '<') {
            if (!strncmp(s, "<!--", 4)) {
                const char *e = strstr(s + 4, "-->");
                if (!e)
                    return 0;
                for (const char *p = s + 4; p < e; p++)
                    if (p[0] == '-' && p[1] == '-')
                        return 0;
                s = e + 3;
                continue;
            }
            int close = s[1] == '/';
            const char *p = s + 1 + close;
            char name[32];
            size_t n = 0;
            while (*p && !strchr(" />\n", *p) && n < 31)
                name[n++] = *p++;
            name[n] = 0;
            if (!n)
                return 0;
            int inq = 0;
            while (*p && (inq || *p != '>')) {
                if (*p == '"')
                    inq = !inq;
                else if (inq && *p == '<')
                    return 0;
                p++;
            }
            if (*p != '>')
                return 0;
            int selfclose = p[-1] == '/';
            if (close) {
                if (depth == 0 || strcmp(stack[depth - 1], name))
                    return 0;
                depth--;
            } else if (!selfclose) {
                if (depth == 64)
                    return 0;
                strcpy(stack[depth++], name);
            }
            s = p + 1;
        } else if (*s == '&') {
            const char *e = strchr(s, ';');
            if (!e || e - s > 6)
                return 0;
            s = e + 1;
        } else if (*s == '>') {
            return 0;
        } else {
            s++;
        }
    }
    return depth == 0;
}

static void t_escape(void)
{
    buf b;
    buf_open(&b);
    rep_svg_escape(b.f, "a<b>&\"c'\x01\xff\xc3\xa9\xed\xa0\x80z");
    char *out = buf_close(&b);
    T_STREQ(out, "a&lt;b&gt;&amp;&quot;c&#39;??\xc3\xa9???z");
    free(out);
}

static void t_text_and_title_escaped(void)
{
    buf b;
    buf_open(&b);
    rep_svg *s = rep_svg_begin(b.f, 100, 50, "a <title> & more");
    rep_svg_text(s, 1.005, 2, "operator<<(int)", NULL);
    rep_svg_style st = {.fill = "#f00", .title = "x\"y", .cls = "c&d"};
    rep_svg_rect(s, 0, 0, 10.5, -3.25, &st);
    rep_svg_comment(s, "a -- b -");
    cp_err err;
    T_EQ(rep_svg_end(s, &err), 0);
    char *out = buf_close(&b);
    T_ASSERT(well_formed(out));
    T_ASSERT(strstr(out, "<title>a &lt;title&gt; &amp; more</title>"));
    T_ASSERT(strstr(out, ">operator&lt;&lt;(int)</text>"));
    T_ASSERT(strstr(out, "<rect x=\"0\" y=\"-3.25\" width=\"10.5\" "
                         "height=\"3.25\" class=\"c&amp;d\" fill=\"#f00\">"
                         "<title>x&quot;y</title></rect>"));
    free(out);
}

static void t_groups_must_close(void)
{
    buf b;
    buf_open(&b);
    rep_svg *s = rep_svg_begin(b.f, 10, 10, NULL);
    rep_svg_group_begin(s, "a", NULL);
    cp_err err;
    T_EQ(rep_svg_end(s, &err), -1);
    char *out = buf_close(&b);
    T_ASSERT(well_formed(out)); /* still closed properly */
    T_ASSERT(strstr(err.msg, "groups"));
    free(out);
}

static const struct {
    double lo, hi;
    size_t max;
    size_t n;
    double first, last;
} tick_cases[] = {
    {0, 100, 6, 6, 0, 100},
    {0, 97, 6, 6, 0, 100},
    {0, 1, 6, 6, 0, 1},
    {3, 3, 6, 5, 2.6, 3.4},
    {0, 0, 6, 6, 0, 1},
    {-7, 12, 6, 6, -10, 15},
    {0, 2277, 6, 6, 0, 2500},
    {0.001, 0.0042, 5, 5, 0.001, 0.005},
};

static void t_ticks(void)
{
    for (size_t i = 0; i < sizeof tick_cases / sizeof tick_cases[0]; i++) {
        double t[32], lo, hi;
        size_t n = rep_svg_ticks(tick_cases[i].lo, tick_cases[i].hi,
                                 tick_cases[i].max, t, 32, &lo, &hi);
        if (n != tick_cases[i].n || fabs(t[0] - tick_cases[i].first) > 1e-12 ||
            fabs(t[n - 1] - tick_cases[i].last) > 1e-12) {
            T_FAIL("case %zu: %zu ticks %g..%g", i, n, t[0], t[n - 1]);
            return;
        }
        T_ASSERT(n <= tick_cases[i].max);
        T_ASSERT(lo <= tick_cases[i].lo && hi >= tick_cases[i].hi);
    }
}

static void t_fmt_num(void)
{
    char b[32];
    T_STREQ(rep_svg_fmt_num(0, b), "0");
    T_STREQ(rep_svg_fmt_num(2500, b), "2500");
    T_STREQ(rep_svg_fmt_num(15000, b), "15k");
    T_STREQ(rep_svg_fmt_num(2.5e6, b), "2.5M");
    T_STREQ(rep_svg_fmt_num(0.25, b), "0.25");
    T_STREQ(rep_svg_fmt_num(12.5, b), "12.5");
    T_STREQ(rep_svg_fmt_num(-0.0, b), "0");
    T_STREQ(rep_svg_fmt_num(NAN, b), "?");
}

static void t_heat_color(void)
{
    char b[8];
    T_STREQ(rep_svg_heat_color(0, b), "#ffffff");
    T_STREQ(rep_svg_heat_color(1, b), "#8b0000");
    T_STREQ(rep_svg_heat_color(2, b), "#8b0000");
    T_STREQ(rep_svg_heat_color(NAN, b), "#ffffff");
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void t_charts_well_formed(void)
{
    rep_svg_bar bars[] = {
        {"tcp_input <hot>", 42.5, NAN, NAN, NULL, NULL},
        {"memcpy", 20, 18, 23, "#e69f00", "memcpy: 20 (18..23)"},
        {"a_very_long_function_name_that_will_not_fit_anywhere", 3, NAN, NAN,
         NULL, NULL},
    };
    double x[] = {1, 2, 3, 4}, y[] = {10, 20, 15, NAN}, lo[] = {9, 18, 14, 0},
           hi[] = {11, 22, 16, 0};
    rep_svg_series ser[] = {
        {"stock", x, y, lo, hi, 4, NULL, 1, 0},
        {"placed & coloured", x, x, NULL, NULL, 4, NULL, 0, 0},
    };
    double heat[100];
    for (int i = 0; i < 100; i++)
        heat[i] = i % 7;
    rep_svg_chart c = {.title = "top <functions>", .xlabel = "share",
                       .ylabel = "y", .suffix = "%", .value_labels = 1,
                       .value_decimals = 1};
    rep_svg_heat h = {.title = "misses per set", .cols = 16,
                      .label_every = 2, .row_label = "set ",
                      .legend = "misses"};
    buf b;
    buf_open(&b);
    rep_svg *s = rep_svg_begin(b.f, 800, 1200, "all");
    rep_svg_hbars(s, &(rep_svg_box){0, 0, 800, 300}, bars, 3, &c);
    rep_svg_vbars(s, &(rep_svg_box){0, 300, 800, 300}, bars, 3, &c);
    rep_svg_xy(s, &(rep_svg_box){0, 600, 800, 300}, ser, 2, &c);
    rep_svg_heatmap(s, &(rep_svg_box){0, 900, 800, 300}, heat, 100, &h);
    rep_svg_hbars(s, &(rep_svg_box){0, 0, 100, 100}, NULL, 0, NULL);
    cp_err err;
    T_EQ(rep_svg_end(s, &err), 0);
    char *out = buf_close(&b);
    T_ASSERT(well_formed(out));
    T_EQ(count(out, "class=\"bar\""), 6);
    T_EQ(count(out, "class=\"cell\""), 100);
    T_EQ(count(out, "class=\"point\""), 3); /* the NaN point is skipped */
    T_ASSERT(strstr(out, "placed &amp; coloured"));
    T_ASSERT(strstr(out, "<title>memcpy: 20 (18..23)</title>"));
    T_ASSERT(strstr(out, "<title>tcp_input &lt;hot&gt;: 42.5%</title>"));
    T_ASSERT(!strstr(out, "nan") && !strstr(out, "inf"));
    free(out);
}

static const t_case cases[] = {
    {"escape", t_escape},
    {"text_and_title_escaped", t_text_and_title_escaped},
    {"groups_must_close", t_groups_must_close},
    {"ticks", t_ticks},
    {"fmt_num", t_fmt_num},
    {"heat_color", t_heat_color},
    {"charts_well_formed", t_charts_well_formed},
    {NULL, NULL},
};

T_MAIN(cases)
