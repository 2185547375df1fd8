#include "verify/verify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/target.h"

static int add_diff(vfy_result *r, vfy_kind k, const char *what,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int add_diff(vfy_result *r, vfy_kind k, const char *what,
                    const char *fmt, ...)
{
    vfy_diff *d = realloc(r->diffs, (r->ndiffs + 1) * sizeof *d);
    if (!d)
        return -1;
    r->diffs = d;
    d = &r->diffs[r->ndiffs++];
    d->kind = k;
    snprintf(d->what, sizeof d->what, "%s", what);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->detail, sizeof d->detail, fmt, ap);
    va_end(ap);
    return 0;
}

const char *vfy_kind_name(vfy_kind k)
{
    switch (k) {
    case VFY_MISSING: return "missing";
    case VFY_MOVED: return "moved";
    case VFY_REGION: return "region";
    case VFY_NO_MATCH: return "no-match";
    case VFY_ELSEWHERE: return "elsewhere";
    case VFY_STUBS: return "stubs";
    }
    return "?";
}

void vfy_result_free(vfy_result *r)
{
    free(r->diffs);
    r->diffs = NULL;
    r->ndiffs = 0;
}

static const tgt_mem *mem_named(const tgt *t, const char *name)
{
    for (unsigned i = 0; t && i < t->nmems; i++)
        if (!strcmp(t->mems[i].name, name))
            return &t->mems[i];
    return NULL;
}

static int in_mem(const tgt_mem *m, uint32_t a)
{
    return m && a - m->base < m->size;
}

static const tgt_mem *flash_mem(const tgt *t)
{
    for (unsigned i = 0; t && i < t->nmems; i++)
        if (t->mems[i].kind == TGT_MEM_FLASH)
            return &t->mems[i];
    return NULL;
}

/* The function called name at want, or else the first of that name. */
static const img_func *find_at(const img *im, const char *name, uint32_t want,
                               int *found_at)
{
    const img_func *first = NULL;
    *found_at = 0;
    for (size_t i = 0; i < img_nfuncs(im); i++) {
        const img_func *f = img_func_at(im, i);
        if (!img_func_named(f, name))
            continue;
        if (f->addr == want) {
            *found_at = 1;
            return f;
        }
        if (!first)
            first = f;
    }
    return first;
}

typedef struct entry {
    char name[128], region[16];
    uint32_t place;
    int has_place;
    unsigned line;
} entry;

typedef struct plan_stub {
    uint32_t addr;
    char target[128]; /* the function it reaches */
} plan_stub;

typedef struct stubs_plan {
    int known;
    unsigned flash, fast, bytes, fast_bytes;
    uint32_t text_end;
    /* Stubs a hot block of its own gets (Zephyr's rom_start): hot of the
     * flash ones, from hot_at on. */
    unsigned hot;
    uint32_t hot_at;
    plan_stub *at; /* the layout's @stub lines */
    size_t nat, capat;
} stubs_plan;

/* "@stub 0xADDR SIZE INSNS TARGET[@0xADDR]": where the plan expects the
 * stub that reaches TARGET. 0, or -1 when out of memory; a line of another
 * shape is left to the layout reader of sim. */
static int add_plan_stub(stubs_plan *sp, const char *l)
{
    char a[32], target[128];
    unsigned size, insns;
    uint64_t v;
    if (sscanf(l, "@stub %31s %u %u %127s", a, &size, &insns, target) != 4 ||
        cp_parse_u64(a, 0, &v) || v > 0xffffffffu)
        return 0;
    char *at = strchr(target, '@');
    if (at)
        *at = 0;
    if (cp_grow((void **)&sp->at, &sp->capat, sp->nat + 1, sizeof *sp->at) < 0)
        return -1;
    plan_stub *x = &sp->at[sp->nat++];
    x->addr = (uint32_t)v;
    snprintf(x->target, sizeof x->target, "%s", target);
    return 0;
}

