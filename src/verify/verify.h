/* vfy: checks a relinked image against the plan it was linked from. Every
 * function the layout places must be where the layout says, every input
 * section pattern of the emitted GNU ld snippets must have matched a
 * section in the relinked map (ld ignores a pattern that matches nothing),
 * and the long-branch stubs must be as many and where the plan expects. */
#ifndef CP_VERIFY_H
#define CP_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "image/image.h"
#include "target/target.h"
#include "util/util.h"

typedef enum vfy_kind {
    VFY_MISSING,     /* a placed function is not in the relinked image */
    VFY_MOVED,       /* it is, at another address */
    VFY_REGION,      /* it is outside the memory the layout names */
    VFY_NO_MATCH,    /* a snippet pattern matched no input section */
    VFY_ELSEWHERE,   /* a pattern matched, but the section is elsewhere */
    VFY_STUBS,       /* stubs: another number, or outside their area */
} vfy_kind;

typedef struct vfy_diff {
    vfy_kind kind;
    char what[160];   /* the function, pattern or stub area */
    char detail[256]; /* what differs */
} vfy_diff;

typedef struct vfy_result {
    char target[32], strategy[32], image[80]; /* from the layout's header */
    size_t placed, placed_ok;     /* layout entries with an address */
    size_t patterns, patterns_ok; /* snippet patterns (0 without a dir) */
    int stubs_checked;            /* the layout states the stubs */
    unsigned stubs_flash_plan, stubs_fast_plan;
    unsigned stubs_flash, stubs_fast; /* found in the relinked map */
    size_t stubs_named;     /* planned stubs whose veneer symbol is there */
    size_t stubs_elsewhere; /* of those, not at the planned address */
    char stub_example[200]; /* the first of them, when any */
    vfy_diff *diffs;
    size_t ndiffs;
} vfy_result;

/* Checks relinked (opened with its map) against the layout file (for
 * target, or when NULL the target its '# target:' line names) and, when
 * emit_dir is not NULL, the GNU ld snippets in it (codeplace_flash.ld,
 * codeplace_ram.ld). 0 when the check ran (r->ndiffs says how it went), -1
 * when an input cannot be read (err names the file and line). */
int vfy_run(const char *layout_path, const img *relinked,
            const tgt *target, const char *emit_dir, vfy_result *r,
            cp_err *err);
/* The same with the layout's text in memory (len bytes; layout_path
 * names it in errors). */
int vfy_run_text(const char *layout_path, const char *text, size_t len,
                 const img *relinked, const tgt *target, const char *emit_dir,
                 vfy_result *r, cp_err *err);
void vfy_result_free(vfy_result *r);
const char *vfy_kind_name(vfy_kind k);

#endif
