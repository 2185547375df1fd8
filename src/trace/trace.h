/* trc: the trace file. A trace is the ordered stream of what the cache sees
 * while firmware runs: runs of sequential instruction fetches, data reads
 * from the flash window, and iteration marks. The file is binary and
 * streaming (see docs/formats/trace.md); the reader iterates without
 * loading the file. */
#ifndef CP_TRACE_H
#define CP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef enum trc_kind {
    TRC_FETCH = 1, /* instruction bytes [addr, addr + len) fetched in order */
    TRC_DREAD = 2, /* a data read of len bytes at addr (flash window only) */
    TRC_MARK = 3,  /* the start of iteration number addr (0, 1, ...) */
    TRC_CTX = 4,   /* version 2: the records that follow ran in exception
                      context addr (TRC_CTX_THREAD, or the exception
                      number); only readers opened with TRC_OPEN_CONTEXT
                      see these records */
} trc_kind;

/* Exception contexts (the ARMv7-M / ARMv6-M exception numbers, ARMv7-M
 * Architecture Reference Manual B1.5.2 "Exception number definition"). */
enum {
    TRC_CTX_THREAD = 0,  /* thread mode: no exception active */
    TRC_CTX_NMI = 2,
    TRC_CTX_HARDFAULT = 3,
    TRC_CTX_SVCALL = 11,
    TRC_CTX_PENDSV = 14,
    TRC_CTX_SYSTICK = 15,
    TRC_CTX_IRQ0 = 16,   /* external interrupt k is 16 + k */
};

enum trc_flags {
    TRC_F_UNCACHED = 1 << 0, /* from memory the cache does not see (SRAM,
                                ITCM, a non-allocating alias) */
    TRC_F_NOALLOC = 1 << 1,  /* through a flash alias that looks the cache
                                up but never fills it (RP2040 0x11000000) */
};

typedef struct trc_rec {
    trc_kind kind;
    uint32_t addr;
    uint32_t len;   /* FETCH: bytes in the run; DREAD: access bytes; MARK: 0 */
    uint32_t ninsn; /* FETCH: instructions in the run; otherwise 0 */
    unsigned flags; /* TRC_F_* */
} trc_rec;

typedef struct trc_header {
    unsigned version;
    char target[32];     /* target preset name, "" if none */
    char cpu[32];        /* "cortex-m0plus", ... */
    char elf_hash[80];   /* img_hash() of the traced image */
    char source[32];     /* "unicorn", "qemu" */
} trc_header;

typedef struct trc_reader trc_reader;
typedef struct trc_writer trc_writer;

trc_reader *trc_open(const char *path, cp_err *err);
const trc_header *trc_get_header(const trc_reader *r);
/* 1: a record in *rec; 0: end of trace; -1: error (err names the file and
 * the byte offset: truncated or corrupt). */
int trc_next(trc_reader *r, trc_rec *rec, cp_err *err);
/* Back to the first record. */
int trc_rewind(trc_reader *r, cp_err *err);
void trc_close(trc_reader *r);

trc_writer *trc_create(const char *path, const trc_header *h, cp_err *err);
int trc_write(trc_writer *w, const trc_rec *rec, cp_err *err);
/* Flushes and closes; the file is valid after this (and, for a run that is
 * cut short, readable up to the last flushed block even without it). */
int trc_finish(trc_writer *w, cp_err *err);

/* Additions (docs/formats/trace.md). */

/* The newest version this code reads and writes. trc_create writes the
 * header's version (1 or 2); version 1 files cannot hold TRC_CTX. */
#define TRC_VERSION 2
#define TRC_VERSION_1 1

/* Totals of a trace: the trailer's, or counted so far. */
typedef struct trc_totals {
    uint64_t records;
    uint64_t fetch_runs;  /* TRC_FETCH records */
    uint64_t insns;       /* sum of ninsn */
    uint64_t fetch_bytes; /* sum of FETCH len */
    uint64_t dreads;      /* TRC_DREAD records */
    uint64_t marks;       /* TRC_MARK records */
    uint64_t contexts;    /* TRC_CTX records (counted; not in the
                             trailer, which counts them in records) */
    char end[32];         /* why the recording ended: "done",
                             "instruction limit", "time limit",
                             "interrupted", "fault", "stopped", "" */
} trc_totals;

