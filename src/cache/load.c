/* Loading a trace file into a stream in one pass. Kept apart from stream.c
 * so that users of in-memory streams do not pull in the trace reader. */
#include "cache/cache.h"

#include <stdio.h>
#include <string.h>

csim_stream *csim_stream_load_ex(const char *trace_path, const img *im,
                                 const tgt *t, const csim_load_opts *o,
                                 csim_load_info *info, cp_err *err)
{
    csim_load_info dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    trc_reader *rd = trc_open_ex(trace_path, TRC_OPEN_PARTIAL, err);
    if (!rd)
        return NULL;
    info->header = *trc_get_header(rd);
    csim_stream *s = csim_stream_new(im, t, err);
    if (!s) {
        trc_close(rd);
        return NULL;
    }
    if (o && o->dreads >= 0)
        csim_stream_set_dreads(s, o->dreads);
    trc_rec r;
    int rc;
    while ((rc = trc_next_complete(rd, &r, err)) == 1) {
        if ((o && o->on_rec && o->on_rec(o->arg, &r, err) < 0) ||
            csim_stream_add(s, &r, err) < 0) {
            rc = -1;
            break;
        }
        info->records++;
    }
    if (rc == 0) {
        info->dropped = trc_dropped(rd, &info->dropped_recs);
        info->cut = trc_truncated(rd);
        if (!info->cut)
            snprintf(info->end, sizeof info->end, "%s",
                     trc_get_totals(rd)->end);
        csim_stream_set_dropped(s, info->dropped, info->cut);
    }
    trc_close(rd);
    if (rc < 0 || csim_stream_finish(s, err) < 0 ||
        csim_stream_check_complete(s, trace_path, err) < 0) {
        csim_stream_free(s);
        return NULL;
    }
    return s;
}

csim_stream *csim_stream_load(const char *trace_path, const img *im,
                              const tgt *t, cp_err *err)
{
    return csim_stream_load_ex(trace_path, im, t, NULL, NULL, err);
}
