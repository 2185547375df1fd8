/* The in-memory stream: fetch runs as (function, offset, length), cut into
 * iterations, and the per-function index that partial re-simulation uses. */
#include "cache/cache.h"

#include <stdlib.h>
#include <string.h>

#include "cache/stream_int.h"
#include "isa/thumb.h"

#define BLOCK 4096u /* unknown code is grouped in blocks of this size */

static int default_dreads(const tgt *t)
{
    /* The RP2040/RP2350 XIP cache serves data reads from flash as well as
     * fetches (RP2040 Datasheet 2.6.3); the Cortex-M7 I-cache sees only
     * fetches (tgt.icache_only). */
    return !(t && t->icache_only);
}

csim_stream *csim_stream_new(const img *im, const tgt *t, cp_err *err)
{
    if (!t)
        return cp_seterr(err, "stream: no target"), NULL;
    csim_stream *s = calloc(1, sizeof *s);
    if (!s || !(s->pool = cp_pool_new())) {
        free(s);
        return cp_seterr(err, "out of memory"), NULL;
    }
    s->im = im;
    s->t = t;
    s->dreads = default_dreads(t);
    s->last_fn = NONE;
    s->last_fetch_fn = NONE;
    s->stub_fn0 = NONE;
    size_t n = im ? img_nfuncs(im) : 0;
    if (cp_grow((void **)&s->fns, &s->capf, n + 1, sizeof *s->fns) < 0) {
        csim_stream_free(s);
        return cp_seterr(err, "out of memory"), NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const img_func *f = img_func_at(im, i);
        uint32_t size = f->size ? f->size : 2;
        /* With a map, the bytes after a function up to the next function
         * or the end of its input section (literal pools, padding) belong
         * to it: they move with it when a layout moves the section. */
        if (f->isec && f->isec_size) {
            uint64_t end = (uint64_t)f->isec_addr + f->isec_size;
            const img_func *g = i + 1 < n ? img_func_at(im, i + 1) : NULL;
            if (g && g->addr < end)
                end = g->addr;
            if (end > (uint64_t)f->addr + size)
                size = (uint32_t)(end - f->addr);
        }
        s->fns[i] = (csim_fn){f->name, f->addr, size, f, 0};
    }
    s->nfns = n;
    s->nimg = n;
    return s;
}

void csim_stream_set_dreads(csim_stream *s, int on)
{
    s->dreads = on;
}

void csim_stream_free(csim_stream *s)
{
    if (!s)
        return;
    free(s->fns);
    free(s->run);
    free(s->iter);
    free(s->iter_insns);
    free(s->fn_insns);
    free(s->fn_insns0);
    free(s->fn_runs);
    free(s->fn_start);
    free(s->blk_ht);
    free(s->stubs);
    free(s->calls);
    cp_pool_free(s->pool);
    free(s);
}

/* Whether the fetch run that ended at end ended with a Thumb BL or B.W
 * to target (isa/thumb.h): the calls GNU ld may route through a
 * long-branch stub (a call through a register never is). */
static int ends_in_branch_to(const csim_stream *s, uint32_t end,
                             uint32_t target)
{
    uint8_t b[4];
    uint32_t t;
    if (!s->im || end < 4 || img_read(s->im, end - 4, b, 4) < 0)
        return 0;
    return thumb_long_branch(b[0] | b[1] << 8, b[2] | b[3] << 8, end - 4,
                             &t) && t == target;
}

/* Index of the unknown block [base, base + size), made on first use. */
static size_t block_fn(csim_stream *s, uint32_t base, uint32_t size,
                       cp_err *err)
{
    if (s->nblk * 2 + 2 > s->blk_hs) {
        size_t ns = s->blk_hs ? s->blk_hs * 2 : 64;
        uint32_t *nt = calloc(ns, sizeof *nt);
        if (!nt)
            return cp_seterr(err, "out of memory"), NONE;
        for (size_t i = 0; i < s->blk_hs; i++)
            if (s->blk_ht[i]) {
                size_t h = (s->fns[s->blk_ht[i] - 1].addr / BLOCK * 2654435761u) &
                           (ns - 1);
                while (nt[h])
                    h = (h + 1) & (ns - 1);
                nt[h] = s->blk_ht[i];
            }
        free(s->blk_ht);
        s->blk_ht = nt;
        s->blk_hs = ns;
    }
    size_t h = (base / BLOCK * 2654435761u) & (s->blk_hs - 1);
    while (s->blk_ht[h]) {
        if (s->fns[s->blk_ht[h] - 1].addr == base)
            return s->blk_ht[h] - 1;
        h = (h + 1) & (s->blk_hs - 1);
    }
    if (s->nfns >= MAX_FNS)
        return cp_seterr(err, "too many functions (%zu)", s->nfns), NONE;
    if (cp_grow((void **)&s->fns, &s->capf, s->nfns + 1, sizeof *s->fns) < 0)
        return cp_seterr(err, "out of memory"), NONE;
    char name[32];
    snprintf(name, sizeof name, "?0x%08x", base);
    const char *nm = cp_pool_str(s->pool, name);
    if (!nm)
        return cp_seterr(err, "out of memory"), NONE;
    s->fns[s->nfns] = (csim_fn){nm, base, size, NULL, CSIM_FN_UNKNOWN};
    s->blk_ht[h] = (uint32_t)++s->nfns;
    s->nblk++;
    return s->nfns - 1;
}

