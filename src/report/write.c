/* rep: the flat profile as text, CSV, JSON, folded stacks and speedscope. */
#include "report/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/jw.h"

const char *rep_rate(char *buf, const rep_profile *p, const rep_view *v)
{
    unsigned sig = 6;
    if (v->source && !strcmp(v->source, "trace")) {
        sig = 1;
        for (uint64_t n = p->total; n >= 100 && sig < 6; n /= 10)
            sig++;
    }
    return cp_hz(buf, v->rate_hz, sig);
}

const char *rep_pct(char *buf, uint64_t part, uint64_t whole)
{
    if (!whole) {
        strcpy(buf, "-");
        return buf;
    }
    double v = 100.0 * (double)part / (double)whole;
    if (part && v < 0.05)
        strcpy(buf, "<0.1%");
    else
        snprintf(buf, 16, "%.1f%%", v);
    return buf;
}

void rep_lib_summary(char *buf, size_t n, const rep_profile *p, size_t max)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < p->nlibs && i < max && p->total; i++) {
        if (!p->libs[i].samples)
            break;
        double v = 100.0 * (double)p->libs[i].samples / (double)p->total;
        if (v < 0.5)
            break; /* sorted: the rest are smaller */
        int w = snprintf(buf + used, n - used, "%s%.0f %% %s", i ? ", " : "",
                         v, p->libs[i].name);
        if (w < 0 || (size_t)w >= n - used) {
            buf[used] = 0;
            break;
        }
        used += (size_t)w;
    }
}

static int name_matches(const rep_row *r, const char *glob)
{
    if (cp_glob(glob, r->name))
        return 1;
    if (r->fn && cp_glob(glob, r->fn->name))
        return 1;
    if (r->fn)
        for (unsigned k = 0; k < r->fn->nalias; k++)
            if (cp_glob(glob, r->fn->alias[k]))
                return 1;
    return 0;
}

const rep_row **rep_view_rows(rep_profile *p, const rep_view *v, size_t *n,
                              size_t *nmatch)
{
    rep_prof_sort(p, v->sort);
    const rep_row **out = malloc((p->nrows + 1) * sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < p->nrows; i++) {
        const rep_row *r = &p->rows[i];
        if (!v->all && !r->samples && !r->misses)
            continue;
        if (v->lib_glob && !cp_glob(v->lib_glob, r->library))
            continue;
        if (v->func_glob && !name_matches(r, v->func_glob))
            continue;
        out[k++] = r;
    }
    *nmatch = k;
    if (v->top && k > v->top)
        k = v->top;
    *n = k;
    return out;
}

static int done(FILE *f, cp_err *err)
{
    if (fflush(f) != 0 || ferror(f))
        return cp_seterr(err, "write error");
    return 0;
}

static const char *sort_name(rep_sort s)
{
    static const char *const names[] = {"samples", "density", "size", "name",
                                        "addr", "misses", "miss-density"};
    return names[s];
}

static void density(char *buf, uint64_t n, uint32_t size)
{
    if (!size)
        strcpy(buf, "-");
    else
        snprintf(buf, 24, "%.3f", (double)n / size);
}

/* Misses per iteration: the profile holds sums over miss_iters. */
static double per_iter(const rep_profile *p, uint64_t misses)
{
    return (double)misses / (double)(p->miss_iters ? p->miss_iters : 1);
}

static void per_iter_str(char *buf, const rep_profile *p, uint64_t misses)
{
    snprintf(buf, 32, "%.1f", per_iter(p, misses));
}

static void per_iter_density(char *buf, const rep_profile *p, uint64_t misses,
                             uint32_t size)
{
    if (!size)
        strcpy(buf, "-");
    else
        snprintf(buf, 24, "%.3f", per_iter(p, misses) / size);
}

