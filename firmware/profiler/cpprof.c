/* cpprof: exception frame decode, PC bucket buffer and dump encoder.
 * See cpprof.h; the dump format is docs/formats/dump.md. */
#include "cpprof.h"

int cpprof_init(cpprof_buf *b, uint32_t *pc, uint32_t *count, uint32_t cap)
{
    if (!b || !pc || !count || cap == 0u || (cap & (cap - 1u)) != 0u)
        return -1;
    b->pc = pc;
    b->count = count;
    b->cap = cap;
    cpprof_reset(b);
    return 0;
}

void cpprof_reset(cpprof_buf *b)
{
    uint32_t i;

    for (i = 0; i < b->cap; i++) {
        b->pc[i] = 0u;
        b->count[i] = 0u;
    }
    b->used = 0u;
    b->samples = 0u;
    b->dropped = 0u;
}

CPPROF_FAST const uint32_t *cpprof_frame(uint32_t exc_return,
                                         const uint32_t *msp,
                                         const uint32_t *psp)
{
    return (exc_return & CPPROF_EXC_RETURN_SPSEL) ? psp : msp;
}

CPPROF_FAST uint32_t cpprof_frame_pc(uint32_t exc_return, const uint32_t *msp,
                                     const uint32_t *psp)
{
    const uint32_t *frame = cpprof_frame(exc_return, msp, psp);

    return frame[CPPROF_FRAME_PC_OFFSET / 4u] & ~1u;
}

CPPROF_FAST void cpprof_add(cpprof_buf *b, uint32_t pc)
{
    uint32_t i, s;

    pc &= ~1u;
    b->samples++;
    /* Fibonacci hashing of the halfword address spreads neighbouring PCs
     * over the table; written out here so that nothing outside the fast
     * section runs in the interrupt. */
    s = ((pc >> 1) * 2654435761u) & (b->cap - 1u);
    for (i = 0; i < CPPROF_PROBES && i < b->cap; i++) {
        uint32_t k = (s + i) & (b->cap - 1u);

        if (b->count[k] == 0u) {
            b->pc[k] = pc;
            b->count[k] = 1u;
            b->used++;
            return;
        }
        if (b->pc[k] == pc) {
            if (b->count[k] == UINT32_MAX)
                break; /* saturated: count it as dropped */
            b->count[k]++;
            return;
        }
    }
    b->dropped++;
}

uint32_t cpprof_recorded(const cpprof_buf *b)
{
    uint32_t i, sum = 0u;

    for (i = 0; i < b->cap; i++)
        sum += b->count[i];
    return sum;
}

uint32_t cpprof_crc32(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t i;
    int k;

    crc = ~crc;
    for (i = 0; i < n; i++) {
        crc ^= s[i];
        for (k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* The dump writer: passes bytes on and keeps the running CRC. */
typedef struct dump_out {
    cpprof_write_fn wr;
    void *ctx;
    uint32_t crc;
    int failed;
} dump_out;

static void put(dump_out *o, const char *s, size_t n, int crc)
{
    if (o->failed)
        return;
    if (crc)
        o->crc = cpprof_crc32(o->crc, s, n);
    if (o->wr(o->ctx, s, n) != 0)
        o->failed = 1;
}

static size_t str_len(const char *s)
{
    size_t n = 0;

    while (s[n])
        n++;
    return n;
}

static void put_str(dump_out *o, const char *s, int crc)
{
    put(o, s, str_len(s), crc);
}

/* Decimal, no leading zeros. */
static void put_dec(dump_out *o, uint32_t v, int crc)
{
    char buf[10];
    size_t i = sizeof buf;

    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    put(o, buf + i, sizeof buf - i, crc);
}

/* Lower-case hex; width 8 pads with zeros, width 0 prints no leading
 * zeros. */
static void put_hex(dump_out *o, uint32_t v, int width, int crc)
{
    static const char digits[] = "0123456789abcdef";
    char buf[8];
    int i = 8;

    do {
        buf[--i] = digits[v & 0xfu];
        v >>= 4;
    } while (v || (width && i > 8 - width));
    put(o, buf + i, (size_t)(8 - i), crc);
}

static void put_field(dump_out *o, const char *key, uint32_t v)
{
    put_str(o, " ", 1);
    put_str(o, key, 1);
    put_str(o, "=", 1);
    put_dec(o, v, 1);
}

int cpprof_dump(const cpprof_buf *b, const cpprof_info *info,
                cpprof_write_fn wr, void *ctx)
{
    dump_out o;
    uint32_t i, lines = 0u;

    o.wr = wr;
    o.ctx = ctx;
    o.crc = 0u;
    o.failed = 0;

    put_str(&o, "CPDUMP 1 cpu=", 1);
    put_str(&o, info->cpu && info->cpu[0] ? info->cpu : "unknown", 1);
    put_field(&o, "rate_hz", info->rate_hz);
    put_field(&o, "duration_ms", info->duration_ms);
    put_field(&o, "samples", b->samples);
    put_field(&o, "dropped", b->dropped);
    put_field(&o, "buckets", b->used);
    put_str(&o, "\n", 1);

    for (i = 0; i < b->cap; i++) {
        if (b->count[i] == 0u)
            continue;
        put_str(&o, "S ", 1);
        put_hex(&o, b->pc[i], 8, 1);
        put_str(&o, " ", 1);
        put_hex(&o, b->count[i], 0, 1);
        put_str(&o, "\n", 1);
        lines++;
    }

    put_str(&o, "E ", 0);
    put_dec(&o, lines, 0);
    put_str(&o, " ", 0);
    put_hex(&o, o.crc, 8, 0);
    put_str(&o, "\n", 0);
    return o.failed ? -1 : 0;
}
