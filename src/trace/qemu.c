/* trc: QEMU execution log import (see qemu.h). */
#include "trace/qemu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "Trace 0: 0x7f.. [00000000/00000130/00000000/ff200000] sym": the second
 * field in brackets is the PC. Returns 0 with *pc, 1 for other lines. */
static int parse_line(const char *s, uint32_t *pc)
{
    if (strncmp(s, "Trace ", 6))
        return 1;
    const char *b = strchr(s, '[');
    if (!b)
        return -1;
    const char *sl = strchr(b, '/');
    if (!sl)
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(sl + 1, &end, 16);
    if (errno || end == sl + 1 || (*end != '/' && *end != ']') ||
        v > UINT32_MAX)
        return -1;
    *pc = (uint32_t)v;
    return 0;
}

typedef struct qrun {
    trc_rec r;
    int live;
} qrun;

static int flush(qrun *q, trc_writer *w, trc_qemu_stats *st, cp_err *err)
{
    if (!q->live)
        return 0;
    q->live = 0;
    st->fetch_runs++;
    return trc_write(w, &q->r, err);
}

static int push_iter(trc_qemu_stats *st, size_t *cap, uint64_t v)
{
    if (cp_grow((void **)&st->iter_insns, cap, st->iterations + 1,
                sizeof *st->iter_insns))
        return -1;
    st->iter_insns[st->iterations++] = v;
    return 0;
}

int trc_from_qemu(const char *log_path, const img *im, const tgt *t,
                  uint32_t mark, uint64_t n, trc_writer *w,
                  trc_qemu_stats *st, cp_err *err)
{
    memset(st, 0, sizeof *st);
    FILE *f = fopen(log_path, "r");
    if (!f)
        return cp_seterr(err, "cannot open '%s': %s", log_path,
                         strerror(errno));
    char line[1024];
    uint64_t lineno = 0, marks = 0, cur = 0;
    size_t cap = 0;
    int in_iter = 0, rc = 0;
    qrun q = {{0}, 0};
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t l = strlen(line);
        if (l == sizeof line - 1 && line[l - 1] != '\n') {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
        }
        uint32_t pc;
        int pr = parse_line(line, &pc);
        if (pr == 1)
            continue;
        if (pr < 0) {
            rc = cp_seterr(err, "'%s': line %llu: not a QEMU exec trace line",
                           log_path, (unsigned long long)lineno);
            break;
        }
        st->lines++;
        pc &= ~1u;
        if (mark && pc == mark) {
            if (in_iter && push_iter(st, &cap, cur)) {
                rc = cp_seterr(err, "out of memory");
                break;
            }
            if (n && marks >= n) {
                st->all_done = 1;
                in_iter = 0;
                break;
            }
            if (flush(&q, w, st, err)) {
                rc = -1;
                break;
            }
            trc_rec m = {TRC_MARK, (uint32_t)marks++, 0, 0, 0};
            if (trc_write(w, &m, err)) {
                rc = -1;
                break;
            }
            in_iter = 1;
            cur = 0;
        }
        uint16_t hw;
        if (img_read(im, pc, &hw, 2)) {
            rc = cp_seterr(err, "'%s': line %llu: PC 0x%08x is outside the "
                           "code of '%s'", log_path,
                           (unsigned long long)lineno, pc, img_path(im));
            break;
        }
        uint32_t len = (hw >> 11) >= 0x1d ? 4 : 2;
        unsigned fl = t && !tgt_is_cached(t, pc) ? TRC_F_UNCACHED : 0;
        if (q.live && q.r.addr + q.r.len == pc && q.r.flags == fl &&
            q.r.len < (1u << 20)) {
            q.r.len += len;
            q.r.ninsn++;
        } else {
            if (flush(&q, w, st, err)) {
                rc = -1;
                break;
            }
            q.r = (trc_rec){TRC_FETCH, pc, len, 1, fl};
            q.live = 1;
        }
        st->insns++;
        if (in_iter)
            cur++;
        else if (!marks)
            st->pre_insns++;
    }
    if (!rc && ferror(f))
        rc = cp_seterr(err, "'%s': read error", log_path);
    if (!rc)
        rc = flush(&q, w, st, err);
    fclose(f);
    if (!rc && !st->lines)
        rc = cp_seterr(err, "'%s': no \"Trace\" lines (record with "
                       "-d exec,nochain -singlestep)", log_path);
    return rc;
}
