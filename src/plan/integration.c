/* What each integration can apply of a plan, and its prediction. GNU ld
 * with the emitted snippets applies everything. pico-sdk's
 * codeplace_apply() renames the fast-memory group's sections
 * .time_critical.* in the objects and archives on the link line (not in the
 * libraries ld finds with -l, whose paths the map gives in full, nor a name
 * several functions have), and puts the flash group, padding and all, at
 * the start of .text through a linker script derived from the SDK's
 * (docs/pico-sdk.md).
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

#include <stdlib.h>
#include <string.h>

#include "plan/plan_int.h"

/* Zephyr's start-up clears .bss and copies the relocated code to RAM
 * (z_bss_zero, z_data_copy in kernel/init.c, run from the architecture's
 * z_arm_prep_c or z_prep_c) through z_early_memset and z_early_memcpy,
 * which call memset and memcpy: code in RAM is not there yet while they
 * run, so none of them may go there. */
static const char *const zephyr_boot[] = {
    "memset", "memcpy", "z_early_memset", "z_early_memcpy",
    "z_bss_zero", "z_data_copy", "z_arm_prep_c", "z_prep_c", NULL};

/* Where their start-up is done (plan/boot.c says why these). */
static const char *const zephyr_done[] = {"z_cstart", NULL};
static const char *const pico_done[] = {"runtime_init", "main", NULL};

/* What each integration is: its name, the functions that run before its
 * start-up copies code to fast memory (NULL-terminated, or NULL), and
 * those whose first entry comes after the copy. */
typedef struct integration {
    const char *name;
    const char *const *boot;
    const char *const *done;
} integration;

static const integration integrations[] = {
    [PLAN_INT_GNU_LD] = {"GNU ld", NULL, NULL},
    [PLAN_INT_ZEPHYR] = {"Zephyr", zephyr_boot, zephyr_done},
    [PLAN_INT_PICO] = {"pico-sdk", NULL, pico_done},
};

#define NINT (sizeof integrations / sizeof *integrations)

const char *plan_integration_name(plan_integration in)
{
    return (unsigned)in < NINT ? integrations[in].name : "?";
}

const char *const *plan_integration_boot_points(plan_integration in)
{
    return (unsigned)in < NINT ? integrations[in].done : NULL;
}

int plan_integration_has_boot_names(plan_integration in)
{
    return (unsigned)in < NINT && integrations[in].boot;
}

int plan_integration_boot_named(plan_integration in, const img_func *f)
{
    if ((unsigned)in >= NINT || !integrations[in].boot)
        return 0;
    for (const char *const *b = integrations[in].boot; *b; b++)
        if (img_func_named(f, *b))
            return 1;
    return 0;
}

