#include "util/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void cp_sort(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_double);
}

double cp_pct_sorted(const double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    if (p <= 0)
        return v[0];
    if (p >= 100)
        return v[n - 1];
    double r = p / 100.0 * (double)(n - 1);
    size_t i = (size_t)r;
    double f = r - (double)i;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + f * (v[i + 1] - v[i]);
}

double cp_mean(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

double cp_sd(const double *v, size_t n)
{
    if (n < 2)
        return n ? 0 : NAN;
    double m = cp_mean(v, n), s = 0;
    for (size_t i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    return sqrt(s / (double)(n - 1));
}

int cp_summarize(const double *v, size_t n, cp_summary *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n == 0) {
        out->min = out->p10 = out->p25 = out->median = out->p75 = out->p90 =
            out->p99 = out->max = out->mean = out->sd = NAN;
        return 0;
    }
    double *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, v, n * sizeof *s);
    cp_sort(s, n);
    out->min = s[0];
    out->max = s[n - 1];
    out->p10 = cp_pct_sorted(s, n, 10);
    out->p25 = cp_pct_sorted(s, n, 25);
    out->median = cp_pct_sorted(s, n, 50);
    out->p75 = cp_pct_sorted(s, n, 75);
    out->p90 = cp_pct_sorted(s, n, 90);
    out->p99 = cp_pct_sorted(s, n, 99);
    out->mean = cp_mean(s, n);
    out->sd = cp_sd(s, n);
    free(s);
    return 0;
}

void cp_histogram(const double *v, size_t n, double lo, double hi,
                  size_t nbins, uint64_t *counts)
{
    memset(counts, 0, nbins * sizeof *counts);
    if (nbins == 0)
        return;
    double w = (hi - lo) / (double)nbins;
    for (size_t i = 0; i < n; i++) {
        size_t b;
        if (!(w > 0) || v[i] < lo)
            b = 0;
        else if (v[i] >= hi)
            b = nbins - 1;
        else {
            b = (size_t)((v[i] - lo) / w);
            if (b >= nbins)
                b = nbins - 1;
        }
        counts[b]++;
    }
}

uint64_t cp_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double resample_median(const double *v, size_t n, double *tmp,
                              uint64_t *st)
{
    for (size_t i = 0; i < n; i++)
        tmp[i] = v[cp_rand(st) % n];
    cp_sort(tmp, n);
    return cp_pct_sorted(tmp, n, 50);
}

static int boot(const double *a, size_t na, const double *b, size_t nb,
                unsigned iters, double level, uint64_t seed, double *lo,
                double *hi)
{
    *lo = *hi = NAN;
    if (na == 0 || (b && nb == 0) || iters == 0)
        return -1;
    size_t big = na > nb ? na : nb;
    double *tmp = malloc(big * sizeof *tmp);
    double *stat = malloc(iters * sizeof *stat);
    if (!tmp || !stat) {
        free(tmp);
        free(stat);
        return -1;
    }
    uint64_t st = seed;
    for (unsigned k = 0; k < iters; k++) {
        double ma = resample_median(a, na, tmp, &st);
        stat[k] = b ? resample_median(b, nb, tmp, &st) - ma : ma;
    }
    cp_sort(stat, iters);
    double tail = (1.0 - level) / 2.0 * 100.0;
    *lo = cp_pct_sorted(stat, iters, tail);
    *hi = cp_pct_sorted(stat, iters, 100.0 - tail);
    free(tmp);
    free(stat);
    return 0;
}

int cp_boot_median(const double *v, size_t n, unsigned iters, double level,
                   uint64_t seed, double *lo, double *hi)
{
    return boot(v, n, NULL, 0, iters, level, seed, lo, hi);
}

int cp_boot_median_diff(const double *a, size_t na, const double *b,
                        size_t nb, unsigned iters, double level, uint64_t seed,
                        double *lo, double *hi)
{
    return boot(a, na, b, nb, iters, level, seed, lo, hi);
}

int cp_linfit(const double *x, const double *y, size_t n, double *a,
              double *b, double *r2)
{
    if (n < 2)
        return -1;
    double mx = cp_mean(x, n), my = cp_mean(y, n), sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (!(sxx > 0))
        return -1;
    *b = sxy / sxx;
    *a = my - *b * mx;
    if (r2)
        *r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
    return 0;
}