enum trc_open_flags {
    /* A file cut short (no trailer, or a partial last block) ends with 0
     * after its last complete block instead of an error; trc_truncated()
     * then says so. */
    TRC_OPEN_PARTIAL = 1 << 0,
    /* trc_next also returns TRC_CTX records (hidden otherwise: they change
     * no fetch, and readers that do not split by context skip them). */
    TRC_OPEN_CONTEXT = 1 << 1,
};

trc_reader *trc_open_ex(const char *path, unsigned flags, cp_err *err);
/* Reads a trace held in memory (data must outlive the reader); name is used
 * in error messages. */
trc_reader *trc_open_mem(const void *data, size_t size, const char *name,
                         unsigned flags, cp_err *err);
/* After trc_next returned 0: the trailer's totals (which the reader has
 * checked against the records); before: the records read so far. */
const trc_totals *trc_get_totals(const trc_reader *r);
/* 1 when the end was reached without a trailer (TRC_OPEN_PARTIAL only). */
int trc_truncated(const trc_reader *r);
/* Byte offset of the next unread block. */
uint64_t trc_offset(const trc_reader *r);

/* The reason stored in the trailer (default "done"). */
void trc_set_end(trc_writer *w, const char *reason);
/* Writes the records buffered so far as a complete block. */
int trc_flush(trc_writer *w, cp_err *err);
const trc_totals *trc_writer_totals(const trc_writer *w);
/* Bytes written to the file so far (complete blocks). */
uint64_t trc_writer_bytes(const trc_writer *w);
/* Closes without a trailer (the file keeps its complete blocks). */
void trc_abandon(trc_writer *w);

/* Like trc_next, but complete iterations only: the records of an
 * iteration (from its mark on) come once the next mark shows it finished,
 * or the trailer says the recording ended "done". The unfinished last
 * iteration of an interrupted, limited or cut recording is dropped. Do not
 * mix with trc_next on one reader. */
int trc_next_complete(trc_reader *r, trc_rec *rec, cp_err *err);
/* After trc_next_complete returned 0: iterations dropped (0 or 1), and in
 * *records (may be NULL) how many records they held. */
uint64_t trc_dropped(const trc_reader *r, uint64_t *records);

/* One pass over a trace file as every command that simulates reads it:
 * complete iterations only (trc_next_complete), a recording cut short up
 * to its last complete block (TRC_OPEN_PARTIAL). on_header (may be NULL)
 * sees the header first; on_rec each record in order: 0 goes on, 1 stops
 * there (not an error), -1 stops with its error in err. */
typedef struct trc_pass_fn {
    int (*on_header)(void *arg, const trc_header *h, cp_err *err);
    int (*on_rec)(void *arg, const trc_rec *r, cp_err *err);
    void *arg;
} trc_pass_fn;

/* What the pass saw. The end figures (cut, dropped, end) are those of a
 * pass that read to the end (not stopped by on_rec). */
typedef struct trc_pass {
    trc_header header;
    uint64_t records;      /* records handed to on_rec */
    int stopped;           /* on_rec stopped it */
    int cut;               /* no trailer: the file was cut short */
    uint64_t dropped;      /* unfinished iterations left out (0 or 1) */
    uint64_t dropped_recs; /* ... and their records */
    char end[32];          /* how the recording ended (trailer), or "" */
} trc_pass;

/* 0, or -1 with err (the file, or what a callback said). out may be NULL. */
int trc_read_pass(const char *path, const trc_pass_fn *fn, trc_pass *out,
                  cp_err *err);

/* The spread of per-iteration counts: the median (of an even count, the
 * upper middle one), the smallest and the largest; all 0 when n is 0 or
 * memory runs out. */
typedef struct trc_spread {
    uint64_t median, min, max;
} trc_spread;
trc_spread trc_spread_of(const uint64_t *v, size_t n);

#endif
