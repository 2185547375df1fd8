/* tgt: the target file parser (docs/formats/target.md). */
#include "target/target.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "target/target_int.h"

enum {
    K_NAME, K_BOARD, K_CPU, K_CLOCK, K_CPI, K_CSIZE, K_CWAYS, K_CLINE,
    K_CREPL, K_CHIT, K_CMISS, K_ICACHE, K_FAST, K_CTRBASE, K_CTRFLUSH,
    K_CTRHIT, K_CTRACC, K_CTRBY, K_PCSR, K_MEMORY, K_CHIP, K_NKEYS
};

static const char *const keys[K_NKEYS] = {
    [K_NAME] = "name",
    [K_BOARD] = "board",
    [K_CPU] = "cpu",
    [K_CLOCK] = "clock",
    [K_CPI] = "cpi",
    [K_CSIZE] = "cache.size",
    [K_CWAYS] = "cache.ways",
    [K_CLINE] = "cache.line",
    [K_CREPL] = "cache.replacement",
    [K_CHIT] = "cache.hit_cycles",
    [K_CMISS] = "cache.miss_cycles",
    [K_ICACHE] = "icache_only",
    [K_FAST] = "fast",
    [K_CTRBASE] = "counters.base",
    [K_CTRFLUSH] = "counters.flush",
    [K_CTRHIT] = "counters.hit",
    [K_CTRACC] = "counters.acc",
    [K_CTRBY] = "counters.flush_by",
    [K_PCSR] = "dwt_pcsr",
    [K_MEMORY] = "memory",
    [K_CHIP] = "chip",
};

/* Keys a file must give. */
static const int required[] = {K_NAME, K_CPU, K_CLOCK, K_CPI, K_CSIZE,
                               K_CWAYS, K_CLINE, K_CREPL, K_CHIT, K_CMISS,
                               K_FAST};

/* Cores the emulator and the planner know (src/emu/emu.c). */
static const char *const cpus[] = {"cortex-m0",  "cortex-m0plus",
                                   "cortex-m3",  "cortex-m4",
                                   "cortex-m7",  "cortex-m23",
                                   "cortex-m33"};

static const struct {
    const char *name;
    tgt_mem_kind kind;
} kinds[] = {
    {"flash", TGT_MEM_FLASH},
    {"flash_noalloc", TGT_MEM_FLASH_NOALLOC},
    {"flash_uncached", TGT_MEM_FLASH_UNCACHED},
    {"sram", TGT_MEM_SRAM},
    {"itcm", TGT_MEM_ITCM},
    {"dtcm", TGT_MEM_DTCM},
    {"periph", TGT_MEM_PERIPH},
    {"rom", TGT_MEM_ROM},
};

typedef struct pstate {
    const char *path;
    unsigned ln;
    cp_err *err;
    tgt_owned *o;
    unsigned seen[K_NKEYS]; /* line of each key, 0 when not given */
    unsigned *mem_line;     /* line of each memory */
    size_t capm;
} pstate;

static int perr(pstate *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int perr(pstate *p, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p->ln)
        return cp_seterr(p->err, "%s:%u: %s", p->path, p->ln, msg);
    return cp_seterr(p->err, "%s: %s", p->path, msg);
}

static int is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* A number: decimal or 0x hex; with K/M/G (powers of 1024) when sizes. */
static int num(pstate *p, const char *key, const char *v, int sizes,
               uint64_t max, uint64_t *out)
{
    if (cp_parse_u64(v, sizes, out) < 0 || *out > max)
        return perr(p, "%s: '%s' is not a number from 0 to %llu%s", key, v,
                    (unsigned long long)max,
                    sizes ? " (K and M suffixes allowed)" : "");
    return 0;
}

static int ident_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' &&
            s[i] != '.')
            return 0;
    return 1;
}

static char *next_word(char **s)
{
    char *a = *s;
    while (*a == ' ' || *a == '\t')
        a++;
    if (!*a)
        return NULL;
    char *e = a;
    while (*e && *e != ' ' && *e != '\t')
        e++;
    if (*e)
        *e++ = 0;
    *s = e;
    return a;
}

