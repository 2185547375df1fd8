/* The image model through its library API, on the built fixtures. */
#include "image/image.h"

#include "test.h"

static img *open_fx(const char *name, int with_map)
{
    char elf[512], map[512];
    snprintf(elf, sizeof elf, "%s/%s.elf", t_fixture_dir(), name);
    snprintf(map, sizeof map, "%s/%s.map", t_fixture_dir(), name);
    cp_err e;
    img *im = img_open(elf, with_map ? map : NULL, &e);
    if (!im)
        printf("# %s\n", e.msg);
    return im;
}

static void lookup_every_byte(void)
{
    img *im = open_fx("m0", 1);
    T_ASSERT(im);
    size_t n = img_nfuncs(im);
    T_ASSERT(n > 40);
    for (size_t i = 0; i < n; i++) {
        const img_func *f = img_func_at(im, i);
        if (i + 1 < n)
            T_ASSERT(f->addr <= img_func_at(im, i + 1)->addr);
        for (uint32_t a = f->addr; a < f->addr + f->size; a += 2) {
            const img_func *g = img_lookup(im, a);
            /* Assembly entry points nested in another routine (libgcc's
             * __aeabi_cdrcmple holds __aeabi_cdcmple) win: innermost. */
            int nested = g && g != f && g->addr > f->addr && g->addr <= a &&
                         g->addr < f->addr + f->size;
            if (g != f && !nested) {
                T_FAIL("lookup 0x%08x gave %s, want %s", a, g ? g->name : "NULL",
                       f->name);
                img_free(im);
                return;
            }
        }
    }
    T_ASSERT(img_lookup(im, 0) == NULL);
    T_ASSERT(img_lookup(im, 0xffffffff) == NULL);
    img_free(im);
}

static void find_and_alias(void)
{
    img *im = open_fx("m7", 1);
    T_ASSERT(im);
    const img_func *f = img_find(im, "fx_sum_alias");
    T_ASSERT(f);
    T_STREQ(f->name, "fx_sum");
    T_EQ(f->nalias, 1);
    T_ASSERT(img_find(im, "memcpy") == img_find(im, "__aeabi_memcpy"));
    T_ASSERT(img_find(im, "no_such_function") == NULL);
    T_STREQ(f->isec, ".text.fx_sum");
    T_STREQ(f->object, "fx-m7.o");
    T_ASSERT(f->archive == NULL);
    const img_func *m = img_find(im, "memcpy");
    T_STREQ(m->archive, "libc.a");
    T_STREQ(img_cpu_arch(im), "v7E-M");
    img_free(im);
}

static void sections_segments(void)
{
    img *im = open_fx("m7", 1);
    T_ASSERT(im);
    const img_section *d = img_section_by_name(im, ".data");
    T_ASSERT(d);
    T_EQ(d->addr, 0x20000000);
    T_ASSERT(d->lma >= 0x60000000); /* copied from flash at boot */
    T_ASSERT(img_nsegments(im) >= 2);
    uint32_t word;
    const img_func *f = img_find(im, "fx_special");
    T_EQ(img_read(im, f->addr, &word, 4), 0);
    T_EQ(img_read(im, 0x10, &word, 4), -1);
    T_ASSERT(img_nregions(im) == 2);
    T_STREQ(img_region_at(im, 0)->name, "flash");
    T_ASSERT(img_region_at(im, 0)->used > 10000);
    T_ASSERT(img_nisecs(im) > 40);
    for (size_t i = 1; i < img_nisecs(im); i++)
        T_ASSERT(img_isec_at(im, i - 1)->addr <= img_isec_at(im, i)->addr);
    img_free(im);
}

static void hash_stable(void)
{
    img *a = open_fx("m0", 0), *b = open_fx("m0", 1), *c = open_fx("m7", 0);
    T_ASSERT(a && b && c);
    T_STREQ(img_hash(a), img_hash(b));
    T_ASSERT(strcmp(img_hash(a), img_hash(c)) != 0);
    img_free(a);
    img_free(b);
    img_free(c);
}

static void errors_name_the_file(void)
{
    static const char *const bad[] = {"empty", "text", "header-only",
                                      "truncated", "x86", "stripped"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/bad/%s.elf", t_fixture_dir(), bad[i]);
        cp_err e = {{0}};
        img *im = img_open(p, NULL, &e);
        T_ASSERT(im == NULL);
        T_ASSERT(strstr(e.msg, bad[i]) != NULL);
    }
}

/* m0.map cut at every line end, and at byte offsets between: up to its
 * OUTPUT line, or inside a line, img_open refuses it, or img_map_check
 * does, naming the map; the whole map passes both. */
static void map_cut_anywhere(void)
{
    char elf_path[512], map_path[512];
    snprintf(elf_path, sizeof elf_path, "%s/m0.elf", t_fixture_dir());
    snprintf(map_path, sizeof map_path, "%s/m0.map", t_fixture_dir());
    cp_err e;
    char *elf = NULL, *map = NULL;
    size_t elf_len, map_len;
    T_ASSERT(cp_read_file(elf_path, &elf, &elf_len, &e) == 0);
    if (cp_read_file(map_path, &map, &map_len, &e) < 0) {
        free(elf);
        T_FAIL("%s", e.msg);
        return;
    }
    const char *out = strstr(map, "\nOUTPUT(");
    size_t end = out ? (size_t)(strchr(out + 1, '\n') - map) : 0;
    size_t tried = 0, passed = 0;
    for (size_t cut = 1; out && cut <= map_len; cut++) {
        int whole = cut == map_len;
        if (!whole && map[cut - 1] != '\n' && cut % 997)
            continue;
        img *im = img_open_buffer("m0.elf", elf, elf_len, "cut.map", map,
                                  cut, &e);
        int ok = im && img_map_check(im, &e) == 0;
        img_free(im);
        tried++;
        if (ok)
            passed++;
        if (ok != (cut > end && map[cut - 1] == '\n')) {
            T_FAIL("cut at %zu of %zu bytes: %s", cut, map_len,
                   ok ? "accepted" : e.msg);
            break;
        }
        if (!ok && !strstr(e.msg, "cut.map")) {
            T_FAIL("cut at %zu: the error does not name the map: %s", cut,
                   e.msg);
            break;
        }
    }
    free(elf);
    free(map);
    T_ASSERT(out != NULL);
    T_ASSERT(tried > 1000 && passed >= 1);
}

static const t_case cases[] = {
    {"lookup_every_byte", lookup_every_byte},
    {"find_and_alias", find_and_alias},
    {"sections_segments", sections_segments},
    {"hash_stable", hash_stable},
    {"errors_name_the_file", errors_name_the_file},
    {"map_cut_anywhere", map_cut_anywhere},
    {NULL, NULL},
};
T_MAIN(cases)
