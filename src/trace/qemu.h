/* trc: import of QEMU's execution log. `qemu-system-arm -d exec,nochain
 * -singlestep` (QEMU 7.2; `-accel tcg,one-insn-per-tb=on` on 8.1 and later)
 * logs one "Trace" line per instruction about to execute, interrupts and
 * all. A Trace line followed by "Stopped execution of TB chain before"
 * the same block did not run; one followed by "cpu_io_recompile: rewound
 * execution of TB to" it runs again (its next Trace line): both are
 * dropped, so only executed instructions count and mark.
 *
 * The import refuses (an error naming the line) a log it cannot count
 * exactly:
 *  - a block translated for more than one instruction (the fourth field
 *    in brackets, QEMU's cflags, holds the block's instruction limit in
 *    its low 9 bits, CF_COUNT_MASK; 0 is "as many as fit"): its one line
 *    stands for several instructions the log does not name;
 *  - an instruction followed by one it cannot lead to: not the next
 *    instruction, not the target of its branch, not anywhere after an
 *    indirect branch or return, and not an exception handler of the vector
 *    table (an exception can be taken after any instruction). Lines are
 *    missing: chained blocks QEMU did not log, a -dfilter, a cut or
 *    spliced log.
 * Instruction lengths come from the image's code; marks from the PC
 * reaching a marker. The log holds no data accesses, so the trace has no
 * TRC_DREAD records. */
#ifndef CP_TRACE_QEMU_H
#define CP_TRACE_QEMU_H

#include <stdint.h>
#include <stdio.h>

#include "image/image.h"
#include "target/target.h"
#include "trace/trace.h"
#include "util/util.h"

typedef struct trc_qemu_stats {
    uint64_t lines;       /* "Trace" lines read */
    uint64_t stopped;     /* of them, dropped: "Stopped execution of TB
                             chain before" their block (it did not run) */
    uint64_t rewound;     /* of them, dropped: "cpu_io_recompile: rewound
                             execution of TB to" their block (it ran again) */
    uint64_t entries;     /* exception entries: an instruction followed by
                             a handler's first one out of its flow */
    uint64_t insns;       /* instructions written */
    uint64_t pre_insns;   /* before the first mark */
    uint64_t iterations;  /* complete iterations */
    uint64_t *iter_insns; /* per complete iteration (free with free()) */
    uint64_t fetch_runs;
    int all_done;         /* stopped at mark n (not at the end of the log) */
} trc_qemu_stats;

typedef struct trc_qemu_in {
    const img *im;           /* the image QEMU ran */
    const tgt *t;            /* may be NULL: decides which fetches are
                                uncached */
    uint32_t mark;           /* 0: no marks */
    uint64_t n;              /* stop at mark n (0: no limit) */
    const uint32_t *handlers; /* exception handler entries (even addresses)
                                 and the reset handler */
    size_t nhandlers;
} trc_qemu_in;

/* Reads the log at log_path (or f, named log_path in errors). Errors name
 * the log file and line. */
int trc_from_qemu(const char *log_path, const trc_qemu_in *in, trc_writer *w,
                  trc_qemu_stats *st, cp_err *err);
int trc_from_qemu_file(FILE *f, const char *log_path, const trc_qemu_in *in,
                       trc_writer *w, trc_qemu_stats *st, cp_err *err);

/* The handlers of the vector table at vt in im: entries 1.. (reset, then
 * exceptions and interrupts, up to 16 + 496) whose value is the Thumb
 * start of a function of the image. Returns how many were put in h. */
size_t trc_qemu_handlers(const img *im, uint32_t vt, uint32_t *h, size_t cap);

#endif
