/* trc: the trace file round trip, truncated and corrupt files. */
#include "trace/trace.h"

#include <unistd.h>

#include "test.h"

static char tmp_path[256];

static const char *tmpfile_path(const char *tag)
{
    snprintf(tmp_path, sizeof tmp_path, "%s/cp-trace-%d-%s.trace",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), tag);
    return tmp_path;
}

static const trc_header hdr = {TRC_VERSION, "rp2040", "cortex-m0plus",
                               "fnv1a64:0123456789abcdef", "unicorn"};

/* A deterministic stream with every kind of record and odd cases. */
static trc_rec gen(uint64_t i)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29;
    trc_rec r = {0};
    switch (x % 16) {
    case 0:
        r.kind = TRC_MARK;
        r.addr = (uint32_t)(i / 16);
        break;
    case 1: case 2: case 3:
        r.kind = TRC_DREAD;
        r.addr = 0x10000000u + (uint32_t)(x >> 20) % 0x8000;
        r.len = (x >> 8) % 3 == 0 ? 4 : (x >> 8) % 3 == 1 ? 2 : 1;
        break;
    case 4:
        r.kind = TRC_FETCH; /* odd one: 0 instructions, odd length, flags */
        r.addr = (uint32_t)(x >> 13);
        r.len = (uint32_t)(x >> 40) % 5;
        r.ninsn = 0;
        r.flags = (unsigned)(x >> 3) & 3;
        break;
    case 5:
        r.kind = TRC_DREAD;
        r.addr = 0xfffffffc;
        r.len = 16;
        r.flags = TRC_F_UNCACHED;
        break;
    default:
        r.kind = TRC_FETCH;
        r.ninsn = 1 + (uint32_t)(x >> 33) % 40;
        r.len = 2 * r.ninsn + 2 * ((uint32_t)(x >> 50) % (r.ninsn + 1));
        r.addr = ((x >> 20) & 1 ? 0x20000000u : 0x10000100u) +
                 2 * (uint32_t)((x >> 24) % 20000);
        r.flags = r.addr >= 0x20000000u ? TRC_F_UNCACHED : 0;
    }
    return r;
}

static int write_file(const char *path, uint64_t n, int finish)
{
    cp_err err;
    trc_writer *w = trc_create(path, &hdr, &err);
    if (!w)
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        trc_rec r = gen(i);
        if (trc_write(w, &r, &err))
            return -1;
    }
    if (!finish) {
        if (trc_flush(w, &err))
            return -1;
        trc_abandon(w);
        return 0;
    }
    trc_set_end(w, "interrupted");
    return trc_finish(w, &err);
}

static int same(const trc_rec *a, const trc_rec *b)
{
    return a->kind == b->kind && a->addr == b->addr && a->len == b->len &&
           a->ninsn == b->ninsn && a->flags == b->flags;
}

static void round_trip(void)
{
    static const uint64_t counts[] = {0, 1, 2, 100, 50000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        const char *p = tmpfile_path("rt");
        T_ASSERT(write_file(p, counts[k], 1) == 0);
        cp_err err;
        trc_reader *r = trc_open(p, &err);
        T_ASSERT(r);
        const trc_header *h = trc_get_header(r);
        T_STREQ(h->target, "rp2040");
        T_STREQ(h->cpu, "cortex-m0plus");
        T_STREQ(h->elf_hash, hdr.elf_hash);
        T_STREQ(h->source, "unicorn");
        T_EQ(h->version, TRC_VERSION);
        for (int pass = 0; pass < 2; pass++) {
            trc_rec rec;
            uint64_t i = 0;
            int rc;
            while ((rc = trc_next(r, &rec, &err)) == 1) {
                trc_rec want = gen(i);
                if (!same(&rec, &want)) {
                    T_FAIL("record %" PRIu64 ": kind %d addr %x len %u", i,
                           rec.kind, rec.addr, rec.len);
                    trc_close(r);
                    return;
                }
                i++;
            }
            if (rc) {
                T_FAIL("%s", err.msg);
                trc_close(r);
                return;
            }
            T_EQ(i, counts[k]);
            T_EQ(trc_get_totals(r)->records, counts[k]);
            T_STREQ(trc_get_totals(r)->end, "interrupted");
            T_EQ(trc_truncated(r), 0);
            T_EQ(trc_next(r, &rec, &err), 0);
            T_ASSERT(trc_rewind(r, &err) == 0);
        }
        trc_close(r);
        unlink(p);
    }
}

static int read_all(const uint8_t *d, size_t n, unsigned flags, uint64_t *recs,
                    cp_err *err)
{
    trc_reader *r = trc_open_mem(d, n, "x.trace", flags, err);
    if (!r)
        return -1;
    trc_rec rec;
    int rc;
    *recs = 0;
    while ((rc = trc_next(r, &rec, err)) == 1)
        (*recs)++;
    if (!rc && trc_truncated(r))
        rc = 2;
    trc_close(r);
    return rc;
}

static uint8_t *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    static uint8_t buf[4 << 20];
    *n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

/* Every cut of a file is either an error naming a byte offset or (partial
 * mode) a clean end after the complete blocks. */
