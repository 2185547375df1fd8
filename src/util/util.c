#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cp_seterr(cp_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int cp_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (elem && n > SIZE_MAX / elem)
        return -1;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* The pool is a list of large blocks; strings are never freed one by one. */
struct cp_pool {
    struct block {
        struct block *next;
        size_t used, size;
        char data[];
    } *head;
};

cp_pool *cp_pool_new(void)
{
    return calloc(1, sizeof(cp_pool));
}

void cp_pool_free(cp_pool *pool)
{
    if (!pool)
        return;
    struct block *b = pool->head;
    while (b) {
        struct block *n = b->next;
        free(b);
        b = n;
    }
    free(pool);
}

const char *cp_pool_strn(cp_pool *pool, const char *s, size_t n)
{
    if (n == (size_t)-1)
        n = strlen(s);
    struct block *b = pool->head;
    if (!b || b->size - b->used < n + 1) {
        size_t size = n + 1 > 65536 ? n + 1 : 65536;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->used = 0;
        b->size = size;
        b->next = pool->head;
        pool->head = b;
    }
    char *d = b->data + b->used;
    memcpy(d, s, n);
    d[n] = 0;
    b->used += n + 1;
    return d;
}

const char *cp_pool_str(cp_pool *pool, const char *s)
{
    return cp_pool_strn(pool, s, (size_t)-1);
}

int cp_read_file(const char *path, char **data, size_t *len, cp_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cp_seterr(err, "cannot open '%s': %s", path, strerror(errno));
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (cp_grow((void **)&buf, &cap, n + 65536 + 1, 1) < 0) {
            free(buf);
            fclose(f);
            return cp_seterr(err, "cannot read '%s': out of memory", path);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        return cp_seterr(err, "cannot read '%s': %s", path, strerror(e));
    }
    fclose(f);
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

uint64_t cp_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

int cp_parse_u64(const char *s, int allow_suffix, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return -1;
    if (*end && allow_suffix) {
        unsigned shift = 0;
        switch (*end) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return -1;
        }
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
        if (v > (~0ULL >> shift))
            return -1;
        v <<= shift;
    }
    if (*end)
        return -1;
    *out = v;
    return 0;
}

const char *cp_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int cp_glob(const char *pat, const char *s)
{
    const char *star = NULL, *back = NULL;
    while (*s) {
        if (*pat == '*') {
            star = pat++;
            back = s;
        } else if (*pat == '?' || *pat == *s) {
            pat++;
            s++;
        } else if (star) {
            pat = star + 1;
            s = ++back;
        } else {
            return 0;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == 0;
}

double cp_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *cp_hz(char *buf, double hz, unsigned sig)
{
    static const char *const prefix[] = {"", "k", "M", "G"};
    if (sig < 1)
        sig = 1;
    if (sig > 9)
        sig = 9;
    if (!(hz > 0) || hz >= 1e15) {
        snprintf(buf, 32, "%g Hz", hz);
        return buf;
    }
    /* Rounded to sig digits first: 999,999.7 at 3 digits is 1 MHz. */
    char t[40];
    snprintf(t, sizeof t, "%.*e", (int)sig - 1, hz);
    double v = strtod(t, NULL);
    unsigned k = 0;
    while (k < 3 && v >= 1000) {
        v /= 1000;
        k++;
    }
    int whole = v >= 100 ? 3 : v >= 10 ? 2 : 1;
    int dec = (int)sig > whole ? (int)sig - whole : 0;
    int n = snprintf(buf, 24, "%.*f", dec, v);
    if (dec) {
        while (n > 0 && buf[n - 1] == '0')
            n--;
        if (n > 0 && buf[n - 1] == '.')
            n--;
    }
    snprintf(buf + n, 8, " %sHz", prefix[k]);
    return buf;
}

const char *cp_commas(char *buf, uint64_t n)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)n);
    int o = 0;
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}
