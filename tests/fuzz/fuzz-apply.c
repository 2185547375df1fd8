/* libFuzzer harness: the name-list reader of `apply` (src/plan/apply.c),
 * resolving each name against a real build: the ELF and map named by
 * CP_FUZZ_ELF and CP_FUZZ_MAP (default the demo firmware,
 * build/fw/demo-rp2040.elf and .map) on rp2040. Every resolved name has a line within the list, and the
 * counts add up. Input: name list text (what `plan --list` writes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image.h"
#include "plan/apply.h"
#include "plan/plan.h"
#include "target/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static img *im;
static plan_model *model;
static const char *map;
static char list[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *elf = getenv("CP_FUZZ_ELF");
    map = getenv("CP_FUZZ_MAP");
    if (!elf)
        elf = "build/fw/demo-rp2040.elf";
    if (!map)
        map = "build/fw/demo-rp2040.map";
    cp_err err;
    const tgt *t = tgt_load("rp2040", &err);
    if (!t || !(im = img_open(elf, map, &err)) ||
        !(model = plan_model_new(im, t, &t->cache, &err))) {
        fprintf(stderr, "fuzz-apply: %s\n", err.msg);
        exit(1);
    }
    /* The list goes through a file, as the command reads it. */
    snprintf(list, sizeof list, "/tmp/fuzz-apply-%ld.list", (long)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(list, "wb");
    if (!f)
        return 0;
    size_t w = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || w != size)
        return 0;
    cp_err err;
    /* the list's own budget; the map tells a discarded function */
    plan_apply *a = plan_apply_list(model, list, size % 2 ? map : NULL,
                                    UINT32_MAX, 4096, &err);
    if (!a) {
        if (!memchr(err.msg, 0, sizeof err.msg))
            abort();
        return 0;
    }
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    if (a->nlost + a->nresolved != a->n)
        abort();
    for (size_t i = 0; i < a->n; i++)
        if (a->names[i].line == 0 || a->names[i].line > lines ||
            !a->names[i].name[0])
            abort();
    plan_apply_free(a);
    return 0;
}
