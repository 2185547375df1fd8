/* util stats: the numbers benchmarks and calc report. Percentiles, mean and
 * standard deviation, a fixed-bin histogram, bootstrap confidence intervals
 * of a median (seeded, so a rerun prints the same interval), and a
 * least-squares line. */
#ifndef CP_UTIL_STATS_H
#define CP_UTIL_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Sorts v in place (ascending). */
void cp_sort(double *v, size_t n);
/* Percentile p (0..100) of sorted v by linear interpolation between the
 * closest ranks; NAN when n == 0. */
double cp_pct_sorted(const double *v, size_t n, double p);
/* Mean and sample standard deviation (n - 1; 0 when n < 2). NAN for n == 0. */
double cp_mean(const double *v, size_t n);
double cp_sd(const double *v, size_t n);

/* Summary of a sample (copies and sorts internally). */
typedef struct cp_summary {
    size_t n;
    double min, p10, p25, median, p75, p90, p99, max, mean, sd;
} cp_summary;
/* Returns 0, or -1 when memory runs out. */
int cp_summarize(const double *v, size_t n, cp_summary *out);

/* Histogram of v over [lo, hi) in nbins equal bins; values below lo go to
 * bin 0, values at or above hi to the last bin. counts has nbins entries. */
void cp_histogram(const double *v, size_t n, double lo, double hi,
                  size_t nbins, uint64_t *counts);

/* Bootstrap percentile interval (level e.g. 0.95) of the median of v, with
 * iters resamples from a generator seeded with seed. Returns 0 or -1. */
int cp_boot_median(const double *v, size_t n, unsigned iters, double level,
                   uint64_t seed, double *lo, double *hi);
/* The same for the difference of medians median(b) - median(a). */
int cp_boot_median_diff(const double *a, size_t na, const double *b,
                        size_t nb, unsigned iters, double level, uint64_t seed,
                        double *lo, double *hi);

/* Least squares y = a + b x. Returns 0, or -1 when the x are all equal or
 * n < 2. r2 (may be NULL) is the coefficient of determination. */
int cp_linfit(const double *x, const double *y, size_t n, double *a,
              double *b, double *r2);

/* splitmix64: a small seeded generator. */
uint64_t cp_rand(uint64_t *state);

#endif