static int memory_line(pstate *p, char *v)
{
    tgt_owned *o = p->o;
    char *name = next_word(&v), *kind = next_word(&v), *base = next_word(&v);
    char *size = next_word(&v), *ld = next_word(&v), *extra = next_word(&v);
    if (!size || extra)
        return perr(p, "memory: expected NAME KIND BASE SIZE [LINKER-REGION]");
    if (!ident_ok(name, 31))
        return perr(p, "memory: '%s' is not a name (letters, digits, _ - ., "
                    "at most 31)", name);
    int k = -1;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kind, kinds[i].name))
            k = (int)i;
    if (k < 0)
        return perr(p, "memory %s: kind '%s' is not flash, flash_noalloc, "
                    "flash_uncached, sram, itcm, dtcm, periph or rom", name,
                    kind);
    uint64_t b, n;
    if (num(p, "memory base", base, 0, 0xffffffffULL, &b) < 0 ||
        num(p, "memory size", size, 1, 0x100000000ULL, &n) < 0)
        return -1;
    if (n == 0)
        return perr(p, "memory %s: size is 0", name);
    if (b + n > 0x100000000ULL)
        return perr(p, "memory %s: 0x%08llx + %llu bytes runs past the end "
                    "of the 32-bit address space", name,
                    (unsigned long long)b, (unsigned long long)n);
    if (n == 0x100000000ULL)
        return perr(p, "memory %s: a memory cannot cover the whole address "
                    "space", name);
    if (ld && !ident_ok(ld, 63))
        return perr(p, "memory %s: '%s' is not a linker region name", name, ld);
    if (o->t.nmems == TGT_MAX_MEMS)
        return perr(p, "more than %d memories", TGT_MAX_MEMS);
    for (unsigned i = 0; i < o->t.nmems; i++) {
        const tgt_mem *m = &o->mems[i];
        if (!strcmp(m->name, name))
            return perr(p, "memory '%s' is given twice (first on line %u)",
                        name, p->mem_line[i]);
        if (b < (uint64_t)m->base + m->size && m->base < b + n)
            return perr(p, "memory %s (0x%08llx..0x%08llx) overlaps memory "
                        "%s (0x%08x..0x%08llx, line %u)", name,
                        (unsigned long long)b, (unsigned long long)(b + n - 1),
                        m->name, m->base,
                        (unsigned long long)m->base + m->size - 1,
                        p->mem_line[i]);
    }
    if (cp_grow((void **)&p->mem_line, &p->capm, o->t.nmems + 1,
                sizeof *p->mem_line) < 0)
        return perr(p, "out of memory");
    tgt_mem *m = &o->mems[o->t.nmems];
    m->name = cp_pool_str(o->pool, name);
    m->kind = kinds[k].kind;
    m->base = (uint32_t)b;
    m->size = (uint32_t)n;
    m->ld_region = ld ? cp_pool_str(o->pool, ld) : NULL;
    if (!m->name || (ld && !m->ld_region))
        return perr(p, "out of memory");
    p->mem_line[o->t.nmems++] = p->ln;
    return 0;
}

static int yes_no(pstate *p, const char *key, const char *v, int *out)
{
    if (!strcmp(v, "yes"))
        *out = 1;
    else if (!strcmp(v, "no"))
        *out = 0;
    else
        return perr(p, "%s: '%s' is not yes or no", key, v);
    return 0;
}

