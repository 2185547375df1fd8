/* smp: the sample histogram and the samples file reader and writer. */
#include "samples/samples.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/wfile.h"

#define MAX_COUNT (UINT64_C(1) << 62)

smp *smp_new(void)
{
    return calloc(1, sizeof(smp));
}

void smp_free(smp *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nextra; i++) {
        free(s->extra[i].key);
        free(s->extra[i].value);
    }
    free(s->extra);
    free(s->e);
    free(s);
}

int smp_add(smp *s, uint32_t addr, uint64_t count, cp_err *err)
{
    if (count > MAX_COUNT)
        return cp_seterr(err, "count %" PRIu64 " is too large (at most 2^62)",
                         count);
    if (s->sum > MAX_COUNT - count)
        return cp_seterr(err, "the counts add up past 2^62 samples here "
                         "(%" PRIu64 " at 0x%08x after %" PRIu64 ")", count,
                         addr, s->sum);
    s->sum += count;
    if (s->n && s->e[s->n - 1].addr == addr) {
        s->e[s->n - 1].count += count;
        return 0;
    }
    if (cp_grow((void **)&s->e, &s->cap, s->n + 1, sizeof *s->e) < 0)
        return cp_seterr(err, "out of memory");
    s->e[s->n].addr = addr;
    s->e[s->n].count = count;
    s->n++;
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const smp_entry *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void smp_normalize(smp *s)
{
    if (s->n > 1)
        qsort(s->e, s->n, sizeof *s->e, cmp_entry);
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->e[i].count)
            continue;
        if (w && s->e[w - 1].addr == s->e[i].addr) {
            uint64_t c = s->e[w - 1].count + s->e[i].count;
            s->e[w - 1].count = c > MAX_COUNT ? MAX_COUNT : c;
        } else {
            s->e[w++] = s->e[i];
        }
    }
    s->n = w;
}

uint64_t smp_total(const smp *s)
{
    uint64_t t = 0;
    for (size_t i = 0; i < s->n; i++)
        t += s->e[i].count;
    return t;
}

int smp_set_extra(smp *s, const char *key, const char *value, cp_err *err)
{
    for (size_t i = 0; i < s->nextra; i++) {
        if (!strcmp(s->extra[i].key, key)) {
            char *v = strdup(value);
            if (!v)
                return cp_seterr(err, "out of memory");
            free(s->extra[i].value);
            s->extra[i].value = v;
            return 0;
        }
    }
    smp_kv *x = realloc(s->extra, (s->nextra + 1) * sizeof *x);
    if (!x)
        return cp_seterr(err, "out of memory");
    s->extra = x;
    x[s->nextra].key = strdup(key);
    x[s->nextra].value = strdup(value);
    if (!x[s->nextra].key || !x[s->nextra].value) {
        free(x[s->nextra].key);
        free(x[s->nextra].value);
        return cp_seterr(err, "out of memory");
    }
    s->nextra++;
    return 0;
}

const char *smp_get_extra(const smp *s, const char *key)
{
    for (size_t i = 0; i < s->nextra; i++)
        if (!strcmp(s->extra[i].key, key))
            return s->extra[i].value;
    return NULL;
}

/* --- reader ------------------------------------------------------------ */

typedef struct rd {
    const char *name;
    size_t line;
    cp_err *err;
} rd;

static int rd_err(rd *r, const char *fmt, const char *a, const char *b)
{
    char msg[300];
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
    return cp_seterr(r->err, "%s:%zu: %s", r->name, r->line, msg);
}

/* A short, printable copy of a token for messages. */
static const char *show(char *buf, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 4 < n; i++)
        buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (s[i])
        memcpy(buf + i, "...", 4);
    else
        buf[i] = 0;
    return buf;
}

static int parse_dec(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (MAX_COUNT - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int parse_real(const char *s, double *out)
{
    char *end;
    if (!*s)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v) || v < 0)
        return -1;
    *out = v;
    return 0;
}

static void copy_field(char *dst, size_t n, const char *v)
{
    snprintf(dst, n, "%s", v);
}

static int header_line(smp *s, rd *r, char *key, char *val, uint64_t *total,
                       int *have_total)
{
    char b[64];
    if (!strcmp(key, "source"))
        copy_field(s->source, sizeof s->source, val);
    else if (!strcmp(key, "target"))
        copy_field(s->target, sizeof s->target, val);
    else if (!strcmp(key, "cpu"))
        copy_field(s->cpu, sizeof s->cpu, val);
    else if (!strcmp(key, "elf"))
        copy_field(s->elf, sizeof s->elf, val);
    else if (!strcmp(key, "rate_hz")) {
        if (parse_real(val, &s->rate_hz) < 0)
            return rd_err(r, "rate_hz '%s' is not a number", show(b, 40, val),
                          NULL);
    } else if (!strcmp(key, "duration_s")) {
        if (parse_real(val, &s->duration_s) < 0)
            return rd_err(r, "duration_s '%s' is not a number",
                          show(b, 40, val), NULL);
    } else if (!strcmp(key, "total")) {
        if (parse_dec(val, total) < 0)
            return rd_err(r, "total '%s' is not a decimal number",
                          show(b, 40, val), NULL);
        *have_total = 1;
    } else if (!strcmp(key, "dropped")) {
        if (parse_dec(val, &s->dropped) < 0)
            return rd_err(r, "dropped '%s' is not a decimal number",
                          show(b, 40, val), NULL);
    } else if (smp_set_extra(s, key, val, r->err) < 0) {
        return -1;
    }
    return 0;
}

