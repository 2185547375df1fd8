/* trc: QEMU execution log import (see qemu.h). */
#include "trace/qemu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"
#include "qplugin/thumb.h"

/* "Trace 0: 0x7f.. [00000000/00000130/00000000/ff200201] sym": the second
 * field in brackets is the PC, the fourth (QEMU 6.0 and later) the block's
 * cflags. Returns 0 with *pc (and *cflags, *has_cflags), 1 for other
 * lines, -1 malformed. */
static int parse_line(const char *s, uint32_t *pc, uint32_t *cflags,
                      int *has_cflags)
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
    *has_cflags = 0;
    if (*end == '/') { /* flags, then cflags */
        const char *f = strchr(end + 1, '/');
        const char *rb = strchr(end + 1, ']');
        if (f && rb && f < rb) {
            errno = 0;
            unsigned long long c = strtoull(f + 1, &end, 16);
            if (errno || end == f + 1 || *end != ']' || c > UINT32_MAX)
                return -1;
            *cflags = (uint32_t)c;
            *has_cflags = 1;
        }
    }
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
    const trc_qemu_in *in;
    uint64_t marks, cur;
    uint32_t prev;      /* the last instruction taken */
    uint64_t prev_line; /* its line; 0: none yet */
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

/* A Thumb instruction's length from its first halfword (ARMv7-M ARM
 * A5.1: 0b11101, 0b11110 and 0b11111 in bits 15:11 start a 32-bit one). */
static uint32_t insn_len(uint16_t hw)
{
    return (hw >> 11) >= 0x1d ? 4 : 2;
}

static int is_handler(const trc_qemu_in *in, uint32_t pc)
{
    for (size_t i = 0; i < in->nhandlers; i++)
        if (in->handlers[i] == pc)
            return 1;
    return 0;
}

/* Can the instruction at prev be followed by the one at pc? 0: in its
 * flow (the next one, its branch's target, anywhere after an indirect
 * branch or a return); 1: an exception entry (pc starts a handler); -1:
 * neither. */
static int follows(const trc_qemu_in *in, uint32_t prev, uint32_t pc)
{
    uint8_t b[4];
    if (img_read(in->im, prev, b, 2))
        return -1;
    uint32_t len = insn_len((uint16_t)(b[0] | b[1] << 8));
    if (pc == prev + len)
        return 0;
    if (len == 4 && img_read(in->im, prev + 2, b + 2, 2))
        return -1;
    /* qp_decode gives no target (0) for an indirect branch; a direct one
     * to address 0 (code there: an ITCM) passes as indirect too, which
     * checks less but never refuses a whole log. */
    qp_insn i = qp_decode(b, len, prev);
    if (i.flow == QP_RET || (i.flow != QP_PLAIN &&
                             (!i.target || i.target == pc)))
        return 0;
    return is_handler(in, pc) ? 1 : -1;
}

size_t trc_qemu_handlers(const img *im, uint32_t vt, uint32_t *h, size_t cap)
{
    emu_vec v[16 + 496];
    size_t nv = emu_vector_handlers(im, vt, 1, 16 + 496, v,
                                    sizeof v / sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < nv && n < cap; i++) {
        size_t j = 0;
        while (j < n && h[j] != v[i].handler)
            j++;
        if (j == n)
            h[n++] = v[i].handler;
    }
    return n;
}

/* The instruction at pc (line lineno) runs after the last one taken: it
 * must follow it. */
static int check_flow(qimp *x, uint32_t pc, uint64_t lineno, cp_err *err)
{
    if (x->prev_line) {
        int fl = follows(x->in, x->prev, pc);
        if (fl < 0)
            return cp_seterr(err, "'%s': line %llu: PC 0x%08x does not follow "
                             "the instruction at 0x%08x (line %llu) and is no "
                             "handler of the vector table: lines are missing "
                             "(record with -d exec,nochain -singlestep, or "
                             "-accel tcg,one-insn-per-tb=on on QEMU 8.1 and "
                             "later, and no -dfilter)", x->path,
                             (unsigned long long)lineno, pc, x->prev,
                             (unsigned long long)x->prev_line);
        if (fl)
            x->st->entries++;
    }
    x->prev = pc;
    x->prev_line = lineno;
    return 0;
}

