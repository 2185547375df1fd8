/* util, jw, cli helpers, target presets. */
#include "util/util.h"
#include "util/jw.h"
#include "target/target.h"
#include "cli/cli.h"
#include "util/wfile.h"

#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static void parse_numbers(void)
{
    static const struct { const char *s; int suffix; int ok; uint64_t v; } t[] = {
        {"0", 0, 1, 0}, {"42", 0, 1, 42}, {"0x10", 0, 1, 16},
        {"16K", 1, 1, 16384}, {"16K", 0, 0, 0}, {"2M", 1, 1, 2 << 20},
        {"1KiB", 1, 1, 1024}, {"-1", 0, 0, 0}, {"", 0, 0, 0}, {"12x", 1, 0, 0},
        {"18446744073709551615", 0, 1, UINT64_MAX},
        {"18446744073709551616", 0, 0, 0}, {"20000000000G", 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint64_t v = 0;
        int ok = cp_parse_u64(t[i].s, t[i].suffix, &v) == 0;
        if (ok != t[i].ok || (ok && v != t[i].v)) {
            T_FAIL("'%s': ok=%d v=%" PRIu64, t[i].s, ok, v);
            return;
        }
    }
}

static void glob(void)
{
    T_ASSERT(cp_glob("*", ""));
    T_ASSERT(cp_glob("net_*", "net_core"));
    T_ASSERT(!cp_glob("net_*", "xnet_core"));
    T_ASSERT(cp_glob("*_isr", "arm_halt_isr"));
    T_ASSERT(cp_glob("a?c*d", "abcxxd"));
    T_ASSERT(!cp_glob("a?c", "ac"));
}

static void pool_and_grow(void)
{
    cp_pool *p = cp_pool_new();
    T_ASSERT(p);
    const char *a = cp_pool_str(p, "hello");
    const char *b = cp_pool_strn(p, "worldwide", 5);
    T_STREQ(a, "hello");
    T_STREQ(b, "world");
    for (int i = 0; i < 20000; i++)
        T_ASSERT(cp_pool_str(p, "some longer string to fill blocks"));
    T_STREQ(a, "hello");
    cp_pool_free(p);
    int *v = NULL;
    size_t cap = 0;
    T_EQ(cp_grow((void **)&v, &cap, 1000, sizeof *v), 0);
    T_ASSERT(cap >= 1000);
    v[999] = 1;
    T_EQ(cp_grow((void **)&v, &cap, SIZE_MAX / 2, sizeof *v), -1);
    free(v);
}

static void json_writer(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jw w;
    jw_init(&w, f, 0);
    jw_obj_begin(&w);
    jw_key(&w, "a");
    jw_int(&w, -3);
    jw_key(&w, "s");
    jw_str(&w, "q\"\\\n\x01");
    jw_key(&w, "l");
    jw_arr_begin(&w);
    jw_uint(&w, 1);
    jw_double(&w, 0.5);
    jw_null(&w);
    jw_bool(&w, 1);
    jw_arr_end(&w);
    jw_key(&w, "e");
    jw_arr_begin(&w);
    jw_arr_end(&w);
    jw_obj_end(&w);
    T_EQ(jw_finish(&w), 0);
    fclose(f);
    T_STREQ(buf, "{\"a\":-3,\"s\":\"q\\\"\\\\\\n\\u0001\",\"l\":[1,0.5,null,true],\"e\":[]}\n");
    free(buf);
}

static void json_nesting_error(void)
{
    FILE *f = fopen("/dev/null", "w");
    jw w;
    jw_init(&w, f, 1);
    jw_obj_begin(&w);
    T_EQ(jw_finish(&w), -1);
    fclose(f);
}

static void cache_spec(void)
{
    tgt_cache c = tgt_find("rp2040")->cache;
    cp_err e;
    T_EQ(tgt_parse_cache("32K,4,16,fifo", &c, &e), 0);
    T_EQ(c.size, 32768);
    T_EQ(c.ways, 4);
    T_EQ(c.line, 16);
    T_EQ(c.repl, TGT_REPL_FIFO);
    T_EQ(tgt_cache_sets(&c), 512);
    T_EQ(c.miss_cycles, 70); /* timing kept from the preset */
    T_EQ(tgt_parse_cache("16K,2", &c, &e), -1);
    T_EQ(tgt_parse_cache("16K,2,7", &c, &e), -1);
    T_EQ(tgt_parse_cache("16K,0,8", &c, &e), -1);
    T_EQ(tgt_parse_cache("24K,2,8", &c, &e), -1);
    T_EQ(tgt_parse_cache("24K,3,8,plru", &c, &e), -1);
    T_EQ(tgt_parse_cache("16K,2,8,mru", &c, &e), -1);
    T_ASSERT(strstr(e.msg, "policy"));
}

static void presets(void)
{
    const tgt *t = tgt_find("rp2040");
    T_ASSERT(t);
    T_EQ(tgt_cache_sets(&t->cache), 1024);
    T_ASSERT(tgt_is_cached(t, 0x10000100));
    T_ASSERT(!tgt_is_cached(t, 0x11000100)); /* non-allocating alias */
    T_ASSERT(!tgt_is_cached(t, 0x20000000));
    T_STREQ(tgt_mem_at(t, 0x20001000)->name, "sram");
    t = tgt_find("imxrt1062");
    T_ASSERT(t);
    T_EQ(tgt_cache_sets(&t->cache), 512);
    T_ASSERT(tgt_is_cached(t, 0x60001000));
    T_ASSERT(!tgt_is_cached(t, 0x00000100)); /* ITCM */
    T_STREQ(t->fast_mem, "itcm");
    T_ASSERT(tgt_find("rp2350"));
    T_ASSERT(!tgt_find("esp32"));
    unsigned n = 0;
    while (tgt_at(n))
        n++;
    T_EQ(n, 7); /* three boards and four QEMU machines in targets/ */
}

static void commas(void)
{
    char b[32];
    T_STREQ(cp_commas(b, 0), "0");
    T_STREQ(cp_commas(b, 999), "999");
    T_STREQ(cp_commas(b, 1000), "1,000");
    T_STREQ(cp_commas(b, 1234567), "1,234,567");
}

static void hz(void)
{
    char b[32];
    T_STREQ(cp_hz(b, 13735500.0, 4), "13.74 MHz");
    T_STREQ(cp_hz(b, 13735500.0, 3), "13.7 MHz");
    T_STREQ(cp_hz(b, 13735500.0, 8), "13.7355 MHz");
    T_STREQ(cp_hz(b, 1000.0, 6), "1 kHz");
    T_STREQ(cp_hz(b, 200.0, 6), "200 Hz");
    T_STREQ(cp_hz(b, 125e6, 6), "125 MHz");
    T_STREQ(cp_hz(b, 999999.7, 3), "1 MHz");
    T_STREQ(cp_hz(b, 18670649.74, 2), "19 MHz");
    T_STREQ(cp_hz(b, 12.5, 6), "12.5 Hz");
    T_STREQ(cp_hz(b, 1.5e9, 2), "1.5 GHz");
    T_STREQ(cp_hz(b, 0.0, 3), "0 Hz");
}

static int write_ok(FILE *f, void *arg, cp_err *err)
{
    (void)err;
    return fputs(arg, f) < 0 ? -1 : 0;
}

static int write_fails(FILE *f, void *arg, cp_err *err)
{
    fputs(arg, f);
    return cp_seterr(err, "the writer failed");
}

/* cp_wfile: whole or not at all, the old file kept on failure. */
static void whole_files(void)
{
    char dir[256], path[300], buf[320];
    snprintf(dir, sizeof dir, "%s/cp-wfile-%d",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    T_ASSERT(mkdir(dir, 0777) == 0);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    cp_err err;
    T_EQ(cp_wfile_write(path, write_ok, "first\n", &err), 0);
    T_EQ(cp_wfile_write(path, write_fails, "partial", &err), -1);
    T_STREQ(err.msg, "the writer failed");
    FILE *f = fopen(path, "r");
    T_ASSERT(f);
    T_ASSERT(fgets(buf, sizeof buf, f));
    fclose(f);
    T_STREQ(buf, "first\n");
    /* Nothing but the destination is left in the directory. */
    snprintf(buf, sizeof buf, "%s.tmp", path);
    cp_wfile w;
    T_EQ(cp_wfile_open(&w, path, &err), 0);
    T_ASSERT(w.tmp && !strncmp(w.tmp, buf, strlen(buf)));
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s", w.tmp);
    cp_wfile_abort(&w);
    T_ASSERT(access(tmp, F_OK) != 0);
    /* Not regular files are written directly; a directory is an error. */
    T_EQ(cp_wfile_write("/dev/null", write_ok, "x", &err), 0);
    T_EQ(cp_wfile_write(dir, write_ok, "x", &err), -1);
    T_ASSERT(strstr(err.msg, "is a directory"));
    T_EQ(cp_wfile_write("/dev/full", write_ok, "x", &err), -1);
    T_ASSERT(strstr(err.msg, "No space left"));
    T_EQ(cp_wfile_write("/nonexistent-dir/x", write_ok, "x", &err), -1);
    T_ASSERT(strstr(err.msg, "/nonexistent-dir/x"));
    unlink(path);
    rmdir(dir);
}

static const t_case cases[] = {
    {"parse_numbers", parse_numbers},
    {"glob", glob},
    {"pool_and_grow", pool_and_grow},
    {"json_writer", json_writer},
    {"json_nesting_error", json_nesting_error},
    {"cache_spec", cache_spec},
    {"presets", presets},
    {"commas", commas},
    {"hz", hz},
    {"whole_files", whole_files},
    {NULL, NULL},
};
T_MAIN(cases)