/* The first ELF function whose end is above addr (functions are sorted
 * and do not overlap). */
static size_t fn_above(const csim_stream *s, uint32_t addr)
{
    size_t lo = 0, hi = s->nimg;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uint64_t)s->fns[mid].addr + s->fns[mid].size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A fetch run starting at addr: when it enters an image function's start
 * from another image function whose last fetch run ended with a direct
 * BL / B.W to it, a call (the ones GNU ld may route through a stub). */
static int record_call(csim_stream *s, uint32_t addr, cp_err *err)
{
    size_t c = s->last_fetch_fn;
    if (c == NONE || c >= s->nimg || s->fns[c].addr == addr)
        return 0;
    size_t f = fn_above(s, addr);
    if (f >= s->nimg || s->fns[f].addr != addr ||
        !ends_in_branch_to(s, s->last_fetch_end, addr))
        return 0;
    if (cp_grow((void **)&s->calls, &s->capc, s->ncalls + 1,
                sizeof *s->calls) < 0)
        return cp_seterr(err, "out of memory");
    s->calls[s->ncalls++] = (csim_call){s->nruns, s->last_fetch_end - 4,
                                        (uint32_t)c};
    return 0;
}

/* The function holding addr and how many bytes from addr it still covers.
 * Outside the ELF's functions: the unknown block of BLOCK-aligned bytes
 * holding it, cut at the ELF functions around it, so that what lies before
 * a function and what lies after it are apart (a layout's @shift moves
 * what follows the text, .rodata, and not the vectors before it). */
static size_t which_fn(csim_stream *s, uint32_t addr, uint32_t *room,
                       cp_err *err)
{
    if (s->last_fn != NONE) {
        const csim_fn *f = &s->fns[s->last_fn];
        if (addr - f->addr < f->size && !(f->flags & CSIM_FN_UNKNOWN)) {
            *room = f->addr + f->size - addr;
            return s->last_fn;
        }
    }
    size_t lo = fn_above(s, addr);
    if (lo < s->nimg && s->fns[lo].addr <= addr) {
        *room = s->fns[lo].addr + s->fns[lo].size - addr;
        s->last_fn = lo;
        return lo;
    }
    /* A read through an alias of the cached window (the RP2040's
     * non-allocating 0x11000000) is cut where the flash it reads is. */
    uint64_t alias = 0;
    const tgt_mem *mem = s->t ? tgt_mem_at(s->t, addr) : NULL;
    const tgt_mem *fl = s->t ? tgt_cached_window(s->t) : NULL;
    if (mem && fl && mem->kind == TGT_MEM_FLASH_NOALLOC) {
        alias = mem->base - fl->base;
        lo = fn_above(s, (uint32_t)(addr - alias));
    }
    uint64_t base = addr & ~(BLOCK - 1), end = base + BLOCK;
    if (lo > 0 && (uint64_t)s->fns[lo - 1].addr + s->fns[lo - 1].size + alias >
                      base)
        base = (uint64_t)s->fns[lo - 1].addr + s->fns[lo - 1].size + alias;
    if (lo < s->nimg && s->fns[lo].addr + alias < end)
        end = s->fns[lo].addr + alias;
    size_t b = block_fn(s, (uint32_t)base, (uint32_t)(end - base), err);
    if (b == NONE)
        return NONE;
    *room = (uint32_t)(end - addr);
    s->last_fn = NONE;
    return b;
}