int rep_write_text(FILE *f, rep_profile *p, const rep_view *v, cp_err *err)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    size_t n, nmatch;
    const rep_row **rows = rep_view_rows(p, v, &n, &nmatch);
    if (!rows)
        return cp_seterr(err, "out of memory");
    int m = p->have_misses;
    fprintf(f, "samples:   %s", v->samples_path ? v->samples_path : "-");
    if (v->source && v->source[0])
        fprintf(f, " (%s)", v->source);
    fputc('\n', f);
    fprintf(f, "image:     %s\n", v->image_path ? v->image_path : "-");
    if (v->map_path)
        fprintf(f, "map:       %s\n", v->map_path);
    fprintf(f, "total:     %s samples", cp_commas(b1, p->total));
    if (v->rate_hz > 0)
        fprintf(f, ", %s", rep_rate(b2, p, v));
    if (v->duration_s > 0)
        fprintf(f, ", %.3f s", v->duration_s);
    if (v->dropped)
        fprintf(f, ", %s dropped by the profiler", cp_commas(b2, v->dropped));
    fputc('\n', f);
    fprintf(f, "outside:   %s samples (%s) in no function, %s of them "
            "halted\n", cp_commas(b1, p->outside), rep_pct(b2, p->outside, p->total),
            cp_commas(b3, p->halted));
    if (m) {
        per_iter_str(b2, p, p->total_misses);
        fprintf(f, "misses:    %s per iteration (%s over %llu warm iteration%s)"
                "%s%s\n", b2, cp_commas(b1, p->total_misses),
                (unsigned long long)(p->miss_iters ? p->miss_iters : 1),
                p->miss_iters == 1 ? "" : "s", v->cache_desc ? " in " : "",
                v->cache_desc ? v->cache_desc : "");
    }
    else if (v->misses_note)
        fprintf(f, "misses:    not counted: %s\n", v->misses_note);
    char sum[256];
    rep_lib_summary(sum, sizeof sum, p, 4);
    if (sum[0])
        fprintf(f, "by library: %s\n", sum);

    fprintf(f, "\nfunctions (%zu of %zu, by %s%s):\n", n, nmatch,
            sort_name(v->sort), m ? "; misses per iteration" : "");
    fprintf(f, "  %10s %6s %7s %9s", "samples", "share", "bytes", "smp/byte");
    if (m)
        fprintf(f, " %9s %9s", "misses", "mis/byte");
    fprintf(f, "  %-32s %s\n", "function", "library");
    for (size_t i = 0; i < n; i++) {
        const rep_row *r = rows[i];
        density(b3, r->samples, r->size);
        fprintf(f, "  %10s %6s %7s %9s", cp_commas(b1, r->samples),
                rep_pct(b2, r->samples, p->total),
                r->fn ? cp_commas(b4, r->size) : "-", b3);
        if (m) {
            per_iter_density(b3, p, r->misses, r->size);
            per_iter_str(b5, p, r->misses);
            fprintf(f, " %9s %9s", b5, b3);
        }
        if (r->fn)
            fprintf(f, "  %-32s %s\n", r->name, r->library);
        else
            fprintf(f, "  %s\n", r->name);
    }
    free(rows);

    for (int t = 0; t < 2; t++) {
        const rep_group *g = t ? p->secs : p->libs;
        size_t ng = t ? p->nsecs : p->nlibs;
        fprintf(f, "\n%s%s:\n  %10s %6s %9s %9s", t ? "sections" : "libraries",
                m ? " (misses per iteration)" : "", "samples", "share",
                "functions", "bytes");
        if (m)
            fprintf(f, " %9s", "misses");
        fprintf(f, "  %s\n", t ? "section" : "library");
        for (size_t i = 0; i < ng; i++) {
            if (!g[i].samples && !g[i].misses && !v->all)
                continue;
            fprintf(f, "  %10s %6s %9zu %9s", cp_commas(b1, g[i].samples),
                    rep_pct(b2, g[i].samples, p->total), g[i].functions,
                    cp_commas(b3, g[i].bytes));
            if (m) {
                per_iter_str(b4, p, g[i].misses);
                fprintf(f, " %9s", b4);
            }
            fprintf(f, "  %s\n", g[i].name);
        }
    }
    return done(f, err);
}

static void csv_field(FILE *f, const char *s)
{
    if (!s)
        return;
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0;
}

int rep_write_csv(FILE *f, rep_profile *p, const rep_view *v, rep_table t,
                  cp_err *err)
{
    int m = p->have_misses;
    if (t == REP_TABLE_FUNCS) {
        size_t n, nmatch;
        const rep_row **rows = rep_view_rows(p, v, &n, &nmatch);
        if (!rows)
            return cp_seterr(err, "out of memory");
        fputs("function,addr,size,samples,share,samples_per_byte,library,"
              "section,object", f);
        fputs(m ? ",misses_per_iteration,misses_per_byte_per_iteration\n"
                : "\n", f);
        for (size_t i = 0; i < n; i++) {
            const rep_row *r = rows[i];
            csv_field(f, r->name);
            if (r->fn)
                fprintf(f, ",0x%08" PRIx32 ",%" PRIu32 ",", r->addr, r->size);
            else
                fputs(",,,", f);
            fprintf(f, "%" PRIu64 ",%.6f,", r->samples,
                    share(r->samples, p->total));
            if (r->size)
                fprintf(f, "%.6f", (double)r->samples / r->size);
            fputc(',', f);
            csv_field(f, r->library);
            fputc(',', f);
            csv_field(f, r->section);
            fputc(',', f);
            csv_field(f, r->fn ? r->fn->object : NULL);
            if (m) {
                fprintf(f, ",%.3f,", per_iter(p, r->misses));
                if (r->size)
                    fprintf(f, "%.6f", per_iter(p, r->misses) / r->size);
            }
            fputc('\n', f);
        }
        free(rows);
        return done(f, err);
    }
    const rep_group *g = t == REP_TABLE_LIBS ? p->libs : p->secs;
    size_t ng = t == REP_TABLE_LIBS ? p->nlibs : p->nsecs;
    fprintf(f, "%s,samples,share,functions,bytes%s\n",
            t == REP_TABLE_LIBS ? "library" : "section",
            m ? ",misses_per_iteration" : "");
    for (size_t i = 0; i < ng; i++) {
        if (!g[i].samples && !g[i].misses && !v->all)
            continue;
        csv_field(f, g[i].name);
        fprintf(f, ",%" PRIu64 ",%.6f,%zu,%" PRIu64, g[i].samples,
                share(g[i].samples, p->total), g[i].functions, g[i].bytes);
        if (m)
            fprintf(f, ",%.3f", per_iter(p, g[i].misses));
        fputc('\n', f);
    }
    return done(f, err);
}

