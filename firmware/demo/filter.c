/*
 * The filter: per reading, the quantities a sensor gateway derives, using
 * picolibc's libm (double and single precision; soft-float on ARMv6-M).
 *
 *   dew point   Magnus formula: log
 *   altitude    international barometric formula: pow
 *   tilt        atan2, sqrt
 *   heading     atan2, fmod
 *   vibration   hypot, cbrt, a windowed RMS
 *   trend       exponential smoothing in float: expf, sinf, fabsf
 */
#include "demo.h"

#include <math.h>

#define DEMO_PI 3.14159265358979323846
#define DEG (180.0 / DEMO_PI)

/* Smoothing state per sensor, kept across iterations. */
static float trend_state[DEMO_SENSORS];
static double vib_window[DEMO_SENSORS][4];

void demo_filter_init(void)
{
    unsigned i, j;

    for (i = 0; i < DEMO_SENSORS; i++) {
        trend_state[i] = 20.0f;
        for (j = 0; j < 4; j++)
            vib_window[i][j] = 0.0;
    }
}

static double dew_point(double t, double rh)
{
    const double b = 17.62, c = 243.12;
    double g = log(rh / 100.0) + b * t / (c + t);

    return c * g / (b - g);
}

static double altitude(double hpa)
{
    return 44330.0 * (1.0 - pow(hpa / 1013.25, 0.190263));
}

static double vibration(unsigned slot, double ax, double ay, double az,
                        uint32_t seq)
{
    double g = sqrt(ax * ax + ay * ay + az * az) / 1000.0;
    double dev = hypot(g - 1.0, cbrt(fabs(ax - ay) + 1.0) / 100.0);
    double sum = 0.0;
    unsigned k;

    vib_window[slot][seq & 3u] = dev;
    for (k = 0; k < 4; k++)
        sum += vib_window[slot][k] * vib_window[slot][k];
    return sqrt(sum / 4.0);
}

static float smooth(unsigned slot, double temp, uint32_t seq)
{
    /* time step varies with the sequence number, like jittery samples */
    float dt = 1.0f + 0.25f * sinf((float)seq * 0.37f + (float)slot);
    float alpha = 1.0f - expf(-dt / 8.0f);
    float x = trend_state[slot];

    x += alpha * ((float)temp - x);
    if (fabsf(x) > 1000.0f)
        x = 0.0f;
    trend_state[slot] = x;
    return x;
}

void demo_filter(struct reading *r, unsigned n, uint32_t seq)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        struct reading *s = &r[i];
        unsigned slot = i % DEMO_SENSORS;
        double ax = (double)s->ax, ay = (double)s->ay, az = (double)s->az;
        double phase = sin((double)seq * 0.01 + (double)i) * 0.05;

        s->temp += phase;
        s->dew = dew_point(s->temp, s->hum);
        s->alt = altitude(s->press);
        s->tilt = atan2(ay, sqrt(ax * ax + az * az)) * DEG;
        s->heading = fmod(atan2(ay, ax) * DEG + 360.0, 360.0);
        s->vib = vibration(slot, ax, ay, az, seq);
        s->trend = smooth(slot, s->temp, seq);
        s->score = exp(-fabs(s->temp - s->dew) / 10.0) * 100.0 + s->vib * 10.0
                   + floor(s->alt / 50.0) + (double)(s->flags & 0x0fu) / 16.0;
    }
}
