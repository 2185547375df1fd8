/* trc: the trace file. A trace is the ordered stream of what the cache sees
 * while firmware runs: runs of sequential instruction fetches, data reads
 * from the flash window, and iteration marks. The file is binary and
 * streaming (see docs/formats/trace.md); the reader iterates without
 * loading the file. */
#ifndef CP_TRACE_H
#define CP_TRACE_H

#include <stdint.h>

#include "util/util.h"

typedef enum trc_kind {
    TRC_FETCH = 1, /* instruction bytes [addr, addr + len) fetched in order */
    TRC_DREAD = 2, /* a data read of len bytes at addr (flash window only) */
    TRC_MARK = 3,  /* the start of iteration number addr (0, 1, ...) */
} trc_kind;

enum trc_flags {
    TRC_F_UNCACHED = 1 << 0, /* from memory the cache does not see (SRAM,
                                ITCM, a non-allocating alias) */
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

#endif
