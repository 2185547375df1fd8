/* tgt: the target file parser, the search path and trace header names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/target.h"

#include "test.h"

static const char good[] =
    "codeplace-target 1\n"
    "# a comment\n"
    "name   b1   # trailing comment\n"
    "board  Board #1 rev B\n"
    "cpu    cortex-m33\n"
    "clock  64000000\n"
    "cpi    1.25\n"
    "cache.size 8K\n"
    "cache.ways 4\n"
    "cache.line 16\n"
    "cache.replacement plru\n"
    "cache.hit_cycles 2\n"
    "cache.miss_cycles 33\n"
    "icache_only yes\n"
    "fast   tcm\n"
    "counters.base 0x40001000\n"
    "counters.flush none\n"
    "dwt_pcsr 0xe000101c\n"
    "memory flash  flash          0x08000000 1M   FLASH\n"
    "memory alias  flash_uncached 0x18000000 1M\n"
    "memory tcm    itcm           0x00000000 64K  ITCM\n"
    "memory ram    sram           0x20000000 128K RAM\n";

static void parse_good(void)
{
    cp_err e;
    tgt *t = tgt_parse("g.target", good, strlen(good), &e);
    if (!t)
        T_FAIL("%s", e.msg);
    T_ASSERT(t);
    T_STREQ(t->name, "b1");
    T_STREQ(t->board, "Board"); /* '#' after a blank starts a comment */
    T_STREQ(t->cpu, "cortex-m33");
    T_EQ(t->clock_hz, 64000000);
    T_ASSERT(t->cpi == 1.25);
    T_EQ(t->cache.size, 8192);
    T_EQ(t->cache.ways, 4);
    T_EQ(t->cache.line, 16);
    T_EQ(t->cache.repl, TGT_REPL_PLRU);
    T_EQ(t->cache.hit_cycles, 2);
    T_EQ(t->cache.miss_cycles, 33);
    T_EQ(tgt_cache_sets(&t->cache), 128);
    T_EQ(t->icache_only, 1);
    T_STREQ(t->fast_mem, "tcm");
    T_EQ(t->ctr_base, 0x40001000);
    T_EQ(t->ctr_flush, 0);
    T_EQ(t->ctr_flush_by, TGT_FLUSH_NONE);
    T_EQ(t->dwt_pcsr, 0xe000101c);
    T_EQ(t->nmems, 4);
    T_STREQ(t->mems[0].ld_region, "FLASH");
    T_ASSERT(t->mems[1].ld_region == NULL);
    T_EQ(t->mems[3].size, 128 * 1024);
    T_ASSERT(tgt_is_cached(t, 0x08000100));
    T_ASSERT(!tgt_is_cached(t, 0x18000100));
    T_ASSERT(!tgt_is_cached(t, 0x08100000)); /* one past the end */
    T_EQ(tgt_cached_window(t)->base, 0x08000000);
    T_STREQ(tgt_mem_named(t, "tcm")->name, "tcm");
    T_ASSERT(!tgt_mem_named(t, "nope"));
    T_STREQ(t->path, "g.target");
    T_ASSERT(t->hash == cp_fnv1a(CP_FNV_INIT, good, strlen(good)));
    tgt_free(t);
}

/* good with line `from` (1-based) replaced by `to` ("" deletes it). */
static char *edit(unsigned from, const char *to)
{
    char *out = malloc(sizeof good + strlen(to) + 2);
    size_t o = 0;
    unsigned ln = 1;
    for (const char *p = good; *p; ln++) {
        const char *nl = strchr(p, '\n');
        size_t n = (size_t)(nl - p) + 1;
        if (ln == from) {
            if (*to) {
                memcpy(out + o, to, strlen(to));
                o += strlen(to);
                out[o++] = '\n';
            }
        } else {
            memcpy(out + o, p, n);
            o += n;
        }
        p += n;
    }
    out[o] = 0;
    return out;
}

