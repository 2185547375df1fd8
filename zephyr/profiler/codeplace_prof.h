/* codeplace on-target profiler: the Zephyr side (timer, interrupt, state).
 * The sampling core is firmware/profiler/cpprof.c. */
#ifndef CODEPLACE_PROF_H
#define CODEPLACE_PROF_H

#include <stdint.h>
#include "cpprof.h"

struct codeplace_prof_status {
	int running;
	uint32_t rate_hz;       /* rate asked for */
	uint32_t duration_ms;   /* time sampled so far */
	uint32_t samples;
	uint32_t dropped;
	uint32_t buckets_used;
	uint32_t buckets;
};

/* Clears the buffer and starts sampling at rate_hz (0: the Kconfig
 * default). Returns 0, -EBUSY when running, -EINVAL for a bad rate. */
int codeplace_prof_start(uint32_t rate_hz);
/* Stops sampling; the buffer is kept for dump. Returns 0 or -EALREADY. */
int codeplace_prof_stop(void);
void codeplace_prof_status(struct codeplace_prof_status *st);
/* Stops sampling if needed and writes the dump through wr. */
int codeplace_prof_dump(cpprof_write_fn wr, void *ctx);

#endif /* CODEPLACE_PROF_H */