static void json_groups(jw *w, const rep_profile *p, const rep_group *g,
                        size_t n, const rep_view *v)
{
    jw_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        if (!g[i].samples && !g[i].misses && !v->all)
            continue;
        jw_obj_begin(w);
        jw_key(w, "name");
        jw_str(w, g[i].name);
        jw_key(w, "samples");
        jw_uint(w, g[i].samples);
        jw_key(w, "share");
        jw_double(w, share(g[i].samples, p->total));
        jw_key(w, "functions");
        jw_uint(w, g[i].functions);
        jw_key(w, "bytes");
        jw_uint(w, g[i].bytes);
        if (p->have_misses) {
            jw_key(w, "misses");
            jw_uint(w, g[i].misses);
            jw_key(w, "misses_per_iteration");
            jw_double(w, per_iter(p, g[i].misses));
        }
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

int rep_write_json(FILE *f, rep_profile *p, const rep_view *v, cp_err *err)
{
    size_t n, nmatch;
    const rep_row **rows = rep_view_rows(p, v, &n, &nmatch);
    if (!rows)
        return cp_seterr(err, "out of memory");
    jw w;
    jw_init(&w, f, 1);
    jw_obj_begin(&w);
    jw_key(&w, "samples_file");
    jw_str(&w, v->samples_path);
    jw_key(&w, "image");
    jw_str(&w, v->image_path);
    jw_key(&w, "map");
    jw_str(&w, v->map_path);
    jw_key(&w, "source");
    jw_str(&w, v->source);
    jw_key(&w, "rate_hz");
    jw_double(&w, v->rate_hz);
    jw_key(&w, "duration_s");
    jw_double(&w, v->duration_s);
    jw_key(&w, "total");
    jw_uint(&w, p->total);
    jw_key(&w, "outside");
    jw_uint(&w, p->outside);
    jw_key(&w, "halted");
    jw_uint(&w, p->halted);
    jw_key(&w, "dropped");
    jw_uint(&w, v->dropped);
    jw_key(&w, "misses");
    if (p->have_misses)
        jw_uint(&w, p->total_misses);
    else
        jw_null(&w);
    jw_key(&w, "miss_iterations");
    if (p->have_misses)
        jw_uint(&w, p->miss_iters ? p->miss_iters : 1);
    else
        jw_null(&w);
    jw_key(&w, "misses_per_iteration");
    if (p->have_misses)
        jw_double(&w, per_iter(p, p->total_misses));
    else
        jw_null(&w);
    jw_key(&w, "misses_note");
    jw_str(&w, p->have_misses ? NULL : v->misses_note);
    jw_key(&w, "sort");
    jw_str(&w, sort_name(v->sort));
    jw_key(&w, "matched");
    jw_uint(&w, nmatch);
    jw_key(&w, "functions");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        const rep_row *r = rows[i];
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, r->name);
        jw_key(&w, "function");
        jw_bool(&w, r->fn != NULL);
        jw_key(&w, "addr");
        if (r->fn)
            jw_uint(&w, r->addr);
        else
            jw_null(&w);
        jw_key(&w, "size");
        jw_uint(&w, r->size);
        jw_key(&w, "samples");
        jw_uint(&w, r->samples);
        jw_key(&w, "share");
        jw_double(&w, share(r->samples, p->total));
        jw_key(&w, "samples_per_byte");
        if (r->size)
            jw_double(&w, (double)r->samples / r->size);
        else
            jw_null(&w);
        if (p->have_misses) {
            jw_key(&w, "misses");
            jw_uint(&w, r->misses);
            jw_key(&w, "misses_per_iteration");
            jw_double(&w, per_iter(p, r->misses));
            jw_key(&w, "misses_per_byte_per_iteration");
            if (r->size)
                jw_double(&w, per_iter(p, r->misses) / r->size);
            else
                jw_null(&w);
        }
        jw_key(&w, "library");
        jw_str(&w, r->library);
        jw_key(&w, "section");
        jw_str(&w, r->section);
        jw_key(&w, "object");
        jw_str(&w, r->fn ? r->fn->object : NULL);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    free(rows);
    jw_key(&w, "libraries");
    json_groups(&w, p, p->libs, p->nlibs, v);
    jw_key(&w, "sections");
    json_groups(&w, p, p->secs, p->nsecs, v);
    jw_obj_end(&w);
    if (jw_finish(&w) < 0)
        return cp_seterr(err, "internal: JSON nesting");
    return done(f, err);
}