static void parse_errors(void)
{
    static const struct {
        unsigned line;
        const char *to, *msg;
    } t[] = {
        {1, "codeplace-target", "b.target:1: not a target file"},
        {1, "", "b.target:1: not a target file"},
        {1, "codeplace-target 9", "b.target:1: target file version 9"},
        {5, "cpu 8051", "b.target:5: cpu: '8051' is not"},
        {5, "", "b.target: no 'cpu' line"},
        {6, "clock 0", "b.target:6: clock: 0 Hz"},
        {6, "clock fast", "b.target:6: clock: 'fast' is not a number"},
        {7, "cpi -1", "b.target:7: cpi: '-1' is not"},
        {8, "cache.size 9K", "b.target:8: cache.size 9216 is not cache.ways * "
                             "cache.line * sets"},
        {9, "cache.ways 3", "b.target:8: cache.size 8192 is not cache.ways * "
                            "cache.line * sets (3 * 16 * a power of two)"},
        {10, "cache.line 24", "b.target:10: cache.line: 24 bytes is not a "
                              "power of two"},
        {11, "cache.replacement mru", "b.target:11: cache.replacement: 'mru'"},
        {14, "icache_only maybe", "b.target:14: icache_only: 'maybe' is not "
                                  "yes or no"},
        {15, "fast flash", "b.target:15: fast: memory 'flash' is flash, not "
                           "sram, itcm or dtcm"},
        {15, "fast xram", "b.target:15: fast: no memory named 'xram'"},
        {16, "colour blue", "b.target:16: unknown key 'colour'"},
        {3, "name a/b", "b.target:3: name: 'a/b' is not a target name"},
        {3, "name abcdefghijklmnopqrstuvwxyz", "b.target:3: name:"},
        {20, "memory alias flash_uncached 0x080f0000 1M",
         "b.target:20: memory alias (0x080f0000..0x081effff) overlaps memory "
         "flash (0x08000000..0x080fffff, line 19)"},
        {20, "memory flash sram 0x30000000 1K", "b.target:20: memory 'flash' "
                                                "is given twice"},
        {20, "memory x lava 0x30000000 1K", "b.target:20: memory x: kind "
                                            "'lava'"},
        {20, "memory x sram 0xfffff000 8K", "b.target:20: memory x: "
                                            "0xfffff000 + 8192 bytes runs past"},
        {20, "memory x sram 0x30000000", "b.target:20: memory: expected NAME "
                                         "KIND BASE SIZE"},
        {20, "memory x sram 0x30000000 0", "b.target:20: memory x: size is 0"},
        {19, "", "b.target: no memory of kind flash"},
        {13, "cache.miss_cycles", "b.target:13: cache.miss_cycles: no value"},
        {13, "cache.miss_cycles 1 2", "b.target:13: cache.miss_cycles: "
                                      "expected one value"},
        {14, "cpi 2", "b.target:14: 'cpi' is given twice (first on line 7)"},
        {17, "counters.flush_by register", "b.target:17: counters.flush_by "
                                           "register needs counters.flush"},
        {17, "counters.flush_by magic", "b.target:17: counters.flush_by: "
                                        "'magic' is not none"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char *text = edit(t[i].line, t[i].to);
        cp_err e = {""};
        tgt *g = tgt_parse("b.target", text, strlen(text), &e);
        free(text);
        if (g) {
            tgt_free(g);
            T_FAIL("case %zu (%s) parsed", i, t[i].to);
            continue;
        }
        if (strncmp(e.msg, t[i].msg, strlen(t[i].msg)))
            T_FAIL("case %zu: '%s', wanted '%s...'", i, e.msg, t[i].msg);
    }
    cp_err e;
    T_ASSERT(!tgt_parse("z.target", "codeplace-target 1\0x", 20, &e));
    T_ASSERT(strstr(e.msg, "not a text file"));
    T_ASSERT(!tgt_parse("e.target", "", 0, &e));
    T_ASSERT(strstr(e.msg, "e.target: empty file"));
}

static void header_names(void)
{
    cp_err e;
    tgt *t = tgt_parse("g.target", good, strlen(good), &e);
    T_ASSERT(t);
    char b[32];
    tgt_header_name(t, b, sizeof b);
    T_STREQ(b, "b1");
    T_ASSERT(tgt_header_matches(t, "b1"));
    t->by_path = 1;
    tgt_header_name(t, b, sizeof b);
    T_EQ(strlen(b), 2 + 1 + 8);
    T_ASSERT(tgt_header_matches(t, b));
    T_ASSERT(tgt_header_matches(t, "b1"));
    T_ASSERT(!tgt_header_matches(t, "b1@00000000"));
    T_ASSERT(!tgt_header_matches(t, "b2"));
    char base[32];
    tgt_header_base(b, base, sizeof base);
    T_STREQ(base, "b1");
    tgt_free(t);
}

static void load_and_as(void)
{
    /* The unit binary runs from <root>/build/san/tests: <root>/targets. */
    cp_err e;
    const tgt *r = tgt_load("rp2040", &e);
    if (!r)
        T_FAIL("%s", e.msg);
    T_ASSERT(r);
    T_ASSERT(tgt_load("rp2040", &e) == r);
    T_ASSERT(!r->by_path);
    T_EQ(r->ctr_flush_by, TGT_FLUSH_REG);
    T_EQ(tgt_load("rp2350", &e)->ctr_flush_by, TGT_FLUSH_SETWAY);
    T_ASSERT(strstr(r->path, "/targets/rp2040.target"));
    const tgt *a = tgt_load("mps2-an385", &e);
    T_ASSERT(a);
    T_EQ(tgt_cached_window(a)->base, 0);
    const tgt *m7 = tgt_load("imxrt1062", &e);
    T_ASSERT(m7);
    tgt x = *a;
    tgt_take_timing(&x, m7);
    T_EQ(x.cache.size, 32768);
    T_EQ(x.cache.line, 32);
    T_EQ(x.cache.miss_cycles, 100);
    T_EQ(x.icache_only, 1);
    T_STREQ(x.name, "mps2-an385");
    T_ASSERT(x.mems == a->mems);
    T_ASSERT(!tgt_load("esp32", &e));
    T_ASSERT(strstr(e.msg, "no target 'esp32'"));
    T_ASSERT(!tgt_load("no/such.target", &e));
    T_ASSERT(strstr(e.msg, "no/such.target"));
    T_ASSERT(!tgt_load("../x", &e));
    tgt_unload_all();
    T_ASSERT(tgt_find("rp2350"));
    tgt_unload_all();
}

/* The linker stub each core gets (tgt_stub_thumb2): what GNU ld 2.40
 * made for each -mcpu (tests/cli/t0625 links a cortex-m23 image). */
static void stub_kinds(void)
{
    static const struct {
        const char *cpu;
        int thumb2;
    } want[] = {
        {"cortex-m0", 0},  {"cortex-m0plus", 0}, {"cortex-m23", 0},
        {"cortex-m3", 1},  {"cortex-m4", 1},     {"cortex-m7", 1},
        {"cortex-m33", 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char text[sizeof good + 32];
        const char *at = strstr(good, "cpu    cortex-m33\n");
        size_t head = (size_t)(at - good);
        snprintf(text, sizeof text, "%.*scpu    %s\n%s", (int)head, good,
                 want[i].cpu, at + strlen("cpu    cortex-m33\n"));
        cp_err e;
        tgt *t = tgt_parse("s.target", text, strlen(text), &e);
        if (!t)
            T_FAIL("%s: %s", want[i].cpu, e.msg);
        T_ASSERT(t);
        if (!t)
            continue;
        T_EQ(tgt_stub_thumb2(t), want[i].thumb2);
        T_EQ(tgt_stub_bytes(t), want[i].thumb2 ? 8u : 16u);
        tgt_free(t);
    }
    T_EQ(tgt_stub_thumb2(NULL), 0);
}

/* The address-to-line span: the cached window, its non-allocating alias
 * (looked up in the window's lines), and memory the cache never sees. */
static void line_span(void)
{
    cp_err e;
    const tgt *t = tgt_load("rp2040", &e); /* 8-byte lines: shift 3 */
    if (!t)
        T_FAIL("%s", e.msg);
    T_ASSERT(t);
    uint32_t f = 7, l = 7, at;
    T_EQ(tgt_line_span(t, 0x10000104, 10, 3, &f, &l), TGT_VIA_CACHE);
    T_EQ(f, 0x10000104u >> 3);
    T_EQ(l, 0x1000010du >> 3);
    T_EQ(tgt_line_span(t, 0x10000107, 0, 3, &f, &l), TGT_VIA_CACHE);
    T_EQ(f, l); /* length 0 counts as 1 byte */
    T_EQ(tgt_line_span(t, 0x11000208, 8, 3, &f, &l), TGT_VIA_NOFILL);
    T_EQ(f, 0x10000208u >> 3);
    T_EQ(l, f);
    f = l = 7;
    T_EQ(tgt_line_span(t, 0x12000000, 4, 3, &f, &l), TGT_VIA_NONE);
    T_EQ(tgt_line_span(t, 0x20000000, 4, 3, &f, &l), TGT_VIA_NONE);
    T_EQ(tgt_line_span(t, 0x30000000, 4, 3, &f, &l), TGT_VIA_NONE);
    T_EQ(f, 7);
    T_EQ(l, 7);
    T_EQ(tgt_cache_addr(t, 0x11000010, &at), TGT_VIA_NOFILL);
    T_EQ(at, 0x10000010);
    T_EQ(tgt_cache_addr(t, 0x20000010, &at), TGT_VIA_NONE);
    T_EQ(at, 0x20000010);
}

static const t_case cases[] = {
    {"line_span", line_span},
    {"parse_good", parse_good},
    {"stub_kinds", stub_kinds},
    {"parse_errors", parse_errors},
    {"header_names", header_names},
    {"load_and_as", load_and_as},
    {NULL, NULL},
};
T_MAIN(cases)
