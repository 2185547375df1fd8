/* smp: sampling an instruction stream the way a probe would. A probe that
 * reads DWT_PCSR at a fixed rate sees roughly every Nth instruction; one
 * that polls with jitter sees gaps that are closer to exponential. Both are
 * offered, the random one seeded so that a run can be repeated. */
#include "samples/samples.h"

#include <math.h>
#include <stdlib.h>

struct smp_sampler {
    smp *out;
    smp_mode mode;
    uint64_t period;
    uint64_t rng;
    uint64_t left;    /* instructions until the next sample (>= 1) */
    uint64_t insns;
    smp_insn_width_fn width;
    void *wctx;
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* xorshift64*: uniform in (0, 1). */
static double uniform(smp_sampler *sp)
{
    uint64_t x = sp->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    sp->rng = x;
    uint64_t r = (x * 0x2545f4914f6cdd1dULL) >> 11; /* 53 bits */
    return ((double)r + 0.5) / 9007199254740992.0;
}

static uint64_t next_gap(smp_sampler *sp)
{
    if (sp->mode == SMP_EVERY)
        return sp->period;
    double g = ceil(-log(uniform(sp)) * (double)sp->period);
    if (g < 1)
        g = 1;
    if (g > 1e18)
        g = 1e18;
    return (uint64_t)g;
}

smp_sampler *smp_sampler_new(smp *out, smp_mode mode, uint64_t period,
                             uint64_t seed, smp_insn_width_fn width,
                             void *width_ctx, cp_err *err)
{
    if (period == 0) {
        cp_seterr(err, "the sampling period must be at least 1 instruction");
        return NULL;
    }
    smp_sampler *sp = calloc(1, sizeof *sp);
    if (!sp) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    sp->out = out;
    sp->mode = mode;
    sp->period = period;
    uint64_t x = seed;
    sp->rng = splitmix64(&x);
    if (!sp->rng)
        sp->rng = 1;
    sp->width = width;
    sp->wctx = width_ctx;
    sp->left = next_gap(sp);
    return sp;
}

/* The address of instruction k (0-based) of a run. */
static uint32_t insn_addr(smp_sampler *sp, uint32_t addr, uint32_t len,
                          uint32_t ninsn, uint32_t k)
{
    if (sp->width) {
        uint32_t a = addr, i = 0;
        while (i < k && a - addr < len) {
            unsigned w = sp->width(sp->wctx, a);
            if (w != 2 && w != 4)
                goto even;
            a += w;
            i++;
        }
        if (i == k && a - addr < len)
            return a;
    }
even:
    return (addr + (uint32_t)((uint64_t)k * len / ninsn)) & ~1u;
}

int smp_sampler_run(smp_sampler *sp, uint32_t addr, uint32_t len,
                    uint32_t ninsn, cp_err *err)
{
    if (!ninsn)
        return 0;
    sp->insns += ninsn;
    uint64_t pos = 0; /* instructions of this run already passed */
    while (sp->left <= ninsn - pos) {
        pos += sp->left;
        uint32_t k = (uint32_t)(pos - 1);
        if (smp_add(sp->out, insn_addr(sp, addr, len, ninsn, k), 1, err) < 0)
            return -1;
        sp->left = next_gap(sp);
    }
    sp->left -= ninsn - pos;
    return 0;
}

uint64_t smp_sampler_insns(const smp_sampler *sp)
{
    return sp->insns;
}

void smp_sampler_free(smp_sampler *sp)
{
    free(sp);
}
