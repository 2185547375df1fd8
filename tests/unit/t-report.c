/* rep_prof, rep_view_rows, rep_diff, rep_names on the m0 fixture. */
#include "report/diff.h"
#include "report/profile.h"
#include "report/report.h"

#include "test.h"

static img *open_m0(void)
{
    char elf[512], map[512];
    cp_err err;
    snprintf(elf, sizeof elf, "%s/m0.elf", t_fixture_dir());
    snprintf(map, sizeof map, "%s/m0.map", t_fixture_dir());
    img *im = img_open(elf, map, &err);
    if (!im)
        printf("#   %s\n", err.msg);
    return im;
}

static const rep_row *row(const rep_profile *p, const char *name)
{
    for (size_t i = 0; i < p->nrows; i++)
        if (!strcmp(p->rows[i].name, name))
            return &p->rows[i];
    return NULL;
}

/* Every sample lands in exactly one row, whatever the address. */
static void t_rows_add_up(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    smp *s = smp_new();
    cp_err err;
    uint64_t x = 12345, want = 0;
    for (int i = 0; i < 5000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t a = (uint32_t)(x >> 32);
        if (i % 3 == 0)
            a = 0x10000000 + (a % 0x6000); /* mostly inside the image */
        T_EQ(smp_add(s, a, 1 + i % 5, &err), 0);
        want += 1 + i % 5;
    }
    T_EQ(smp_add(s, SMP_HALTED, 9, &err), 0);
    want += 9;
    smp_normalize(s);
    rep_profile *p = rep_prof_build(im, s, tgt_find("rp2040"), &err);
    T_ASSERT(p);
    uint64_t sum = 0, lib = 0, sec = 0;
    for (size_t i = 0; i < p->nrows; i++)
        sum += p->rows[i].samples;
    for (size_t i = 0; i < p->nlibs; i++)
        lib += p->libs[i].samples;
    for (size_t i = 0; i < p->nsecs; i++)
        sec += p->secs[i].samples;
    T_EQ(p->total, want);
    T_EQ(sum, want);
    T_EQ(lib, want);
    T_EQ(sec, want);
    T_EQ(p->halted, 9);
    T_ASSERT(row(p, "(halted)"));
    T_ASSERT(row(p, "(memory rom)") || row(p, "(outside the image)"));
    rep_prof_free(p);
    smp_free(s);
    img_free(im);
}

static void t_attribution_and_view(void)
{
    img *im = open_m0();
    T_ASSERT(im);
    const img_func *sum = img_find(im, "fx_sum");
    const img_func *scale = img_find(im, "fx_scale");
    T_ASSERT(sum && scale);
    smp *s = smp_new();
    cp_err err;
    T_EQ(smp_add(s, sum->addr, 10, &err), 0);
    T_EQ(smp_add(s, sum->addr + sum->size - 2, 5, &err), 0);
    T_EQ(smp_add(s, sum->addr + sum->size, 1, &err), 0); /* next function */
    T_EQ(smp_add(s, scale->addr | 1, 7, &err), 0);       /* Thumb bit */
    smp_normalize(s);
    rep_profile *p = rep_prof_build(im, s, NULL, &err);
    T_ASSERT(p);
    T_EQ(row(p, "fx_sum")->samples, 15);
    T_EQ(row(p, "fx_scale")->samples, 7);
    T_STREQ(row(p, "fx_sum")->library, "(objects)");
    T_STREQ(row(p, "fx_sum")->section, ".text");

    rep_view v = {.sort = REP_SORT_SAMPLES};
    size_t n, nmatch;
    const rep_row **r = rep_view_rows(p, &v, &n, &nmatch);
    T_EQ(n, 3);
    T_STREQ(r[0]->name, "fx_sum");
    T_STREQ(r[1]->name, "fx_scale");
    free(r);
    v.func_glob = "fx_sum_al*"; /* an alias matches */
    r = rep_view_rows(p, &v, &n, &nmatch);
    T_EQ(n, 1);
    T_STREQ(r[0]->name, "fx_sum");
    free(r);
    v.func_glob = NULL;
    v.sort = REP_SORT_DENSITY;
    v.top = 1;
    r = rep_view_rows(p, &v, &n, &nmatch);
    T_EQ(nmatch, 3);
    T_EQ(n, 1);
    T_STREQ(r[0]->name, "fx_scale"); /* 7 samples in 8 bytes */
    free(r);
    v.all = 1;
    v.top = 0;
    v.lib_glob = "libgcc*";
    r = rep_view_rows(p, &v, &n, &nmatch);
    T_EQ(n, 30);
    free(r);

    /* Misses: per function and for code outside the functions. */
    rep_miss m[] = {{sum, NULL, 40}, {NULL, "(elsewhere)", 3}, {sum, NULL, 2}};
    T_EQ(rep_prof_set_misses(p, m, 3, &err), 0);
    T_ASSERT(p->have_misses);
    T_EQ(p->total_misses, 45);
    T_EQ(row(p, "fx_sum")->misses, 42);
    T_EQ(row(p, "(elsewhere)")->misses, 3);
    char sumtxt[128];
    rep_lib_summary(sumtxt, sizeof sumtxt, p, 3);
    T_STREQ(sumtxt, "100 % (objects)"); /* by samples, not misses */
    rep_prof_free(p);
    smp_free(s);
    img_free(im);
}

static void t_names(void)
{
    cp_err err;
    const char *text = "# plan\n  tcp_input   # 120 bytes\n\n\tmemcpy\r\n#x\nudp";
    rep_names *l = rep_names_parse(text, strlen(text), "n.txt", &err);
    T_ASSERT(l);
    T_EQ(l->n, 3);
    T_STREQ(l->name[0], "tcp_input");
    T_EQ(l->line[0], 2);
    T_STREQ(l->name[1], "memcpy");
    T_EQ(l->line[1], 4);
    T_STREQ(l->name[2], "udp");
    rep_names_free(l);
}

static void t_diff_same(void)
{
    img *a = open_m0(), *b = open_m0();
    T_ASSERT(a && b);
    cp_err err;
    rep_diff *d = rep_diff_build(a, b, &err);
    T_ASSERT(d);
    T_EQ(d->nsame, img_nfuncs(a));
    T_EQ(d->nchanged + d->nadded + d->nremoved, 0);
    T_EQ(d->old_bytes, d->new_bytes);
    rep_diff_free(d);
    img_free(a);
    img_free(b);
}

static const t_case cases[] = {
    {"rows_add_up", t_rows_add_up},
    {"attribution_and_view", t_attribution_and_view},
    {"names", t_names},
    {"diff_same", t_diff_same},
    {NULL, NULL},
};

T_MAIN(cases)
