/*
 * Calibration: each sensor id has a row in a sorted table, found with
 * bsearch; the correction uses ldexp/frexp/modf/round, the tilt and the
 * vibration level asin/acos/log10/tanh.
 */
#include "demo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct calib {
    const char *id;
    double gain;     /* temperature gain */
    double offset;   /* temperature offset, degrees C */
    int shift;       /* accelerometer scale, power of two */
};

/* Sorted by id for bsearch. */
static const struct calib calib_table[] = {
    { "S00", 1.0021, -0.125, 0 }, { "S01", 0.9987, 0.250, 0 },
    { "S02", 1.0105, -0.500, 1 }, { "S03", 0.9950, 0.075, 0 },
    { "S04", 1.0003, 0.000, -1 }, { "S05", 1.0040, -0.310, 0 },
    { "S06", 0.9912, 0.420, 1 },  { "S07", 1.0077, -0.060, 0 },
    { "S08", 1.0000, 0.000, 0 },  { "S09", 0.9969, 0.190, -1 },
    { "S10", 1.0031, -0.220, 0 }, { "S11", 1.0012, 0.035, 0 },
};

static int by_id(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const struct calib *)elem)->id);
}

int demo_calibrate(struct reading *r)
{
    const struct calib *c = bsearch(r->id, calib_table,
                                    sizeof calib_table / sizeof calib_table[0],
                                    sizeof calib_table[0], by_id);
    double ip, frac, g;
    int e;

    if (!c)
        return -1;
    /* gain and offset, then round to the sensor's 1/16 degree resolution */
    frac = modf((r->temp - c->offset) * c->gain * 16.0, &ip);
    r->temp = (ip + round(frac)) / 16.0;
    /* accelerometer: rescale by a power of two through frexp/ldexp */
    g = frexp((double)r->az, &e);
    r->az = (long)ldexp(g, e + c->shift);
    return 0;
}

double demo_inclination(const struct reading *r)
{
    double ax = (double)r->ax, ay = (double)r->ay, az = (double)r->az;
    double g = sqrt(ax * ax + ay * ay + az * az);

    if (g == 0.0)
        return 0.0;
    return acos(az / g) * (180.0 / 3.14159265358979323846)
           + asin(ax / g) * 0.001;
}

double demo_level_db(double vib)
{
    /* soft-limited level in dB: 20*log10, then tanh as a limiter */
    double db = 20.0 * log10(vib + 1e-6);

    return 60.0 * tanh(db / 60.0);
}
