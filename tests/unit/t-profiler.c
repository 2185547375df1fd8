/* The on-target profiler's portable core (firmware/profiler/cpprof.c):
 * exception frame decode, the bucket buffer and the dump encoder, checked
 * against zlib's crc32() as an independent CRC-32. */
#include "cpprof.h"
#include "test.h"

#include <zlib.h>

/* A stacked basic frame: r0 r1 r2 r3 r12 lr pc xpsr. */
static void make_frame(uint32_t *f, uint32_t pc)
{
    for (uint32_t i = 0; i < 8; i++)
        f[i] = 0xa0000000u + i; /* distinct values around the PC */
    f[5] = 0x10000abdu;         /* lr: must not be taken for the PC */
    f[6] = pc;
    f[7] = 0x21000000u;         /* xPSR with the Thumb bit */
}

static void t_frame_msp_psp(void)
{
    uint32_t msp[8], psp[8];
    make_frame(msp, 0x10000100u);
    make_frame(psp, 0x60002000u);
    static const struct {
        uint32_t exc_return;
        int on_psp;
    } cases[] = {
        {0xfffffff1u, 0}, /* handler mode, MSP */
        {0xfffffff9u, 0}, /* thread mode, MSP */
        {0xfffffffdu, 1}, /* thread mode, PSP */
        {0xffffffe1u, 0}, /* handler, MSP, extended FP frame */
        {0xffffffe9u, 0}, /* thread, MSP, extended FP frame */
        {0xffffffedu, 1}, /* thread, PSP, extended FP frame */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t *f = cpprof_frame(cases[i].exc_return, msp, psp);
        T_ASSERT(f == (cases[i].on_psp ? psp : msp));
        uint32_t pc = cpprof_frame_pc(cases[i].exc_return, msp, psp);
        T_EQ(pc, cases[i].on_psp ? 0x60002000u : 0x10000100u);
    }
}

static void t_frame_pc_offset(void)
{
    /* The PC is the word at byte offset 0x18 of the frame. */
    uint32_t f[8];
    make_frame(f, 0x20001234u);
    T_EQ(CPPROF_FRAME_PC_OFFSET, 0x18);
    T_EQ(*(const uint32_t *)((const unsigned char *)f + 0x18), 0x20001234u);
    T_EQ(cpprof_frame_pc(0xfffffff9u, f, NULL), 0x20001234u);
    /* Thumb bit cleared should a frame ever carry it. */
    f[6] = 0x10000235u;
    T_EQ(cpprof_frame_pc(0xfffffff9u, f, NULL), 0x10000234u);
}

static void t_init_rejects(void)
{
    uint32_t pc[8], cnt[8];
    cpprof_buf b;
    T_EQ(cpprof_init(&b, pc, cnt, 6), -1);
    T_EQ(cpprof_init(&b, pc, cnt, 0), -1);
    T_EQ(cpprof_init(&b, NULL, cnt, 8), -1);
    T_EQ(cpprof_init(&b, pc, cnt, 8), 0);
    T_EQ(b.used, 0);
    T_EQ(b.samples, 0);
}

static void t_add_counts(void)
{
    uint32_t pc[64], cnt[64];
    cpprof_buf b;
    T_EQ(cpprof_init(&b, pc, cnt, 64), 0);
    for (int i = 0; i < 500; i++)
        cpprof_add(&b, 0x60001234u);
    for (int i = 0; i < 10; i++)
        cpprof_add(&b, 0x60001239u); /* Thumb bit: same as ...238 */
    cpprof_add(&b, 0x60001238u);
    T_EQ(b.used, 2);
    T_EQ(b.samples, 511);
    T_EQ(b.dropped, 0);
    T_EQ(cpprof_recorded(&b), 511);
    int seen = 0;
    for (uint32_t i = 0; i < b.cap; i++) {
        if (!cnt[i])
            continue;
        if (pc[i] == 0x60001234u) {
            T_EQ(cnt[i], 500);
            seen |= 1;
        } else {
            T_EQ(pc[i], 0x60001238u);
            T_EQ(cnt[i], 11);
            seen |= 2;
        }
    }
    T_EQ(seen, 3);
    /* PC 0 (ITCM at address 0 on i.MX RT) is a PC like any other. */
    cpprof_add(&b, 0);
    T_EQ(b.used, 3);
    cpprof_reset(&b);
    T_EQ(b.used, 0);
    T_EQ(b.samples, 0);
    T_EQ(cpprof_recorded(&b), 0);
}

