/* cpprof: the portable core of the on-target PC-sampling profiler.
 *
 * Plain C99, no RTOS and no C library beyond <stddef.h>/<stdint.h>: the
 * Zephyr glue (zephyr/profiler/) and the host unit tests
 * (tests/unit/t-profiler.c) use the same code.
 *
 *   exception frame decode   cpprof_frame_pc(): the interrupted PC from the
 *                            frame the core stacked on exception entry
 *   bucket buffer            cpprof_add(): one (pc, count) bucket per
 *                            distinct PC, bounded probing, overflow counted
 *                            as dropped; safe to call from an NMI
 *   dump encoder             cpprof_dump(): the text format of
 *                            docs/formats/dump.md with its CRC-32
 *
 * Placement: define CPPROF_IN_ITCM or CPPROF_IN_RAMFUNC when compiling for a
 * target so that the sampling path runs from ITCM / SRAM and does not touch
 * the flash cache it measures. */
#ifndef CPPROF_H
#define CPPROF_H

#include <stddef.h>
#include <stdint.h>

#if defined(CPPROF_IN_ITCM)
#define CPPROF_FAST __attribute__((section(".itcm.cpprof"), noinline))
#elif defined(CPPROF_IN_RAMFUNC)
#define CPPROF_FAST __attribute__((section(".ramfunc.cpprof"), noinline))
#else
#define CPPROF_FAST
#endif

/* Exception entry stacks r0, r1, r2, r3, r12, lr, pc, xPSR at the active
 * stack pointer; the return address (the interrupted PC) is the 7th word,
 * at offset 0x18 (ARMv7-M ARM DDI0403E B1.5.6 "Exception entry behavior",
 * ARMv6-M ARM DDI0419E B1.5.6, same layout; an FP extended frame adds its
 * registers above xPSR, so the offset does not change). */
#define CPPROF_FRAME_PC_OFFSET 0x18u
/* EXC_RETURN bit 2 (SPSEL): 1 = the frame is on the process stack (PSP),
 * 0 = on the main stack (MSP) (ARMv7-M ARM B1.5.8 Table B1-8, ARMv6-M ARM
 * B1.5.8 Table B1-4). */
#define CPPROF_EXC_RETURN_SPSEL 0x4u

/* How many buckets cpprof_add() looks at before it counts a sample as
 * dropped: bounds the time spent in the sampling interrupt. */
#define CPPROF_PROBES 16u

typedef struct cpprof_buf {
    uint32_t *pc;     /* cap entries: the sampled PC of each bucket */
    uint32_t *count;  /* cap entries: samples in the bucket, 0 = free */
    uint32_t cap;     /* number of buckets, a power of two */
    uint32_t used;    /* buckets in use */
    uint32_t samples; /* samples taken: recorded + dropped */
    uint32_t dropped; /* samples that found no bucket (table full) */
} cpprof_buf;

/* What the dump header says about the run. */
typedef struct cpprof_info {
    const char *cpu;      /* a word: "cortex-m0plus", "cortex-m7" */
    uint32_t rate_hz;     /* sampling rate asked for */
    uint32_t duration_ms; /* time the sampler ran */
} cpprof_info;

/* Writes n bytes; returns 0, or -1 to stop the dump. */
typedef int (*cpprof_write_fn)(void *ctx, const char *s, size_t n);

/* Uses the caller's arrays (cap buckets each; cap a power of two, >= 1)
 * and clears them. Returns 0, or -1 when cap is not a power of two or an
 * array is missing. */
int cpprof_init(cpprof_buf *b, uint32_t *pc, uint32_t *count, uint32_t cap);

/* Empties every bucket and zeroes the counters. */
void cpprof_reset(cpprof_buf *b);

/* The stacked exception frame: psp when EXC_RETURN selects the process
 * stack, msp otherwise. */
const uint32_t *cpprof_frame(uint32_t exc_return, const uint32_t *msp,
                             const uint32_t *psp) CPPROF_FAST;

/* The interrupted PC from the frame, with the Thumb bit cleared. */
uint32_t cpprof_frame_pc(uint32_t exc_return, const uint32_t *msp,
                         const uint32_t *psp) CPPROF_FAST;

/* Counts one sample of pc (Thumb bit cleared). */
void cpprof_add(cpprof_buf *b, uint32_t pc) CPPROF_FAST;

/* Sum of the bucket counts (samples - dropped while nothing saturated). */
uint32_t cpprof_recorded(const cpprof_buf *b);

/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320); start with crc =
 * 0 and pass the previous result to continue. */
uint32_t cpprof_crc32(uint32_t crc, const void *p, size_t n);

/* Writes the dump (docs/formats/dump.md): the CPDUMP header, one S line per
 * used bucket in bucket order, and the E line with the CRC-32 of everything
 * before it. Do not call while cpprof_add() may run. Returns 0, or -1 when
 * wr failed (the dump is then incomplete and its reader rejects it). */
int cpprof_dump(const cpprof_buf *b, const cpprof_info *info,
                cpprof_write_fn wr, void *ctx);

#endif /* CPPROF_H */
