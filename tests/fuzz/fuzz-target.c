/* libFuzzer harness: the target file parser (docs/formats/target.md). A
 * target that parses is queried the way the tools use it (memory lookups,
 * the cached window, a trace header name) so that what the parser accepts
 * is also safe to use. Input: target file text. */
#include <stddef.h>
#include <stdint.h>

#include "target/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_err err;
    tgt *t = tgt_parse("fuzz.target", (const char *)data, size, &err);
    if (!t)
        return 0;
    for (unsigned i = 0; i < t->nmems; i++) {
        const tgt_mem *m = &t->mems[i];
        if (tgt_mem_at(t, m->base) != m ||
            tgt_mem_at(t, m->base + (m->size - 1)) != m)
            __builtin_trap(); /* memories overlap or lookups disagree */
    }
    const tgt_mem *w = tgt_cached_window(t);
    if (!w || !tgt_is_cached(t, w->base) || !tgt_mem_named(t, t->fast_mem))
        __builtin_trap();
    uint32_t sets = tgt_cache_sets(&t->cache);
    if (!sets || (sets & (sets - 1)) ||
        sets * t->cache.ways * t->cache.line != t->cache.size)
        __builtin_trap();
    char name[32];
    tgt_header_name(t, name, sizeof name);
    t->by_path = 1;
    tgt_header_name(t, name, sizeof name);
    if (!tgt_header_matches(t, name))
        __builtin_trap();
    tgt_free(t);
    return 0;
}