static void t_overflow_dropped(void)
{
    uint32_t pc[4], cnt[4];
    cpprof_buf b;
    T_EQ(cpprof_init(&b, pc, cnt, 4), 0);
    for (uint32_t i = 0; i < 6; i++)
        cpprof_add(&b, 0x10000000u + 2 * i);
    T_EQ(b.used, 4);
    T_EQ(b.samples, 6);
    T_EQ(b.dropped, 2);
    T_EQ(cpprof_recorded(&b), 4);
    /* A PC that has a bucket is still counted when the table is full. */
    uint32_t have = 0;
    for (uint32_t i = 0; i < 4; i++)
        if (cnt[i])
            have = pc[i];
    cpprof_add(&b, have);
    T_EQ(b.samples, 7);
    T_EQ(b.dropped, 2);
    T_EQ(cpprof_recorded(&b), 5);
}

static void t_probe_bound(void)
{
    /* CPPROF_PROBES + 1 PCs that hash to the same bucket of a large
     * table: the last one is dropped although the table has room. */
    enum { CAP = 1024 };
    static uint32_t pc[CAP], cnt[CAP];
    cpprof_buf b;
    T_EQ(cpprof_init(&b, pc, cnt, CAP), 0);
    uint32_t want = ((0x10000000u >> 1) * 2654435761u) & (CAP - 1);
    uint32_t n = 0;
    for (uint32_t a = 0x10000000u; n < CPPROF_PROBES + 1; a += 2) {
        if ((((a >> 1) * 2654435761u) & (CAP - 1)) != want)
            continue;
        cpprof_add(&b, a);
        n++;
    }
    T_EQ(b.samples, CPPROF_PROBES + 1);
    T_EQ(b.used, CPPROF_PROBES);
    T_EQ(b.dropped, 1);
}

static void t_crc_known(void)
{
    T_EQ(cpprof_crc32(0, "123456789", 9), 0xcbf43926u);
    T_EQ(cpprof_crc32(0, "", 0), 0);
    /* continuing a CRC over pieces gives the CRC of the whole */
    uint32_t c = cpprof_crc32(0, "12345", 5);
    T_EQ(cpprof_crc32(c, "6789", 4), 0xcbf43926u);
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    T_EQ(cpprof_crc32(0, all, sizeof all), crc32(0L, all, sizeof all));
}

typedef struct sink {
    char buf[4096];
    size_t n;
    size_t fail_after; /* 0: never */
    int calls;
} sink;

static int sink_write(void *ctx, const char *s, size_t n)
{
    sink *k = ctx;
    k->calls++;
    if (k->fail_after && (size_t)k->calls > k->fail_after)
        return -1;
    if (k->n + n >= sizeof k->buf)
        return -1;
    memcpy(k->buf + k->n, s, n);
    k->n += n;
    k->buf[k->n] = 0;
    return 0;
}

/* Expected E line: the CRC of the text before it, from zlib. */
static void expect_dump(const char *body, int lines, char *out, size_t cap)
{
    uLong crc = crc32(0L, (const Bytef *)body, (uInt)strlen(body));
    snprintf(out, cap, "%sE %d %08lx\n", body, lines, crc);
}

static void t_dump_exact(void)
{
    /* The example of docs/formats/dump.md, buckets laid out by hand so
     * that the order is known. */
    uint32_t pc[4] = {0x60001234u, 0, 0x60001238u, 0xffffffffu};
    uint32_t cnt[4] = {0x1f4, 0, 10, 2};
    cpprof_buf b = {pc, cnt, 4, 3, 50000, 0};
    cpprof_info info = {"cortex-m7", 10000, 5000};
    sink k = {.n = 0};
    T_EQ(cpprof_dump(&b, &info, sink_write, &k), 0);
    const char *body =
        "CPDUMP 1 cpu=cortex-m7 rate_hz=10000 duration_ms=5000 "
        "samples=50000 dropped=0 buckets=3\n"
        "S 60001234 1f4\n"
        "S 60001238 a\n"
        "S ffffffff 2\n";
    char want[1024];
    expect_dump(body, 3, want, sizeof want);
    T_STREQ(k.buf, want);
}

