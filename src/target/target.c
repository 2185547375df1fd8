#include "target/target.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/target_int.h"

/* The target files hold the facts and their citations (targets/ *.target,
 * docs/formats/target.md); this file finds, loads and queries them. */

#ifndef CODEPLACE_DATADIR
#define CODEPLACE_DATADIR "/usr/local/share/codeplace"
#endif

void tgt_free(tgt *t)
{
    if (!t)
        return;
    tgt_owned *o = (tgt_owned *)t;
    cp_pool_free(o->pool);
    free(o);
}

/* ---- search directories ------------------------------------------------ */

#define MAX_DIRS 16
static char *dirs[MAX_DIRS];
static unsigned ndirs;
static int dirs_done;

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void add_dir(const char *d, size_t n)
{
    if (!n || ndirs == MAX_DIRS)
        return;
    char *s = malloc(n + 1);
    if (!s)
        return;
    memcpy(s, d, n);
    s[n] = 0;
    for (unsigned i = 0; i < ndirs; i++)
        if (!strcmp(dirs[i], s)) {
            free(s);
            return;
        }
    dirs[ndirs++] = s;
}

static void find_dirs(void)
{
    if (dirs_done)
        return;
    dirs_done = 1;
    const char *env = getenv("CODEPLACE_TARGETS");
    if (env)
        for (const char *p = env; *p;) {
            const char *c = strchr(p, ':');
            size_t n = c ? (size_t)(c - p) : strlen(p);
            add_dir(p, n);
            p += n + (c != NULL);
        }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 64);
    if (n > 0) {
        exe[n] = 0;
        /* <root>/build/.../codeplace: the source tree's targets/. */
        char *b = NULL;
        for (char *q = strstr(exe, "/build/"); q; q = strstr(q + 1, "/build/"))
            b = q;
        if (b) {
            char d[4160];
            snprintf(d, sizeof d, "%.*s/targets", (int)(b - exe), exe);
            if (is_dir(d))
                add_dir(d, strlen(d));
        }
        /* <prefix>/bin/codeplace: <prefix>/share/codeplace/targets. */
        char *sl = strrchr(exe, '/');
        if (sl) {
            char d[4160];
            snprintf(d, sizeof d, "%.*s/../share/codeplace/targets",
                     (int)(sl - exe), exe);
            if (is_dir(d)) {
                char *r = realpath(d, NULL);
                if (r) {
                    add_dir(r, strlen(r));
                    free(r);
                }
            }
        }
    }
    add_dir(CODEPLACE_DATADIR "/targets", strlen(CODEPLACE_DATADIR "/targets"));
}

const char *tgt_dir_at(unsigned i)
{
    find_dirs();
    return i < ndirs ? dirs[i] : NULL;
}

/* ---- loaded targets ---------------------------------------------------- */

typedef struct loaded {
    char *spec;
    tgt *t;
} loaded;

static loaded *reg;
static size_t nreg, capreg;
static const tgt **listed;
static size_t nlisted;
static int list_done;

void tgt_unload_all(void)
{
    for (size_t i = 0; i < nreg; i++) {
        free(reg[i].spec);
        tgt_free(reg[i].t);
    }
    free(reg);
    reg = NULL;
    nreg = capreg = 0;
    free(listed);
    listed = NULL;
    nlisted = 0;
    list_done = 0;
    for (unsigned i = 0; i < ndirs; i++)
        free(dirs[i]);
    ndirs = 0;
    dirs_done = 0;
}

static int is_path(const char *spec)
{
    size_t n = strlen(spec);
    return strchr(spec, '/') || (n > 7 && !strcmp(spec + n - 7, ".target"));
}

static tgt *read_target(const char *path, cp_err *err)
{
    char *data;
    size_t len;
    if (cp_read_file(path, &data, &len, err) < 0)
        return NULL;
    tgt *t = tgt_parse(path, data, len, err);
    free(data);
    return t;
}

static int name_ok(const char *s)
{
    if (!*s || strlen(s) > TGT_NAME_MAX)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
            return 0;
    return 1;
}

const tgt *tgt_load(const char *spec, cp_err *err)
{
    for (size_t i = 0; i < nreg; i++)
        if (!strcmp(reg[i].spec, spec))
            return reg[i].t;
    tgt *t = NULL;
    if (is_path(spec)) {
        if (!(t = read_target(spec, err)))
            return NULL;
        t->by_path = 1;
    } else {
        if (!name_ok(spec))
            return cp_seterr(err, "'%s' is not a target name (see 'codeplace "
                             "target')", spec), NULL;
        find_dirs();
        char path[4200];
        for (unsigned i = 0; i < ndirs && !t; i++) {
            snprintf(path, sizeof path, "%s/%s.target", dirs[i], spec);
            if (access(path, F_OK) != 0)
                continue;
            if (!(t = read_target(path, err)))
                return NULL;
            if (strcmp(t->name, spec)) {
                cp_seterr(err, "%s: the file names target '%s', not '%s'", path,
                          t->name, spec);
                tgt_free(t);
                return NULL;
            }
        }
        if (!t) {
            char where[1024] = "";
            size_t w = 0;
            for (unsigned i = 0; i < ndirs && w < sizeof where; i++)
                w += (size_t)snprintf(where + w, sizeof where - w, "%s%s",
                                      i ? ", " : "", dirs[i]);
            return cp_seterr(err, "no target '%s' (looked for %s.target in %s;"
                             " 'codeplace target' lists the targets)", spec,
                             spec, ndirs ? where : "no directory"), NULL;
        }
    }
    char *k = malloc(strlen(spec) + 1);
    if (!k || cp_grow((void **)&reg, &capreg, nreg + 1, sizeof *reg) < 0) {
        free(k);
        tgt_free(t);
        return cp_seterr(err, "out of memory"), NULL;
    }
    strcpy(k, spec);
    reg[nreg++] = (loaded){k, t};
    return t;
}

