#include "util/jw.h"

#include <math.h>

void jw_init(jw *w, FILE *f, int pretty)
{
    w->f = f;
    w->pretty = pretty;
    w->depth = 0;
    w->err = 0;
    w->count[0] = 0;
    w->after_key = 0;
}

static void indent(jw *w)
{
    if (!w->pretty)
        return;
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->f);
}

/* Called before every value or key. */
static void sep(jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (w->count[w->depth])
            fputc(',', w->f);
        indent(w);
    }
    w->count[w->depth] = 1;
}

void jw_write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void open(jw *w, char c)
{
    sep(w);
    fputc(c, w->f);
    if (w->depth + 1 >= JW_MAX_DEPTH) {
        w->err = 1;
        return;
    }
    w->depth++;
    w->count[w->depth] = 0;
}

static void close_(jw *w, char c)
{
    if (w->depth == 0) {
        w->err = 1;
        return;
    }
    int had = w->count[w->depth];
    w->depth--;
    if (had)
        indent(w);
    fputc(c, w->f);
}

void jw_obj_begin(jw *w) { open(w, '{'); }
void jw_obj_end(jw *w) { close_(w, '}'); }
void jw_arr_begin(jw *w) { open(w, '['); }
void jw_arr_end(jw *w) { close_(w, ']'); }

void jw_key(jw *w, const char *key)
{
    sep(w);
    jw_write_escaped(w->f, key);
    fputs(w->pretty ? ": " : ":", w->f);
    w->after_key = 1;
}

void jw_str(jw *w, const char *s)
{
    if (!s) {
        jw_null(w);
        return;
    }
    sep(w);
    jw_write_escaped(w->f, s);
}

void jw_int(jw *w, int64_t v)
{
    sep(w);
    fprintf(w->f, "%lld", (long long)v);
}

void jw_uint(jw *w, uint64_t v)
{
    sep(w);
    fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_double(jw *w, double v)
{
    sep(w);
    if (!isfinite(v))
        fputs("null", w->f);
    else
        fprintf(w->f, "%.10g", v);
}

void jw_bool(jw *w, int v)
{
    sep(w);
    fputs(v ? "true" : "false", w->f);
}

void jw_null(jw *w)
{
    sep(w);
    fputs("null", w->f);
}

int jw_finish(jw *w)
{
    fputc('\n', w->f);
    return (w->err || w->depth != 0) ? -1 : 0;
}
