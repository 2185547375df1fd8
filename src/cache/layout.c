/* Layout files (docs/formats/layout.md): where each placed function goes.
 * Applying one to a map moves the functions' fetches without relinking. */
#include "cache/cache.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cache/stream_int.h"

typedef struct entry {
    size_t fn;
    int colour;      /* 1: place holds a start set */
    uint32_t place;  /* address or set */
    unsigned line;   /* line number in the file */
} entry;

static char *next_tok(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return NULL;
    char *e = s;
    while (*e && *e != ' ' && *e != '\t')
        e++;
    if (*e)
        *e++ = 0;
    *p = e;
    return s;
}

typedef struct span {
    uint32_t a, b;
    size_t fn;
    int moved;
} span;

static int cmp_span(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

/* A moved function must not overlap another function in flash (unless both
 * moved together and overlapped as traced). */
static int check_overlap(const char *path, const csim_stream *s,
                         const csim_map *m, cp_err *err)
{
    span *v = malloc((s->nimg ? s->nimg : 1) * sizeof *v);
    size_t n = 0;
    if (!v)
        return cp_seterr(err, "out of memory");
    for (size_t i = 0; i < s->nimg; i++)
        /* Unknown code is grouped in blocks whose span is nominal: only
         * functions can overlap. */
        if (m->kind[i] != CSIM_UNCACHED && !(s->fns[i].flags & CSIM_FN_UNKNOWN))
            v[n++] = (span){m->base[i], m->base[i] + s->fns[i].size, i,
                            m->moved[i] || (s->fns[i].flags & CSIM_FN_STUB)};
    qsort(v, n, sizeof *v, cmp_span);
    for (size_t i = 1; i < n; i++)
        if (v[i].a < v[i - 1].b && (v[i].moved || v[i - 1].moved) &&
            /* moved by the same distance: they overlapped in the traced
             * image too (assembly routines that fall into each other) */
            (m->addr[v[i].fn] - s->fns[v[i].fn].addr !=
                 m->addr[v[i - 1].fn] - s->fns[v[i - 1].fn].addr ||
             ((s->fns[v[i].fn].flags | s->fns[v[i - 1].fn].flags) &
              CSIM_FN_STUB))) {
            cp_seterr(err, "%s: %s (0x%08x, %u bytes) overlaps %s (0x%08x)",
                      path, s->fns[v[i - 1].fn].name, v[i - 1].a,
                      v[i - 1].b - v[i - 1].a, s->fns[v[i].fn].name, v[i].a);
            free(v);
            return -1;
        }
    free(v);
    return 0;
}

/* The function named name: with several of that name (static functions),
 * the first not placed yet, so a layout may list each of them once. */
static size_t find_fn(const csim_stream *s, const char *name,
                      const uint8_t *seen)
{
    size_t first = csim_stream_find(s, name);
    if (first == NONE || !seen[first] || strchr(name, '@'))
        return first;
    for (size_t i = first + 1; i < s->nimg; i++)
        if (!seen[i] && !strcmp(s->fns[i].name, name))
            return i;
    return first;
}

static int fast_kind(tgt_mem_kind k)
{
    return k == TGT_MEM_SRAM || k == TGT_MEM_ITCM || k == TGT_MEM_DTCM;
}

/* A function placed at addr in a region must start at an even address in a
 * memory of kind want (for region "ram", any fast memory: want2 is SRAM)
 * and end inside it. fn may be NONE (not in the image: only the address is
 * checked). */
static int check_place(const char *path, unsigned ln, const csim_stream *s,
                       size_t fn, const tgt *t, const char *region,
                       uint32_t addr, tgt_mem_kind want, tgt_mem_kind want2,
                       cp_err *err)
{
    const char *name = fn != NONE ? s->fns[fn].name : "the function";
    if (addr & 1)
        return cp_seterr(err, "%s:%u: %s at 0x%08x: an odd address (Thumb code "
                         "starts at an even address; a layout gives addresses "
                         "without the Thumb bit)", path, ln, name, addr);
    const tgt_mem *mem = tgt_mem_at(t, addr);
    int ok = mem && (mem->kind == want ||
                     (!strcmp(region, "ram") && fast_kind(mem->kind)) ||
                     mem->kind == want2);
    if (!ok) {
        char is[96];
        if (mem)
            snprintf(is, sizeof is, "%s memory '%s'",
                     tgt_mem_kind_name(mem->kind), mem->name);
        else
            snprintf(is, sizeof is, "no memory of %s", t->name);
        return cp_seterr(err, "%s:%u: %s in region %s at 0x%08x, but that "
                         "address is %s, not %s %s memory", path, ln, name,
                         region, addr, is, t->name,
                         !strcmp(region, "ram") ? "fast"
                                                : tgt_mem_kind_name(want));
    }
    if (fn != NONE &&
        (uint64_t)addr + s->fns[fn].size > (uint64_t)mem->base + mem->size)
        return cp_seterr(err, "%s:%u: %s at 0x%08x (%u bytes) runs past the end "
                         "of %s memory '%s' (0x%08x..0x%08llx)", path, ln, name,
                         addr, s->fns[fn].size, tgt_mem_kind_name(mem->kind),
                         mem->name, mem->base,
                         (unsigned long long)mem->base + mem->size - 1);
    return 0;
}

/* After a move by @shift or a colour: the function must stay inside cached
 * flash. */
static int check_moved(const char *path, unsigned ln, const char *what,
                       const csim_stream *s, size_t i, uint32_t to,
                       cp_err *err)
{
    const tgt *t = s->t;
    const tgt_mem *mem = tgt_mem_at(t, to);
    /* Unknown code (data read from flash) is grouped in nominal blocks:
     * only its start is checked. */
    uint64_t end = (s->fns[i].flags & CSIM_FN_UNKNOWN)
                       ? (uint64_t)to + 1
                       : (uint64_t)to + s->fns[i].size;
    if (mem && mem->kind == TGT_MEM_FLASH &&
        end <= (uint64_t)mem->base + mem->size)
        return 0;
    const tgt_mem *w = tgt_cached_window(t);
    return cp_seterr(err, "%s:%u: %s moves %s (0x%08x) to 0x%08x, %s %s's "
                     "cached flash '%s' (0x%08x..0x%08llx)", path, ln, what,
                     s->fns[i].name, s->fns[i].addr, to,
                     mem && mem->kind == TGT_MEM_FLASH ? "past the end of"
                                                       : "outside",
                     t->name, w ? w->name : "?", w ? w->base : 0,
                     w ? (unsigned long long)w->base + w->size - 1 : 0ULL);
}

/* A RAM region must name a memory the target has (any fast memory for
 * "ram"), with or without an address: code cannot run from a memory the
 * chip does not have. */
static int check_has_mem(const char *path, unsigned ln, const tgt *t,
                         const char *region, tgt_mem_kind k, int any,
                         cp_err *err)
{
    char have[128] = "";
    size_t n = 0;
    for (unsigned i = 0; i < t->nmems; i++) {
        const tgt_mem *mem = &t->mems[i];
        if (mem->kind == k || (any && fast_kind(mem->kind)))
            return 0;
        if (fast_kind(mem->kind) && n < sizeof have)
            n += (size_t)snprintf(have + n, sizeof have - n, "%s%s",
                                  n ? ", " : "", mem->name);
    }
    return cp_seterr(err, "%s:%u: region %s, but %s has no %s memory (%s%s)",
                     path, ln, region, t->name, any ? "fast" : region,
                     n ? "its fast memories: " : "it has no fast memory",
                     have);
}

/* Functions given an address in fast memory must not overlap there (two
 * at one address are two functions the linker cannot both put there),
 * unless they overlap as much in the image.
 * r[] holds the entries with an address, sorted here. */
static int cmp_entry_place(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    return a->place < b->place ? -1 : a->place > b->place;
}

static int check_ram_overlap(const char *path, const csim_stream *s,
                             entry *r, size_t n, cp_err *err)
{
    if (n < 2)
        return 0;
    qsort(r, n, sizeof *r, cmp_entry_place);
    for (size_t i = 1; i < n; i++) {
        const entry *a = &r[i - 1], *b = &r[i];
        uint32_t asz = s->fns[a->fn].size ? s->fns[a->fn].size : 1;
        if ((uint64_t)a->place + asz <= b->place ||
            /* moved by the same distance: they overlapped in the traced
             * image too (assembly routines that fall into each other,
             * libgcc's __aeabi_cdrcmple and __aeabi_cdcmpeq) */
            a->place - s->fns[a->fn].addr == b->place - s->fns[b->fn].addr)
            continue;
        const entry *later = a->line > b->line ? a : b;
        const entry *other = later == a ? b : a;
        return cp_seterr(err, "%s:%u: %s at 0x%08x (%u bytes) overlaps %s at "
                         "0x%08x (%u bytes, line %u) in fast memory", path,
                         later->line, s->fns[later->fn].name, later->place,
                         s->fns[later->fn].size, s->fns[other->fn].name,
                         other->place, s->fns[other->fn].size, other->line);
    }
    return 0;
}

/* An entry's name, region and place (the reader checked its shape) against
 * the image and the target. */
static int place_entry(const char *path, const csim_layout_line *x,
                       const csim_stream *s, const uint8_t *seen,
                       const tgt_cache *g, entry *e, int *region_ram,
                       csim_layout_stats *st, cp_err *err)
{
    unsigned ln = x->line;
    const char *name = x->name, *region = x->region, *place = x->place;
    uint64_t v;
    e->line = ln;
    e->fn = find_fn(s, name, seen);
    if (e->fn == NONE || (s->fns[e->fn].flags & CSIM_FN_UNKNOWN)) {
        if (!st->missing++)
            snprintf(st->first_missing, sizeof st->first_missing, "%s", name);
        e->fn = NONE;
    }
    const tgt *t = s->t;
    *region_ram = 0;
    e->colour = 0;
    if (!strcmp(region, "flash") || !strcmp(region, "noalloc")) {
        if (!strncmp(place, "set:", 4)) {
            if (!strcmp(region, "noalloc"))
                return cp_seterr(err, "%s:%u: a colour needs region flash",
                                 path, ln);
            if (cp_parse_u64(place + 4, 0, &v) < 0 || v >= tgt_cache_sets(g))
                return cp_seterr(err, "%s:%u: colour '%s' is not a set of "
                                 "this cache (0..%u)", path, ln, place,
                                 tgt_cache_sets(g) - 1);
            e->colour = 1;
            e->place = (uint32_t)v;
            return 0;
        }
        if (cp_parse_u64(place, 0, &v) < 0 || v > 0xffffffffULL)
            return cp_seterr(err, "%s:%u: bad address '%s'", path, ln, place);
        tgt_mem_kind want = !strcmp(region, "flash") ? TGT_MEM_FLASH
                                                     : TGT_MEM_FLASH_NOALLOC;
        if (check_place(path, ln, s, e->fn, t, region, (uint32_t)v, want,
                        want, err) < 0)
            return -1;
        e->place = (uint32_t)v;
        return 0;
    }
    if (!strcmp(region, "sram") || !strcmp(region, "itcm") ||
        !strcmp(region, "dtcm") || !strcmp(region, "ram")) {
        *region_ram = 1;
        tgt_mem_kind k = region[0] == 's' ? TGT_MEM_SRAM
                         : region[0] == 'i' ? TGT_MEM_ITCM
                                            : TGT_MEM_DTCM;
        int any = !strcmp(region, "ram");
        if (check_has_mem(path, ln, t, region, k, any, err) < 0)
            return -1;
        e->place = UINT32_MAX; /* "-": the linker chooses */
        if (strcmp(place, "-")) {
            if (cp_parse_u64(place, 0, &v) < 0 || v > 0xffffffffULL)
                return cp_seterr(err, "%s:%u: bad address '%s' (an address "
                                 "or '-')", path, ln, place);
            if (check_place(path, ln, s, e->fn, t, region, (uint32_t)v, k,
                            any ? TGT_MEM_SRAM : k, err) < 0)
                return -1;
            e->place = (uint32_t)v;
        }
        return 0;
    }
    return cp_seterr(err, "%s:%u: region '%s' is not flash, noalloc, sram, "
                     "itcm or dtcm", path, ln, region);
}

/* "from:0xSITE,0xSITE,..." (an @stub line's last field): the branches
 * that use the stub, into *sites (malloc'ed, *n entries). */
static int parse_sites(const char *path, unsigned ln, char *f,
                       uint32_t **sites, size_t *n, cp_err *err)
{
    size_t cap = 0;
    *sites = NULL;
    *n = 0;
    for (char *p = f + 5, *q; *p; p = q) {
        q = strchr(p, ',');
        if (q)
            *q++ = 0;
        else
            q = p + strlen(p);
        uint64_t a;
        if (cp_parse_u64(p, 0, &a) < 0 || a > 0xffffffffULL || (a & 1)) {
            free(*sites);
            *sites = NULL;
            return cp_seterr(err, "%s:%u: '%s' in from: is not a branch's "
                             "address", path, ln, p);
        }
        if (cp_grow((void **)sites, &cap, *n + 1, sizeof **sites) < 0) {
            free(*sites);
            *sites = NULL;
            return cp_seterr(err, "out of memory");
        }
        (*sites)[(*n)++] = (uint32_t)a;
    }
    if (!*n)
        return cp_seterr(err, "%s:%u: from: names no branch", path, ln);
    return 0;
}

/* An @stub line (the reader checked its shape): a linker stub in cached
 * flash or fast memory that reaches a function of the image, with the
 * branches that use it when the line names them (from:, version 3). */
static int resolve_stub(const char *path, const csim_layout_line *x,
                        const csim_stream *s, csim_stub *out, cp_err *err)
{
    unsigned ln = x->line;
    uint64_t addr = x->stub_addr;
    const char *name = x->stub_target;
    const tgt_mem *mem = tgt_mem_at(s->t, (uint32_t)addr);
    if (!mem || (mem->kind != TGT_MEM_FLASH && mem->kind != TGT_MEM_SRAM &&
                 mem->kind != TGT_MEM_ITCM))
        return cp_seterr(err, "%s:%u: stub at 0x%08llx is not in %s cached "
                         "flash or fast memory", path, ln,
                         (unsigned long long)addr, s->t->name);
    size_t f = csim_stream_find(s, name);
    if (f == NONE || f >= s->nimg)
        return cp_seterr(err, "%s:%u: stub target '%s' is not a function of "
                         "the image", path, ln, name);
    *out = (csim_stub){(uint32_t)addr, x->stub_bytes, x->stub_insns,
                       s->fns[f].addr, NULL, 0};
    if (x->stub_from) {
        char *f2 = strdup(x->stub_from);
        if (!f2)
            return cp_seterr(err, "out of memory");
        int rc = parse_sites(path, ln, f2, &out->sites, &out->nsites, err);
        free(f2);
        if (rc < 0)
            return -1;
    }
    return 0;
}

void csim_stubs_free(csim_stub *st, size_t n)
{
    for (size_t i = 0; st && i < n; i++)
        free(st[i].sites);
    free(st);
}


/* A NUL-terminated copy of a layout file's text (len bytes) to cut into
 * lines; NULL with err when it holds a NUL (not a text file) or on OOM. */
static char *text_copy(const char *path, const char *text, size_t len,
                       cp_err *err)
{
    if (memchr(text, 0, len)) {
        cp_seterr(err, "%s: not a text file", path);
        return NULL;
    }
    char *data = malloc(len + 1);
    if (!data) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    memcpy(data, text, len);
    data[len] = 0;
    return data;
}

static int is_directive(const char *p, const char *word)
{
    size_t n = strlen(word);
    return !strncmp(p, word, n) && isspace((unsigned char)p[n]);
}

/* Line 1: "# codeplace layout N", N 1 to 3. */
static int read_header(const char *path, const char *p, unsigned *version,
                       cp_err *err)
{
    unsigned ver;
    char extra;
    if (sscanf(p, "# codeplace layout %u%c", &ver, &extra) != 1)
        return cp_seterr(err, "%s:1: not a layout file (expected '# codeplace "
                         "layout 2')", path);
    if (ver < 1 || ver > 3)
        return cp_seterr(err, "%s:1: layout version %u; this codeplace reads "
                         "versions 1 to 3", path, ver);
    *version = ver;
    return 0;
}

/* "@shift FROM DELTA" (after "@shift"): flash at FROM and above (what
 * follows the text section, e.g. .rodata) moves by DELTA bytes. */
static int read_shift(const char *path, unsigned ln, const char *p,
                      csim_layout_line *x, cp_err *err)
{
    unsigned long long from;
    long long delta;
    char extra;
    if (sscanf(p, "%llx %lld %c", &from, &delta, &extra) != 2 ||
        from > 0xffffffffULL || delta < -(long long)from ||
        delta > 0xffffffffLL - (long long)from)
        return cp_seterr(err, "%s:%u: expected '@shift 0xFROM DELTA'", path, ln);
    x->kind = CSIM_LAYOUT_SHIFT;
    x->shift_from = (uint32_t)from;
    x->shift_by = delta;
    return 0;
}

/* "@stub 0xADDR SIZE INSNS TARGET [from:SITES]" (after "@stub"): a linker
 * stub; the sites need layout version 3. */
static int read_stub(const char *path, unsigned ln, unsigned version, char *p,
                     csim_layout_line *x, cp_err *err)
{
    if (version < 2)
        return cp_seterr(err, "%s:%u: @stub lines need layout version 2 "
                         "(the file says 1)", path, ln);
    char *a = next_tok(&p), *sz = next_tok(&p), *in = next_tok(&p);
    char *name = next_tok(&p), *from = next_tok(&p);
    uint64_t addr, size, insns;
    if (!a || !sz || !in || !name || (from && strncmp(from, "from:", 5)) ||
        next_tok(&p) ||
        cp_parse_u64(a, 0, &addr) < 0 || addr > 0xffffffffULL ||
        cp_parse_u64(sz, 0, &size) < 0 || size == 0 || size > 64 ||
        cp_parse_u64(in, 0, &insns) < 0 || insns > 64)
        return cp_seterr(err, "%s:%u: expected '@stub 0xADDR SIZE INSNS "
                         "TARGET [from:0xSITE,...]' (SIZE 1..64 bytes, INSNS "
                         "0..64)", path, ln);
    if (from && version < 3)
        return cp_seterr(err, "%s:%u: from: on an @stub line needs layout "
                         "version 3 (the file says %u)", path, ln, version);
    x->kind = CSIM_LAYOUT_STUB;
    x->stub_addr = (uint32_t)addr;
    x->stub_bytes = (uint32_t)size;
    x->stub_insns = (uint32_t)insns;
    x->stub_target = name;
    x->stub_from = from;
    return 0;
}

/* "NAME REGION PLACE SIZE REASON..." */
static int read_entry(const char *path, unsigned ln, char *p,
                      csim_layout_line *x, cp_err *err)
{
    char *name = next_tok(&p), *region = next_tok(&p), *place = next_tok(&p);
    char *size = next_tok(&p);
    if (!name || !region || !place || !size)
        return cp_seterr(err, "%s:%u: expected NAME REGION PLACE SIZE REASON",
                         path, ln);
    uint64_t v;
    if (cp_parse_u64(size, 0, &v) < 0 || v > 0xffffffffULL)
        return cp_seterr(err, "%s:%u: bad size '%s'", path, ln, size);
    x->kind = CSIM_LAYOUT_ENTRY;
    x->name = name;
    x->region = region;
    x->place = place;
    x->size = (uint32_t)v;
    return 0;
}

int csim_layout_read(const char *path, const char *text, size_t len,
                     csim_layout_fn fn, void *ctx, cp_err *err)
{
    char *data = text_copy(path, text, len, err);
    if (!data)
        return -1;
    unsigned ln = 0, version = 1;
    int rc = 0;
    for (char *p = data, *nl; p && *p && rc == 0; p = nl) {
        nl = strchr(p, '\n');
        if (nl)
            *nl++ = 0;
        ln++;
        size_t l = strlen(p);
        if (l && p[l - 1] == '\r')
            p[--l] = 0;
        if (ln == 1) {
            rc = read_header(path, p, &version, err);
            continue;
        }
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            continue;
        csim_layout_line x;
        memset(&x, 0, sizeof x);
        x.line = ln;
        x.version = version;
        if (*p == '#') {
            x.kind = CSIM_LAYOUT_COMMENT;
            x.text = p;
        } else if (is_directive(p, "@shift")) {
            rc = read_shift(path, ln, p + 6, &x, err);
        } else if (is_directive(p, "@stub")) {
            rc = read_stub(path, ln, version, p + 5, &x, err);
        } else {
            rc = read_entry(path, ln, p, &x, err);
        }
        if (rc == 0)
            rc = fn(ctx, &x, err);
    }
    free(data);
    if (rc == 0 && ln == 0)
        rc = cp_seterr(err, "%s: empty file, not a layout", path);
    return rc < 0 ? -1 : rc;
}

/* csim_layout_stubs_text: the @stub lines, resolved. */
typedef struct stubs_read {
    const char *path;
    const csim_stream *s;
    csim_stub *out;
    size_t n, cap;
} stubs_read;

static int on_stub(void *ctx, const csim_layout_line *l, cp_err *err)
{
    stubs_read *x = ctx;
    csim_stub st;
    if (l->kind != CSIM_LAYOUT_STUB)
        return 0;
    if (resolve_stub(x->path, l, x->s, &st, err) < 0)
        return -1;
    if (cp_grow((void **)&x->out, &x->cap, x->n + 1, sizeof *x->out) < 0) {
        free(st.sites);
        return cp_seterr(err, "out of memory");
    }
    x->out[x->n++] = st;
    return 0;
}

int csim_layout_stubs_text(const char *path, const char *text, size_t len,
                           const csim_stream *s, csim_stub **out, size_t *n,
                           cp_err *err)
{
    stubs_read x = {path, s, NULL, 0, 0};
    int rc = csim_layout_read(path, text, len, on_stub, &x, err);
    if (rc < 0) {
        csim_stubs_free(x.out, x.n);
        x.out = NULL;
        x.n = 0;
    }
    *out = x.out;
    *n = x.n;
    return rc;
}

/* csim_layout_image_text: "image: H" in the comment lines before the first
 * entry. */
typedef struct image_read {
    char *out;
    size_t n;
} image_read;

static int on_image(void *ctx, const csim_layout_line *l, cp_err *err)
{
    image_read *x = ctx;
    (void)err;
    if (l->kind != CSIM_LAYOUT_COMMENT)
        return 1; /* past the header: stop */
    const char *p = strstr(l->text, " image: ");
    if (!p)
        p = strstr(l->text, "\timage: ");
    if (!p)
        return 0;
    p += 8;
    size_t k = strcspn(p, " \t");
    if (k == 0 || k >= x->n)
        return 1;
    memcpy(x->out, p, k);
    x->out[k] = 0;
    return 2; /* found */
}

int csim_layout_image_text(const char *text, size_t len, char *out, size_t n)
{
    if (!n)
        return 0;
    out[0] = 0;
    image_read x = {out, n};
    return csim_layout_read("layout", text, len, on_image, &x, NULL) == 2;
}

int csim_layout_apply(const char *path, const csim_stream *s, csim_map *m,
                      const tgt_cache *g, csim_layout_stats *st, cp_err *err)
{
    char *data;
    size_t len;
    memset(st, 0, sizeof *st);
    if (cp_read_file(path, &data, &len, err) < 0)
        return -1;
    int rc = csim_layout_apply_text(path, data, len, s, m, g, st, err);
    free(data);
    return rc;
}

/* csim_layout_apply_text: what the lines so far decided. */
typedef struct apply {
    const char *path;
    const csim_stream *s;
    csim_map *m;
    const tgt_cache *g;
    csim_layout_stats *st;
    uint8_t *seen;   /* per function: placed by an entry or moved */
    entry *col;      /* the coloured entries, placed after the rest */
    size_t ncol, capc;
    entry *fast;     /* the fast-memory entries with an address */
    size_t nfast, capf;
    uint32_t shift_from[8];
    long long shift_by[8];
    unsigned shift_line[8];
    unsigned nshift;
} apply;

static int on_entry(apply *x, const csim_layout_line *l, cp_err *err)
{
    const csim_stream *s = x->s;
    entry e;
    int ram = 0;
    if (place_entry(x->path, l, s, x->seen, x->g, &e, &ram, x->st, err) < 0)
        return -1;
    if (e.fn == NONE)
        return 0;
    if (x->seen[e.fn])
        return cp_seterr(err, "%s:%u: %s is placed twice", x->path, l->line,
                         s->fns[e.fn].name);
    x->seen[e.fn] = 1;
    x->st->placed++;
    if (ram) {
        csim_map_uncache(x->m, e.fn);
        x->st->to_ram++;
        if (e.place != UINT32_MAX) {
            if (cp_grow((void **)&x->fast, &x->capf, x->nfast + 1,
                        sizeof *x->fast) < 0)
                return cp_seterr(err, "out of memory");
            x->fast[x->nfast++] = e;
        }
    } else if (e.colour) {
        if (cp_grow((void **)&x->col, &x->capc, x->ncol + 1,
                    sizeof *x->col) < 0)
            return cp_seterr(err, "out of memory");
        x->col[x->ncol++] = e;
    } else {
        csim_map_move(x->m, e.fn, e.place);
        x->st->to_flash++;
    }
    return 0;
}

static int on_apply(void *ctx, const csim_layout_line *l, cp_err *err)
{
    apply *x = ctx;
    csim_stub stub;
    switch (l->kind) {
    case CSIM_LAYOUT_COMMENT:
        return 0;
    case CSIM_LAYOUT_SHIFT:
        if (x->nshift == 8)
            return cp_seterr(err, "%s:%u: too many @shift lines", x->path,
                             l->line);
        x->shift_line[x->nshift] = l->line;
        x->shift_from[x->nshift] = l->shift_from;
        x->shift_by[x->nshift++] = l->shift_by;
        return 0;
    case CSIM_LAYOUT_STUB:
        /* Fetched through the stream (csim_layout_stubs_text); checked
         * here. */
        if (resolve_stub(x->path, l, x->s, &stub, err) < 0)
            return -1;
        free(stub.sites);
        x->st->stubs++;
        return 0;
    case CSIM_LAYOUT_ENTRY:
        return on_entry(x, l, err);
    }
    return 0;
}

/* After the lines: the @shift moves and the colours. */
static int finish_apply(apply *x, cp_err *err)
{
    const char *path = x->path;
    const csim_stream *s = x->s;
    csim_map *m = x->m;
    csim_layout_stats *st = x->st;
    /* What is read through a non-allocating alias moves with the flash it
     * aliases (a table in .rodata read at its address + 0x01000000 on the
     * RP2040): its place in the cached window decides, and it stays in
     * the alias. */
    for (unsigned k = 0; k < x->nshift; k++)
        for (size_t i = 0; i < s->nfns; i++) {
            int nofill = m->kind[i] == CSIM_NOFILL;
            if (x->seen[i] || (m->kind[i] != CSIM_CACHED && !nofill) ||
                (s->fns[i].flags & CSIM_FN_STUB))
                continue;
            uint64_t at = m->base[i]; /* its address in the cached window */
            if (!((s->fns[i].flags & CSIM_FN_UNKNOWN)
                      ? at + s->fns[i].size > x->shift_from[k]
                      : at >= x->shift_from[k]))
                continue;
            uint32_t to = (uint32_t)((long long)at + x->shift_by[k]);
            if (check_moved(path, x->shift_line[k], "@shift", s, i, to, err) < 0)
                return -1;
            csim_map_move(m, i, nofill ? (uint32_t)((long long)s->fns[i].addr +
                                                    x->shift_by[k])
                                       : to);
            x->seen[i] = 1;
            st->shifted++;
        }
    if (x->ncol) {
        /* Coloured functions go past every function in cached flash, each at
         * the first line-aligned address whose set is its colour. */
        const tgt_cache *g = x->g;
        uint32_t nsets = tgt_cache_sets(g), ls = log2u(g->line);
        uint64_t cur = 0;
        for (size_t i = 0; i < s->nfns; i++)
            if (m->kind[i] == CSIM_CACHED && !(s->fns[i].flags & CSIM_FN_STUB) &&
                (uint64_t)m->base[i] + s->fns[i].size > cur)
                cur = (uint64_t)m->base[i] + s->fns[i].size;
        for (size_t i = 0; i < x->ncol; i++) {
            uint64_t a = (cur + g->line - 1) & ~(uint64_t)(g->line - 1);
            uint32_t set = (uint32_t)(a >> ls) & (nsets - 1);
            a += (uint64_t)((x->col[i].place - set) & (nsets - 1)) << ls;
            if (a + s->fns[x->col[i].fn].size > 0xffffffffULL) {
                cp_seterr(err, "%s:%u: no address left for colour %u", path,
                          x->col[i].line, x->col[i].place);
                return -1;
            }
            if (check_moved(path, x->col[i].line, "its colour", s, x->col[i].fn,
                            (uint32_t)a, err) < 0)
                return -1;
            csim_map_move(m, x->col[i].fn, (uint32_t)a);
            cur = a + s->fns[x->col[i].fn].size;
            st->coloured++;
        }
    }
    if (check_ram_overlap(path, s, x->fast, x->nfast, err) < 0)
        return -1;
    return check_overlap(path, s, m, err);
}

int csim_layout_apply_text(const char *path, const char *text, size_t len,
                           const csim_stream *s, csim_map *m,
                           const tgt_cache *g, csim_layout_stats *st,
                           cp_err *err)
{
    memset(st, 0, sizeof *st);
    apply x;
    memset(&x, 0, sizeof x);
    x.path = path;
    x.s = s;
    x.m = m;
    x.g = g;
    x.st = st;
    x.seen = calloc(s->nfns ? s->nfns : 1, 1);
    int rc = x.seen ? csim_layout_read(path, text, len, on_apply, &x, err)
                    : cp_seterr(err, "out of memory");
    if (rc == 0)
        rc = finish_apply(&x, err);
    free(x.col);
    free(x.fast);
    free(x.seen);
    return rc;
}
