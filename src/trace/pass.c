/* One pass over a trace file (trace.h, trc_read_pass): what sim, report,
 * plan and samples share when they read a recording. */
#include "trace/trace.h"

#include <stdio.h>
#include <string.h>

int trc_read_pass(const char *path, const trc_pass_fn *fn, trc_pass *out,
                  cp_err *err)
{
    trc_pass dummy;
    if (!out)
        out = &dummy;
    memset(out, 0, sizeof *out);
    trc_reader *rd = trc_open_ex(path, TRC_OPEN_PARTIAL, err);
    if (!rd)
        return -1;
    out->header = *trc_get_header(rd);
    int rc = 1;
    if (fn->on_header && fn->on_header(fn->arg, &out->header, err) < 0)
        rc = -1;
    trc_rec r;
    while (rc == 1 && (rc = trc_next_complete(rd, &r, err)) == 1) {
        int v = fn->on_rec ? fn->on_rec(fn->arg, &r, err) : 0;
        if (v < 0) {
            rc = -1;
            break;
        }
        out->records++;
        if (v > 0) {
            out->stopped = 1;
            break;
        }
    }
    if (rc == 0) {
        out->dropped = trc_dropped(rd, &out->dropped_recs);
        out->cut = trc_truncated(rd);
        if (!out->cut)
            snprintf(out->end, sizeof out->end, "%s", trc_get_totals(rd)->end);
    }
    trc_close(rd);
    return rc < 0 ? -1 : 0;
}
