/* What each integration can apply of a plan, and its prediction. GNU ld
 * with the emitted snippets applies everything. pico-sdk's
 * codeplace_apply() moves the fast-memory group to .time_critical (not
 * archive members) and has no flash group (docs/pico-sdk.md).
 *
 * The Zephyr module (docs/zephyr.md) places every entry of the name list by
 * its input-section pattern (*libkernel.a:mutex.c.obj(.text.NAME)), the
 * flash group at its offsets from the end of the vector table; what it
 * cannot select exactly is a section known only by a guessed name
 * (".text.NAME" without a map) that another section shares: those are left
 * out. It relocates the fast group with Zephyr's code relocation, whose
 * output section takes its flash copy between rom_start (the hot block)
 * and the text section; the module pads after that copy to text_start, a
 * bound the plan computes here, so the rest of the text is where the
 * layout says. */
#include "plan/plan.h"
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

const char *plan_integration_name(plan_integration in)
{
    switch (in) {
    case PLAN_INT_GNU_LD: return "GNU ld";
    case PLAN_INT_ZEPHYR: return "Zephyr";
    case PLAN_INT_PICO: return "pico-sdk";
    }
    return "?";
}

/* A unit the name list cannot single out: no map, and another unit has the
 * same (guessed) section name, which the list's *(.text.NAME) also moves. */
static int ambiguous(const plan_model *m, const plan_unit *u)
{
    if (u->object)
        return 0;
    for (size_t i = 0; i < plan_model_nunits(m); i++) {
        const plan_unit *v = plan_model_unit(m, i);
        if (v != u && !strcmp(v->isec, u->isec))
            return 1;
    }
    return 0;
}

/* An upper bound of the relocated code's flash copy: gen_relocate_app.py's
 * output section for it (linker_relocate.ld) holds the module's anchor
 * function, the fast sections at their alignments and ld's stubs back to
 * flash, between ALIGN(4)s; with an MPU that needs power-of-two regions it
 * is rounded to a power of two and aligned to it (MPU_ALIGN in Zephyr's
 * Cortex-M linker script): taking the power of two at or above the content,
 * the copy fits in [align(end, P), + P). */
static uint32_t copy_bound(const plan_model *m, const plan_result *o)
{
    uint64_t c = 64 + (uint64_t)o->veneers * m->veneer_bytes;
    for (size_t i = 0; i < o->nitems; i++) {
        const plan_unit *u = plan_model_unit(m, o->items[i].unit);
        if (o->items[i].region == PLAN_FAST)
            c += u->size + (u->align ? u->align : 1) - 1;
    }
    uint32_t p = 32;
    while (p < c)
        p <<= 1;
    return p;
}

/* The Zephyr build's text start: o->block_end becomes the offset of the
 * rest of the text from hot_base (what plan_layout_build pads the block to),
 * o->hot_bytes stays the block's own size. */
static void zephyr_text_start(const plan_model *m, plan_result *o)
{
    uint32_t hot = o->hot_bytes > o->block_end ? o->hot_bytes : o->block_end;
    for (size_t i = 0; i < o->nitems; i++)
        if (o->items[i].region == PLAN_FLASH_HOT) {
            uint32_t e = o->items[i].offset +
                         plan_model_unit(m, o->items[i].unit)->size;
            if (e > hot)
                hot = e;
        }
    uint32_t p = copy_bound(m, o);
    uint32_t end = o->hot_base + hot;
    o->hot_bytes = hot;
    o->text_start = ((end + p - 1) & ~(p - 1)) + p;
    o->block_end = o->text_start - o->hot_base;
}

/* Predicted misses and text end of o, as plan_result_eval with the end. */
static double eval_with_end(plan_model *m, plan_result *o)
{
    plan_layout L;
    if (plan_layout_alloc(m, &L) < 0)
        return -1;
    plan_eval_out out = {0};
    int rc = plan_layout_build(m, o->items, o->nitems, o->hot_base,
                               o->block_end, &L, NULL);
    if (rc == 0)
        rc = plan_eval(m, &L, 0, &out, NULL);
    o->flash_stubs = L.nstubs;
    o->stub_order = L.stub_order;
    o->text_end = (uint32_t)((int64_t)((plan_model_text_end(m) + 7) & ~7u) +
                             L.text_delta);
    plan_layout_free(&L);
    return rc < 0 ? -1 : out.misses;
}

plan_result *plan_result_for(plan_model *m, const plan_result *r,
                             plan_integration in, plan_applied *ap,
                             cp_err *err)
{
    memset(ap, 0, sizeof *ap);
    plan_result *o = malloc(sizeof *o);
    plan_item *items = malloc((r->nitems ? r->nitems : 1) * sizeof *items);
    if (!o || !items) {
        free(o);
        free(items);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    *o = *r;
    o->items = items;
    o->nitems = 0;
    for (size_t i = 0; i < r->nitems; i++) {
        plan_item it = r->items[i];
        const plan_unit *u = plan_model_unit(m, it.unit);
        int keep = 1;
        if (in == PLAN_INT_PICO && it.region == PLAN_FAST && u->archive)
            keep = 0; /* a toolchain archive member: it cannot rename it */
        if (in == PLAN_INT_PICO && it.region == PLAN_FLASH_HOT)
            keep = 0; /* pico-sdk's scripts have no flash group */
        if (in == PLAN_INT_ZEPHYR && ambiguous(m, u))
            keep = 0;
        if (!keep) {
            if (it.region == PLAN_FAST)
                ap->fast_dropped++;
            else
                ap->flash_dropped++;
            continue;
        }
        o->items[o->nitems++] = it;
    }
    if (in == PLAN_INT_PICO)
        o->block_end = 0;
    if (in == PLAN_INT_GNU_LD && r->misses >= 0) {
        o->misses = r->misses;
        return o;
    }
    double v;
    if (in == PLAN_INT_ZEPHYR) {
        zephyr_text_start(m, o);
        v = eval_with_end(m, o);
    } else {
        v = plan_result_eval(m, o);
    }
    if (v < 0) {
        plan_result_free(o);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    o->misses = v;
    return o;
}