static int push_run(csim_stream *s, size_t fn, uint32_t off, uint32_t len,
                    unsigned fl, cp_err *err)
{
    if (cp_grow((void **)&s->run, &s->capr, s->nruns + 1, sizeof *s->run) < 0)
        return cp_seterr(err, "out of memory (%zu fetch runs)", s->nruns);
    s->run[s->nruns++] = run_pack(fn, off, len, fl);
    return 0;
}

static int start_iter(csim_stream *s, cp_err *err)
{
    size_t k = s->niter;
    if (cp_grow((void **)&s->iter, &s->capi, k + 2, sizeof *s->iter) < 0)
        return cp_seterr(err, "out of memory");
    size_t cap2 = s->capi2;
    if (cp_grow((void **)&s->iter_insns, &cap2, k + 2, sizeof *s->iter_insns) <
        0)
        return cp_seterr(err, "out of memory");
    s->capi2 = cap2;
    s->iter[k] = s->nruns;
    s->iter_insns[k] = 0;
    s->niter++;
    return 0;
}

static int add_fn_insns(csim_stream *s, size_t fn, uint64_t n, cp_err *err)
{
    if (fn >= s->capfi) {
        size_t nc = s->capfi ? s->capfi : 256;
        while (nc <= fn)
            nc *= 2;
        uint64_t *a = realloc(s->fn_insns, nc * sizeof *a);
        if (!a)
            return cp_seterr(err, "out of memory");
        s->fn_insns = a;
        uint64_t *b = realloc(s->fn_insns0, nc * sizeof *b);
        if (!b)
            return cp_seterr(err, "out of memory");
        s->fn_insns0 = b;
        memset(a + s->capfi, 0, (nc - s->capfi) * sizeof *a);
        memset(b + s->capfi, 0, (nc - s->capfi) * sizeof *b);
        s->capfi = nc;
    }
    s->fn_insns[fn] += n;
    if (s->niter == 1)
        s->fn_insns0[fn] += n;
    return 0;
}

int csim_stream_add(csim_stream *s, const trc_rec *r, cp_err *err)
{
    if (s->finished)
        return cp_seterr(err, "stream: add after finish");
    if (r->kind == TRC_MARK) {
        s->marked = 1;
        return start_iter(s, err);
    }
    if (r->kind != TRC_FETCH && r->kind != TRC_DREAD)
        return cp_seterr(err, "stream: unknown record kind %d", (int)r->kind);
    if (!s->marked) {
        s->prologue++;
        return 0;
    }
    if (r->kind == TRC_FETCH)
        s->iter_insns[s->niter - 1] += r->ninsn;
    if (r->kind == TRC_DREAD && !s->dreads)
        return 0;
    unsigned fl = r->kind == TRC_DREAD ? RUN_DREAD : 0;
    /* The target's memory map decides how an address is looked up (an
     * alias that never fills, SRAM); the flag matters only where the map
     * says cached flash. */
    if (r->flags & TRC_F_UNCACHED) {
        const tgt_mem *mem = tgt_mem_at(s->t, r->addr);
        if (mem && mem->kind == TGT_MEM_FLASH)
            fl |= RUN_UNC;
    }
    uint32_t addr = r->addr & (r->kind == TRC_FETCH ? ~1u : ~0u);
    if (r->kind == TRC_FETCH && record_call(s, addr, err) < 0)
        return -1;
    uint64_t left = r->len ? r->len : 1;
    uint64_t insn_left = r->kind == TRC_FETCH ? r->ninsn : 0;
    while (left) {
        uint32_t room;
        size_t fn = which_fn(s, addr, &room, err);
        if (fn == NONE)
            return -1;
        uint32_t n = left < room ? (uint32_t)left : room;
        if (n > MAX_LEN)
            n = MAX_LEN;
        uint64_t ins = n == left ? insn_left : insn_left * n / left;
        if (push_run(s, fn, addr - s->fns[fn].addr, n, fl, err) < 0 ||
            (ins && add_fn_insns(s, fn, ins, err) < 0))
            return -1;
        insn_left -= ins;
        left -= n;
        addr += n;
        if (r->kind == TRC_FETCH) {
            s->last_fetch_end = addr;
            s->last_fetch_fn = fn;
        }
    }
    return 0;
}

/* The runs of each function, in time order (counting sort): fn_start and
 * fn_runs, made again when stubs add functions. */
