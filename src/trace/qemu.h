/* trc: import of QEMU's execution log. `qemu-system-arm -d exec,nochain
 * -singlestep` (QEMU 7.2; `-accel tcg,one-insn-per-tb=on` on newer ones)
 * logs one "Trace" line per instruction about to execute, interrupts and
 * all. A Trace line followed by "Stopped execution of TB chain before"
 * the same block did not run; one followed by "cpu_io_recompile: rewound
 * execution of TB to" it runs again (its next Trace line): both are
 * dropped, so only executed instructions count and mark. This
 * turns such a log into a trace: instruction lengths come from the image's
 * code; marks from the PC reaching a marker. The log holds no data
 * accesses, so the trace has no TRC_DREAD records. */
#ifndef CP_TRACE_QEMU_H
#define CP_TRACE_QEMU_H

#include <stdint.h>

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
    uint64_t insns;       /* instructions written */
    uint64_t pre_insns;   /* before the first mark */
    uint64_t iterations;  /* complete iterations */
    uint64_t *iter_insns; /* per complete iteration (free with free()) */
    uint64_t fetch_runs;
    int all_done;         /* stopped at mark n (not at the end of the log) */
} trc_qemu_stats;

/* Reads log_path; t (may be NULL) decides which fetches are uncached; mark
 * 0 for none; n 0 for no limit on iterations. Errors name the log file and
 * line. */
int trc_from_qemu(const char *log_path, const img *im, const tgt *t,
                  uint32_t mark, uint64_t n, trc_writer *w,
                  trc_qemu_stats *st, cp_err *err);

#endif
