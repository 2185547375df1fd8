/* Loading a trace file into a stream. Kept apart from stream.c so that
 * users of in-memory streams do not pull in the trace reader. */
#include "cache/cache.h"

csim_stream *csim_stream_load(const char *trace_path, const img *im,
                              const tgt *t, cp_err *err)
{
    trc_reader *rd = trc_open_ex(trace_path, TRC_OPEN_PARTIAL, err);
    if (!rd)
        return NULL;
    csim_stream *s = csim_stream_new(im, t, err);
    if (!s) {
        trc_close(rd);
        return NULL;
    }
    trc_rec r;
    int rc;
    while ((rc = trc_next_complete(rd, &r, err)) == 1)
        if (csim_stream_add(s, &r, err) < 0) {
            rc = -1;
            break;
        }
    if (rc == 0)
        csim_stream_set_dropped(s, trc_dropped(rd, NULL), trc_truncated(rd));
    trc_close(rd);
    if (rc < 0 || csim_stream_finish(s, err) < 0 ||
        csim_stream_check_complete(s, trace_path, err) < 0) {
        csim_stream_free(s);
        return NULL;
    }
    return s;
}
