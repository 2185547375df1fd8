/* plan from PC samples: what a user with a board and a probe has (a
 * histogram of the program counter), not a trace. Fast memory is filled
 * by samples per byte; functions whose samples sit in a tight backward
 * branch (a busy-wait loop: it runs from the cache, so its samples are not
 * misses) are left out of it; of the rest of the sampled code, the
 * hottest sections up to one cache size go into a hot block at the start
 * of flash, in link order.
 *
 * A plan from samples alone is a ranking, not a prediction: the result's
 * miss figures are only set when the model also holds a trace (then the
 * trace drives the simulation, and the plan is evaluated on it). */
#ifndef CP_PLAN_FROMSAMPLES_H
#define CP_PLAN_FROMSAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "samples/samples.h"

typedef struct plan_samples_opts {
    uint32_t budget;     /* bytes of fast memory (0: flash only) */
    int hotblock;        /* gather the hottest of the rest in flash */
    double spin_share;   /* a loop holding this share of a function's
                            samples makes it a busy-wait loop (0: 0.8) */
    uint32_t spin_bytes; /* longest loop body counted as tight (0: 32) */
    uint64_t spin_min;   /* fewest samples a function needs to be judged
                            (0: 20) */
} plan_samples_opts;

/* A busy-wait loop the samples show: [loop, loop_end) in unit. */
typedef struct plan_spin {
    size_t unit;
    uint32_t loop, loop_end;  /* the branch target and the end of the
                                 backward branch */
    uint64_t samples;         /* the unit's samples */
    uint64_t loop_samples;    /* of those, in the loop */
} plan_spin;

typedef struct plan_samples_info {
    uint64_t total;       /* every sample in the file */
    uint64_t in_units;    /* in a movable unit of the cached flash */
    uint64_t halted;      /* at 0xffffffff (core halted) */
    uint64_t untraced;    /* in units the model's trace never runs (only
                             when it has a trace) */
    size_t sampled_units; /* units with at least one sample */
    size_t left_units;    /* sampled units in flash that did not fit the
                             hot block (one cache size): left as linked */
    uint64_t left_bytes, left_samples;
    plan_spin *spin;      /* busy-wait loops, most samples first */
    size_t nspin;
    double *unit_samples; /* per unit: its samples (the heat) */
} plan_samples_info;

/* Plans from s over the model's units (units flagged PLAN_U_NORAM stay out
 * of fast memory, PLAN_U_NOMOVE stay put). Items carry their samples in
 * plan_item.samples. When the model holds a trace, misses, stock_misses
 * and insns are the plan evaluated on it; otherwise they are 0 and mean
 * nothing (plan_from_samples_predicts says which). info (may be NULL)
 * gets what the samples showed; free it with plan_samples_info_free.
 * Fails when s names another image (hash) or has no sample in the image's
 * cached code. */
plan_result *plan_from_samples(plan_model *m, const smp *s,
                               const plan_samples_opts *o,
                               plan_samples_info *info, cp_err *err);
int plan_from_samples_predicts(const plan_model *m);
void plan_samples_info_free(plan_samples_info *info);

/* Bytes of fast memory the units flagged in fast[] take: their code
 * (8-byte aligned) and one long-branch stub per flash target they call. */
uint32_t plan_fast_bytes(const plan_model *m, const unsigned char *fast);

/* A result that puts units fast[0..nfast) into fast memory, in that order,
 * and hot[0..nhot) into a hot block at the start of flash, in that order,
 * each on a cache line; with hot_set (may be NULL), hot[k] starts at the
 * next offset whose cache set is hot_set[k] (UINT32_MAX: none) when that
 * set is less than hot_gap[k] + half a way's sets ahead (hot_gap may be
 * NULL: 0; hot_gap[k]: the sets the plan left free before hot[k], so that
 * its own gaps come back and a set behind, where code before grew past
 * the gap, is not padded to), as long as the padding (the block's bytes
 * beyond its sections' sizes rounded up to 8, what plan's --pad-limit
 * bounds) stays within pad_limit bytes (then the rest is packed, and
 * *sets_dropped, when not NULL, says from which k). weight[u] (may be
 * NULL) goes into the items' samples. Not evaluated: misses are 0. NULL
 * when out of memory. */
plan_result *plan_result_place(const plan_model *m, const size_t *fast,
                               size_t nfast, const size_t *hot, size_t nhot,
                               const uint32_t *hot_set, const uint32_t *hot_gap,
                               uint32_t pad_limit, size_t *sets_dropped,
                               const double *weight);

/* Decodes the Thumb branch of 2 or 4 bytes at code (for the instruction
 * at addr): 1 when it is a B or B<cond> (16- or 32-bit), with *target and
 * *len set; 0 otherwise. */
int plan_thumb_branch(const uint8_t *code, size_t avail, uint32_t addr,
                      uint32_t *target, uint32_t *len);

#endif