static int index_fns(csim_stream *s, cp_err *err)
{
    free(s->fn_start);
    free(s->fn_runs);
    s->fn_start = calloc(s->nfns + 1, sizeof *s->fn_start);
    s->fn_runs = malloc((s->nruns ? s->nruns : 1) * sizeof *s->fn_runs);
    if (!s->fn_start || !s->fn_runs)
        return cp_seterr(err, "out of memory");
    for (size_t i = 0; i < s->nruns; i++)
        s->fn_start[run_fn(s->run[i]) + 1]++;
    for (size_t f = 0; f < s->nfns; f++)
        s->fn_start[f + 1] += s->fn_start[f];
    size_t *fill = malloc((s->nfns + 1) * sizeof *fill);
    if (!fill)
        return cp_seterr(err, "out of memory");
    memcpy(fill, s->fn_start, (s->nfns + 1) * sizeof *fill);
    for (size_t i = 0; i < s->nruns; i++)
        s->fn_runs[fill[run_fn(s->run[i])]++] = (uint32_t)i;
    free(fill);
    return 0;
}

int csim_stream_finish(csim_stream *s, cp_err *err)
{
    if (s->finished)
        return 0;
    if (!s->marked) { /* no marks: the whole trace is one iteration */
        if (start_iter(s, err) < 0)
            return -1;
    }
    /* A trailing mark with nothing after it starts no iteration. */
    if (s->niter > 1 && s->iter[s->niter - 1] == s->nruns &&
        !s->iter_insns[s->niter - 1])
        s->niter--;
    s->iter[s->niter] = s->nruns;
    if (add_fn_insns(s, s->nfns ? s->nfns - 1 : 0, 0, err) < 0)
        return -1;
    if (index_fns(s, err) < 0)
        return -1;
    s->finished = 1;
    return 0;
}

/* The stub of st[0..n) a call from site to target goes through when its
 * caller is on side `from_fast`: one that names the site, else the first
 * that names no sites; NONE when there is none. */
static size_t pick_stub(const csim_stream *s, const csim_stub *st, size_t n,
                        uint32_t site, uint32_t target, int from_fast)
{
    size_t any = NONE;
    for (size_t k = 0; k < n; k++) {
        const tgt_mem *sm = tgt_mem_at(s->t, st[k].addr);
        int fast = !sm || sm->kind != TGT_MEM_FLASH;
        if (st[k].target != target || fast != from_fast)
            continue;
        if (!st[k].nsites) {
            if (any == NONE)
                any = k;
            continue;
        }
        for (size_t i = 0; i < st[k].nsites; i++)
            if (st[k].sites[i] == site)
                return k;
    }
    return any;
}

int csim_stream_set_stubs(csim_stream *s, const csim_stub *st, size_t n,
                          cp_err *err)
{
    if (!s->finished || s->nstubs)
        return cp_seterr(err, "stream: stubs set before the stream is "
                         "finished, or twice");
    if (!n)
        return 0;
    if (s->nfns + n > MAX_FNS)
        return cp_seterr(err, "too many functions (%zu)", s->nfns + n);
    s->stubs = malloc(n * sizeof *s->stubs);
    size_t (*pick)[2] = malloc((s->ncalls ? s->ncalls : 1) * sizeof *pick);
    uint64_t *run = NULL;
    if (!s->stubs || !pick ||
        cp_grow((void **)&s->fns, &s->capf, s->nfns + n, sizeof *s->fns) < 0)
        goto oom;
    s->stub_fn0 = s->nfns;
    for (size_t i = 0; i < n; i++) {
        char name[160];
        const char *tn = "?";
        for (size_t k = 0; k < s->nimg; k++)
            if (s->fns[k].addr == st[i].target) {
                tn = s->fns[k].name;
                break;
            }
        snprintf(name, sizeof name, "stub:%s", tn);
        const char *nm = cp_pool_str(s->pool, name);
        if (!nm)
            goto oom;
        s->stubs[i] = st[i];
        s->stubs[i].sites = NULL;
        s->stubs[i].nsites = 0;
        s->fns[s->nfns++] = (csim_fn){nm, st[i].addr,
                                      st[i].size ? st[i].size : 2, NULL,
                                      CSIM_FN_STUB};
    }
    s->nstubs = n;
    /* Each call gets a run of the stub it goes through from each side,
     * in front of the run it enters: the map decides at evaluation which
     * one, if any, is fetched. */
    size_t extra = 0;
    for (size_t c = 0; c < s->ncalls; c++) {
        uint64_t r = s->run[s->calls[c].run];
        uint32_t target = s->fns[run_fn(r)].addr + run_off(r);
        for (int side = 0; side < 2; side++) {
            pick[c][side] = pick_stub(s, st, n, s->calls[c].site, target, side);
            extra += pick[c][side] != NONE;
        }
    }
    run = malloc((s->nruns + extra ? s->nruns + extra : 1) * sizeof *run);
    if (!run)
        goto oom;
    size_t k = 0, c = 0, it = 0;
    for (size_t i = 0; i <= s->nruns; i++) {
        /* An iteration starting at run i starts before its stubs: they are
         * in the iteration of the run they precede. */
        while (it <= s->niter && s->iter[it] == i)
            s->iter[it++] = k;
        for (; c < s->ncalls && s->calls[c].run == i; c++) {
            for (int side = 0; side < 2; side++) {
                size_t sk = pick[c][side];
                if (sk != NONE)
                    run[k++] = run_pack(s->stub_fn0 + sk, s->calls[c].caller,
                                        s->fns[s->stub_fn0 + sk].size,
                                        side ? STUB_FROM_FAST : STUB_FROM_FLASH);
            }
            s->calls[c].run = k;
        }
        if (i < s->nruns)
            run[k++] = s->run[i];
    }
    free(s->run);
    s->run = run;
    s->nruns = s->capr = k;
    s->nstub_runs = extra;
    free(pick);
    if (add_fn_insns(s, s->nfns - 1, 0, err) < 0)
        return -1;
    return index_fns(s, err);
oom:
    free(pick);
    free(run);
    return cp_seterr(err, "out of memory");
}