static void truncated(void)
{
    const char *p = tmpfile_path("cut");
    T_ASSERT(write_file(p, 60000, 1) == 0);
    size_t n;
    uint8_t *d = slurp(p, &n);
    T_ASSERT(d && n > 100000);
    uint64_t full;
    cp_err err;
    T_EQ(read_all(d, n, 0, &full, &err), 0);
    T_EQ(full, 60000);
    uint64_t prev = 0;
    for (size_t cut = 0; cut < n; cut += cut < 64 ? 1 : 997) {
        uint64_t recs = 0;
        int rc = read_all(d, cut, 0, &recs, &err);
        if (rc != -1) {
            T_FAIL("cut at %zu read without error", cut);
            return;
        }
        if (!strstr(err.msg, "x.trace") || !strstr(err.msg, "byte ")) {
            T_FAIL("cut at %zu: %s", cut, err.msg);
            return;
        }
        if (cut > 200) {
            rc = read_all(d, cut, TRC_OPEN_PARTIAL, &recs, &err);
            if (rc != 2 || recs < prev) {
                T_FAIL("partial cut at %zu: rc %d recs %" PRIu64, cut, rc, recs);
                return;
            }
            prev = recs;
        }
    }
    T_ASSERT(prev > 50000);
    unlink(p);
}

/* A file whose writer never finished keeps its flushed blocks. */
static void abandoned(void)
{
    const char *p = tmpfile_path("ab");
    T_ASSERT(write_file(p, 1000, 0) == 0);
    cp_err err;
    trc_reader *r = trc_open_ex(p, TRC_OPEN_PARTIAL, &err);
    T_ASSERT(r);
    trc_rec rec;
    uint64_t n = 0;
    while (trc_next(r, &rec, &err) == 1)
        n++;
    T_EQ(n, 1000);
    T_EQ(trc_truncated(r), 1);
    trc_close(r);
    r = trc_open(p, &err);
    T_ASSERT(r);
    n = 0;
    int rc;
    while ((rc = trc_next(r, &rec, &err)) == 1)
        n++;
    T_EQ(rc, -1);
    T_EQ(n, 1000);
    T_ASSERT(strstr(err.msg, "no trailer"));
    trc_close(r);
    unlink(p);
}

/* Flipping any byte gives an error or a different but sane stream, never a
 * crash; flips inside a block payload are caught by the checksum. */
static void corrupt(void)
{
    const char *p = tmpfile_path("bad");
    T_ASSERT(write_file(p, 3000, 1) == 0);
    size_t n;
    uint8_t *d = slurp(p, &n);
    T_ASSERT(d);
    static uint8_t c[1 << 20];
    T_ASSERT(n < sizeof c);
    unsigned errors = 0;
    for (size_t i = 0; i < n; i += 7) {
        memcpy(c, d, n);
        c[i] ^= 0x41;
        uint64_t recs;
        cp_err err;
        int rc = read_all(c, n, 0, &recs, &err);
        if (rc == -1) {
            errors++;
            if (!strstr(err.msg, "x.trace")) {
                T_FAIL("flip at %zu: %s", i, err.msg);
                return;
            }
        } else if (i >= (size_t)(d[12] | d[13] << 8)) { /* past the header */
            T_FAIL("flip at %zu not detected", i);
            return;
        }
    }
    T_ASSERT(errors > 0);
    memcpy(c, "CPTRACE\0\3\0\0\0", 12);
    uint64_t recs;
    cp_err err;
    T_EQ(read_all(c, n, 0, &recs, &err), -1);
    T_ASSERT(strstr(err.msg, "version 3"));
    T_EQ(read_all((const uint8_t *)"hello", 5, 0, &recs, &err), -1);
    T_ASSERT(strstr(err.msg, "not a codeplace trace"));
    T_EQ(read_all(d, 0, 0, &recs, &err), -1);
    unlink(p);
}

/* Typical fetch runs cost a few bytes each. */
static void compact(void)
{
    const char *p = tmpfile_path("sz");
    cp_err err;
    trc_writer *w = trc_create(p, &hdr, &err);
    T_ASSERT(w);
    uint64_t insns = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        trc_rec r = {TRC_FETCH, 0x10000200u + (i % 50) * 24, 12, 6, 0};
        insns += r.ninsn;
        T_ASSERT(trc_write(w, &r, &err) == 0);
    }
    T_ASSERT(trc_finish(w, &err) == 0);
    size_t n;
    T_ASSERT(slurp(p, &n));
    if ((double)n / (double)insns > 0.75)
        T_FAIL("%zu bytes for %" PRIu64 " instructions", n, insns);
    unlink(p);
}

static void bad_kind(void)
{
    const char *p = tmpfile_path("kind");
    cp_err err;
    trc_writer *w = trc_create(p, &hdr, &err);
    T_ASSERT(w);
    trc_rec r = {(trc_kind)9, 0, 0, 0, 0};
    T_EQ(trc_write(w, &r, &err), -1);
    T_ASSERT(strstr(err.msg, "unknown kind"));
    T_ASSERT(trc_finish(w, &err) == 0);
    T_ASSERT(!trc_create("/nonexistent/dir/x.trace", &hdr, &err));
    T_ASSERT(strstr(err.msg, "/nonexistent/dir/x.trace"));
    T_ASSERT(!trc_open("/nonexistent/x.trace", &err));
    unlink(p);
}

