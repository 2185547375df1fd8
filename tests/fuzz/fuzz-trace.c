/* libFuzzer harness: the trace file reader (strict and partial modes), and
 * the writer on whatever the reader accepted: what it writes must read back
 * as the same records. Input: a trace file. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXREC 4096

static trc_rec recs[MAXREC];

static size_t read_all(const uint8_t *data, size_t size, unsigned flags,
                       trc_header *h)
{
    cp_err err;
    trc_reader *r = trc_open_mem(data, size, "fuzz.trace", flags, &err);
    if (!r)
        return 0;
    if (h)
        *h = *trc_get_header(r);
    size_t n = 0;
    trc_rec rec;
    int rc;
    while ((rc = trc_next(r, &rec, &err)) == 1)
        if (n < MAXREC)
            recs[n++] = rec;
    if (rc == 0) {
        (void)trc_get_totals(r);
        (void)trc_truncated(r);
        if (!trc_rewind(r, &err))
            while (trc_next(r, &rec, &err) == 1)
                ;
    }
    trc_close(r);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_all(data, size, 0, NULL);
    trc_header h;
    memset(&h, 0, sizeof h);
    size_t n = read_all(data, size, TRC_OPEN_PARTIAL, &h);
    if (!n)
        return 0;
    /* Write what was read and read it back. */
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz-trace-%d.trace", (int)getpid());
    cp_err err;
    trc_writer *w = trc_create(path, &h, &err);
    if (!w)
        return 0;
    static trc_rec orig[MAXREC];
    memcpy(orig, recs, n * sizeof *recs);
    for (size_t i = 0; i < n; i++)
        if (trc_write(w, &orig[i], &err))
            abort();
    if (trc_finish(w, &err))
        abort();
    trc_reader *r = trc_open(path, &err);
    if (!r)
        abort();
    trc_rec rec;
    size_t i = 0;
    int rc;
    while ((rc = trc_next(r, &rec, &err)) == 1) {
        if (i >= n || rec.kind != orig[i].kind || rec.addr != orig[i].addr ||
            rec.len != orig[i].len || rec.ninsn != orig[i].ninsn ||
            rec.flags != orig[i].flags)
            abort();
        i++;
    }
    if (rc != 0 || i != n)
        abort();
    trc_close(r);
    unlink(path);
    return 0;
}
