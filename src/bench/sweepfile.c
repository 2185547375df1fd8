#include "bench/sweepfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nb_extract_figure(const char *out, const char *key, double *v)
{
    int found = 0;
    if (key) {
        char pat[128];
        snprintf(pat, sizeof pat, "\"%s\"", key);
        for (const char *p = strstr(out, pat); p; p = strstr(p + 1, pat)) {
            const char *q = p + strlen(pat);
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q != ':')
                continue;
            char *end;
            double x = strtod(q + 1, &end);
            if (end != q + 1 && isfinite(x)) {
                *v = x;
                found = 1;
            }
        }
        return found ? 0 : -1;
    }
    for (const char *p = out; *p;) {
        char *end;
        if ((*p >= '0' && *p <= '9') || ((*p == '-' || *p == '.') &&
                                         p[1] >= '0' && p[1] <= '9')) {
            double x = strtod(p, &end);
            if (end > p) {
                if (isfinite(x)) {
                    *v = x;
                    found = 1;
                }
                p = end;
                continue;
            }
        }
        p++;
    }
    return found ? 0 : -1;
}

void nb_sweep_free(nb_sweep_file *f)
{
    if (!f)
        return;
    free(f->steps);
    f->steps = NULL;
    f->n = 0;
}

enum { C_PASS, C_RATE, C_REQ, C_ANS, C_REPLY, C_SENT, NCOL };
static const char *const colname[NCOL] = {"pass", "rate", "requested",
                                          "answered", "reply_rate", "sent"};

/* Splits line at commas into f (at most max fields); returns the count. */
static int split(char *line, char **f, int max)
{
    int nf = 0;
    for (char *p = line; nf < max;) {
        f[nf++] = p;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = 0;
        p = c + 1;
    }
    return nf;
}

static int parse_row(char **f, int nf, const int *col, const char *name,
                     size_t lineno, nb_udp_step *st, cp_err *err)
{
    double v[NCOL];
    for (int k = 0; k < NCOL; k++) {
        if (col[k] < 0)
            continue;
        char *end;
        if (col[k] >= nf)
            return cp_seterr(err, "'%s': line %zu: too few fields", name,
                             lineno);
        v[k] = strtod(f[col[k]], &end);
        if (end == f[col[k]] || *end || !isfinite(v[k]) || v[k] < 0 ||
            v[k] > 1e15)
            return cp_seterr(err, "'%s': line %zu: '%s' is not a number",
                             name, lineno, f[col[k]]);
    }
    if (v[C_PASS] < 1 || v[C_PASS] > 1000)
        return cp_seterr(err, "'%s': line %zu: pass %g is outside 1..1000",
                         name, lineno, v[C_PASS]);
    memset(st, 0, sizeof *st);
    st->pass = (unsigned)v[C_PASS];
    st->rate = v[C_RATE];
    st->requested = (uint64_t)v[C_REQ];
    st->answered = (uint64_t)v[C_ANS];
    st->reply_rate = v[C_REPLY];
    st->sent = col[C_SENT] >= 0 ? (uint64_t)v[C_SENT] : st->requested;
    return 0;
}

int nb_sweep_parse(const char *text, size_t len, const char *name,
                   nb_sweep_file *out, cp_err *err)
{
    memset(out, 0, sizeof *out);
    char *data = malloc(len + 1);
    if (!data)
        return cp_seterr(err, "out of memory");
    memcpy(data, text, len);
    data[len] = 0;
    int col[NCOL] = {-1, -1, -1, -1, -1, -1};
    size_t cap = 0, lineno = 0;
    int header = 0, rc = -1;
    char *line = data;
    while (line && (size_t)(line - data) < len) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = 0;
        if (!strncmp(line, "# label:", 8)) {
            const char *v = line + 8;
            while (*v == ' ')
                v++;
            snprintf(out->label, sizeof out->label, "%s", v);
        } else if (line[0] != '#' && line[0]) {
            char *f[64];
            int nf = split(line, f, 64);
            if (!header) {
                for (int i = 0; i < nf; i++)
                    for (int k = 0; k < NCOL; k++)
                        if (!strcmp(f[i], colname[k]) && col[k] < 0)
                            col[k] = i;
                for (int k = 0; k < C_SENT; k++)
                    if (col[k] < 0) {
                        cp_seterr(err, "'%s': line %zu: not a bench udp CSV "
                                  "(no column '%s')", name, lineno, colname[k]);
                        goto out;
                    }
                header = 1;
            } else {
                nb_udp_step st;
                if (parse_row(f, nf, col, name, lineno, &st, err) < 0)
                    goto out;
                if (cp_grow((void **)&out->steps, &cap, out->n + 1,
                            sizeof *out->steps) < 0) {
                    cp_seterr(err, "out of memory");
                    goto out;
                }
                out->steps[out->n++] = st;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!header) {
        cp_seterr(err, "'%s': not a bench udp CSV (no header line)", name);
        goto out;
    }
    rc = 0;
out:
    free(data);
    if (rc < 0)
        nb_sweep_free(out);
    return rc;
}

int nb_sweep_read(const char *path, nb_sweep_file *out, cp_err *err)
{
    char *data;
    size_t len;
    memset(out, 0, sizeof *out);
    if (cp_read_file(path, &data, &len, err) < 0)
        return -1;
    int rc = nb_sweep_parse(data, len, path, out, err);
    free(data);
    return rc;
}

/* ---- writing: the same columns the reader finds by name ---- */

static const char *const sweep_cols =
    "pass,step,rate,requested,sent,skipped,sent_late,send_errors,answered,"
    "lost,late,duplicated,reordered,stray,achieved_rate,reply_rate,loss_pct,"
    "rtt_median_us,rtt_p99_us,rtt_min_us,rtt_max_us";

static void csv_num(FILE *o, double v)
{
    if (isfinite(v))
        fprintf(o, ",%.3f", v);
    else
        fputs(",", o);
}

void nb_sweep_write_row(FILE *o, const nb_udp_step *s)
{
    fprintf(o, "%u,%u,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
            "%llu", s->pass, s->index, s->rate,
            (unsigned long long)s->requested, (unsigned long long)s->sent,
            (unsigned long long)s->skipped, (unsigned long long)s->sent_late,
            (unsigned long long)s->send_errors,
            (unsigned long long)s->answered, (unsigned long long)s->lost,
            (unsigned long long)s->late, (unsigned long long)s->duplicated,
            (unsigned long long)s->reordered, (unsigned long long)s->stray);
    csv_num(o, s->achieved_rate);
    csv_num(o, s->reply_rate);
    csv_num(o, s->loss_pct);
    csv_num(o, s->rtt_median_us);
    csv_num(o, s->rtt_p99_us);
    csv_num(o, s->rtt_min_us);
    csv_num(o, s->rtt_max_us);
    fputc('\n', o);
}

void nb_sweep_write_header(FILE *o, const char *label, const char *peer,
                           unsigned size, double step_s, double timeout_s)
{
    fprintf(o, "# codeplace sweep 1\n# label: %s\n# peer: %s\n"
            "# size: %u\n# step_s: %g\n# timeout_s: %g\n%s\n",
            label ? label : "", peer, size, step_s, timeout_s, sweep_cols);
}