void plan_integration_boot(plan_model *m, plan_integration in)
{
    if ((unsigned)in >= NINT || !integrations[in].boot)
        return;
    for (const char *const *b = integrations[in].boot; *b; b++)
        plan_model_exclude(m, *b, 1);
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
 * ends with ALIGN(32) and ALIGN(1 << LOG2CEIL(its own size)) (MPU_ALIGN in
 * Zephyr 3.5.0's Cortex-M linker script). That size refers to itself: GNU
 * ld 2.40 settled at twice the power of two above the content (7,912 bytes
 * of echo_server's code took 16 KiB), so the bound is that. */
static uint32_t copy_bound(const plan_model *m, const plan_result *o)
{
    /* (+128: the anchors, and the sram one's own section when the fast
     * memory is ITCM) */
    uint64_t c = 192 + (uint64_t)o->veneers * m->veneer_bytes;
    for (size_t i = 0; i < o->nitems; i++) {
        const plan_unit *u = plan_model_unit(m, o->items[i].unit);
        if (o->items[i].region == PLAN_FAST)
            c += u->size + (u->align ? u->align : 1) - 1;
    }
    uint32_t p = 32;
    while (p < c)
        p <<= 1;
    return 2 * p;
}

/* Where the module's hot block starts: right after the vector table, at
 * the end of Zephyr's first output section (rom_start, ALIGN(8) in the
 * module's snippet). In the image the plan was made from, the text section
 * may start later (the flash copy of the relocated code is between them
 * when the image was built with the module): the items keep their
 * addresses, and so their cache sets, at larger offsets from that start. */
static void zephyr_hot_base(const plan_model *m, plan_result *o)
{
    const img_section *rs = img_section_by_name(plan_model_image(m),
                                                "rom_start");
    if (!rs)
        return;
    uint32_t start = (rs->addr + rs->size + 7) & ~7u;
    if (start >= o->hot_base)
        return;
    uint32_t d = o->hot_base - start;
    for (size_t i = 0; i < o->nitems; i++)
        if (o->items[i].region == PLAN_FLASH_HOT)
            o->items[i].offset += d;
    if (o->block_end)
        o->block_end += d;
    if (o->hot_bytes)
        o->hot_bytes += d;
    o->hot_base = start;
}

/* The hot block's size with room for its own stubs (ld puts them after
 * its last section): one per fast-memory function called from it. */
static uint32_t hot_stub_room(const plan_model *m, const plan_result *o,
                              uint32_t hot)
{
    size_t nu = plan_model_nunits(m);
    unsigned char *where = calloc(nu ? nu : 1, 1);
    unsigned char *seen = calloc(m->ntargets ? m->ntargets : 1, 1);
    uint32_t last = 0, n = 0;
    if (!where || !seen) {
        free(where);
        free(seen);
        return hot + (uint32_t)m->ntargets * m->veneer_bytes;
    }
    for (size_t i = 0; i < o->nitems; i++) {
        const plan_item *it = &o->items[i];
        where[it->unit] = it->region == PLAN_FAST ? 'f' : 'h';
        if (it->region == PLAN_FLASH_HOT &&
            it->offset + plan_model_unit(m, it->unit)->size > last)
            last = it->offset + plan_model_unit(m, it->unit)->size;
    }
    for (size_t i = 0; i < m->ncalls; i++) {
        const plan_call *c = &m->calls[i];
        if (where[c->caller] == 'h' &&
            where[m->targets[c->target].unit] == 'f' && !seen[c->target]) {
            seen[c->target] = 1;
            n++;
        }
    }
    free(where);
    free(seen);
    uint32_t need = ((o->hot_base + last + 7) & ~7u) - o->hot_base +
                    n * m->veneer_bytes;
    return need > hot ? need : hot;
}

void plan_model_hot_own_stubs(plan_model *m, int on)
{
    m->hot_own_stubs = on;
}

/* The Zephyr build's text start, after the hot block and the bound of the
 * copy: o->block_end becomes the offset of the
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
    uint32_t hot0 = hot; /* where the search put the rest of the text */
    hot = hot_stub_room(m, o, hot);
    /* the copy's load address follows the block (observed: not aligned
     * to the power of two) */
    uint32_t end = ((o->hot_base + hot + 7) & ~7u) + copy_bound(m, o);
    /* The rest of the text, and .rodata after it, a whole number of cache
     * ways after where the search put them (right after the block): the
     * same cache sets, so the gap costs flash, not misses. */
    uint32_t way = m->sets << m->line_shift;
    uint32_t want = o->hot_base + hot0;
    o->hot_bytes = hot;
    o->text_start = want + ((end > want ? end - want : 0) + way - 1) / way * way;
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
    o->flash_stubs = L.nstubs + L.nstubs_hot;
    o->stub_order = L.stub_order;
    o->text_end = (uint32_t)((int64_t)((plan_model_text_end(m) + 7) & ~7u) +
                             L.text_delta);
    plan_result_after(m, &L, o);
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
        if (in == PLAN_INT_PICO && it.region == PLAN_FAST &&
            !plan_pico_can_rename(m, u))
            keep = 0;
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
    if (in == PLAN_INT_GNU_LD && r->misses >= 0) {
        o->misses = r->misses;
        return o;
    }
    double v;
    if (in == PLAN_INT_ZEPHYR) {
        int own = m->hot_own_stubs;
        m->hot_own_stubs = 1;
        zephyr_hot_base(m, o);
        zephyr_text_start(m, o);
        v = eval_with_end(m, o);
        m->hot_own_stubs = own;
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
