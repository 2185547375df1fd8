/* The trace file: writer and streaming reader (docs/formats/trace.md).
 * Records are delta- and varint-coded inside blocks; each block carries its
 * length, record count and a checksum, and the coding state starts afresh
 * in every block, so a file cut short is readable up to its last complete
 * block. */
#include "trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAGIC "CPTRACE"           /* 8 bytes with the NUL */
#define BLK_MAGIC 0x4b425043u     /* "CPBK" little-endian */
#define END_MAGIC 0x444e5043u     /* "CPND" */
#define BLK_TARGET (60 * 1024)    /* a block is flushed past this */
#define BLK_MAX (1024 * 1024)     /* readers refuse larger payloads */
#define REC_MAX 32                /* longest coded record */
#define HDR_FIXED 16

/* Tag byte: bits 1..0 the kind. */
enum { K_FETCH = 0, K_DREAD = 1, K_MARK = 2, K_FULL = 3 };

typedef struct coder {
    uint32_t fetch_end;  /* end of the previous fetch run */
    uint32_t dread;      /* address of the previous data read */
    uint32_t next_mark;  /* previous mark + 1 */
} coder;

static uint32_t fnv32(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint8_t *put_var(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static uint32_t zz(uint32_t delta)
{
    int32_t d = (int32_t)delta;
    return ((uint32_t)d << 1) ^ (uint32_t)(d >> 31);
}

static uint32_t unzz(uint32_t v)
{
    return (v >> 1) ^ (0u - (v & 1));
}

static void add_totals(trc_totals *t, const trc_rec *r)
{
    t->records++;
    switch (r->kind) {
    case TRC_FETCH:
        t->fetch_runs++;
        t->insns += r->ninsn;
        t->fetch_bytes += r->len;
        break;
    case TRC_DREAD:
        t->dreads++;
        break;
    case TRC_MARK:
        t->marks++;
        break;
    case TRC_CTX:
        t->contexts++;
        break;
    }
}

/* ---- writer ---- */

struct trc_writer {
    FILE *f;
    char *path;
    uint8_t *buf; /* block header room + payload */
    size_t len;   /* payload bytes */
    uint32_t nrec;
    coder c;
    trc_totals tot;
    uint64_t bytes;
    unsigned version;
    int failed;
};

static int w_fail(trc_writer *w, cp_err *err, const char *what)
{
    w->failed = 1;
    return cp_seterr(err, "cannot write '%s': %s%s%s", w->path, what,
                     errno ? ": " : "", errno ? strerror(errno) : "");
}

static int w_out(trc_writer *w, const void *p, size_t n, cp_err *err)
{
    errno = 0;
    if (fwrite(p, 1, n, w->f) != n)
        return w_fail(w, err, "write failed");
    w->bytes += n;
    return 0;
}

static size_t put_str(uint8_t *p, const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n > 255)
        n = 255;
    p[0] = (uint8_t)n;
    memcpy(p + 1, s, n);
    return n + 1;
}

trc_writer *trc_create(const char *path, const trc_header *h, cp_err *err)
{
    trc_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path)) ||
        !(w->buf = malloc(HDR_FIXED + BLK_TARGET + REC_MAX))) {
        if (w)
            free(w->path);
        free(w);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    snprintf(w->tot.end, sizeof w->tot.end, "done");
    errno = 0;
    w->f = fopen(path, "wb");
    if (!w->f) {
        cp_seterr(err, "cannot create '%s': %s", path, strerror(errno));
        free(w->buf);
        free(w->path);
        free(w);
        return NULL;
    }
    uint8_t hdr[HDR_FIXED + 4 * 256];
    w->version = h->version >= TRC_VERSION_1 && h->version <= TRC_VERSION
                     ? h->version : TRC_VERSION;
    memcpy(hdr, MAGIC, 8);
    put32(hdr + 8, w->version);
    size_t n = HDR_FIXED;
    n += put_str(hdr + n, h->target, sizeof h->target);
    n += put_str(hdr + n, h->cpu, sizeof h->cpu);
    n += put_str(hdr + n, h->elf_hash, sizeof h->elf_hash);
    n += put_str(hdr + n, h->source, sizeof h->source);
    put32(hdr + 12, (uint32_t)n);
    if (w_out(w, hdr, n, err) || fflush(w->f)) {
        w_fail(w, err, "header");
        trc_abandon(w);
        return NULL;
    }
    return w;
}

