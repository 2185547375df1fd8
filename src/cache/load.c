/* Loading a trace file into a stream in one pass (trc_read_pass). Kept
 * apart from stream.c so that users of in-memory streams do not pull in
 * the trace reader. */
#include "cache/cache.h"

#include <stdio.h>
#include <string.h>

typedef struct load_ctx {
    const csim_load_opts *o;
    csim_stream *s;
} load_ctx;

static int load_rec(void *arg, const trc_rec *r, cp_err *err)
{
    load_ctx *c = arg;
    if (c->o && c->o->on_rec && c->o->on_rec(c->o->arg, r, err) < 0)
        return -1;
    return csim_stream_add(c->s, r, err) < 0 ? -1 : 0;
}

csim_stream *csim_stream_load_ex(const char *trace_path, const img *im,
                                 const tgt *t, const csim_load_opts *o,
                                 csim_load_info *info, cp_err *err)
{
    csim_load_info dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    csim_stream *s = csim_stream_new(im, t, err);
    if (!s)
        return NULL;
    if (o && o->dreads >= 0)
        csim_stream_set_dreads(s, o->dreads);
    load_ctx c = {o, s};
    trc_pass_fn fn = {NULL, load_rec, &c};
    trc_pass p;
    int rc = trc_read_pass(trace_path, &fn, &p, err);
    info->header = p.header;
    info->records = p.records;
    info->cut = p.cut;
    info->dropped = p.dropped;
    info->dropped_recs = p.dropped_recs;
    snprintf(info->end, sizeof info->end, "%s", p.end);
    if (rc == 0)
        csim_stream_set_dropped(s, info->dropped, info->cut);
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
