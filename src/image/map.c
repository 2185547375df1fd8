/* Parsing GNU ld map files (-Wl,-Map=fw.map): the "Memory Configuration"
 * table and, from "Linker script and memory map", the output sections and
 * the input sections placed in them with the file each came from. */
#include "image/image_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over the lines of the text. */
typedef struct lines {
    const char *p, *end;
    unsigned lineno;
} lines;

static int next_line(lines *l, const char **s, size_t *n)
{
    if (l->p >= l->end)
        return 0;
    const char *nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
    const char *e = nl ? nl : l->end;
    *s = l->p;
    *n = (size_t)(e - l->p);
    if (*n && (*s)[*n - 1] == '\r')
        (*n)--;
    l->p = nl ? nl + 1 : l->end;
    l->lineno++;
    return 1;
}

/* Splits a line into at most max whitespace-separated tokens; the last token
 * takes the rest of the line. Returns the count. */
static int tokens(const char *s, size_t n, const char **tok, size_t *len, int max)
{
    int k = 0;
    size_t i = 0;
    while (k < max) {
        while (i < n && isspace((unsigned char)s[i]))
            i++;
        if (i >= n)
            break;
        size_t st = i;
        if (k == max - 1) {
            size_t e = n;
            while (e > st && isspace((unsigned char)s[e - 1]))
                e--;
            tok[k] = s + st;
            len[k++] = e - st;
            break;
        }
        while (i < n && !isspace((unsigned char)s[i]))
            i++;
        tok[k] = s + st;
        len[k++] = i - st;
    }
    return k;
}

/* A 0x-prefixed hex number that fits in 32 bits (64-bit maps print 16
 * digits; the value must still fit). */
