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

/* The state of an import. */
typedef struct qimp {
    const char *path;
    const img *im;
    const tgt *t;
    uint32_t mark;
    uint64_t n, marks, cur;
    size_t cap;
    int in_iter;
    qrun q;
    trc_writer *w;
    trc_qemu_stats *st;
} qimp;

/* "Stopped execution of TB chain before 0x7f.. [00001234] sym" (the block
 * whose Trace line came last did not run) or "cpu_io_recompile: rewound
 * execution of TB to 00001234" (the block ran only up to an I/O access and
 * runs again): 0 with *pc, 1 for other lines, -1 malformed. */
static int parse_undo(const char *s, uint32_t *pc, int *rewound)
{
    const char *p;
    if (!strncmp(s, "Stopped execution of TB chain before ", 37)) {
        p = strchr(s + 37, '[');
        if (!p)
            return -1;
        p++;
        *rewound = 0;
    } else if (!strncmp(s, "cpu_io_recompile: rewound execution of TB to ",
                        45)) {
        p = s + 45;
        *rewound = 1;
    } else {
        return 1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 16);
    if (errno || end == p || v > UINT32_MAX)
        return -1;
    *pc = (uint32_t)v;
    return 0;
}

/* One executed instruction at pc. 1: mark n reached (stop), 0, -1 error. */
static int take(qimp *x, uint32_t pc, uint64_t lineno, cp_err *err)
{
    trc_qemu_stats *st = x->st;
    pc &= ~1u;
    if (x->mark && pc == x->mark) {
        if (x->in_iter && push_iter(st, &x->cap, x->cur))
            return cp_seterr(err, "out of memory");
        if (x->n && x->marks >= x->n) {
            st->all_done = 1;
            x->in_iter = 0;
            return 1;
        }
        if (flush(&x->q, x->w, st, err))
            return -1;
        trc_rec m = {TRC_MARK, (uint32_t)x->marks++, 0, 0, 0};
        if (trc_write(x->w, &m, err))
            return -1;
        x->in_iter = 1;
        x->cur = 0;
    }
    uint16_t hw;
    if (img_read(x->im, pc, &hw, 2))
        return cp_seterr(err, "'%s': line %llu: PC 0x%08x is outside the "
                         "code of '%s'", x->path, (unsigned long long)lineno,
                         pc, img_path(x->im));
    uint32_t len = (hw >> 11) >= 0x1d ? 4 : 2;
    unsigned fl = x->t && !tgt_is_cached(x->t, pc) ? TRC_F_UNCACHED : 0;
    qrun *q = &x->q;
    if (q->live && q->r.addr + q->r.len == pc && q->r.flags == fl &&
        q->r.len < (1u << 20)) {
        q->r.len += len;
        q->r.ninsn++;
    } else {
        if (flush(q, x->w, st, err))
            return -1;
        q->r = (trc_rec){TRC_FETCH, pc, len, 1, fl};
        q->live = 1;
    }
    st->insns++;
    if (x->in_iter)
        x->cur++;
    else if (!x->marks)
        st->pre_insns++;
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
    qimp x;
    memset(&x, 0, sizeof x);
    x.path = log_path;
    x.im = im;
    x.t = t;
    x.mark = mark;
    x.n = n;
    x.w = w;
    x.st = st;
    char line[1024];
    uint64_t lineno = 0, pend_line = 0;
    uint32_t pend_pc = 0;
    int pending = 0, rc = 0;
    /* A Trace line is taken when the next Trace line (or the end) shows
     * that nothing undid it. */
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
        if (pr == 1) {
            int rewound;
            int ur = parse_undo(line, &pc, &rewound);
            if (ur == 1)
                continue;
            if (ur < 0) {
                rc = cp_seterr(err, "'%s': line %llu: cannot read the PC of "
                               "this line", log_path,
                               (unsigned long long)lineno);
                break;
            }
            if (!pending || (pend_pc & ~1u) != (pc & ~1u)) {
                rc = cp_seterr(err, "'%s': line %llu: %s 0x%08x does not "
                               "follow the Trace line of that block (record "
                               "with -d exec,nochain -singlestep)", log_path,
                               (unsigned long long)lineno,
                               rewound ? "a rewound block at"
                                       : "a block stopped before", pc);
                break;
            }
            pending = 0;
            if (rewound)
                st->rewound++;
            else
                st->stopped++;
            continue;
        }
        if (pr < 0) {
            rc = cp_seterr(err, "'%s': line %llu: not a QEMU exec trace line",
                           log_path, (unsigned long long)lineno);
            break;
        }
        st->lines++;
        if (pending) {
            int tr = take(&x, pend_pc, pend_line, err);
            if (tr < 0) {
                rc = -1;
                break;
            }
            if (tr > 0) {
                pending = 0;
                break;
            }
        }
        pending = 1;
        pend_pc = pc;
        pend_line = lineno;
    }
    if (!rc && ferror(f))
        rc = cp_seterr(err, "'%s': read error", log_path);
    if (!rc && pending && take(&x, pend_pc, pend_line, err) < 0)
        rc = -1;
    if (!rc)
        rc = flush(&x.q, w, st, err);
    /* Without -n the log's end closes the last iteration (the trace's
     * trailer then says "done"); with -n not reached it is partial. */
    if (!rc && x.in_iter && !n && push_iter(st, &x.cap, x.cur))
        rc = cp_seterr(err, "out of memory");
    fclose(f);
    if (!rc && !st->lines)
        rc = cp_seterr(err, "'%s': no \"Trace\" lines (record with "
                       "-d exec,nochain -singlestep)", log_path);
    return rc;
}