int trc_flush(trc_writer *w, cp_err *err)
{
    if (w->failed)
        return cp_seterr(err, "cannot write '%s': an earlier write failed",
                         w->path);
    if (!w->nrec)
        return 0;
    uint8_t *b = w->buf;
    put32(b, BLK_MAGIC);
    put32(b + 4, (uint32_t)w->len);
    put32(b + 8, w->nrec);
    put32(b + 12, fnv32(b + HDR_FIXED, w->len));
    if (w_out(w, b, HDR_FIXED + w->len, err))
        return -1;
    errno = 0;
    if (fflush(w->f))
        return w_fail(w, err, "flush failed");
    w->len = 0;
    w->nrec = 0;
    memset(&w->c, 0, sizeof w->c);
    return 0;
}

/* Codes r at p with coder c; returns the end. */
static uint8_t *encode(coder *c, const trc_rec *r, uint8_t *p)
{
    unsigned fl = r->flags;
    if (r->kind == TRC_FETCH && !(fl & ~1u) && r->len >= 2 * (uint64_t)r->ninsn &&
        !((r->len - 2 * r->ninsn) & 1)) {
        uint32_t n = r->ninsn >= 1 && r->ninsn <= 31 ? r->ninsn : 0;
        *p++ = (uint8_t)(K_FETCH | (fl & 1) << 2 | n << 3);
        if (!n)
            p = put_var(p, r->ninsn);
        p = put_var(p, zz(r->addr - c->fetch_end));
        p = put_var(p, (r->len - 2 * r->ninsn) / 2);
        c->fetch_end = r->addr + r->len;
        return p;
    }
    if (r->kind == TRC_DREAD && !(fl & ~1u) && !r->ninsn) {
        unsigned sz = r->len == 1 ? 0 : r->len == 2 ? 1 : r->len == 4 ? 2 : 3;
        *p++ = (uint8_t)(K_DREAD | (fl & 1) << 2 | sz << 3);
        if (sz == 3)
            p = put_var(p, r->len);
        p = put_var(p, zz(r->addr - c->dread));
        c->dread = r->addr;
        return p;
    }
    if (r->kind == TRC_MARK && !fl && !r->len && !r->ninsn) {
        *p++ = K_MARK;
        p = put_var(p, zz(r->addr - c->next_mark));
        c->next_mark = r->addr + 1;
        return p;
    }
    /* TRC_CTX has only the escape form (it is rare: one per exception
     * entry and return); it changes no coding state. */
    *p++ = K_FULL;
    *p++ = (uint8_t)r->kind;
    p = put_var(p, r->flags);
    p = put_var(p, r->addr);
    p = put_var(p, r->len);
    p = put_var(p, r->ninsn);
    if (r->kind == TRC_FETCH)
        c->fetch_end = r->addr + r->len;
    else if (r->kind == TRC_DREAD)
        c->dread = r->addr;
    else if (r->kind == TRC_MARK)
        c->next_mark = r->addr + 1;
    return p;
}

int trc_write(trc_writer *w, const trc_rec *rec, cp_err *err)
{
    if (rec->kind < TRC_FETCH || rec->kind > TRC_CTX)
        return cp_seterr(err, "'%s': record of unknown kind %d", w->path,
                         (int)rec->kind);
    if (rec->kind == TRC_CTX && w->version < 2)
        return cp_seterr(err, "'%s': a version 1 trace cannot hold "
                         "exception contexts", w->path);
    uint8_t *p = w->buf + HDR_FIXED + w->len;
    w->len = (size_t)(encode(&w->c, rec, p) - (w->buf + HDR_FIXED));
    w->nrec++;
    add_totals(&w->tot, rec);
    if (w->len >= BLK_TARGET)
        return trc_flush(w, err);
    return 0;
}

void trc_set_end(trc_writer *w, const char *reason)
{
    snprintf(w->tot.end, sizeof w->tot.end, "%s", reason);
}

const trc_totals *trc_writer_totals(const trc_writer *w)
{
    return &w->tot;
}

uint64_t trc_writer_bytes(const trc_writer *w)
{
    return w->bytes;
}