/* "# key: value" with key of [a-z0-9_-]: splits it, or returns 0. */
static int split_header(char *p, char **key, char **val)
{
    p++; /* '#' */
    while (*p == ' ' || *p == '\t')
        p++;
    char *k = p;
    while (islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
           *p == '_' || *p == '-')
        p++;
    if (p == k || *p != ':')
        return 0;
    *p++ = 0;
    while (*p == ' ' || *p == '\t')
        p++;
    char *e = p + strlen(p);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        *--e = 0;
    *key = k;
    *val = p;
    return 1;
}

static int data_line(smp *s, rd *r, char *p)
{
    char b1[64], b2[64];
    char *hash = strchr(p, '#');
    if (hash)
        *hash = 0;
    char *a = strtok(p, " \t");
    char *c = strtok(NULL, " \t");
    char *extra = strtok(NULL, " \t");
    if (!a)
        return 0; /* only a comment */
    if (!c)
        return rd_err(r, "'%s' has no count (want 'ADDRESS COUNT')",
                      show(b1, 40, a), NULL);
    if (extra)
        return rd_err(r, "unexpected '%s' after the count", show(b1, 40, extra),
                      NULL);
    if (a[0] != '0' || (a[1] != 'x' && a[1] != 'X') || !a[2])
        return rd_err(r, "address '%s' is not hex with 0x", show(b1, 40, a),
                      NULL);
    uint64_t addr = 0;
    for (const char *q = a + 2; *q; q++) {
        int d = isdigit((unsigned char)*q) ? *q - '0'
                : isxdigit((unsigned char)*q) ? tolower((unsigned char)*q) - 'a' + 10
                : -1;
        if (d < 0)
            return rd_err(r, "address '%s' is not hex with 0x", show(b1, 40, a),
                          NULL);
        addr = addr * 16 + (uint64_t)d;
        if (addr > 0xffffffffu)
            return rd_err(r, "address '%s' does not fit in 32 bits",
                          show(b1, 40, a), NULL);
    }
    uint64_t count;
    if (parse_dec(c, &count) < 0)
        return rd_err(r, "count '%s' is not a decimal number below 2^62 "
                      "(address %s)", show(b1, 40, c), show(b2, 20, a));
    cp_err e2;
    if (smp_add(s, (uint32_t)addr, count, &e2) < 0)
        return rd_err(r, "%.200s", e2.msg, NULL);
    return 0;
}

smp *smp_parse(const char *data, size_t len, const char *name, cp_err *err)
{
    rd r = {.name = name ? name : "(samples)", .line = 0, .err = err};
    smp *s = smp_new();
    char *line = malloc(len + 1);
    if (!s || !line) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    uint64_t total = 0;
    int have_total = 0;
    size_t pos = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && data[end] != '\n')
            end++;
        size_t n = end - pos;
        memcpy(line, data + pos, n);
        line[n] = 0;
        pos = end + 1;
        r.line++;
        if (memchr(line, 0, n)) {
            rd_err(&r, "NUL byte: this is not a text samples file", NULL, NULL);
            goto fail;
        }
        while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' ||
                     line[n - 1] == '\t'))
            line[--n] = 0;
        if (r.line == 1) {
            unsigned v;
            char tail;
            if (sscanf(line, "# codeplace samples %u%c", &v, &tail) == 1) {
                if (v != SMP_VERSION) {
                    char b[16];
                    snprintf(b, sizeof b, "%u", v);
                    rd_err(&r, "samples version %s is not supported (this "
                           "build reads version 1)", b, NULL);
                    goto fail;
                }
                continue;
            }
            rd_err(&r, "not a samples file: the first line must be "
                   "'# codeplace samples 1'", NULL, NULL);
            goto fail;
        }
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            continue;
        if (*p == '#') {
            char *key, *val;
            if (split_header(p, &key, &val) &&
                header_line(s, &r, key, val, &total, &have_total) < 0)
                goto fail;
            continue;
        }
        if (data_line(s, &r, p) < 0)
            goto fail;
    }
    if (r.line == 0) {
        cp_seterr(err, "%s: empty file: not a samples file", r.name);
        goto fail;
    }
    smp_normalize(s);
    if (have_total && total != smp_total(s)) {
        cp_seterr(err, "%s: header says total %" PRIu64 " but the counts add "
                  "up to %" PRIu64 " (file cut short or edited?)", r.name,
                  total, smp_total(s));
        goto fail;
    }
    free(line);
    return s;