const tgt *tgt_find(const char *name)
{
    return tgt_load(name, NULL);
}

static int cmp_tgt(const void *a, const void *b)
{
    const tgt *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

int tgt_list(const tgt ***out, size_t *n, size_t *nbad, cp_err *err)
{
    find_dirs();
    const tgt **v = NULL;
    size_t nv = 0, cap = 0;
    *nbad = 0;
    for (unsigned i = 0; i < ndirs; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l <= 7 || strcmp(e->d_name + l - 7, ".target"))
                continue;
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(l - 7), e->d_name);
            cp_err e2;
            const tgt *t = tgt_load(name, &e2);
            if (!t) {
                if (!(*nbad)++ && err)
                    *err = e2;
                continue;
            }
            int dup = 0;
            for (size_t j = 0; j < nv; j++)
                dup |= v[j] == t;
            if (dup)
                continue;
            if (cp_grow((void **)&v, &cap, nv + 1, sizeof *v) < 0) {
                closedir(d);
                free(v);
                return cp_seterr(err, "out of memory");
            }
            v[nv++] = t;
        }
        closedir(d);
    }
    if (nv)
        qsort(v, nv, sizeof *v, cmp_tgt);
    *out = v;
    *n = nv;
    return 0;
}

const tgt *tgt_at(unsigned i)
{
    if (!list_done) {
        size_t bad;
        list_done = 1;
        if (tgt_list(&listed, &nlisted, &bad, NULL) < 0) {
            listed = NULL;
            nlisted = 0;
        }
    }
    return i < nlisted ? listed[i] : NULL;
}

/* ---- names in trace headers -------------------------------------------- */

void tgt_header_name(const tgt *t, char *buf, size_t size)
{
    if (t->by_path)
        snprintf(buf, size, "%s@%08x", t->name, (uint32_t)t->hash);
    else
        snprintf(buf, size, "%s", t->name);
}

void tgt_header_base(const char *hdr, char *buf, size_t size)
{
    const char *at = strchr(hdr, '@');
    size_t n = at ? (size_t)(at - hdr) : strlen(hdr);
    snprintf(buf, size, "%.*s", (int)n, hdr);
}

int tgt_header_matches(const tgt *t, const char *hdr)
{
    char base[64];
    tgt_header_base(hdr, base, sizeof base);
    if (strcmp(base, t->name))
        return 0;
    const char *at = strchr(hdr, '@');
    if (!at)
        return 1;
    char h[16];
    snprintf(h, sizeof h, "%08x", (uint32_t)t->hash);
    return !strcmp(at + 1, h);
}

void tgt_take_timing(tgt *dst, const tgt *from)
{
    dst->cache = from->cache;
    dst->icache_only = from->icache_only;
    dst->cpi = from->cpi;
}

static const char *const repl_names[] = {"lru", "fifo", "random", "plru"};

const char *tgt_repl_name(tgt_repl r)
{
    return (unsigned)r < 4 ? repl_names[r] : "?";
}

int tgt_parse_repl(const char *s, tgt_repl *out)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, repl_names[i])) {
            *out = (tgt_repl)i;
            return 0;
        }
    return -1;
}