/* A register address or offset; "none" is 0 (not there). */
static int reg(pstate *p, const char *key, const char *v, uint32_t *out)
{
    uint64_t x;
    if (!strcmp(v, "none")) {
        *out = 0;
        return 0;
    }
    if (num(p, key, v, 0, 0xffffffffULL, &x) < 0)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

static int one_key(pstate *p, int k, char *v)
{
    tgt *t = &p->o->t;
    uint64_t x;
    switch (k) {
    case K_NAME:
        if (!ident_ok(v, TGT_NAME_MAX) || strchr(v, '@'))
            return perr(p, "name: '%s' is not a target name (letters, digits, "
                        "_ - ., at most %d)", v, TGT_NAME_MAX);
        return (t->name = cp_pool_str(p->o->pool, v)) ? 0
                                                       : perr(p, "out of memory");
    case K_BOARD:
        return (t->board = cp_pool_str(p->o->pool, v)) ? 0
                                                        : perr(p, "out of memory");
    case K_CPU:
        for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++)
            if (!strcmp(v, cpus[i])) {
                t->cpu = cpus[i];
                return 0;
            }
        return perr(p, "cpu: '%s' is not cortex-m0, cortex-m0plus, cortex-m3, "
                    "cortex-m4, cortex-m7, cortex-m23 or cortex-m33", v);
    case K_CLOCK:
        if (num(p, "clock", v, 0, 0xffffffffULL, &x) < 0)
            return -1;
        if (x == 0)
            return perr(p, "clock: 0 Hz");
        t->clock_hz = (uint32_t)x;
        return 0;
    case K_CPI: {
        char *e;
        errno = 0;
        double d = strtod(v, &e);
        if (e == v || *e || errno || !isfinite(d) || d <= 0 || d > 100)
            return perr(p, "cpi: '%s' is not a number of cycles per instruction "
                        "above 0 and at most 100", v);
        t->cpi = d;
        return 0;
    }
    case K_CSIZE:
        if (num(p, "cache.size", v, 1, 1u << 30, &x) < 0)
            return -1;
        if (x == 0)
            return perr(p, "cache.size: 0 bytes");
        t->cache.size = (uint32_t)x;
        return 0;
    case K_CWAYS:
        if (num(p, "cache.ways", v, 0, 64, &x) < 0)
            return -1;
        if (x == 0)
            return perr(p, "cache.ways: 0 ways");
        t->cache.ways = (uint32_t)x;
        return 0;
    case K_CLINE:
        if (num(p, "cache.line", v, 0, 4096, &x) < 0)
            return -1;
        if (!is_pow2(x) || x < 2)
            return perr(p, "cache.line: %llu bytes is not a power of two from 2 "
                        "to 4096", (unsigned long long)x);
        t->cache.line = (uint32_t)x;
        return 0;
    case K_CREPL:
        if (tgt_parse_repl(v, &t->cache.repl) < 0)
            return perr(p, "cache.replacement: '%s' is not lru, fifo, random "
                        "or plru", v);
        return 0;
    case K_CHIT:
        if (num(p, "cache.hit_cycles", v, 0, 10000, &x) < 0)
            return -1;
        t->cache.hit_cycles = (uint32_t)x;
        return 0;
    case K_CMISS:
        if (num(p, "cache.miss_cycles", v, 0, 100000, &x) < 0)
            return -1;
        t->cache.miss_cycles = (uint32_t)x;
        return 0;
    case K_ICACHE:
        return yes_no(p, "icache_only", v, &t->icache_only);
    case K_FAST:
        if (!ident_ok(v, 31))
            return perr(p, "fast: '%s' is not a memory name", v);
        return (t->fast_mem = cp_pool_str(p->o->pool, v)) ? 0
                                                           : perr(p, "out of memory");
    case K_CTRBASE: return reg(p, "counters.base", v, &t->ctr_base);
    case K_CTRFLUSH: return reg(p, "counters.flush", v, &t->ctr_flush);
    case K_CTRHIT: return reg(p, "counters.hit", v, &t->ctr_hit);
    case K_CTRACC: return reg(p, "counters.acc", v, &t->ctr_acc);
    case K_CTRBY:
        if (!strcmp(v, "none"))
            t->ctr_flush_by = TGT_FLUSH_NONE;
        else if (!strcmp(v, "register"))
            t->ctr_flush_by = TGT_FLUSH_REG;
        else if (!strcmp(v, "setway"))
            t->ctr_flush_by = TGT_FLUSH_SETWAY;
        else
            return perr(p, "counters.flush_by: '%s' is not none, register or "
                        "setway", v);
        return 0;
    case K_PCSR: return reg(p, "dwt_pcsr", v, &t->dwt_pcsr);
    case K_MEMORY: return memory_line(p, v);
    case K_CHIP:
        /* The chips the virtual board knows (src/emu/board.h). */
        if (!strcmp(v, "rp2040") || !strcmp(v, "rp2350"))
            t->chip = !strcmp(v, "rp2040") ? "rp2040" : "rp2350";
        else if (strcmp(v, "none"))
            return perr(p, "chip: '%s' is not rp2040, rp2350 or none (the "
                        "chips the virtual board knows)", v);
        else
            t->chip = NULL;
        return 0;
    }
    return perr(p, "internal: key %d", k);
}