fail:
    free(line);
    smp_free(s);
    return NULL;
}

smp *smp_read(const char *path, cp_err *err)
{
    char *data;
    size_t len;
    if (cp_read_file(path, &data, &len, err) < 0)
        return NULL;
    smp *s = smp_parse(data, len, path, err);
    free(data);
    return s;
}

/* --- writer ------------------------------------------------------------ */

/* Header values are one line: newlines would end the header early. */
static void put_value(FILE *f, const char *v)
{
    for (; *v; v++)
        fputc(*v == '\n' || *v == '\r' ? ' ' : *v, f);
}

void smp_write_head(const smp *s, FILE *f)
{
    fprintf(f, "# codeplace samples %d\n", SMP_VERSION);
    fputs("# source: ", f);
    put_value(f, s->source);
    fputs("\n# target: ", f);
    put_value(f, s->target);
    fputc('\n', f);
    if (s->cpu[0]) {
        fputs("# cpu: ", f);
        put_value(f, s->cpu);
        fputc('\n', f);
    }
    fputs("# elf: ", f);
    put_value(f, s->elf);
    fprintf(f, "\n# rate_hz: %.10g\n", s->rate_hz);
}

void smp_write_entry(FILE *f, uint32_t addr, uint64_t count)
{
    fprintf(f, "0x%08" PRIx32 " %" PRIu64 "\n", addr, count);
}

int smp_write(smp *s, FILE *f, cp_err *err)
{
    smp_normalize(s);
    smp_write_head(s, f);
    fprintf(f, "# duration_s: %.3f\n", s->duration_s);
    if (s->dropped)
        fprintf(f, "# dropped: %" PRIu64 "\n", s->dropped);
    for (size_t i = 0; i < s->nextra; i++) {
        fputs("# ", f);
        put_value(f, s->extra[i].key);
        fputs(": ", f);
        put_value(f, s->extra[i].value);
        fputc('\n', f);
    }
    fprintf(f, "# total: %" PRIu64 "\n", smp_total(s));
    for (size_t i = 0; i < s->n; i++)
        smp_write_entry(f, s->e[i].addr, s->e[i].count);
    if (fflush(f) != 0 || ferror(f)) {
        int e = errno;
        cp_seterr(err, "%s", e ? strerror(e) : "write error");
        errno = e;
        return -1;
    }
    return 0;
}

static int save_fn(FILE *f, void *arg, cp_err *err)
{
    cp_err e2;
    (void)err; /* a failed write: cp_wfile_write names the file and errno */
    return smp_write(arg, f, &e2);
}

int smp_save(smp *s, const char *path, cp_err *err)
{
    cp_err e2;
    if (cp_wfile_write(path, save_fn, s, &e2) < 0)
        return cp_seterr(err, "%s", e2.msg);
    return 0;
}

/* --- any input ----------------------------------------------------------- */

smp_kind smp_detect(const char *data, size_t len)
{
    if (len >= 4 && !memcmp(data, "gmon", 4))
        return SMP_KIND_GMON;
    if (len >= 20 && !memcmp(data, "# codeplace samples ", 20))
        return SMP_KIND_SAMPLES;
    /* A dump may follow console noise: look for its header at a line
     * start (or after a prompt) in the first 64 KiB. */
    size_t lim = len < 65536 ? len : 65536;
    for (size_t i = 0; i + 7 <= lim; i++)
        if (data[i] == 'C' && !memcmp(data + i, "CPDUMP ", 7))
            return SMP_KIND_DUMP;
    if (len >= 1 && data[0] == '#')
        return SMP_KIND_SAMPLES; /* let the reader say what is wrong */
    return SMP_KIND_UNKNOWN;
}

const char *smp_kind_name(smp_kind k)
{
    static const char *const names[] = {"samples", "gmon", "dump", "unknown"};
    return names[k <= SMP_KIND_UNKNOWN ? k : SMP_KIND_UNKNOWN];
}

smp *smp_load(const char *path, smp_kind *kind, cp_err *err)
{
    char *data;
    size_t len;
    if (cp_read_file(path, &data, &len, err) < 0)
        return NULL;
    smp_kind k = smp_detect(data, len);
    if (kind)
        *kind = k;
    smp *s = NULL;
    switch (k) {
    case SMP_KIND_GMON:
        s = smp_from_gmon(data, len, path, NULL, err);
        break;
    case SMP_KIND_DUMP:
        s = smp_from_dump(data, len, path, err);
        break;
    case SMP_KIND_SAMPLES:
        s = smp_parse(data, len, path, err);
        break;
    default:
        if (len >= 8 && !memcmp(data, "CPTRACE", 8))
            cp_seterr(err, "%s: a trace, not samples: sample it with "
                      "'codeplace samples %s --every N -o samples.txt', or "
                      "give it to report with --trace", path, path);
        else
            cp_seterr(err, "%s: not a samples file, gmon.out or profiler "
                      "dump", path);
        break;
    }
    free(data);
    return s;
}