static void t_dump_padding_and_counts(void)
{
    uint32_t pc[2] = {0x00000010u, 0x20000000u};
    uint32_t cnt[2] = {1, 0xffffffffu};
    cpprof_buf b = {pc, cnt, 2, 2, 7, 4294967295u};
    cpprof_info info = {"cortex-m0plus", 1, 0};
    sink k = {.n = 0};
    T_EQ(cpprof_dump(&b, &info, sink_write, &k), 0);
    const char *body =
        "CPDUMP 1 cpu=cortex-m0plus rate_hz=1 duration_ms=0 "
        "samples=7 dropped=4294967295 buckets=2\n"
        "S 00000010 1\n"
        "S 20000000 ffffffff\n";
    char want[1024];
    expect_dump(body, 2, want, sizeof want);
    T_STREQ(k.buf, want);
}

static void t_dump_empty(void)
{
    uint32_t pc[8], cnt[8];
    cpprof_buf b;
    T_EQ(cpprof_init(&b, pc, cnt, 8), 0);
    cpprof_info info = {NULL, 10000, 0};
    sink k = {.n = 0};
    T_EQ(cpprof_dump(&b, &info, sink_write, &k), 0);
    char want[256];
    expect_dump("CPDUMP 1 cpu=unknown rate_hz=10000 duration_ms=0 samples=0 "
                "dropped=0 buckets=0\n",
                0, want, sizeof want);
    T_STREQ(k.buf, want);
}

static void t_dump_from_samples(void)
{
    /* Sampled through cpprof_add: every bucket appears once, the counts
     * add up, and the CRC covers exactly the lines before E. */
    uint32_t pc[16], cnt[16];
    cpprof_buf b;
    T_EQ(cpprof_init(&b, pc, cnt, 16), 0);
    for (uint32_t i = 0; i < 100; i++)
        cpprof_add(&b, 0x10000200u + 4 * (i % 5));
    cpprof_info info = {"cortex-m0plus", 10000, 10};
    sink k = {.n = 0};
    T_EQ(cpprof_dump(&b, &info, sink_write, &k), 0);
    char *e = strstr(k.buf, "\nE ");
    T_ASSERT(e != NULL);
    e++;
    unsigned n;
    unsigned long crc;
    T_EQ(sscanf(e, "E %u %lx", &n, &crc), 2);
    T_EQ(n, 5);
    T_EQ(crc, crc32(0L, (const Bytef *)k.buf, (uInt)(e - k.buf)));
    unsigned long total = 0;
    int lines = 0;
    for (char *p = strstr(k.buf, "\nS "); p && p < e; p = strstr(p + 1, "\nS ")) {
        unsigned long a, c;
        T_EQ(sscanf(p + 1, "S %8lx %lx", &a, &c), 2);
        T_EQ(c, 20);
        total += c;
        lines++;
    }
    T_EQ(lines, 5);
    T_EQ(total, 100);
}

static void t_dump_write_error(void)
{
    uint32_t pc[2] = {0x10000000u, 0};
    uint32_t cnt[2] = {3, 0};
    cpprof_buf b = {pc, cnt, 2, 1, 3, 0};
    cpprof_info info = {"cortex-m7", 10000, 1};
    sink k = {.n = 0, .fail_after = 3};
    T_EQ(cpprof_dump(&b, &info, sink_write, &k), -1);
    /* no write after the failing one */
    T_EQ(k.calls, 4);
}

static const t_case cases[] = {
    {"frame_msp_psp", t_frame_msp_psp},
    {"frame_pc_offset", t_frame_pc_offset},
    {"init_rejects", t_init_rejects},
    {"add_counts", t_add_counts},
    {"overflow_dropped", t_overflow_dropped},
    {"probe_bound", t_probe_bound},
    {"crc_known", t_crc_known},
    {"dump_exact", t_dump_exact},
    {"dump_padding_and_counts", t_dump_padding_and_counts},
    {"dump_empty", t_dump_empty},
    {"dump_from_samples", t_dump_from_samples},
    {"dump_write_error", t_dump_write_error},
    {NULL, NULL},
};

T_MAIN(cases)
