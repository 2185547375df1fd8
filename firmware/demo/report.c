/*
 * The report: sort the batch (qsort) by score, take the median of the
 * accelerometer axis (qsort of integers), statistics in 64-bit integers,
 * and a JSON document written with snprintf, floats included.
 */
#include "demo.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_score(const void *a, const void *b)
{
    const struct reading *x = a, *y = b;

    if (x->score < y->score)
        return 1;
    if (x->score > y->score)
        return -1;
    return strcmp(x->id, y->id);
}

static int by_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;

    return (x > y) - (x < y);
}

struct out {
    char *buf;
    size_t len, pos;
};

static void put(struct out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (o->pos >= o->len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    o->pos += (size_t)n;
    if (o->pos >= o->len)
        o->pos = o->len - 1;
}

size_t demo_report(char *buf, size_t len, struct reading *r, unsigned n,
                   uint32_t seq)
{
    long axes[DEMO_SENSORS];
    struct out o = { buf, len, 0 };
    uint64_t energy = 0;
    double mean = 0.0, var = 0.0;
    unsigned i;

    if (n > DEMO_SENSORS)
        n = DEMO_SENSORS;
    for (i = 0; i < n; i++) {
        axes[i] = r[i].ax;
        energy += (uint64_t)((int64_t)r[i].ax * r[i].ax + (int64_t)r[i].az * r[i].az);
        mean += r[i].temp;
    }
    mean /= (double)n;
    for (i = 0; i < n; i++)
        var += (r[i].temp - mean) * (r[i].temp - mean);
    var /= (double)n;
    qsort(r, n, sizeof r[0], by_score);
    qsort(axes, n, sizeof axes[0], by_long);

    put(&o, "{\"seq\":%lu,\"n\":%u,\"sensors\":[", (unsigned long)seq, n);
    for (i = 0; i < n; i++) {
        const struct reading *s = &r[i];
        put(&o, "%s{\"id\":\"%s\",\"t\":%.2f,\"rh\":%.1f,\"dew\":%.2f,"
                "\"alt\":%.1f,\"tilt\":%.3f,\"hdg\":%.1f,\"vib\":%.4e,"
                "\"trend\":%.3f,\"score\":%g,\"flags\":\"%04x\"}",
            i ? "," : "", s->id, s->temp, s->hum, s->dew, s->alt, s->tilt,
            s->heading, s->vib, (double)s->trend, s->score, s->flags);
    }
    put(&o, "],\"median_ax\":%ld,\"energy\":%llu,\"energy_k\":%lu,"
            "\"mean\":%.4f,\"sd\":%.4g}",
        axes[n / 2], (unsigned long long)energy,
        (unsigned long)(energy / 1000u), mean, sqrt(var));
    return o.pos;
}
