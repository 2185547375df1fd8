/* What each integration can apply of a plan, and its prediction. GNU ld
 * with the emitted snippets applies everything. The Zephyr module
 * relocates sections of Zephyr's own libraries only (a toolchain archive
 * member, e.g. libgcc's, stays) and writes the flash group as a ROM_START
 * snippet of *(.text.NAME) lines with no padding, so the hot block keeps
 * its order but not its colours. pico-sdk's codeplace_apply() renames the
 * fast-memory group's sections .time_critical.* in the objects and
 * archives on the link line (not in the libraries ld finds with -l, whose
 * paths the map gives in full, nor a name several functions have), and
 * puts the flash group, padding and all, at the start of .text through a
 * linker script derived from the SDK's (docs/linking.md, docs/zephyr.md,
 * docs/pico-sdk.md). */
#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>

#include "plan/plan_int.h"

const char *plan_integration_name(plan_integration in)
{
    switch (in) {
    case PLAN_INT_GNU_LD: return "GNU ld";
    case PLAN_INT_ZEPHYR: return "Zephyr";
    case PLAN_INT_PICO: return "pico-sdk";
    }
    return "?";
}

/* The first offset at or after p where base + offset is al-aligned. */
static uint32_t align_off(uint32_t base, uint32_t p, uint32_t al)
{
    if (al < 2)
        return p;
    uint32_t a = base + p;
    return ((a + al - 1) & ~(al - 1)) - base;
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
    uint32_t hot = 0;
    for (size_t i = 0; i < r->nitems; i++) {
        plan_item it = r->items[i];
        const plan_unit *u = plan_model_unit(m, it.unit);
        int keep = 1;
        if (in == PLAN_INT_ZEPHYR && it.region == PLAN_FAST && u->archive)
            keep = 0; /* a toolchain archive member: it cannot relocate it */
        if (in == PLAN_INT_PICO && it.region == PLAN_FAST &&
            !plan_pico_can_rename(m, u))
            keep = 0;
        if (!keep) {
            if (it.region == PLAN_FAST)
                ap->fast_dropped++;
            else
                ap->flash_dropped++;
            continue;
        }
        if (in == PLAN_INT_ZEPHYR && it.region == PLAN_FLASH_HOT) {
            uint32_t off = align_off(r->hot_base, hot, u->align);
            if (off != it.offset)
                ap->flash_moved++;
            it.offset = off;
            hot = off + u->size;
        }
        o->items[o->nitems++] = it;
    }
    if (in == PLAN_INT_ZEPHYR)
        o->block_end = 0;
    if (in == PLAN_INT_GNU_LD && r->misses >= 0) {
        o->misses = r->misses;
        return o;
    }
    double v = plan_result_eval(m, o);
    if (v < 0) {
        plan_result_free(o);
        cp_seterr(err, "out of memory");
        return NULL;
    }
    o->misses = v;
    return o;
}
