/* plan_apply: carries a name list (the portable form of a plan) to another
 * build. Each name is resolved against the new image: the same function,
 * a clone whose number changed (foo.constprop.0 -> foo.constprop.1), a
 * clone that is gone (its original used) or a function that is now a
 * clone, a name whose section another name of the list already moves; or
 * it is lost (not in the build, dropped by the linker, ambiguous, not in
 * cached flash, over the fast-memory budget). The names that resolve make
 * a plan_result for the new build's model, in the list's order; a flash
 * name whose comment gives its cache set ("set N", what plan --list
 * writes) starts at that set again, within pad_limit bytes of padding. */
#ifndef CP_PLAN_APPLY_H
#define CP_PLAN_APPLY_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

typedef enum plan_apply_how {
    PLAN_APPLY_SAME,       /* the name is in the new build */
    PLAN_APPLY_RENUMBERED, /* a clone whose number changed */
    PLAN_APPLY_UNCLONED,   /* the clone is gone; its original is used */
    PLAN_APPLY_CLONED,     /* the function is now a clone */
    PLAN_APPLY_LOST_GONE,      /* not in the new build */
    PLAN_APPLY_LOST_DISCARDED, /* its section was dropped by the linker */
    PLAN_APPLY_LOST_AMBIGUOUS, /* several clones could be it */
    PLAN_APPLY_LOST_NOT_MOVABLE, /* not in cached flash, or must stay */
    PLAN_APPLY_LOST_BUDGET,    /* fast memory is full */
} plan_apply_how;

typedef struct plan_apply_name {
    const char *name;     /* as in the list */
    size_t line;
    plan_region region;   /* PLAN_FAST or PLAN_FLASH_HOT */
    plan_apply_how how;
    int shared;           /* its section is moved by an earlier name */
    uint32_t set;         /* flash: the cache set from the list's comment
                             ("set N"), or UINT32_MAX */
    uint32_t osize;       /* flash: its size in the planned build (the
                             comment's "N bytes, set"), or UINT32_MAX */
    const char *now;      /* the name in the new build, or NULL */
    char why[200];        /* for lost names and guesses, in words */
} plan_apply_name;

typedef struct plan_apply {
    plan_apply_name *names;
    size_t n;
    size_t nlost, nresolved, nrenamed;
    char target[32];      /* from the list's header, or "" */
    char strategy[32];    /* from the list's header, or "" */
    uint32_t budget;      /* used (the list's, or the one asked for) */
    size_t sets_kept;     /* hot names placed at their list's cache set */
    size_t sets_drifted;  /* hot names whose set was behind (code before
                             them grew): placed right after */
    size_t sets_dropped_at; /* hot names from this one on were packed (the
                               padding limit was reached), or n */
    plan_result *res;     /* the plan for the new build */
    char *text;           /* the list's text (names point into it) */
} plan_apply;

/* Reads only the list's header (target, budget). -1 on a read error. */
int plan_apply_header(const char *list, char *target, size_t tcap,
                      uint32_t *budget, cp_err *err);

/* Resolves list against the model's image. budget: bytes of fast memory
 * (UINT32_MAX: the list's "budget:" line, or unlimited without one); map
 * (may be NULL): the new build's map file, whose "Discarded input
 * sections" tell a dropped function from a missing one. Errors: the list
 * cannot be read, a line names an unknown region. */
plan_apply *plan_apply_list(plan_model *m, const char *list, const char *map,
                            uint32_t budget, uint32_t pad_limit, cp_err *err);
void plan_apply_free(plan_apply *a);

const char *plan_apply_how_name(plan_apply_how h);
static inline int plan_apply_lost(plan_apply_how h)
{
    return h >= PLAN_APPLY_LOST_GONE;
}

#endif
