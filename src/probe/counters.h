/* probe_ctr: the XIP cache's hit and access counters, read through a
 * probe over a window of time (RP2040 XIP_CTRL at 0x14000000, RP2350 at
 * 0x400c8000; src/target/target.c cites the datasheet sections). */
#ifndef CP_PROBE_COUNTERS_H
#define CP_PROBE_COUNTERS_H

#include <stdint.h>

#include "probe/probe.h"

typedef enum probe_flush_kind {
    PROBE_FLUSH_NONE,   /* no flush */
    PROBE_FLUSH_REG,    /* write 1 to base + flush (RP2040) */
    PROBE_FLUSH_RP2350, /* invalidate by set/way in the maintenance alias */
} probe_flush_kind;

typedef struct probe_ctr_regs {
    uint32_t base, flush, hit, acc; /* flush, hit, acc: offsets */
    probe_flush_kind flush_kind;
} probe_ctr_regs;

typedef struct probe_ctr_result {
    uint32_t hits, accesses, misses;
    int saturated;   /* a counter read 0xFFFFFFFF: the true count is more */
    double seconds;  /* the window's length */
} probe_ctr_result;

/* Flushes the cache and zeroes the counters, calls wait() (which lets the
 * window pass and reports its length in *secs), then reads the counters.
 * An all-stop GDB stub is halted for the flush and the reads only. */
int probe_ctr_window(probe *p, const probe_ctr_regs *r,
                     int (*wait)(void *arg, double *secs, cp_err *err),
                     void *arg, probe_ctr_result *res, cp_err *err);

#endif