static size_t code_trailer(const trc_totals *t, uint8_t *p0)
{
    uint8_t *p = p0;
    p = put_var(p, t->records);
    p = put_var(p, t->fetch_runs);
    p = put_var(p, t->insns);
    p = put_var(p, t->fetch_bytes);
    p = put_var(p, t->dreads);
    p = put_var(p, t->marks);
    p += put_str(p, t->end, sizeof t->end);
    return (size_t)(p - p0);
}

int trc_finish(trc_writer *w, cp_err *err)
{
    int rc = trc_flush(w, err);
    if (!rc) {
        uint8_t b[HDR_FIXED + 128];
        size_t n = code_trailer(&w->tot, b + HDR_FIXED);
        put32(b, END_MAGIC);
        put32(b + 4, (uint32_t)n);
        put32(b + 8, 0);
        put32(b + 12, fnv32(b + HDR_FIXED, n));
        rc = w_out(w, b, HDR_FIXED + n, err);
    }
    errno = 0;
    if (fclose(w->f) && !rc)
        rc = w_fail(w, err, "close failed");
    w->f = NULL;
    free(w->buf);
    free(w->path);
    free(w);
    return rc;
}

void trc_abandon(trc_writer *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    free(w->buf);
    free(w->path);
    free(w);
}

/* ---- reader ---- */

struct trc_reader {
    FILE *f;
    char *name;
    unsigned flags;
    trc_header h;
    uint64_t data_off; /* first block */
    uint64_t off;      /* offset of the next unread block */
    uint64_t blk_off;  /* offset of the block being decoded */
    uint8_t *buf;
    size_t cap, len, pos;
    uint32_t left; /* records left in the block */
    coder c;
    trc_totals tot;
    int done, truncated;
    /* trc_next_complete: the records of the iteration in progress, from
     * its mark; the first hflush of them are known complete. */
    trc_rec *held;
    size_t nheld, capheld, hpos, hflush;
    int hdone;
    uint64_t dropped_iters, dropped_recs;
};

static int r_err(trc_reader *r, cp_err *err, uint64_t off, const char *fmt,
                 const char *what)
{
    cp_seterr(err, "'%s': byte %llu: %s%s", r->name, (unsigned long long)off,
              fmt, what ? what : "");
    return -1;
}

/* Reads n bytes; returns n, or fewer at the end of the file. */
static size_t r_read(trc_reader *r, void *p, size_t n)
{
    size_t got = fread(p, 1, n, r->f);
    r->off += got;
    return got;
}

static int get_str(const uint8_t *p, size_t n, size_t *pos, char *out,
                   size_t cap)
{
    if (*pos >= n)
        return -1;
    size_t l = p[*pos];
    if (*pos + 1 + l > n)
        return -1;
    size_t c = l < cap - 1 ? l : cap - 1;
    memcpy(out, p + *pos + 1, c);
    out[c] = 0;
    *pos += 1 + l;
    return 0;
}

static trc_reader *open_file(FILE *f, const char *name, unsigned flags,
                             cp_err *err)
{
    trc_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->name = strdup(name))) {
        free(r);
        fclose(f);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    r->f = f;
    r->flags = flags;
    uint8_t fix[HDR_FIXED];
    size_t got = r_read(r, fix, HDR_FIXED);
    if (got < 8 || memcmp(fix, MAGIC, 8)) {
        r_err(r, err, 0, "not a codeplace trace (bad magic)", NULL);
        goto fail;
    }
    if (got < HDR_FIXED) {
        r_err(r, err, got, "truncated header", NULL);
        goto fail;
    }
    r->h.version = get32(fix + 8);
    if (r->h.version < TRC_VERSION_1 || r->h.version > TRC_VERSION) {
        char v[48];
        snprintf(v, sizeof v, "%u (this reader knows %u)", r->h.version,
                 TRC_VERSION);
        r_err(r, err, 8, "unsupported trace version ", v);
        goto fail;
    }
    uint32_t hlen = get32(fix + 12);
    if (hlen < HDR_FIXED + 4 || hlen > 64 * 1024) {
        r_err(r, err, 12, "bad header size", NULL);
        goto fail;
    }
    uint8_t *hb = malloc(hlen);
    if (!hb) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    size_t hn = hlen - HDR_FIXED;
    if (r_read(r, hb, hn) != hn) {
        free(hb);
        r_err(r, err, r->off, "truncated header", NULL);
        goto fail;
    }
    size_t pos = 0;
    if (get_str(hb, hn, &pos, r->h.target, sizeof r->h.target) ||
        get_str(hb, hn, &pos, r->h.cpu, sizeof r->h.cpu) ||
        get_str(hb, hn, &pos, r->h.elf_hash, sizeof r->h.elf_hash) ||
        get_str(hb, hn, &pos, r->h.source, sizeof r->h.source)) {
        free(hb);
        r_err(r, err, HDR_FIXED + pos, "header fields overrun the header",
              NULL);
        goto fail;
    }
    free(hb);
    r->data_off = r->off;
    return r;
fail:
    trc_close(r);
    return NULL;
}