/* Frame names in folded stacks may not hold ';' (the separator) or end in
 * a space followed by digits; replace ';' and newlines. */
static void folded_name(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s, f);
}

int rep_write_folded(FILE *f, rep_profile *p, const rep_view *v, cp_err *err)
{
    size_t n, nmatch;
    const rep_row **rows = rep_view_rows(p, v, &n, &nmatch);
    if (!rows)
        return cp_seterr(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!rows[i]->samples)
            continue;
        if (rows[i]->fn) {
            folded_name(f, rows[i]->library);
            fputc(';', f);
        }
        folded_name(f, rows[i]->name);
        fprintf(f, " %" PRIu64 "\n", rows[i]->samples);
    }
    free(rows);
    return done(f, err);
}

int rep_write_speedscope(FILE *f, rep_profile *p, const rep_view *v,
                         cp_err *err)
{
    size_t n, nmatch;
    const rep_row **rows = rep_view_rows(p, v, &n, &nmatch);
    if (!rows)
        return cp_seterr(err, "out of memory");
    /* Frames: libraries first (one each), then one per row. */
    const char **libs = malloc((n + 1) * sizeof *libs);
    size_t *libidx = malloc((n + 1) * sizeof *libidx);
    if (!libs || !libidx) {
        free(rows);
        free(libs);
        free(libidx);
        return cp_seterr(err, "out of memory");
    }
    size_t nlibs = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        libidx[i] = 0;
        if (!rows[i]->fn)
            continue;
        while (k < nlibs && strcmp(libs[k], rows[i]->library))
            k++;
        if (k == nlibs)
            libs[nlibs++] = rows[i]->library;
        libidx[i] = k;
    }
    jw w;
    jw_init(&w, f, 0);
    jw_obj_begin(&w);
    jw_key(&w, "$schema");
    jw_str(&w, "https://www.speedscope.app/file-format-schema.json");
    jw_key(&w, "exporter");
    jw_str(&w, "codeplace report");
    jw_key(&w, "name");
    jw_str(&w, v->samples_path ? v->samples_path : "samples");
    jw_key(&w, "activeProfileIndex");
    jw_uint(&w, 0);
    jw_key(&w, "shared");
    jw_obj_begin(&w);
    jw_key(&w, "frames");
    jw_arr_begin(&w);
    for (size_t k = 0; k < nlibs; k++) {
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, libs[k]);
        jw_obj_end(&w);
    }
    for (size_t i = 0; i < n; i++) {
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, rows[i]->name);
        if (rows[i]->fn && rows[i]->fn->object) {
            jw_key(&w, "file");
            jw_str(&w, rows[i]->fn->object);
        }
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += rows[i]->samples;
    jw_key(&w, "profiles");
    jw_arr_begin(&w);
    jw_obj_begin(&w);
    jw_key(&w, "type");
    jw_str(&w, "sampled");
    jw_key(&w, "name");
    jw_str(&w, v->image_path ? v->image_path : "profile");
    jw_key(&w, "unit");
    jw_str(&w, "none");
    jw_key(&w, "startValue");
    jw_uint(&w, 0);
    jw_key(&w, "endValue");
    jw_uint(&w, sum);
    jw_key(&w, "samples");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        if (!rows[i]->samples)
            continue;
        jw_arr_begin(&w);
        if (rows[i]->fn)
            jw_uint(&w, libidx[i]);
        jw_uint(&w, nlibs + i);
        jw_arr_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "weights");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++)
        if (rows[i]->samples)
            jw_uint(&w, rows[i]->samples);
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_arr_end(&w);
    jw_obj_end(&w);
    free(rows);
    free(libs);
    free(libidx);
    if (jw_finish(&w) < 0)
        return cp_seterr(err, "internal: JSON nesting");
    return done(f, err);
}
