/* Start-up code stays out of fast memory: what runs before the
 * integration's start-up has copied the relocated code there would fetch
 * zeroes (docs/plan.md, "Start-up code").
 *
 * The rule comes from the trace: every function fetched before the
 * integration's boot-done point, the first entry into the function that
 * its start-up calls once the copy is done:
 * - Zephyr 3.5.0 (arch/arm/core/cortex_m/prep_c.c, z_arm_prep_c):
 *   z_bss_zero(), z_data_copy() (which copies the relocated code, through
 *   code relocation's data_copy_xip_relocation()), z_arm_interrupt_init(),
 *   then z_cstart();
 * - pico-sdk 2.2.0 (src/rp2_common/pico_crt0/crt0.S, _reset_handler):
 *   the data copy table (.data, which holds the .time_critical code) and
 *   the .bss clearing in assembly, then runtime_init(), main().
 * Two other points were measured and left (docs/plan.md): the first
 * iteration mark (Zephyr's echo_server fetches 564 functions before it,
 * 52 of the 53 its 8 KiB plan puts in SRAM: the application's own
 * start-up, after the copy) and the first fetch from RAM (none before the
 * first mark in a Zephyr image built with an empty list; on the RP2040
 * the boot ROM's boot2 copy in SRAM at the first record).
 *
 * Collected in the plan's one pass over each trace (plan_read's on_rec):
 * the records before the first mark, until the point. A trace whose
 * records before the first mark never reach the point (a harness trace
 * started after the start-up, or one without a prologue) says nothing;
 * when no trace does, the integration's name list stands in
 * (plan_integration_boot). */
#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_int.h"

struct plan_boot {
    const img *im;
    size_t nf;
    uint32_t point;          /* the boot-done point's address */
    const char *point_name;  /* NULL: the integration has none here */
    unsigned char *cur;      /* this trace: fetched before the point */
    unsigned char *all;      /* the traces that reached it */
    int done, reached;       /* this trace: past the point / first mark */
    plan_boot_counts n;
};

plan_boot *plan_boot_new(const plan_model *m, plan_integration in,
                         cp_err *err)
{
    plan_boot *b = calloc(1, sizeof *b);
    const img *im = plan_model_image(m);
    size_t nf = img_nfuncs(im);
    if (b) {
        b->cur = calloc(nf ? nf : 1, 1);
        b->all = calloc(nf ? nf : 1, 1);
    }
    if (!b || !b->cur || !b->all) {
        plan_boot_free(b);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    b->im = im;
    b->nf = nf;
    const char *const *p = plan_integration_boot_points(in);
    for (; p && *p && !b->point_name; p++) {
        const img_func *f = img_find(im, *p);
        if (f) {
            b->point = f->addr & ~1u;
            b->point_name = f->name;
        }
    }
    b->n.point = b->point_name;
    b->done = 1; /* until the first record of a trace */
    return b;
}

int plan_model_pico(const plan_model *m)
{
    return m->pico;
}

void plan_boot_free(plan_boot *b)
{
    if (!b)
        return;
    free(b->cur);
    free(b->all);
    free(b);
}

/* The index of the first function (by address) that ends after addr. */
static size_t first_after(const img *im, size_t nf, uint32_t addr)
{
    size_t lo = 0, hi = nf;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const img_func *f = img_func_at(im, mid);
        if (f->addr + f->size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void plan_boot_trace_begin(plan_boot *b)
{
    memset(b->cur, 0, b->nf ? b->nf : 1);
    b->done = !b->point_name;
    b->reached = 0;
    b->n.traces++;
}

void plan_boot_rec(plan_boot *b, const trc_rec *r)
{
    if (b->done)
        return;
    if (r->kind == TRC_MARK) {
        b->done = 1; /* the first iteration begins before the point */
        return;
    }
    if (r->kind != TRC_FETCH || !r->len)
        return;
    uint32_t lo = r->addr & ~1u, hi = lo + r->len;
    if (b->point >= lo && b->point < hi) {
        hi = b->point; /* the run enters the point: what precedes it */
        b->done = b->reached = 1;
    }
    for (size_t i = first_after(b->im, b->nf, lo); i < b->nf; i++) {
        const img_func *f = img_func_at(b->im, i);
        if (f->addr >= hi)
            break;
        b->cur[i] = 1;
    }
}

void plan_boot_trace_end(plan_boot *b)
{
    if (!b->reached)
        return;
    b->n.traces_reached++;
    for (size_t i = 0; i < b->nf; i++)
        b->all[i] |= b->cur[i];
}

/* Whether one of unit u's functions was fetched before the point. */
static int unit_fetched(const plan_boot *b, const plan_unit *u)
{
    for (unsigned k = 0; k < u->nfuncs; k++)
        if (u->first_func + k < b->nf && b->all[u->first_func + k])
            return 1;
    return 0;
}

void plan_boot_apply(plan_boot *b, plan_model *m, plan_integration in,
                     plan_boot_counts *out)
{
    plan_boot_counts n;
    memset(&n, 0, sizeof n);
    if (b)
        n = b->n;
    if (n.traces_reached) {
        for (size_t i = 0; i < m->nunits; i++) {
            plan_unit *u = &m->units[i];
            if (!unit_fetched(b, u))
                continue;
            n.by_trace += u->nfuncs;
            for (unsigned k = 0; k < u->nfuncs; k++) {
                const img_func *f = img_func_at(b->im, u->first_func + k);
                if (plan_integration_boot_named(in, f))
                    continue;
                size_t l = strlen(n.unnamed_names);
                if (n.unnamed++ < 8)
                    snprintf(n.unnamed_names + l, sizeof n.unnamed_names - l,
                             "%s%s", l ? ", " : "", f->name);
            }
            u->flags |= PLAN_U_NORAM;
        }
    } else {
        /* No trace shows the start-up: the integration's name list. */
        for (size_t i = 0; i < m->nunits; i++) {
            const plan_unit *u = &m->units[i];
            for (unsigned k = 0; k < u->nfuncs; k++)
                n.by_names += plan_integration_boot_named(
                    in, img_func_at(plan_model_image(m), u->first_func + k));
        }
        plan_integration_boot(m, in);
    }
    if (out)
        *out = n;
}