trc_reader *trc_open_ex(const char *path, unsigned flags, cp_err *err)
{
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        cp_seterr(err, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        cp_seterr(err, "cannot read '%s': it is a directory, not a trace",
                  path);
        return NULL;
    }
    return open_file(f, path, flags, err);
}

trc_reader *trc_open(const char *path, cp_err *err)
{
    return trc_open_ex(path, 0, err);
}

trc_reader *trc_open_mem(const void *data, size_t size, const char *name,
                         unsigned flags, cp_err *err)
{
    static const char empty[1];
    FILE *f = fmemopen((void *)(size ? data : empty), size ? size : 1, "rb");
    if (!f) {
        cp_seterr(err, "'%s': cannot open in memory", name);
        return NULL;
    }
    if (!size) {
        fclose(f);
        cp_seterr(err, "'%s': byte 0: empty file, not a codeplace trace",
                  name);
        return NULL;
    }
    return open_file(f, name, flags, err);
}

const trc_header *trc_get_header(const trc_reader *r)
{
    return &r->h;
}

const trc_totals *trc_get_totals(const trc_reader *r)
{
    return &r->tot;
}

int trc_truncated(const trc_reader *r)
{
    return r->truncated;
}

uint64_t trc_offset(const trc_reader *r)
{
    return r->off;
}

/* A file that ends early: an error, or (TRC_OPEN_PARTIAL) the end. */
static int cut_short(trc_reader *r, cp_err *err, uint64_t off, const char *why)
{
    if (r->flags & TRC_OPEN_PARTIAL) {
        r->truncated = 1;
        r->done = 1;
        return 0;
    }
    char m[160];
    snprintf(m, sizeof m, "%s (%llu records read; the file was cut short)",
             why, (unsigned long long)r->tot.records);
    return r_err(r, err, off, "truncated trace: ", m);
}

static int get_var(trc_reader *r, uint64_t *v, unsigned maxbytes, cp_err *err)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < maxbytes; i++) {
        if (r->pos >= r->len)
            return r_err(r, err, r->blk_off + HDR_FIXED + r->pos,
                         "corrupt block: record runs past the block", NULL);
        uint8_t b = r->buf[r->pos++];
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return r_err(r, err, r->blk_off + HDR_FIXED + r->pos,
                 "corrupt block: number too long", NULL);
}

static int get_v32(trc_reader *r, uint32_t *v, cp_err *err)
{
    uint64_t x;
    if (get_var(r, &x, 5, err))
        return -1;
    if (x > UINT32_MAX)
        return r_err(r, err, r->blk_off + HDR_FIXED + r->pos,
                     "corrupt block: number out of range", NULL);
    *v = (uint32_t)x;
    return 0;
}

static int check_trailer(trc_reader *r, const uint8_t *p, size_t n,
                         cp_err *err)
{
    r->buf = (uint8_t *)p; /* get_var reads from buf */
    r->len = n;
    r->pos = 0;
    uint64_t v[6];
    for (int i = 0; i < 6; i++)
        if (get_var(r, &v[i], 10, err))
            return -1;
    trc_totals t = {.records = v[0], .fetch_runs = v[1], .insns = v[2],
                    .fetch_bytes = v[3], .dreads = v[4], .marks = v[5],
                    .contexts = r->tot.contexts, .end = ""};
    if (get_str(p, n, &r->pos, t.end, sizeof t.end))
        return r_err(r, err, r->blk_off, "corrupt trailer", NULL);
    if (t.records != r->tot.records || t.fetch_runs != r->tot.fetch_runs ||
        t.insns != r->tot.insns || t.fetch_bytes != r->tot.fetch_bytes ||
        t.dreads != r->tot.dreads || t.marks != r->tot.marks)
        return r_err(r, err, r->blk_off,
                     "trailer totals disagree with the records", NULL);
    r->tot = t;
    return 0;
}