const char *tgt_mem_kind_name(tgt_mem_kind k)
{
    /* The spelling of target files (docs/formats/target.md). */
    static const char *const n[] = {"flash", "flash_noalloc", "flash_uncached",
                                    "sram", "itcm", "dtcm", "periph", "rom"};
    return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

static int is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

int tgt_parse_cache(const char *spec, tgt_cache *c, cp_err *err)
{
    char buf[128];
    if (strlen(spec) >= sizeof buf)
        return cp_seterr(err, "cache geometry '%s' is too long", spec);
    strcpy(buf, spec);
    char *parts[5];
    int n = 0;
    for (char *s = strtok(buf, ","); s && n < 5; s = strtok(NULL, ","))
        parts[n++] = s;
    if (n < 3 || n > 4)
        return cp_seterr(err, "cache geometry '%s': expected SIZE,WAYS,LINE"
                         "[,POLICY], e.g. 16K,2,8", spec);
    uint64_t size, ways, line;
    if (cp_parse_u64(parts[0], 1, &size) < 0 || size == 0 || size > (1u << 30))
        return cp_seterr(err, "cache geometry '%s': bad size '%s'", spec, parts[0]);
    if (cp_parse_u64(parts[1], 0, &ways) < 0 || ways == 0 || ways > 64)
        return cp_seterr(err, "cache geometry '%s': ways must be 1..64", spec);
    if (cp_parse_u64(parts[2], 0, &line) < 0 || !is_pow2(line) || line < 2 ||
        line > 4096)
        return cp_seterr(err, "cache geometry '%s': line bytes must be a power "
                         "of two from 2 to 4096", spec);
    if (size % (ways * line) || !is_pow2(size / (ways * line)))
        return cp_seterr(err, "cache geometry '%s': size / (ways * line) must "
                         "be a power of two", spec);
    tgt_repl r = c->repl;
    if (n == 4 && tgt_parse_repl(parts[3], &r) < 0)
        return cp_seterr(err, "cache geometry '%s': policy must be lru, fifo, "
                         "random or plru", spec);
    if (r == TGT_REPL_PLRU && !is_pow2(ways))
        return cp_seterr(err, "cache geometry '%s': tree-PLRU needs a power-of-"
                         "two number of ways", spec);
    c->size = (uint32_t)size;
    c->ways = (uint32_t)ways;
    c->line = (uint32_t)line;
    c->repl = r;
    return 0;
}

const tgt_mem *tgt_cached_window(const tgt *t)
{
    for (unsigned i = 0; i < t->nmems; i++)
        if (t->mems[i].kind == TGT_MEM_FLASH)
            return &t->mems[i];
    return NULL;
}

const tgt_mem *tgt_mem_named(const tgt *t, const char *name)
{
    for (unsigned i = 0; name && i < t->nmems; i++)
        if (!strcmp(t->mems[i].name, name))
            return &t->mems[i];
    return NULL;
}

const tgt_mem *tgt_mem_at(const tgt *t, uint32_t addr)
{
    for (unsigned i = 0; i < t->nmems; i++)
        if (addr - t->mems[i].base < t->mems[i].size)
            return &t->mems[i];
    return NULL;
}

int tgt_is_cached(const tgt *t, uint32_t addr)
{
    const tgt_mem *m = tgt_mem_at(t, addr);
    return m && m->kind == TGT_MEM_FLASH;
}

tgt_via tgt_cache_addr(const tgt *t, uint32_t addr, uint32_t *at)
{
    const tgt_mem *m = tgt_mem_at(t, addr);
    const tgt_mem *w;
    *at = addr;
    if (m && m->kind == TGT_MEM_FLASH)
        return TGT_VIA_CACHE;
    if (m && m->kind == TGT_MEM_FLASH_NOALLOC && (w = tgt_cached_window(t))) {
        *at = addr - m->base + w->base;
        return TGT_VIA_NOFILL;
    }
    return TGT_VIA_NONE;
}

tgt_via tgt_line_span(const tgt *t, uint32_t addr, uint32_t len,
                      unsigned line_shift, uint32_t *first, uint32_t *last)
{
    uint32_t a;
    tgt_via v = tgt_cache_addr(t, addr, &a);
    if (v == TGT_VIA_NONE)
        return v;
    *first = a >> line_shift;
    *last = (a + (len ? len : 1) - 1) >> line_shift;
    return v;
}

int tgt_is_armv6m(const tgt *t)
{
    return t && (!strcmp(t->cpu, "cortex-m0") ||
                 !strcmp(t->cpu, "cortex-m0plus"));
}

int tgt_stub_thumb2(const tgt *t)
{
    /* binutils 2.40 bfd/elf32-arm.c: arm_type_of_stub gives a Thumb-only
     * core arm_stub_long_branch_thumb2_only when using_thumb2 holds (the
     * output's Tag_CPU_arch is v6T2, v7, v7E-M, v8, v8-R, v8-M Mainline,
     * v8.1-M Mainline or v9) and arm_stub_long_branch_thumb_only otherwise:
     * v6-M (cortex-m0, cortex-m0plus) and v8-M Baseline (cortex-m23, Armv8-M
     * ARM B3 "ARMv8-M Baseline": no 32-bit LDR). Checked against ld 2.40's
     * output for -mcpu=cortex-m23 in tests/cli/t0625-plan-stuborder.sh. */
    return t && !tgt_is_armv6m(t) && strcmp(t->cpu, "cortex-m23") != 0;
}

unsigned tgt_stub_bytes(const tgt *t)
{
    /* elf32-arm.c elf32_arm_stub_long_branch_thumb2_only: 2 words;
     * elf32_arm_stub_long_branch_thumb_only: 4 words (with the nop that
     * aligns the literal). */
    return tgt_stub_thumb2(t) ? 8 : 16;
}

uint32_t tgt_cache_sets(const tgt_cache *c)
{
    return c->size / (c->ways * c->line);
}
