/* smp: the samples file, gmon.out and CPDUMP converters, the trace
 * sampler. */
#include "samples/samples.h"

#include <math.h>

#include "test.h"

static smp *parse(const char *text, cp_err *err)
{
    return smp_parse(text, strlen(text), "s.txt", err);
}

static void t_parse_basic(void)
{
    cp_err err;
    smp *s = parse("# codeplace samples 1\r\n"
                   "# source: probe-pcsr\n"
                   "# target: rp2040\n"
                   "# elf: fnv1a64:994d040364a79dd4\n"
                   "# rate_hz: 4000\n"
                   "# duration_s: 10.000\n"
                   "# note: kept as is\n"
                   "# total: 29\n"
                   "# a plain comment\n"
                   "\n"
                   "0x10000146 3\n"
                   "0x10000144 12   # hot loop\n"
                   "0xffffffff 7\n"
                   "0x10000144 7\n", &err);
    if (!s) {
        T_FAIL("%s", err.msg);
        return;
    }
    T_STREQ(s->source, "probe-pcsr");
    T_STREQ(s->target, "rp2040");
    T_EQ(s->rate_hz, 4000);
    T_EQ(s->n, 3);
    T_EQ(s->e[0].addr, 0x10000144);
    T_EQ(s->e[0].count, 19);
    T_EQ(s->e[2].addr, SMP_HALTED);
    T_EQ(smp_total(s), 29);
    T_STREQ(smp_get_extra(s, "note"), "kept as is");
    smp_free(s);
}

static const struct {
    const char *text;
    const char *msg;
} bad_cases[] = {
    {"", "s.txt: empty file"},
    {"0x10 1\n", "s.txt:1: not a samples file"},
    {"# codeplace samples 2\n", "s.txt:1: samples version 2 is not supported"},
    {"# codeplace samples 1\n0x10\n", "s.txt:2: '0x10' has no count"},
    {"# codeplace samples 1\n\n10 1\n", "s.txt:3: address '10' is not hex"},
    {"# codeplace samples 1\n0x1g 1\n", "s.txt:2: address '0x1g' is not hex"},
    {"# codeplace samples 1\n0x100000000 1\n",
     "s.txt:2: address '0x100000000' does not fit in 32 bits"},
    {"# codeplace samples 1\n0x10 -1\n", "s.txt:2: count '-1' is not a decimal"},
    {"# codeplace samples 1\n0x10 1 2\n", "s.txt:2: unexpected '2'"},
    {"# codeplace samples 1\n0x10 99999999999999999999\n",
     "s.txt:2: count '99999999999999999999'"},
    {"# codeplace samples 1\n# rate_hz: fast\n",
     "s.txt:2: rate_hz 'fast' is not a number"},
    {"# codeplace samples 1\n# total: 5\n0x10 4\n",
     "s.txt: header says total 5 but the counts add up to 4"},
};

static void t_parse_errors(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        cp_err err = {{0}};
        smp *s = parse(bad_cases[i].text, &err);
        if (s || strncmp(err.msg, bad_cases[i].msg, strlen(bad_cases[i].msg))) {
            T_FAIL("case %zu: got '%s', want '%s...'", i, s ? "(parsed)" : err.msg,
                   bad_cases[i].msg);
            smp_free(s);
            return;
        }
    }
}

