/*
 * Derived quantities, as a gateway's conversion layer computes them:
 * newlib's libm in double (pow, exp, log, log1p, sin, cos, tan, atan2,
 * asin, hypot, cbrt, fmod, erf, lgamma, tgamma) and in single precision
 * (sinf, cosf, expf, logf, powf, sqrtf, atanf), all soft float on both
 * CPUs. Returns the quantities as integers (scaled and rounded with
 * llround / lrintf), so the checksum does not depend on how a value is
 * printed.
 */
#include "heavy.h"

#include <math.h>

namespace heavy {

namespace {

long long q6(double v)
{
    if (!isfinite(v))
        return 0x7fffffffLL;
    return llround(v * 1e6);
}

} // namespace

uint32_t derive(const record *recs, unsigned n)
{
    uint32_t h = 0x811c9dc5u;
    auto fold = [&h](long long v) {
        h = (h ^ (uint32_t)v) * 16777619u;
        h = (h ^ (uint32_t)(v >> 32)) * 16777619u;
    };
    for (unsigned i = 0; i < n; i++) {
        const record &r = recs[i];
        double t = r.temp, p = r.press;
        /* barometric altitude, saturation pressure (Magnus), dew point */
        double alt = 44330.0 * (1.0 - pow(p / 1013.25, 1.0 / 5.255));
        double es = 6.112 * exp(17.67 * t / (t + 243.5));
        double gamma = log(fmax(r.volt / 3.6, 1e-3)) + 17.62 * t / (243.12 + t);
        double dew = 243.12 * gamma / (17.62 - gamma);
        /* a phase from the timestamp, a vector from the flow */
        double ph = fmod((double)(r.when % 86400) / 86400.0 * 6.283185307179586, 6.283185307179586);
        double vx = r.flow * cos(ph), vy = r.flow * sin(ph);
        double ang = atan2(vy, vx) + tan(ph * 0.1);
        double mag = hypot(vx, vy) + cbrt(fabs(t) + 1.0);
        double inc = asin(fmin(1.0, fabs(r.volt - 3.15) / 0.45)) + log1p(r.flow);
        /* a noise model: erf, lgamma and tgamma of the counter */
        double k = (double)(r.count % 40u) + 1.5;
        double noise = erf(t / 30.0) + lgamma(k) + tgamma(fmod(k, 5.0) + 0.5);
        fold(q6(alt));
        fold(q6(es));
        fold(q6(dew));
        fold(q6(ang));
        fold(q6(mag));
        fold(q6(inc));
        fold(q6(noise));

        /* single precision, as a sensor front end would */
        float tf = (float)t, vf = (float)r.volt;
        float wave = sinf(tf * 0.1f) * cosf(vf) + expf(-fabsf(tf) * 0.05f);
        float lvl = logf(vf * 10.0f) * powf(vf, 1.5f) + sqrtf((float)r.flow + 1.0f);
        float dir = atanf(tf / (vf + 1.0f));
        fold(lrintf(wave * 1e4f));
        fold(lrintf(lvl * 1e4f));
        fold(lrintf(dir * 1e4f));
    }
    return h;
}

} // namespace heavy