static int read_layout(const char *path, const char *text, size_t len,
                       vfy_result *r, entry **out, size_t *nout,
                       stubs_plan *sp, cp_err *err)
{
    char *data = malloc(len + 1);
    if (!data)
        return cp_seterr(err, "out of memory");
    memcpy(data, text, len);
    data[len] = 0;
    entry *e = NULL;
    size_t n = 0, cap = 0;
    unsigned line = 0;
    char *save = NULL;
    int rc = 0;
    for (char *l = strtok_r(data, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        line++;
        if (line == 1 && strcmp(l, "# codeplace layout 1") &&
            strcmp(l, "# codeplace layout 2") &&
            strcmp(l, "# codeplace layout 3")) {
            rc = cp_seterr(err, "'%s': line 1: not a codeplace layout "
                           "(version 1 to 3)", path);
            break;
        }
        if (l[0] == '#') {
            char a[32], b[80], c[32];
            if (sscanf(l, "# target: %31s image: %79s strategy: %31s", a, b,
                       c) == 3) {
                snprintf(r->target, sizeof r->target, "%s", a);
                snprintf(r->image, sizeof r->image, "%s", b);
                snprintf(r->strategy, sizeof r->strategy, "%s", c);
            }
            if (sscanf(l, "# stubs: flash %u fast %u bytes %u text_end %x "
                       "fast_bytes %u", &sp->flash, &sp->fast, &sp->bytes,
                       &sp->text_end, &sp->fast_bytes) == 5)
                sp->known = 1;
            /* (any other comment line leaves them 0) */
            sscanf(l, "# hot block stubs: %u at %x", &sp->hot, &sp->hot_at);
            continue;
        }
        if (!strncmp(l, "@stub ", 6) && add_plan_stub(sp, l) < 0) {
            rc = cp_seterr(err, "out of memory");
            break;
        }
        if (l[0] == '@' || strspn(l, " \t\r") == strlen(l))
            continue;
        char name[128], region[16], place[32];
        if (sscanf(l, "%127s %15s %31s", name, region, place) != 3) {
            rc = cp_seterr(err, "'%s': line %u: not 'name region place size "
                           "reason'", path, line);
            break;
        }
        if (cp_grow((void **)&e, &cap, n + 1, sizeof *e) < 0) {
            rc = cp_seterr(err, "out of memory");
            break;
        }
        entry *x = &e[n++];
        memset(x, 0, sizeof *x);
        char *at = strchr(name, '@');
        if (at)
            *at = 0;
        snprintf(x->name, sizeof x->name, "%s", name);
        snprintf(x->region, sizeof x->region, "%s", region);
        x->line = line;
        uint64_t v;
        if (!strncmp(place, "0x", 2) && !cp_parse_u64(place, 0, &v) &&
            v <= 0xffffffffu) {
            x->place = (uint32_t)v;
            x->has_place = 1;
        }
    }
    free(data);
    if (rc < 0) {
        free(e);
        return -1;
    }
    if (line == 0) {
        free(e);
        return cp_seterr(err, "'%s': empty, not a codeplace layout", path);
    }
    *out = e;
    *nout = n;
    return 0;
}

static int check_functions(const img *im, const tgt *t, const entry *e,
                           size_t n, vfy_result *r)
{
    for (size_t i = 0; i < n; i++) {
        const entry *x = &e[i];
        if (!x->has_place)
            continue;
        r->placed++;
        int exact;
        const img_func *f = find_at(im, x->name, x->place, &exact);
        if (!f) {
            if (add_diff(r, VFY_MISSING, x->name, "not in the relinked image "
                         "(layout line %u)", x->line) < 0)
                return -1;
            continue;
        }
        int flash = !strcmp(x->region, "flash") ||
                    !strcmp(x->region, "noalloc");
        if (flash) {
            if (exact)
                r->placed_ok++;
            else if (add_diff(r, VFY_MOVED, x->name, "at 0x%08x, the plan "
                              "put it at 0x%08x", f->addr, x->place) < 0)
                return -1;
            continue;
        }
        /* Fast memory: fetches from it never reach the cache, and the
         * plan fixes only the memory (the linker packs the copied block
         * at each section's own alignment and chooses where it starts). */
        const tgt_mem *m = mem_named(t, x->region);
        /* (static functions of one name: the one in that memory) */
        for (size_t k = 0; m && !in_mem(m, f->addr) && k < img_nfuncs(im);
             k++) {
            const img_func *g = img_func_at(im, k);
            if (img_func_named(g, x->name) && in_mem(m, g->addr))
                f = g;
        }
        if (m && !in_mem(m, f->addr)) {
            if (add_diff(r, VFY_REGION, x->name, "at 0x%08x, outside %s "
                         "(0x%08x+0x%x)", f->addr, m->name, m->base,
                         m->size) < 0)
                return -1;
            continue;
        }
        r->placed_ok++;
    }
    return 0;
}

/* "*libc.a:x.o(.text.f)" -> file "*libc.a", member "x.o", section. */
static int split_pattern(const char *p, char *file, char *member, char *sec,
                         size_t n)
{
    const char *open = strchr(p, '('), *close = strrchr(p, ')');
    if (!open || !close || close < open || (size_t)(open - p) >= n ||
        (size_t)(close - open) >= n)
        return -1;
    memcpy(file, p, (size_t)(open - p));
    file[open - p] = 0;
    memcpy(sec, open + 1, (size_t)(close - open - 1));
    sec[close - open - 1] = 0;
    member[0] = 0;
    char *colon = strchr(file, ':');
    if (colon) {
        snprintf(member, n, "%s", colon + 1);
        *colon = 0;
    }
    return 0;
}

static int isec_matches(const img_isec *s, const char *file,
                        const char *member, const char *sec)
{
    if (!cp_glob(sec, s->name))
        return 0;
    if (member[0]) {
        if (!s->archive || !s->object || !cp_glob(member, s->object))
            return 0;
        return cp_glob(file, s->archive) ||
               (s->path && cp_glob(file, s->path));
    }
    if (!strcmp(file, "*"))
        return 1;
    return (s->object && cp_glob(file, s->object)) ||
           (s->path && cp_glob(file, s->path));
}

static int check_snippet(const img *im, const tgt *t, const char *dir,
                         const char *name, const tgt_mem *want,
                         vfy_result *r, cp_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *data;
    size_t len;
    if (cp_read_file(path, &data, &len, err) < 0)
        return -1;
    (void)t;
    char *save = NULL;
    int rc = 0;
    for (char *l = strtok_r(data, "\n", &save); l && rc == 0;
         l = strtok_r(NULL, "\n", &save)) {
        l += strspn(l, " \t");
        if (l[0] != '*')
            continue; /* comments (" * ..."), assignments */
        if (l[1] == ' ' || l[1] == '/' || l[1] == 0)
            continue;
        char pat[512];
        size_t k = strcspn(l, " \t");
        if (k >= sizeof pat)
            k = sizeof pat - 1;
        memcpy(pat, l, k);
        pat[k] = 0;
        char file[512], member[512], sec[512];
        if (split_pattern(pat, file, member, sec, sizeof file) < 0)
            continue;
        r->patterns++;
        size_t hits = 0, inside = 0;
        const img_isec *other = NULL;
        for (size_t i = 0; i < img_nisecs(im); i++) {
            const img_isec *s = img_isec_at(im, i);
            if (!isec_matches(s, file, member, sec))
                continue;
            hits++;
            if (!want || in_mem(want, s->addr))
                inside++;
            else if (!other)
                other = s;
        }
        char what[160];
        snprintf(what, sizeof what, "%.20s: %.130s", name, pat);
        if (!hits)
            rc = add_diff(r, VFY_NO_MATCH, what, "matched no input section "
                          "of the relinked map: ld ignored it");
        else if (!inside)
            rc = add_diff(r, VFY_ELSEWHERE, what, "matched %s at 0x%08x, "
                          "outside %s", other->name, other->addr, want->name);
        else
            r->patterns_ok++;
        if (rc < 0)
            cp_seterr(err, "out of memory");
    }
    free(data);
    return rc;
}

/* Which function each stub reaches: ld names a stub __NAME_veneer after the
 * symbol its call refers to, and orders its stubs in its own way (the
 * order of its stub hash table), so a stub area can hold the planned
 * number of stubs in the planned place and still put another function's
 * stub in each cache set. A planned stub whose veneer symbol is not in the
 * image (a call through another name of the function) is not counted.
 * Not a difference: every function and stub area is as planned; what moves
 * is the prediction, by the misses of the stubs that changed sets. */
static int check_stub_order(const img *im, const stubs_plan *sp,
                            vfy_result *r)
{
    size_t off = 0, first = sp->nat;
    uint32_t first_at = 0;
    for (size_t i = 0; i < sp->nat; i++) {
        const plan_stub *x = &sp->at[i];
        char sym[160];
        uint32_t v;
        snprintf(sym, sizeof sym, "__%s_veneer", x->target);
        if (img_symbol(im, sym, &v, NULL, NULL) < 0)
            continue;
        r->stubs_named++;
        if ((v & ~1u) == x->addr)
            continue;
        if (!off++) {
            first = i;
            first_at = v & ~1u;
        }
    }
    r->stubs_elsewhere = off;
    if (off)
        snprintf(r->stub_example, sizeof r->stub_example,
                 "%s's at 0x%08x, the plan's at 0x%08x", sp->at[first].target,
                 first_at, sp->at[first].addr);
    return 0;
}

/* ld's long-branch stubs: input sections ".text.__stub" ("linker stubs"). */
static int check_stubs(const img *im, const tgt *t, const stubs_plan *sp,
                       vfy_result *r)
{
    const tgt_mem *flash = flash_mem(t);
    uint32_t lo = 0xffffffffu, hi = 0;
    uint64_t fbytes = 0, xbytes = 0;
    for (size_t i = 0; i < img_nisecs(im); i++) {
        const img_isec *s = img_isec_at(im, i);
        if (strcmp(s->name, ".text.__stub") && !(s->path &&
                                                 !strcmp(s->path,
                                                         "linker stubs")))
            continue;
        if (!s->size)
            continue;
        if (in_mem(flash, s->addr)) {
            fbytes += s->size;
            if (sp->hot && s->addr >= sp->hot_at &&
                s->addr < sp->hot_at + sp->hot * (sp->bytes ? sp->bytes : 8))
                continue; /* the hot block's own, checked by count */
            if (s->addr < lo)
                lo = s->addr;
            if (s->addr + s->size > hi)
                hi = s->addr + s->size;
        } else {
            xbytes += s->size;
        }
    }
    r->stubs_checked = 1;
    r->stubs_flash_plan = sp->flash;
    r->stubs_fast_plan = sp->fast;
    unsigned b = sp->bytes ? sp->bytes : 8;
    r->stubs_flash = (unsigned)(fbytes / b);
    r->stubs_fast = (unsigned)(xbytes / b);
    char what[64];
    if (r->stubs_flash != sp->flash) {
        snprintf(what, sizeof what, "flash stubs");
        if (add_diff(r, VFY_STUBS, what, "%u (%llu bytes), the plan expects "
                     "%u", r->stubs_flash, (unsigned long long)fbytes,
                     sp->flash) < 0)
            return -1;
    } else if (sp->flash > sp->hot) {
        /* the stubs outside the hot block sit at the end of .text */
        uint32_t want_lo = sp->text_end - (sp->flash - sp->hot) * b;
        if (lo != want_lo || hi != sp->text_end) {
            snprintf(what, sizeof what, "flash stubs");
            if (add_diff(r, VFY_STUBS, what, "at 0x%08x..0x%08x, the plan "
                         "expects 0x%08x..0x%08x (the end of .text)", lo, hi,
                         want_lo, sp->text_end) < 0)
                return -1;
        }
    }
    if (r->stubs_fast != sp->fast) {
        snprintf(what, sizeof what, "%s stubs", t ? t->fast_mem : "fast");
        if (add_diff(r, VFY_STUBS, what, "%u (%llu bytes), the plan expects "
                     "%u", r->stubs_fast, (unsigned long long)xbytes,
                     sp->fast) < 0)
            return -1;
    }
    return check_stub_order(im, sp, r);
}

int vfy_run(const char *layout_path, const img *relinked,
            const tgt *target, const char *emit_dir, vfy_result *r,
            cp_err *err)
{
    memset(r, 0, sizeof *r);
    char *data;
    size_t len;
    if (cp_read_file(layout_path, &data, &len, err) < 0)
        return -1;
    int rc = vfy_run_text(layout_path, data, len, relinked, target, emit_dir,
                          r, err);
    free(data);
    return rc;
}

int vfy_run_text(const char *layout_path, const char *text, size_t len,
                 const img *relinked, const tgt *target, const char *emit_dir,
                 vfy_result *r, cp_err *err)
{
    memset(r, 0, sizeof *r);
    entry *e = NULL;
    size_t n = 0;
    stubs_plan sp = {0};
    int rc = read_layout(layout_path, text, len, r, &e, &n, &sp, err);
    if (rc < 0)
        goto done;
    const tgt *t = target;
    if (!t && !r->target[0]) {
        rc = cp_seterr(err, "'%s': no '# target:' header (give the target)",
                       layout_path);
        goto done;
    }
    if (!t) {
        cp_err e2;
        if (!(t = tgt_load(r->target, &e2))) {
            rc = cp_seterr(err, "'%s': its target '%s': %s (give the target "
                           "file with --target FILE)", layout_path, r->target,
                           e2.msg);
            goto done;
        }
    }
    if ((rc = check_functions(relinked, t, e, n, r)) < 0) {
        cp_seterr(err, "out of memory");
        goto done;
    }
    int have_map = img_nisecs(relinked) > 0;
    if (emit_dir) {
        if (!have_map) {
            rc = cp_seterr(err, "checking the snippets of '%s' needs the "
                           "relinked image's map (--map)", emit_dir);
            goto done;
        }
        if ((rc = check_snippet(relinked, t, emit_dir, "codeplace_flash.ld",
                                flash_mem(t), r, err)) < 0 ||
            (rc = check_snippet(relinked, t, emit_dir, "codeplace_ram.ld",
                                mem_named(t, t->fast_mem), r, err)) < 0)
            goto done;
    }
    if (sp.known && have_map && (rc = check_stubs(relinked, t, &sp, r)) < 0)
        cp_seterr(err, "out of memory");
done:
    free(e);
    free(sp.at);
    return rc < 0 ? -1 : 0;
}
