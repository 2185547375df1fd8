/* smp: PC-sample histograms. The samples file (docs/formats/samples.md) is
 * text: a header of `# key: value` lines, then `ADDRESS COUNT` lines. This
 * module reads and writes it and converts into it from what profilers
 * produce: OpenOCD's `profile` gmon.out, the on-target profiler's CPDUMP
 * text, and a trace (every Nth instruction, or Poisson-spaced with a seed,
 * to mimic a probe). Addresses outside every function (0xffffffff for a
 * halted core, RAM, idle) are kept like any other: nothing is dropped. */
#ifndef CP_SAMPLES_H
#define CP_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/util.h"

#define SMP_VERSION 1
/* DWT_PCSR reads this while the core is halted or sampling is unavailable
 * (ARMv7-M ARM C1.8.6; ARMv6-M ARM C1.8.5). */
#define SMP_HALTED 0xffffffffu

typedef struct smp_entry {
    uint32_t addr;
    uint64_t count;
} smp_entry;

/* A header key the reader did not know: kept and written back. */
typedef struct smp_kv {
    char *key, *value;
} smp_kv;

typedef struct smp {
    char source[32];    /* probe-pcsr, probe-halt, trace, gmon, dump */
    char target[32];    /* preset name or "" */
    char cpu[32];       /* from a dump or trace header, or "" */
    char elf[80];       /* img_hash() of the image sampled, or "" */
    double rate_hz;     /* 0: unknown */
    double duration_s;  /* 0: unknown */
    uint64_t dropped;   /* samples the profiler lost (dump), 0 otherwise */
    smp_entry *e;       /* sorted by address, one entry per address after
                           smp_normalize (the reader normalizes) */
    size_t n, cap;
    uint64_t sum;       /* of the counts smp_add took: at most 2^62 */
    smp_kv *extra;      /* unknown header keys, in file order */
    size_t nextra;
} smp;

smp *smp_new(void);
void smp_free(smp *s);

/* Adds count samples at addr. -1 on out of memory or when the sum of all
 * counts would pass 2^62 (then no total, share or merged count can wrap or
 * be clamped). */
int smp_add(smp *s, uint32_t addr, uint64_t count, cp_err *err);
/* Sorts by address and merges duplicates; drops nothing (zero counts are
 * removed, they carry no information). */
void smp_normalize(smp *s);
uint64_t smp_total(const smp *s);
/* Sets (or replaces) a header key that has no field of its own. */
int smp_set_extra(smp *s, const char *key, const char *value, cp_err *err);
const char *smp_get_extra(const smp *s, const char *key);

/* Reads a samples file. Errors name the file and line:
 * "x.txt:7: count 'abc' is not a decimal number". */
smp *smp_read(const char *path, cp_err *err);
/* The same from memory (name is used in messages). */
smp *smp_parse(const char *data, size_t len, const char *name, cp_err *err);
/* The header of a samples file up to its rate (no duration, no total):
 * what a writer that streams the entries as they come writes first, so
 * that a file cut short is still readable. */
void smp_write_head(const smp *s, FILE *f);
/* One entry line. */
void smp_write_entry(FILE *f, uint32_t addr, uint64_t count);
/* Writes the file (normalizes first). 0, or -1 on a write error. */
int smp_write(smp *s, FILE *f, cp_err *err);
int smp_save(smp *s, const char *path, cp_err *err);

/* What a file holds, judged from its first bytes. */
typedef enum smp_kind {
    SMP_KIND_SAMPLES, /* "# codeplace samples" */
    SMP_KIND_GMON,    /* "gmon" magic */
    SMP_KIND_DUMP,    /* a "CPDUMP " line in the text */
    SMP_KIND_UNKNOWN,
} smp_kind;

smp_kind smp_detect(const char *data, size_t len);
const char *smp_kind_name(smp_kind k);
/* Reads a samples file, a gmon.out or a dump, whichever path holds (kind
 * may be NULL; it gets what was found). */
smp *smp_load(const char *path, smp_kind *kind, cp_err *err);

/* --- converters --------------------------------------------------------- */

/* OpenOCD's `profile` output: a BSD gmon.out with one time-histogram record
 * (see docs/formats/samples.md). Each bucket's count goes to the bucket's
 * first address; *bucket_bytes (may be NULL) gets the bucket width (2 when
 * every halfword has its own bucket). */
smp *smp_from_gmon(const void *data, size_t len, const char *name,
                   double *bucket_bytes, cp_err *err);
smp *smp_read_gmon(const char *path, double *bucket_bytes, cp_err *err);

/* The on-target profiler's CPDUMP text (docs/formats/dump.md), checked
 * against its CRC-32; a missing E line, a CRC mismatch or missing S lines
 * are errors that say which. */
smp *smp_from_dump(const char *data, size_t len, const char *name,
                   cp_err *err);
smp *smp_read_dump(const char *path, cp_err *err);
/* CRC-32 (IEEE 802.3, reflected 0xEDB88320), for writers and tests. */
uint32_t smp_crc32(uint32_t crc, const void *data, size_t len);

/* The trace sampler: fed the instruction stream in order (runs of
 * sequential fetches), it takes one sample every `period` instructions, or
 * with mode SMP_POISSON at exponentially distributed gaps of mean `period`
 * (a probe polling at random phase), from a xorshift generator seeded with
 * seed. An instruction's address comes from insn_len when given (1: 16-bit,
 * 2: 32-bit Thumb, 0: unknown); otherwise the run is split evenly. */
typedef enum smp_mode {
    SMP_EVERY,
    SMP_POISSON,
} smp_mode;

typedef struct smp_sampler smp_sampler;

/* Returns the width in bytes (2 or 4) of the Thumb instruction at addr, or
 * 0 when unknown. */
typedef unsigned (*smp_insn_width_fn)(void *ctx, uint32_t addr);

smp_sampler *smp_sampler_new(smp *out, smp_mode mode, uint64_t period,
                             uint64_t seed, smp_insn_width_fn width,
                             void *width_ctx, cp_err *err);
/* One run: ninsn instructions in [addr, addr + len). */
int smp_sampler_run(smp_sampler *sp, uint32_t addr, uint32_t len,
                    uint32_t ninsn, cp_err *err);
/* Instructions seen so far. */
uint64_t smp_sampler_insns(const smp_sampler *sp);
void smp_sampler_free(smp_sampler *sp);

/* A whole trace file through the sampler. Instruction widths come from the
 * image when im is given (Thumb: a first halfword 0xe800 or above starts a
 * 32-bit instruction), else runs are split evenly. The result carries the
 * trace header's target, cpu and ELF hash, source "trace", and a "method"
 * key ("every 1000" or "poisson 1000 seed 1"). With partial, a trace cut
 * short is used up to its last complete block. A trace without a complete
 * iteration is an error, as in sim and report (one without marks that
 * ended "done" is one complete run). */
struct img;
typedef struct smp_trace_opts {
    smp_mode mode;
    uint64_t period;
    uint64_t seed;
    const struct img *im;
    int partial;
} smp_trace_opts;

smp *smp_from_trace(const char *path, const smp_trace_opts *o,
                    uint64_t *insns, cp_err *err);

#endif