/* Loads the next block; 1 loaded, 0 end, -1 error. */
static int next_block(trc_reader *r, cp_err *err)
{
    uint8_t h[HDR_FIXED];
    uint64_t at = r->off;
    size_t got = r_read(r, h, HDR_FIXED);
    if (got == 0)
        return cut_short(r, err, at, "no trailer");
    if (got < HDR_FIXED)
        return cut_short(r, err, at, "partial block header");
    uint32_t magic = get32(h), len = get32(h + 4), nrec = get32(h + 8);
    if (magic != BLK_MAGIC && magic != END_MAGIC)
        return r_err(r, err, at, "corrupt trace: no block here", NULL);
    if (len > BLK_MAX || (magic == BLK_MAGIC && (!nrec || nrec > len)) ||
        (magic == END_MAGIC && (nrec || len > 256)))
        return r_err(r, err, at + 4, "corrupt block header", NULL);
    if (len > r->cap) {
        uint8_t *nb = realloc(r->buf, len);
        if (!nb)
            return cp_seterr(err, "out of memory");
        r->buf = nb;
        r->cap = len;
    }
    if (r_read(r, r->buf, len) != len)
        return cut_short(r, err, at, "partial last block");
    if (fnv32(r->buf, len) != get32(h + 12))
        return r_err(r, err, at, "corrupt block: checksum mismatch", NULL);
    r->blk_off = at;
    if (magic == END_MAGIC) {
        uint8_t tb[256];
        memcpy(tb, r->buf, len);
        uint8_t *keep = r->buf;
        size_t kcap = r->cap;
        int rc = check_trailer(r, tb, len, err);
        r->buf = keep;
        r->cap = kcap;
        r->len = r->pos = 0;
        if (rc)
            return -1;
        uint8_t extra;
        if (fread(&extra, 1, 1, r->f) == 1)
            return r_err(r, err, r->off, "data after the trailer", NULL);
        r->done = 1;
        return 0;
    }
    r->len = len;
    r->pos = 0;
    r->left = nrec;
    memset(&r->c, 0, sizeof r->c);
    return 1;
}

static int decode(trc_reader *r, trc_rec *rec, cp_err *err)
{
    uint64_t at = r->blk_off + HDR_FIXED + r->pos;
    uint8_t t = r->buf[r->pos++];
    uint32_t v;
    memset(rec, 0, sizeof *rec);
    switch (t & 3) {
    case K_FETCH:
        rec->kind = TRC_FETCH;
        rec->flags = t >> 2 & 1;
        rec->ninsn = t >> 3;
        if (!rec->ninsn && get_v32(r, &rec->ninsn, err))
            return -1;
        if (get_v32(r, &v, err))
            return -1;
        rec->addr = r->c.fetch_end + unzz(v);
        if (get_v32(r, &v, err))
            return -1;
        rec->len = 2 * rec->ninsn + 2 * v;
        r->c.fetch_end = rec->addr + rec->len;
        return 0;
    case K_DREAD:
        rec->kind = TRC_DREAD;
        rec->flags = t >> 2 & 1;
        if (t >> 5)
            return r_err(r, err, at, "corrupt record: reserved bits set", NULL);
        switch (t >> 3 & 3) {
        case 0: rec->len = 1; break;
        case 1: rec->len = 2; break;
        case 2: rec->len = 4; break;
        default:
            if (get_v32(r, &rec->len, err))
                return -1;
        }
        if (get_v32(r, &v, err))
            return -1;
        rec->addr = r->c.dread + unzz(v);
        r->c.dread = rec->addr;
        return 0;
    case K_MARK:
        rec->kind = TRC_MARK;
        if (t >> 2)
            return r_err(r, err, at, "corrupt record: reserved bits set", NULL);
        if (get_v32(r, &v, err))
            return -1;
        rec->addr = r->c.next_mark + unzz(v);
        r->c.next_mark = rec->addr + 1;
        return 0;
    default:
        if (t >> 2 || r->pos >= r->len)
            return r_err(r, err, at, "corrupt record", NULL);
        rec->kind = (trc_kind)r->buf[r->pos++];
        if (rec->kind < TRC_FETCH || rec->kind > TRC_CTX ||
            (rec->kind == TRC_CTX && r->h.version < 2))
            return r_err(r, err, at, "corrupt record: unknown kind", NULL);
        if (get_v32(r, &v, err))
            return -1;
        rec->flags = v;
        if (get_v32(r, &rec->addr, err) || get_v32(r, &rec->len, err) ||
            get_v32(r, &rec->ninsn, err))
            return -1;
        if (rec->kind == TRC_FETCH)
            r->c.fetch_end = rec->addr + rec->len;
        else if (rec->kind == TRC_DREAD)
            r->c.dread = rec->addr;
        else if (rec->kind == TRC_MARK)
            r->c.next_mark = rec->addr + 1;
        return 0;
    }
}