size_t csim_stream_nfns(const csim_stream *s)
{
    return s->nfns;
}

const csim_fn *csim_stream_fn(const csim_stream *s, size_t i)
{
    return i < s->nfns ? &s->fns[i] : NULL;
}

size_t csim_stream_find(const csim_stream *s, const char *name)
{
    const char *at = strchr(name, '@');
    size_t nlen = at ? (size_t)(at - name) : strlen(name);
    uint64_t want = 0;
    if (at && cp_parse_u64(at + 1, 0, &want) < 0)
        return NONE;
    for (size_t i = 0; i < s->nfns; i++) {
        const csim_fn *f = &s->fns[i];
        if (at && f->addr != (uint32_t)(want & ~1ULL))
            continue;
        if (strlen(f->name) == nlen && !strncmp(f->name, name, nlen))
            return i;
        for (unsigned k = 0; f->f && k < f->f->nalias; k++)
            if (strlen(f->f->alias[k]) == nlen &&
                !strncmp(f->f->alias[k], name, nlen))
                return i;
    }
    return NONE;
}

uint64_t csim_stream_dropped(const csim_stream *s)
{
    return s->dropped;
}

int csim_stream_cut(const csim_stream *s)
{
    return s->cut;
}

void csim_stream_set_dropped(csim_stream *s, uint64_t iters, int cut)
{
    s->dropped = iters;
    s->cut = cut;
}

int csim_stream_check_complete(const csim_stream *s, const char *path,
                               cp_err *err)
{
    if (!s->marked && s->dropped)
        return cp_seterr(err, "%s: no complete iteration (the only one was "
                         "unfinished)", path);
    if (!s->marked)
        return cp_seterr(err, "%s: no complete iteration (no iteration marks: "
                         "record at least one, e.g. trace -n 1)", path);
    if (s->niter == 1 && s->iter[0] == s->iter[1] && !s->iter_insns[0])
        return cp_seterr(err, "%s: no complete iteration (%s)", path,
                         s->dropped ? "the only one was unfinished"
                                    : "the only one is empty");
    return 0;
}

size_t csim_stream_niters(const csim_stream *s)
{
    return s->niter;
}

size_t csim_stream_nruns(const csim_stream *s)
{
    return s->nruns - s->nstub_runs;
}

uint64_t csim_stream_iter_insns(const csim_stream *s, size_t k)
{
    return k < s->niter ? s->iter_insns[k] : 0;
}

uint64_t csim_stream_fn_insns(const csim_stream *s, size_t i, size_t from)
{
    if (i >= s->capfi)
        return 0;
    return from ? s->fn_insns[i] - s->fn_insns0[i] : s->fn_insns[i];
}

uint64_t csim_stream_prologue(const csim_stream *s)
{
    return s->prologue;
}

const tgt *csim_stream_target(const csim_stream *s)
{
    return s->t;
}
