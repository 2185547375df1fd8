/* GNU ld's long-branch stub order (plan/ldstub.c): the hash, the names, and
 * the order of real stub sections GNU ld 2.40 made for the demo firmware
 * (arm-none-eabi-nm -n of the relinked images, the stubs in flash). */
#include "plan/ldstub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static void hash_values(void)
{
    /* Computed apart from this code, from bfd/hash.c's loop with a 64-bit
     * unsigned long. */
    T_EQ(plan_ldstub_hash(""), 0);
    T_EQ(plan_ldstub_hash("a"), 0xc9a064);
    T_EQ(plan_ldstub_hash("000007f2_floor+0_3"), 0x57735ac);
    T_ASSERT(plan_ldstub_hash("ab") != plan_ldstub_hash("ba"));
}

static void names(void)
{
    char buf[128];
    plan_ldstub_name(buf, sizeof buf, 0x7f2, "floor", PLAN_LDSTUB_THUMB_ONLY);
    T_STREQ(buf, "000007f2_floor+0_3");
    plan_ldstub_name(buf, sizeof buf, 0x65f, "frexp", PLAN_LDSTUB_THUMB2_ONLY);
    T_STREQ(buf, "0000065f_frexp+0_22");
    plan_ldstub_name_local(buf, sizeof buf, 0x7f2, 0x6c1, 0x1a,
                           PLAN_LDSTUB_THUMB_ONLY);
    T_STREQ(buf, "000007f2_6c1:1a+0_3");
}

/* Sorts names (given in creation order) by plan_ldstub_key and compares
 * with the order ld laid them out in (want). */
static int order_is(uint32_t id, int type, const char *const *want, size_t n,
                    int say)
{
    /* Creation order: a fixed shuffle of the layout order (the hash decides
     * the layout wherever no two names share a bucket). */
    size_t *perm = malloc(n * sizeof *perm);
    uint64_t *key = malloc(n * sizeof *key);
    int ok = perm && key;
    for (size_t i = 0; ok && i < n; i++)
        perm[i] = (i * 7 + 3) % n;
    for (size_t i = 0; ok && i < n; i++) {
        char buf[128];
        plan_ldstub_name(buf, sizeof buf, id, want[perm[i]], type);
        key[i] = plan_ldstub_key(buf, (uint32_t)i);
    }
    for (size_t i = 0; ok && i < n; i++)
        for (size_t j = 0; j < n; j++)
            if ((key[i] < key[j]) != (perm[i] < perm[j]) && i != j) {
                if (say)
                    printf("# %s before %s?\n", want[perm[i]],
                           want[perm[j]]);
                ok = 0;
                break;
            }
    free(perm);
    free(key);
    return ok;
}

static void order_rp2040(void)
{
    /* rp2040-ram-16K.elf: .text.__stub after libgcc.a(_divdi3.o)'s .text,
     * section id 0x7f2 (the calls to global symbols; two static targets
     * are left out). */
    static const char *const want[] = {
        "floor", "__aeabi_dcmpgt", "__atomic_exchange_ungetc", "expm1",
        "__aeabi_uidivmod", "sqrt", "__aeabi_fadd", "__aeabi_i2d",
        "__aeabi_i2f", "__aeabi_dcmplt", "demo_crc32", "demo_parse_line",
        "demo_make_line", "__aeabi_fdiv", "__gnu_thumb1_case_uqi",
        "__aeabi_idivmod", "__aeabi_dcmpeq", "strnlen", "__aeabi_dcmpge",
        "memset", "__aeabi_f2iz", "__gnu_thumb1_case_uhi",
        "codeplace_iteration", "__aeabi_uidiv", "atan", "demo_calibrate",
        "__aeabi_dsub", "__aeabi_fsub", "__aeabi_llsr",
        "__double_computeInvPow5", "__log10Pow5", "scalbn", "__fpclassifyd",
        "__aeabi_idiv", "ungetc", "__ceil_log2pow5"};
    T_ASSERT(order_is(0x7f2, PLAN_LDSTUB_THUMB_ONLY, want,
                      sizeof want / sizeof *want, 1));
    /* The same names with another group id come out in another order. */
    T_ASSERT(!order_is(0x7f3, PLAN_LDSTUB_THUMB_ONLY, want,
                       sizeof want / sizeof *want, 0));
}

static void order_imxrt(void)
{
    /* imxrt1062-ram-32K.elf: .text.floorf.__stub, section id 0x65f. */
    static const char *const want[] = {
        "__aeabi_fmul", "__aeabi_ldivmod", "__aeabi_fdiv", "__aeabi_f2iz",
        "frexp", "demo_filter", "demo_report", "demo_json_long",
        "demo_parse_line", "demo_make_line"};
    T_ASSERT(order_is(0x65f, PLAN_LDSTUB_THUMB2_ONLY, want,
                      sizeof want / sizeof *want, 1));
    T_ASSERT(!order_is(0x65f, PLAN_LDSTUB_THUMB_ONLY, want,
                       sizeof want / sizeof *want, 0));
}

static void bucket_newest_first(void)
{
    /* Two names in one bucket: the one created later is laid out first. */
    T_EQ(plan_ldstub_hash("000007f2_lrint+0_3") % PLAN_LDSTUB_BUCKETS,
         plan_ldstub_hash("000007f2___math_divzero+0_3") %
             PLAN_LDSTUB_BUCKETS);
    T_ASSERT(plan_ldstub_key("000007f2___math_divzero+0_3", 5) <
             plan_ldstub_key("000007f2_lrint+0_3", 2));
}

static void link_ids(void)
{
    char map[512];
    snprintf(map, sizeof map, "%s/m0.map", t_fixture_dir());
    cp_err err;
    plan_ldstub_link *k = plan_ldstub_link_read(map, NULL, &err);
    if (!k)
        printf("# %s\n", err.msg);
    T_ASSERT(k != NULL);
    plan_ldstub_link_free(k);
    T_ASSERT(plan_ldstub_link_read("/nonexistent.map", NULL, &err) == NULL);
    T_ASSERT(strstr(err.msg, "/nonexistent.map") != NULL);
}

static const t_case cases[] = {
    {"hash_values", hash_values},
    {"names", names},
    {"order_rp2040", order_rp2040},
    {"order_imxrt", order_imxrt},
    {"bucket_newest_first", bucket_newest_first},
    {"link_ids", link_ids},
    {NULL, NULL},
};
T_MAIN(cases)