static int hexnum(const char *s, size_t n, uint32_t *out)
{
    if (n < 3 || n > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return -1;
    uint64_t v = 0;
    for (size_t i = 2; i < n; i++) {
        int c = (unsigned char)s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (v > 0xffffffffULL)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int add_isec(img *im, const char *name, size_t nlen, const char *osec,
                    uint32_t addr, uint32_t size, const char *file, size_t flen)
{
    if (cp_grow((void **)&im->isecs, &im->cisecs, im->nisecs + 1,
                sizeof *im->isecs) < 0)
        return -1;
    img_isec *s = &im->isecs[im->nisecs];
    memset(s, 0, sizeof *s);
    s->name = cp_pool_strn(im->pool, name, nlen);
    s->osec = osec;
    s->addr = addr;
    s->size = size;
    s->path = cp_pool_strn(im->pool, file, flen);
    if (!s->name || !s->path)
        return -1;
    /* "dir/libfoo.a(bar.o)" -> archive libfoo.a, object bar.o */
    const char *paren = flen ? memchr(file, '(', flen) : NULL;
    if (paren && file[flen - 1] == ')') {
        const char *arch = cp_pool_strn(im->pool, file, (size_t)(paren - file));
        const char *obj = cp_pool_strn(im->pool, paren + 1,
                                       (size_t)(file + flen - 1 - paren - 1));
        if (!arch || !obj)
            return -1;
        s->archive = cp_basename(arch);
        s->object = cp_basename(obj);
    } else {
        s->archive = NULL;
        s->object = cp_basename(s->path);
    }
    im->nisecs++;
    return 0;
}

static int add_osec(img *im, const char *name, size_t n, uint32_t addr,
                    uint32_t size)
{
    if (cp_grow((void **)&im->mosecs, &im->cmosecs, im->nmosecs + 1,
                sizeof *im->mosecs) < 0)
        return -1;
    img_map_osec *o = &im->mosecs[im->nmosecs];
    o->name = cp_pool_strn(im->pool, name, n);
    o->addr = addr;
    o->size = size;
    if (!o->name)
        return -1;
    im->nmosecs++;
    return 0;
}

static int parse_memory(img *im, lines *l, const char *path, cp_err *err)
{
    const char *s;
    size_t n;
    int header = 0;
    while (next_line(l, &s, &n)) {
        const char *tok[4];
        size_t len[4];
        int k = tokens(s, n, tok, len, 4);
        if (k == 0) {
            if (header)
                return 0;
            continue;
        }
        if (!header) {
            if (k >= 3 && len[0] == 4 && !memcmp(tok[0], "Name", 4)) {
                header = 1;
                continue;
            }
            return cp_seterr(err, "'%s' line %u: expected the 'Name Origin "
                             "Length' header of the memory configuration",
                             path, l->lineno);
        }
        uint32_t origin, length;
        if (k < 3 || hexnum(tok[1], len[1], &origin) < 0 ||
            hexnum(tok[2], len[2], &length) < 0)
            return cp_seterr(err, "'%s' line %u: bad memory region line", path,
                             l->lineno);
        if (len[0] == 9 && !memcmp(tok[0], "*default*", 9))
            continue;
        if (cp_grow((void **)&im->regions, &im->cregions, im->nregions + 1,
                    sizeof *im->regions) < 0)
            return cp_seterr(err, "'%s': out of memory", path);
        img_region *r = &im->regions[im->nregions++];
        r->name = cp_pool_strn(im->pool, tok[0], len[0]);
        r->origin = origin;
        r->length = length;
        r->attr = cp_pool_strn(im->pool, k > 3 ? tok[3] : "", k > 3 ? len[3] : 0);
        r->used = 0;
        if (!r->name || !r->attr)
            return cp_seterr(err, "'%s': out of memory", path);
    }
    return 0;
}

int img_parse_map(img *im, const char *path, const char *text, size_t len,
                  cp_err *err)
{
    if (memchr(text, 0, len))
        return cp_seterr(err, "'%s': not a GNU ld map file (binary data)", path);
    lines l = {text, text + len, 0};
    const char *s;
    size_t n;
    int seen_memory = 0, seen_script = 0, seen_head = 0;
    while (next_line(&l, &s, &n)) {
        if ((n >= 24 && !memcmp(s, "Discarded input sections", 24)) ||
            (n >= 22 && !memcmp(s, "Archive member included", 22)))
            seen_head = 1;
        if (n >= 20 && !memcmp(s, "Memory Configuration", 20)) {
            seen_memory = 1;
            if (parse_memory(im, &l, path, err) < 0)
                return -1;
        } else if (n >= 27 && !memcmp(s, "Linker script and memory map", 27)) {
            seen_script = 1;
            break;
        }
    }
    if (!seen_script && (seen_memory || seen_head))
        return cp_seterr(err, "'%s': a GNU ld map file cut short: it ends "
                         "before its 'Linker script and memory map' section",
                         path);
    if (!seen_script)
        return cp_seterr(err, "'%s': not a GNU ld map file (no 'Linker script "
                         "and memory map' section)", path);

    const char *osec = NULL;       /* current output section */
    const char *pend = NULL;       /* a name waiting for its address line */
    size_t pend_len = 0;
    int pend_is_osec = 0;
    while (next_line(&l, &s, &n)) {
        const char *tok[4];
        size_t tl[4];
        if (n == 0)
            continue;
        if (pend) {
            /* The continuation of a long name: "   0xADDR 0xSIZE file". */
            int k = tokens(s, n, tok, tl, 3);
            uint32_t a, z;
            if (k >= 2 && hexnum(tok[0], tl[0], &a) == 0 &&
                hexnum(tok[1], tl[1], &z) == 0) {
                if (pend_is_osec) {
                    if (add_osec(im, pend, pend_len, a, z) < 0)
                        goto oom;
                    osec = im->mosecs[im->nmosecs - 1].name;
                } else if (osec && z && k == 3) {
                    if (add_isec(im, pend, pend_len, osec, a, z, tok[2], tl[2]) < 0)
                        goto oom;
                }
                pend = NULL;
                continue;
            }
            pend = NULL; /* not a continuation; fall through */
        }
        if (n >= 7 && !memcmp(s, "OUTPUT(", 7))
            im->map_output = 1;
        if (!isspace((unsigned char)s[0])) {
            /* Output section, or LOAD/OUTPUT/START GROUP lines. */
            int k = tokens(s, n, tok, tl, 4);
            uint32_t a, z;
            if (k == 1 && (tok[0][0] == '.' || tok[0][0] == '_' ||
                           isalpha((unsigned char)tok[0][0])) &&
                !memchr(tok[0], '(', tl[0])) {
                pend = tok[0];
                pend_len = tl[0];
                pend_is_osec = 1;
                osec = NULL;
            } else if (k >= 3 && hexnum(tok[1], tl[1], &a) == 0 &&
                       hexnum(tok[2], tl[2], &z) == 0) {
                if (add_osec(im, tok[0], tl[0], a, z) < 0)
                    goto oom;
                osec = im->mosecs[im->nmosecs - 1].name;
            } else {
                osec = NULL;
            }
            continue;
        }
        if (s[0] == ' ' && n > 1 && !isspace((unsigned char)s[1])) {
            /* Input section, fill, or a pattern "*(...)". */
            if (s[1] == '*')
                continue;
            int k = tokens(s, n, tok, tl, 4);
            uint32_t a, z;
            if (k == 1) {
                pend = tok[0];
                pend_len = tl[0];
                pend_is_osec = 0;
            } else if (k == 4 && hexnum(tok[1], tl[1], &a) == 0 &&
                       hexnum(tok[2], tl[2], &z) == 0) {
                if (osec && z &&
                    add_isec(im, tok[0], tl[0], osec, a, z, tok[3], tl[3]) < 0)
                    goto oom;
            }
            continue;
        }
        /* Symbol lines "   0xADDR   name": kept to check the map against
         * the ELF. Assignments have more tokens and are skipped. */
        if (osec) {
            int k = tokens(s, n, tok, tl, 3);
            uint32_t a;
            if (k == 2 && hexnum(tok[0], tl[0], &a) == 0 &&
                !memchr(tok[1], '=', tl[1]) && !memchr(tok[1], '(', tl[1])) {
                if (cp_grow((void **)&im->msyms, &im->cmsyms, im->nmsyms + 1,
                            sizeof *im->msyms) < 0)
                    goto oom;
                img_map_sym *m = &im->msyms[im->nmsyms];
                m->name = cp_pool_strn(im->pool, tok[1], tl[1]);
                m->addr = a;
                if (!m->name)
                    goto oom;
                im->nmsyms++;
            }
        }
    }
    im->map_cut_line = len && text[len - 1] != '\n' ? (int)l.lineno : 0;
    if (im->nmosecs == 0)
        return cp_seterr(err, "'%s': not a GNU ld map file (no output "
                         "sections)", path);
    return 0;
oom:
    return cp_seterr(err, "'%s': out of memory", path);
}
