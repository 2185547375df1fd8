/* The model's link: what GNU ld will do with the units (the pico-sdk
 * link's own stubs, the stubs' names and order, the sections after the
 * text), set up once the units are known (plan_model_new), and read back
 * from a relinked image (--refine-from). Above model.c, ldstub.c,
 * picolink.c, after.c, layout.c and walk.c, which do not call it. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

plan_model *plan_model_new(const img *im, const tgt *t, const tgt_cache *c,
                           cp_err *err)
{
    plan_model *m = plan_model_make(im, t, c, err);
    if (!m)
        return NULL;
    if (plan_model_pico_link(m) < 0 || plan_model_find_calls(m) < 0 ||
        plan_ldstub_setup(m) < 0) {
        cp_seterr(err, "out of memory");
        plan_model_free(m);
        return NULL;
    }
    m->stub_nt = m->ntargets; /* the targets ld's stub order is worked out for */
    if (plan_model_after_setup(m) < 0) {
        cp_seterr(err, "out of memory");
        plan_model_free(m);
        return NULL;
    }
    return m;
}

long plan_model_refine_stubs(plan_model *m, const img *relinked, cp_err *err)
{
    free(m->stub_fixed);
    m->stub_fixed = calloc(m->ntargets ? m->ntargets : 1, sizeof *m->stub_fixed);
    if (!m->stub_fixed)
        return cp_seterr(err, "out of memory");
    long found = 0;
    for (size_t i = 0; i < img_nfuncs(relinked); i++) {
        const img_func *v = img_func_at(relinked, i);
        size_t n = strlen(v->name);
        /* GNU ld (elf32-arm.c) names a long-branch stub "__TARGET_veneer" */
        if (n <= 9 || strncmp(v->name, "__", 2) ||
            strcmp(v->name + n - 7, "_veneer") ||
            !tgt_is_cached(m->t, v->addr & ~1u))
            continue;
        char name[512];
        if (n - 9 >= sizeof name)
            continue;
        memcpy(name, v->name + 2, n - 9);
        name[n - 9] = 0;
        for (size_t t = 0; t < m->ntargets; t++) {
            const img_func *f = img_lookup(m->im, m->targets[t].addr);
            if (!f || f->addr != m->targets[t].addr)
                continue;
            /* ld names the stub after the symbol the call refers to,
             * which may be an alias (__aeabi_dadd of __adddf3): one stub
             * per name when the relocations are known */
            if (m->targets[t].sym ? !strcmp(m->targets[t].sym, name)
                                  : img_func_named(f, name)) {
                m->stub_fixed[t] = v->addr & ~1u;
                found++;
                break;
            }
        }
    }
    /* The relinked text section: where .rodata after it went. */
    for (size_t k = 0; k < img_nsections(relinked); k++) {
        const img_section *sec = img_section_at(relinked, k);
        if (!strcmp(sec->name, m->text_name)) {
            m->relinked_text_end = sec->addr + sec->size;
            m->text_end_fixed = 1;
        }
    }
    return found;
}

void plan_layout_fix_stubs(const plan_model *m, plan_layout *L)
{
    if (!m->stub_fixed)
        return;
    for (size_t t = 0; t < m->ntargets; t++)
        if (L->stub[t] && m->stub_fixed[t])
            L->stub[t] = m->stub_fixed[t];
    if (m->text_end_fixed && (L->text_delta || L->after_moved)) {
        L->text_delta = (int64_t)((m->relinked_text_end + 7) & ~7u) -
                        (int64_t)((m->text_end + 7) & ~7u);
        plan_layout_after(m, L, m->relinked_text_end);
    }
}

int plan_layout_of(const plan_model *m, const plan_result *r, plan_layout *L)
{
    if (plan_layout_alloc(m, L) < 0)
        return -1;
    if (plan_layout_build(m, r->items, r->nitems, r->hot_base, r->block_end,
                          L, NULL) < 0) {
        plan_layout_free(L);
        return -1;
    }
    plan_layout_fix_stubs(m, L);
    return 0;
}

int plan_result_refine(plan_model *m, plan_result *r, cp_err *err)
{
    plan_layout L;
    if (plan_layout_of(m, r, &L) < 0)
        return cp_seterr(err, "out of memory");
    plan_eval_out out = {0};
    double fa = 0;
    int rc = plan_eval(m, &L, 0, &out, err) < 0 ||
             plan_eval_fa(m, &L, 0, &fa, err) < 0 ? -1 : 0;
    plan_layout_free(&L);
    if (rc < 0)
        return -1;
    r->misses = out.misses;
    r->conflict_after = out.misses - fa;
    for (unsigned k = 0; k < r->nwork && k < m->nwork; k++)
        r->work_misses[k] = out.work_misses[k];
    return 0;
}
