/* Where the output sections that follow the text in flash go when the text
 * changes size, as GNU ld places them: each at its own alignment
 * (sh_addralign) after the new end of the one before. A stock gap that the
 * section's own alignment does not explain is an ALIGN(N) or `. =` of the
 * linker script: the smallest power of two that explains it is taken as
 * the section's alignment; when a larger one explains it too and would put
 * the section elsewhere, or no alignment explains it (the gap is kept),
 * the layout says the section's move is uncertain. Each section's flash
 * reads move by that section's own delta. Sections are taken by their
 * load address; copies of sections that run from RAM as below. */
#include "plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t align_up(uint64_t a, uint64_t p)
{
    return (a + p - 1) & ~(p - 1);
}

static int cmp_after(const void *a, const void *b)
{
    const plan_after *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A section with contents in the cached flash after the text, by its
 * load address (a section that runs from RAM has its copy there, placed
 * in the same sequence). */
static int in_flash_after(const plan_model *m, const img_section *sec)
{
    return sec->lma >= m->text_end && !(sec->flags & IMG_SEC_NOBITS) &&
           tgt_is_cached(m->t, sec->lma);
}

int plan_model_after_setup(plan_model *m)
{
    const img *im = m->im;
    size_t n = 0;
    for (size_t s = 0; s < img_nsections(im); s++) {
        const img_section *sec = img_section_at(im, s);
        n += in_flash_after(m, sec);
    }
    m->nafter = 0;
    if (!n)
        return 0;
    m->after = calloc(n, sizeof *m->after);
    if (!m->after)
        return -1;
    for (size_t s = 0; s < img_nsections(im); s++) {
        const img_section *sec = img_section_at(im, s);
        if (in_flash_after(m, sec)) {
            plan_after *a = &m->after[m->nafter++];
            a->name = sec->name;
            a->addr = sec->lma;
            a->end = sec->lma + sec->size;
            a->align = sec->align ? sec->align : 1;
            a->copy_off = (int64_t)sec->lma - (int64_t)sec->addr;
        }
    }
    qsort(m->after, m->nafter, sizeof *m->after, cmp_after);
    uint32_t prev = m->text_end;
    for (size_t i = 0; i < m->nafter; i++) {
        plan_after *a = &m->after[i];
        /* Sections that run from RAM: ld gives the next one in the same
         * region the load address that keeps the offset of the one before
         * (Zephyr: device_states, log_msg_ptr_area, ... after datas), so
         * it moves with it; the first of such a run starts where the
         * section before it ends, at no alignment of its own (datas,
         * 8-aligned, loaded at 0x...ecc right after rodata's end). */
        if (a->copy_off) {
            a->with_prev = i && m->after[i - 1].copy_off == a->copy_off;
            if (a->with_prev) {
                prev = a->end;
                continue;
            }
            a->align = 1;
        }
        a->amin = a->amax = a->align;
        if (a->addr < prev) { /* overlaps the one before: keep its offset */
            a->gap = (int64_t)a->addr - (int64_t)prev;
            a->amin = a->amax = 1;
            a->unexplained = 1;
        } else if (align_up(prev, a->align) != a->addr) {
            uint64_t p = a->align, lo = 0, hi = 0;
            for (; p <= 0x80000000u && p <= (uint64_t)a->addr + 1; p <<= 1)
                if (align_up(prev, p) == a->addr) {
                    if (!lo)
                        lo = p;
                    hi = p;
                }
            if (lo) {
                a->amin = (uint32_t)lo;
                a->amax = (uint32_t)hi;
            } else {
                a->gap = (int64_t)a->addr -
                         (int64_t)align_up(prev, a->align);
                a->unexplained = 1;
            }
        }
        prev = a->end;
    }
    return 0;
}

void plan_layout_after(const plan_model *m, plan_layout *L, uint32_t new_end)
{
    /* The text section ends with an ALIGN(4) when its stock end is
     * 4-aligned (Zephyr's Cortex-M script: `. = ALIGN(4);` last). */
    if (!(m->text_end & 3))
        new_end = (new_end + 3) & ~3u;
    L->after_end_delta = (int64_t)new_end - (int64_t)m->text_end;
    L->after_uncertain = PLAN_NONE;
    L->after_moved = L->after_end_delta != 0;
    int64_t prev = new_end;
    for (size_t i = 0; i < m->nafter; i++) {
        const plan_after *a = &m->after[i];
        if (a->with_prev) {
            L->after_delta[i] = L->after_delta[i - 1];
            prev = (int64_t)a->end + L->after_delta[i];
            continue;
        }
        int64_t at = (int64_t)align_up((uint64_t)prev, a->amin) + a->gap;
        if (a->amax != a->amin &&
            (int64_t)align_up((uint64_t)prev, a->amax) + a->gap != at &&
            L->after_uncertain == PLAN_NONE)
            L->after_uncertain = (uint32_t)i;
        if (a->unexplained && at != a->addr &&
            L->after_uncertain == PLAN_NONE)
            L->after_uncertain = (uint32_t)i;
        L->after_delta[i] = at - (int64_t)a->addr;
        if (L->after_delta[i])
            L->after_moved = 1;
        prev = at + (a->end - a->addr);
    }
}

uint64_t plan_after_move(const plan_model *m, const plan_layout *L,
                         uint64_t base)
{
    /* the last section that starts at or below base */
    size_t lo = 0, hi = m->nafter;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->after[mid].addr <= base)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t d = lo ? L->after_delta[lo - 1] : L->after_end_delta;
    return (uint64_t)((int64_t)base + d);
}

void plan_result_after(const plan_model *m, const plan_layout *L,
                       plan_result *res)
{
    res->stock_text_end = m->text_end;
    res->after_uncertain = NULL;
    res->after_uncertain_addr = 0;
    if (L->after_uncertain != PLAN_NONE && L->after_uncertain < m->nafter) {
        res->after_uncertain = m->after[L->after_uncertain].name;
        res->after_uncertain_addr = m->after[L->after_uncertain].addr;
    }
}