/* Checks that need the whole file. */
static int finish(pstate *p)
{
    tgt *t = &p->o->t;
    p->ln = 0;
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!p->seen[required[i]])
            return perr(p, "no '%s' line (every target names it; see "
                        "docs/formats/target.md)", keys[required[i]]);
    if (!t->board)
        t->board = "";
    if (!p->seen[K_CTRBY])
        t->ctr_flush_by = t->ctr_flush ? TGT_FLUSH_REG : TGT_FLUSH_NONE;
    if (t->ctr_flush_by == TGT_FLUSH_REG && !t->ctr_flush) {
        p->ln = p->seen[K_CTRBY];
        return perr(p, "counters.flush_by register needs counters.flush");
    }
    const tgt_cache *c = &t->cache;
    p->ln = p->seen[K_CSIZE];
    uint64_t wl = (uint64_t)c->ways * c->line;
    if (c->size % wl || !is_pow2(c->size / wl))
        return perr(p, "cache.size %u is not cache.ways * cache.line * sets "
                    "(%u * %u * a power of two)", c->size, c->ways, c->line);
    if (c->repl == TGT_REPL_PLRU && !is_pow2(c->ways)) {
        p->ln = p->seen[K_CREPL];
        return perr(p, "cache.replacement plru needs a power-of-two number of "
                    "ways (cache.ways is %u)", c->ways);
    }
    p->ln = p->seen[K_FAST];
    const tgt_mem *f = tgt_mem_named(t, t->fast_mem);
    if (!f)
        return perr(p, "fast: no memory named '%s'", t->fast_mem);
    if (f->kind != TGT_MEM_SRAM && f->kind != TGT_MEM_ITCM &&
        f->kind != TGT_MEM_DTCM)
        return perr(p, "fast: memory '%s' is %s, not sram, itcm or dtcm",
                    f->name, tgt_mem_kind_name(f->kind));
    p->ln = 0;
    if (!tgt_cached_window(t))
        return perr(p, "no memory of kind flash: a target needs the cached "
                    "window its code runs from");
    return 0;
}

tgt *tgt_parse(const char *path, const char *text, size_t len, cp_err *err)
{
    pstate p = {.path = path, .err = err};
    if (memchr(text, 0, len))
        return cp_seterr(err, "%s: not a text file", path), NULL;
    tgt_owned *o = calloc(1, sizeof *o);
    char *buf = malloc(len + 1);
    if (!o || !buf || !(o->pool = cp_pool_new()) ||
        !(o->t.path = cp_pool_str(o->pool, path))) {
        free(buf);
        tgt_free(&o->t);
        return cp_seterr(err, "out of memory"), NULL;
    }
    memcpy(buf, text, len);
    buf[len] = 0;
    p.o = o;
    o->t.mems = o->mems;
    o->t.hash = cp_fnv1a(CP_FNV_INIT, text, len);
    int rc = -1, versioned = 0;
    for (char *s = buf, *nl; s && *s; s = nl) {
        nl = strchr(s, '\n');
        if (nl)
            *nl++ = 0;
        p.ln++;
        /* A comment runs from '#' at the start or after a blank to the end
         * of the line. */
        for (char *c = s; *c; c++)
            if (*c == '#' && (c == s || c[-1] == ' ' || c[-1] == '\t')) {
                *c = 0;
                break;
            }
        size_t l = strlen(s);
        while (l && isspace((unsigned char)s[l - 1]))
            s[--l] = 0;
        while (*s == ' ' || *s == '\t')
            s++;
        if (p.ln == 1) {
            unsigned ver;
            char extra;
            if (sscanf(s, "codeplace-target %u %c", &ver, &extra) != 1) {
                perr(&p, "not a target file (the first line must be "
                     "'codeplace-target 1')");
                goto out;
            }
            if (ver != 1) {
                perr(&p, "target file version %u; this codeplace reads "
                     "version 1", ver);
                goto out;
            }
            versioned = 1;
            continue;
        }
        if (!*s)
            continue;
        char *v = s;
        char *key = next_word(&v);
        while (*v == ' ' || *v == '\t')
            v++;
        int k = -1;
        for (int i = 0; i < K_NKEYS; i++)
            if (!strcmp(key, keys[i]))
                k = i;
        if (k < 0) {
            perr(&p, "unknown key '%s' (see docs/formats/target.md)", key);
            goto out;
        }
        if (!*v) {
            perr(&p, "%s: no value", key);
            goto out;
        }
        if (k != K_MEMORY && p.seen[k]) {
            perr(&p, "'%s' is given twice (first on line %u)", key, p.seen[k]);
            goto out;
        }
        p.seen[k] = p.ln;
        if (k != K_MEMORY && k != K_BOARD && strpbrk(v, " \t")) {
            perr(&p, "%s: expected one value, got '%s'", key, v);
            goto out;
        }
        if (one_key(&p, k, v) < 0)
            goto out;
    }
    if (!versioned) {
        p.ln = 0;
        perr(&p, "empty file, not a target (the first line must be "
             "'codeplace-target 1')");
        goto out;
    }
    rc = finish(&p);
out:
    free(p.mem_line);
    free(buf);
    if (rc < 0) {
        tgt_free(&o->t);
        return NULL;
    }
    return &o->t;
}