static void t_roundtrip(void)
{
    cp_err err;
    smp *s = smp_new();
    snprintf(s->source, sizeof s->source, "trace");
    s->rate_hz = 1234.5;
    T_EQ(smp_add(s, 0x20000010, 5, &err), 0);
    T_EQ(smp_add(s, 0x10000000, 1, &err), 0);
    T_EQ(smp_add(s, 0x20000010, 2, &err), 0);
    T_EQ(smp_set_extra(s, "method", "every 100\nx", &err), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    T_EQ(smp_write(s, f, &err), 0);
    fclose(f);
    smp_free(s);
    T_ASSERT(strstr(buf, "# method: every 100 x\n"));
    T_ASSERT(strstr(buf, "# total: 8\n0x10000000 1\n0x20000010 7\n"));
    smp *t = smp_parse(buf, len, "rt", &err);
    free(buf);
    T_ASSERT(t);
    T_EQ(t->n, 2);
    T_EQ(t->rate_hz * 10, 12345);
    T_STREQ(smp_get_extra(t, "method"), "every 100 x");
    smp_free(t);
}

/* Builds a gmon.out the way OpenOCD's write_gmon does (auto range). */
static size_t make_gmon(unsigned char *out, const uint32_t *pcs, size_t n,
                        uint32_t rate)
{
    uint32_t min = pcs[0], max = pcs[0];
    for (size_t i = 0; i < n; i++) {
        min = pcs[i] < min ? pcs[i] : min;
        max = pcs[i] > max ? pcs[i] : max;
    }
    if (max < UINT32_MAX)
        max++;
    while (max - min < 2) {
        if (max < UINT32_MAX)
            max++;
        else
            min--;
    }
    uint32_t space = max - min, nb = space / 2;
    if (nb > 128 * 1024)
        nb = 128 * 1024;
    size_t o = 0;
#define W32(v) do { uint32_t v_ = (v); for (int k_ = 0; k_ < 4; k_++) out[o++] = (unsigned char)(v_ >> (8 * k_)); } while (0)
    memcpy(out, "gmon", 4);
    o = 4;
    W32(1);
    W32(0);
    W32(0);
    W32(0);
    out[o++] = 0;
    W32(min);
    W32(max);
    W32(nb);
    W32(rate);
    memset(out + o, 0, 15);
    memcpy(out + o, "seconds", 7);
    o += 15;
    out[o++] = 's';
    unsigned *b = calloc(nb, sizeof *b);
    for (size_t i = 0; i < n; i++) {
        if (pcs[i] < min || pcs[i] >= max)
            continue;
        b[(uint64_t)(pcs[i] - min) * nb / space]++;
    }
    for (uint32_t i = 0; i < nb; i++) {
        out[o++] = (unsigned char)(b[i] & 0xff);
        out[o++] = (unsigned char)(b[i] >> 8);
    }
    free(b);
    return o;
#undef W32
}

static void t_gmon(void)
{
    uint32_t pcs[] = {0x10000100, 0x10000100, 0x10000102, 0x10000200,
                      0x10000100};
    static unsigned char buf[1 << 20];
    size_t len = make_gmon(buf, pcs, 5, 1000);
    cp_err err;
    double bw;
    smp *s = smp_from_gmon(buf, len, "g.out", &bw, &err);
    if (!s) {
        T_FAIL("%s", err.msg);
        return;
    }
    /* high = largest sample + 1, so 257 bytes over 128 buckets: 0x100 and
     * 0x102 share bucket 0 (OpenOCD's resolution), 0x200 has its own. */
    T_ASSERT(bw > 2 && bw < 2.01);
    T_EQ(s->n, 2);
    T_EQ(s->e[0].addr, 0x10000100);
    T_EQ(s->e[0].count, 4);
    T_EQ(s->e[1].addr, 0x10000200);
    T_EQ(s->e[1].count, 1);
    T_EQ(s->rate_hz, 1000);
    T_STREQ(s->source, "gmon");
    smp_free(s);

    /* Truncated: every prefix is refused, none crashes. */
    for (size_t cut = 0; cut < len; cut += 7) {
        s = smp_from_gmon(buf, cut, "g.out", NULL, &err);
        if (s) {
            T_FAIL("prefix of %zu bytes accepted", cut);
            smp_free(s);
            return;
        }
    }
    s = smp_from_gmon(buf, len - 1, "g.out", NULL, &err);
    T_ASSERT(!s && strstr(err.msg, "g.out: truncated gmon.out"));
    memcpy(buf, "gmom", 4);
    s = smp_from_gmon(buf, len, "g.out", NULL, &err);
    T_ASSERT(!s && strstr(err.msg, "no 'gmon' magic"));
}

static void t_gmon_halted_is_lost(void)
{
    /* OpenOCD drops a 0xffffffff sample (it is never below high_pc) and the
     * range then covers 4 GiB: buckets get coarse. */
    uint32_t pcs[] = {0x10000100, 0xffffffff, 0x10000100};
    static unsigned char buf[1 << 20];
    size_t len = make_gmon(buf, pcs, 3, 100);
    cp_err err;
    double bw;
    smp *s = smp_from_gmon(buf, len, "g.out", &bw, &err);
    T_ASSERT(s);
    T_EQ(smp_total(s), 2);
    T_ASSERT(bw > 30000);
    smp_free(s);
}

static size_t make_dump(char *out, size_t cap, const char *noise)
{
    char body[512];
    int n = snprintf(body, sizeof body,
                     "CPDUMP 1 cpu=cortex-m7 rate_hz=10000 duration_ms=5000 "
                     "samples=512 dropped=0 buckets=3\n"
                     "S 60001234 1f4\n"
                     "S 60001238 a\n"
                     "S ffffffff 2\n");
    uint32_t crc = smp_crc32(0, body, (size_t)n);
    return (size_t)snprintf(out, cap, "%s%sE 3 %08x\r\nuart:~$ ", noise, body,
                            crc);
}

static void t_dump(void)
{
    char buf[1024];
    cp_err err;
    T_EQ(smp_crc32(0, "123456789", 9), 0xcbf43926u);
    size_t len = make_dump(buf, sizeof buf, "boot\r\nuart:~$ codeplace dump\r\n");
    smp *s = smp_from_dump(buf, len, "d.txt", &err);
    if (!s) {
        T_FAIL("%s", err.msg);
        return;
    }
    T_EQ(s->n, 3);
    T_EQ(s->e[0].count, 500);
    T_EQ(s->e[2].addr, SMP_HALTED);
    T_STREQ(s->cpu, "cortex-m7");
    T_EQ(s->duration_s, 5);
    smp_free(s);

    /* Cut anywhere before the E line's CRC ends: refused. */
    const char *e = strstr(buf, "\nE 3 ");
    size_t need = (size_t)(e - buf) + 13;
    for (size_t cut = 0; cut < need; cut++) {
        s = smp_from_dump(buf, cut, "d.txt", &err);
        if (s) {
            T_FAIL("cut at %zu accepted", cut);
            smp_free(s);
            return;
        }
    }
    s = smp_from_dump(buf, (size_t)(e - buf) + 1, "d.txt", &err);
    T_ASSERT(!s && strstr(err.msg, "d.txt: dump cut short: no 'E' line after 3 "
                                   "of 3 sample lines"));
    /* One flipped digit: CRC mismatch. */
    char *p = strstr(buf, "1f4");
    p[0] = '2';
    s = smp_from_dump(buf, len, "d.txt", &err);
    T_ASSERT(!s && strstr(err.msg, "CRC mismatch"));
    p[0] = '1';
    /* A sample line lost: the E count says so. */
    char lost[1024];
    const char *s2 = strstr(buf, "S 60001238");
    size_t pre = (size_t)(s2 - buf);
    memcpy(lost, buf, pre);
    strcpy(lost + pre, strchr(s2, '\n') + 1);
    s = smp_from_dump(lost, strlen(lost), "d.txt", &err);
    T_ASSERT(!s && strstr(err.msg, "end line counts 3 sample lines but the dump "
                                   "has 2"));
    s = smp_from_dump("hello\n", 6, "d.txt", &err);
    T_ASSERT(!s && strstr(err.msg, "no 'CPDUMP' line"));
}

/* Every instruction is 16 bits except at 0x104 (32 bits). */
static unsigned width_fn(void *ctx, uint32_t addr)
{
    (void)ctx;
    return addr == 0x104 ? 4 : 2;
}

static void t_sampler_every(void)
{
    cp_err err;
    smp *s = smp_new();
    smp_sampler *sp = smp_sampler_new(s, SMP_EVERY, 3, 0, width_fn, NULL, &err);
    T_ASSERT(sp);
    /* 6 instructions at 0x100..0x10e: 0x100 0x102 0x104(4) 0x108 0x10a
     * 0x10c: samples at the 3rd and 6th. */
    T_EQ(smp_sampler_run(sp, 0x100, 14, 6, &err), 0);
    /* 4 more, split evenly without widths for this address range. */
    T_EQ(smp_sampler_run(sp, 0x200, 8, 4, &err), 0);
    T_EQ(smp_sampler_insns(sp), 10);
    smp_sampler_free(sp);
    smp_normalize(s);
    T_EQ(s->n, 3);
    T_EQ(s->e[0].addr, 0x104);
    T_EQ(s->e[1].addr, 0x10c);
    T_EQ(s->e[2].addr, 0x204);
    smp_free(s);
}

static void t_sampler_poisson(void)
{
    cp_err err;
    uint64_t totals[2];
    for (int rep = 0; rep < 2; rep++) {
        smp *s = smp_new();
        smp_sampler *sp = smp_sampler_new(s, SMP_POISSON, 100, 42, NULL, NULL,
                                          &err);
        for (int i = 0; i < 100000; i++)
            T_EQ(smp_sampler_run(sp, 0x1000 + 16 * (i % 64), 16, 8, &err), 0);
        smp_sampler_free(sp);
        totals[rep] = smp_total(s);
        smp_free(s);
    }
    /* 800,000 instructions, mean gap 100: about 8,000 samples. */
    T_ASSERT(totals[0] > 7700 && totals[0] < 8300);
    T_EQ(totals[0], totals[1]); /* same seed, same samples */
}

static const t_case cases[] = {
    {"parse_basic", t_parse_basic},
    {"parse_errors", t_parse_errors},
    {"roundtrip", t_roundtrip},
    {"gmon", t_gmon},
    {"gmon_halted_is_lost", t_gmon_halted_is_lost},
    {"dump", t_dump},
    {"sampler_every", t_sampler_every},
    {"sampler_poisson", t_sampler_poisson},
    {NULL, NULL},
};

T_MAIN(cases)