/* trc_next_complete: an iteration comes only once it is known finished. */
static void complete_only(void)
{
    static const struct {
        const char *end; /* NULL: abandoned (no trailer) */
        unsigned want_recs, want_dropped;
    } tab[] = {
        {"done", 8, 0},
        {"interrupted", 6, 1},
        {"time limit", 6, 1},
        {NULL, 6, 1},
    };
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++) {
        const char *p = tmpfile_path("complete");
        cp_err err;
        trc_writer *w = trc_create(p, &hdr, &err);
        T_ASSERT(w);
        /* prologue fetch, mark 0, fetch, fetch, mark 1, fetch, mark 2, fetch */
        const trc_rec recs[] = {
            {TRC_FETCH, 0x10000100, 4, 2, 0}, {TRC_MARK, 0, 0, 0, 0},
            {TRC_FETCH, 0x10000200, 8, 4, 0}, {TRC_DREAD, 0x10001000, 4, 0, 0},
            {TRC_MARK, 1, 0, 0, 0},           {TRC_FETCH, 0x10000200, 8, 4, 0},
            {TRC_MARK, 2, 0, 0, 0},           {TRC_FETCH, 0x10000300, 2, 1, 0},
        };
        for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++)
            T_ASSERT(trc_write(w, &recs[i], &err) == 0);
        if (tab[k].end) {
            trc_set_end(w, tab[k].end);
            T_ASSERT(trc_finish(w, &err) == 0);
        } else {
            T_ASSERT(trc_flush(w, &err) == 0);
            trc_abandon(w);
        }
        trc_reader *r = trc_open_ex(p, TRC_OPEN_PARTIAL, &err);
        T_ASSERT(r);
        trc_rec rec;
        unsigned n = 0, marks = 0;
        int rc;
        while ((rc = trc_next_complete(r, &rec, &err)) == 1) {
            T_EQ(rec.kind, recs[n].kind);
            T_EQ(rec.addr, recs[n].addr);
            marks += rec.kind == TRC_MARK;
            n++;
        }
        T_EQ(rc, 0);
        T_EQ(n, tab[k].want_recs);
        T_EQ(marks, tab[k].want_dropped ? 2 : 3);
        uint64_t dr;
        T_EQ(trc_dropped(r, &dr), tab[k].want_dropped);
        T_EQ(dr, tab[k].want_dropped ? 2 : 0);
        trc_close(r);
        unlink(p);
    }
}

/* Version 2: exception contexts, hidden from readers that do not ask. */
static void contexts(void)
{
    const char *p = tmpfile_path("ctx");
    cp_err err;
    trc_header h = hdr;
    h.version = 2;
    trc_writer *w = trc_create(p, &h, &err);
    T_ASSERT(w);
    trc_rec recs[] = {
        {TRC_FETCH, 0x100, 8, 4, 0}, {TRC_CTX, TRC_CTX_SYSTICK, 0, 0, 0},
        {TRC_FETCH, 0x200, 6, 3, 0}, {TRC_CTX, TRC_CTX_THREAD, 0, 0, 0},
        {TRC_FETCH, 0x108, 4, 2, 0},
    };
    for (size_t i = 0; i < 5; i++)
        T_EQ(trc_write(w, &recs[i], &err), 0);
    T_EQ(trc_finish(w, &err), 0);
    trc_reader *r = trc_open(p, &err);
    T_ASSERT(r);
    T_EQ(trc_get_header(r)->version, 2);
    trc_rec x;
    int n = 0;
    while (trc_next(r, &x, &err) == 1) {
        T_EQ(x.kind, TRC_FETCH);
        n++;
    }
    T_EQ(n, 3);
    T_EQ(trc_get_totals(r)->records, 5);
    T_EQ(trc_get_totals(r)->contexts, 2);
    trc_close(r);
    r = trc_open_ex(p, TRC_OPEN_CONTEXT, &err);
    T_ASSERT(r);
    for (size_t i = 0; i < 5; i++) {
        T_EQ(trc_next(r, &x, &err), 1);
        T_EQ(x.kind, recs[i].kind);
        T_EQ(x.addr, recs[i].addr);
    }
    T_EQ(trc_next(r, &x, &err), 0);
    trc_close(r);
    /* A version 1 file cannot hold them. */
    h.version = 1;
    w = trc_create(p, &h, &err);
    T_ASSERT(w);
    T_EQ(trc_write(w, &recs[1], &err), -1);
    T_ASSERT(strstr(err.msg, "version 1"));
    trc_abandon(w);
    unlink(p);
}

static const t_case cases[] = {
    {"round_trip", round_trip}, {"truncated", truncated},
    {"abandoned", abandoned},   {"corrupt", corrupt},
    {"compact", compact},       {"bad_kind", bad_kind},
    {"complete_only", complete_only},
    {"contexts", contexts},
    {NULL, NULL},
};

T_MAIN(cases)