int trc_next(trc_reader *r, trc_rec *rec, cp_err *err)
{
again:
    while (!r->left) {
        if (r->done)
            return 0;
        if (r->len && r->pos != r->len)
            return r_err(r, err, r->blk_off + HDR_FIXED + r->pos,
                         "corrupt block: bytes left after its records", NULL);
        int rc = next_block(r, err);
        if (rc <= 0)
            return rc;
    }
    if (r->pos >= r->len)
        return r_err(r, err, r->blk_off,
                     "corrupt block: fewer records than its header says",
                     NULL);
    if (decode(r, rec, err))
        return -1;
    r->left--;
    add_totals(&r->tot, rec);
    if (rec->kind == TRC_CTX && !(r->flags & TRC_OPEN_CONTEXT))
        goto again;
    return 1;
}

int trc_rewind(trc_reader *r, cp_err *err)
{
    if (fseek(r->f, (long)r->data_off, SEEK_SET))
        return cp_seterr(err, "'%s': cannot seek: %s", r->name,
                         strerror(errno));
    r->off = r->data_off;
    r->len = r->pos = 0;
    r->left = 0;
    r->done = r->truncated = 0;
    memset(&r->tot, 0, sizeof r->tot);
    r->nheld = r->hpos = r->hflush = 0;
    r->hdone = 0;
    r->dropped_iters = r->dropped_recs = 0;
    return 0;
}

static int hold(trc_reader *r, const trc_rec *rec, cp_err *err)
{
    if (cp_grow((void **)&r->held, &r->capheld, r->nheld + 1,
                sizeof *r->held) < 0)
        return cp_seterr(err, "'%s': out of memory (%zu records in one "
                         "iteration)", r->name, r->nheld);
    r->held[r->nheld++] = *rec;
    return 0;
}

int trc_next_complete(trc_reader *r, trc_rec *rec, cp_err *err)
{
    for (;;) {
        if (r->hpos < r->hflush) {
            *rec = r->held[r->hpos++];
            return 1;
        }
        if (r->hflush) {
            memmove(r->held, r->held + r->hflush,
                    (r->nheld - r->hflush) * sizeof *r->held);
            r->nheld -= r->hflush;
            r->hpos = r->hflush = 0;
        }
        if (r->hdone)
            return 0;
        trc_rec x;
        int rc = trc_next(r, &x, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            r->hdone = 1;
            if (r->nheld && !r->truncated && !strcmp(r->tot.end, "done")) {
                r->hflush = r->nheld;
                continue;
            }
            /* A closing mark with nothing after it drops nothing. */
            if (r->nheld > 1) {
                r->dropped_iters = 1;
                r->dropped_recs = r->nheld;
            }
            r->nheld = 0;
            return 0;
        }
        if (x.kind == TRC_MARK) {
            r->hflush = r->nheld; /* the iteration before it is complete */
            if (hold(r, &x, err) < 0)
                return -1;
            continue;
        }
        if (!r->nheld) { /* before the first mark */
            *rec = x;
            return 1;
        }
        if (hold(r, &x, err) < 0)
            return -1;
    }
}

uint64_t trc_dropped(const trc_reader *r, uint64_t *records)
{
    if (records)
        *records = r->dropped_recs;
    return r->dropped_iters;
}

void trc_close(trc_reader *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    free(r->buf);
    free(r->held);
    free(r->name);
    free(r);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

trc_spread trc_spread_of(const uint64_t *v, size_t n)
{
    trc_spread s = {0, 0, 0};
    if (!n)
        return s;
    uint64_t *c = malloc(n * sizeof *c);
    if (!c)
        return s;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_u64);
    s.median = c[n / 2];
    s.min = c[0];
    s.max = c[n - 1];
    free(c);
    return s;
}