/* One executed instruction at pc. 1: mark n reached (stop), 0, -1 error. */
static int take(qimp *x, uint32_t pc, uint64_t lineno, cp_err *err)
{
    trc_qemu_stats *st = x->st;
    const trc_qemu_in *in = x->in;
    pc &= ~1u;
    uint16_t hw;
    if (img_read(in->im, pc, &hw, 2))
        return cp_seterr(err, "'%s': line %llu: PC 0x%08x is outside the "
                         "code of '%s'", x->path, (unsigned long long)lineno,
                         pc, img_path(in->im));
    if (check_flow(x, pc, lineno, err))
        return -1;
    if (in->mark && pc == in->mark) {
        if (x->in_iter && push_iter(st, &x->cap, x->cur))
            return cp_seterr(err, "out of memory");
        if (in->n && x->marks >= in->n) {
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
    uint32_t len = insn_len(hw);
    unsigned fl = in->t && !tgt_is_cached(in->t, pc) ? TRC_F_UNCACHED : 0;
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

/* A block of more than one instruction: its line stands for instructions
 * the log does not name. */
static int check_cflags(const qimp *x, uint32_t cflags, uint64_t lineno,
                        cp_err *err)
{
    /* QEMU 6.0 and later, include/exec/exec-all.h: CF_COUNT_MASK
     * 0x000001ff, the most instructions the block may hold (0: as many
     * as fit); -singlestep and one-insn-per-tb=on make it 1. */
    uint32_t count = cflags & 0x1ffu;
    if (count == 1)
        return 0;
    char n[32];
    if (count)
        snprintf(n, sizeof n, "up to %u instructions", count);
    else
        snprintf(n, sizeof n, "as many instructions as fit");
    return cp_seterr(err, "'%s': line %llu: QEMU translated this block for "
                     "%s (cflags 0x%08x): its one line stands for "
                     "instructions the log does not name; record one "
                     "instruction per block (-d exec,nochain -singlestep, or "
                     "-accel tcg,one-insn-per-tb=on on QEMU 8.1 and later)",
                     x->path, (unsigned long long)lineno, n, cflags);
}

/* A "Stopped" or "rewound" line (ur: parse_undo's result, pc its block):
 * it must undo the pending Trace line. */
static int undo(qimp *x, int ur, uint32_t pc, int rewound, int *pending,
                uint32_t pend_pc, uint64_t lineno, cp_err *err)
{
    if (ur < 0)
        return cp_seterr(err, "'%s': line %llu: cannot read the PC of this "
                         "line", x->path, (unsigned long long)lineno);
    if (!*pending || (pend_pc & ~1u) != (pc & ~1u))
        return cp_seterr(err, "'%s': line %llu: %s 0x%08x does not follow "
                         "the Trace line of that block (record with -d "
                         "exec,nochain -singlestep)", x->path,
                         (unsigned long long)lineno,
                         rewound ? "a rewound block at"
                                 : "a block stopped before", pc);
    *pending = 0;
    if (rewound)
        x->st->rewound++;
    else
        x->st->stopped++;
    return 0;
}

int trc_from_qemu_file(FILE *f, const char *log_path, const trc_qemu_in *in,
                       trc_writer *w, trc_qemu_stats *st, cp_err *err)
{
    memset(st, 0, sizeof *st);
    qimp x;
    memset(&x, 0, sizeof x);
    x.path = log_path;
    x.in = in;
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
        uint32_t pc, cflags;
        int has_cflags;
        int pr = parse_line(line, &pc, &cflags, &has_cflags);
        if (pr == 1) {
            int rewound;
            int ur = parse_undo(line, &pc, &rewound);
            if (ur == 1)
                continue;
            if ((rc = undo(&x, ur, pc, rewound, &pending, pend_pc, lineno,
                           err)))
                break;
            continue;
        }
        if (pr < 0) {
            rc = cp_seterr(err, "'%s': line %llu: not a QEMU exec trace line",
                           log_path, (unsigned long long)lineno);
            break;
        }
        if (has_cflags && (rc = check_cflags(&x, cflags, lineno, err)))
            break;
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
    if (!rc && x.in_iter && !in->n && push_iter(st, &x.cap, x.cur))
        rc = cp_seterr(err, "out of memory");
    if (!rc && !st->lines)
        rc = cp_seterr(err, "'%s': no \"Trace\" lines (record with "
                       "-d exec,nochain -singlestep)", log_path);
    return rc;
}

int trc_from_qemu(const char *log_path, const trc_qemu_in *in, trc_writer *w,
                  trc_qemu_stats *st, cp_err *err)
{
    memset(st, 0, sizeof *st);
    FILE *f = fopen(log_path, "r");
    if (!f)
        return cp_seterr(err, "cannot open '%s': %s", log_path,
                         strerror(errno));
    int rc = trc_from_qemu_file(f, log_path, in, w, st, err);
    fclose(f);
    return rc;
}
