/* codeplace calc: small calculations that turn benchmark figures into the
 * quantities placement decisions need. A group of nested commands: clock,
 * miss-cost, bus, energy; src/cli dispatches them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/stats.h"
#include "cli/cli.h"
#include "cmd/commands.h"
#include "util/jw.h"
#include "util/util.h"

/* A number with an optional SI prefix and unit: "125M", "125MHz", "3.1ms",
 * "440us", "0.5". Prefixes: n u m k K M G. The unit letters (s, Hz, bit,
 * b, W) are accepted and ignored. */
static int parse_si(const char *s, double *v)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || !isfinite(x))
        return -1;
    double m = 1;
    switch (*end) {
    case 'n': m = 1e-9; end++; break;
    case 'u': m = 1e-6; end++; break;
    case 'm': m = 1e-3; end++; break;
    case 'k': case 'K': m = 1e3; end++; break;
    case 'M': m = 1e6; end++; break;
    case 'G': m = 1e9; end++; break;
    default: break;
    }
    if (*end && strcmp(end, "s") && strcmp(end, "Hz") && strcmp(end, "bit") &&
        strcmp(end, "b") && strcmp(end, "W") && strcmp(end, "bps"))
        return -1;
    /* "m" alone after a number is milli; "ms" milliseconds; "M" mega. */
    *v = x * m;
    return 0;
}

static int arg_si(cli_ctx *ctx, const char *opt, const char *s, double *v)
{
    if (parse_si(s, v) < 0) {
        cli_usage_error(ctx, "%s: '%s' is not a number (SI prefixes n u m k M "
                        "G allowed)", opt, s);
        return -1;
    }
    return 0;
}

/* ---- calc clock ---- */

enum { CK_F0, CK_NOPT };
static const cli_opt clock_opts[] = {
    [CK_F0] = {"f0", 0, "FREQ", "reference clock (default: the highest given)"},
    [CK_NOPT] = {0},
};
static int calc_clock_fn(cli_ctx *ctx, int argc, char **argv);
static const cli_cmd calc_clock = {
    .name = "clock",
    .parent = &cmd_calc,
    .fn = calc_clock_fn,
    .summary = "share of time that scales with the CPU clock",
    .usage = "FREQ:TIME FREQ:TIME... [--f0 FREQ]",
    .description =
        "Fits t = a + b * f0/f to times measured at several clock settings (least\n"
        "squares). b is the time at f0 that scales with the clock (CPU cycles), a\n"
        "the time that does not (flash, bus, peripherals, the peer); the share is\n"
        "b / (a + b) at f0.\n\n"
        "example:\n"
        "  codeplace calc clock 125M:3.1ms 100M:3.6ms 50M:6.1ms",
    .opts = clock_opts,
    .globals = CLI_G_JSON | CLI_G_OUT,
};

/* What makes a fit of t = a + b * f0/f a figure not to trust: a time that
 * does not scale cannot be negative, nor can the part that scales (the
 * share then leaves 0..100 %); and points far from the line (r^2 below
 * 0.95, possible from three points on) say the model does not hold. Fills
 * w[] with up to two sentences; returns how many. */
static int clock_fit_warnings(double a, double b, double share, double r2,
                              int npts, char w[2][160])
{
    int n = 0;
    if (a < 0 || b < 0 || !(share >= 0 && share <= 1))
        snprintf(w[n++], sizeof w[0], "the fit is not physical: %s part "
                 "%.3g s, share %.1f %% (the times do not fall as 1/clock "
                 "plus a constant)", a < 0 ? "a negative constant" :
                 "a negative scaling", a < 0 ? a : b, 100 * share);
    if (npts > 2 && r2 < 0.95)
        snprintf(w[n++], sizeof w[0], "r^2 = %.3f is below 0.95: the points "
                 "are far from the fit; measure again or at more clocks", r2);
    return n;
}

static int calc_clock_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg;
    double f0 = 0;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        if (rc == CK_F0 && arg_si(ctx, "--f0", arg, &f0) < 0)
            return CLI_USAGE;
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos < 2)
        return cli_usage_error(ctx, "calc clock: give at least two FREQ:TIME points");
    double f[p.npos], t[p.npos], x[p.npos];
    for (int i = 0; i < p.npos; i++) {
        char *c = strchr(pos[i], ':');
        if (!c)
            return cli_usage_error(ctx, "calc clock: '%s' is not FREQ:TIME", pos[i]);
        *c = 0;
        if (arg_si(ctx, "calc clock", pos[i], &f[i]) < 0 ||
            arg_si(ctx, "calc clock", c + 1, &t[i]) < 0)
            return CLI_USAGE;
        if (!(f[i] > 0) || t[i] < 0)
            return cli_usage_error(ctx, "calc clock: clocks must be positive, "
                                   "times not negative");
    }
    if (f0 == 0)
        for (int i = 0; i < p.npos; i++)
            if (f[i] > f0)
                f0 = f[i];
    for (int i = 0; i < p.npos; i++)
        x[i] = f0 / f[i];
    double a, b, r2;
    if (cp_linfit(x, t, (size_t)p.npos, &a, &b, &r2) < 0) {
        cli_error("calc clock: the points need at least two different clocks");
        return CLI_FAIL;
    }
    if (cli_out_open(ctx) < 0)
        return CLI_FAIL;
    double share = (a + b) != 0 ? b / (a + b) : NAN;
    char warn[2][160];
    int nwarn = clock_fit_warnings(a, b, share, r2, p.npos, warn);
    for (int i = 0; i < nwarn; i++)
        cli_warn("calc clock: %s", warn[i]);
    FILE *o = ctx->out;
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 1);
        jw_obj_begin(&w);
        jw_key(&w, "f0"); jw_double(&w, f0);
        jw_key(&w, "fixed_s"); jw_double(&w, a);
        jw_key(&w, "scaling_s"); jw_double(&w, b);
        jw_key(&w, "scaling_share"); jw_double(&w, share);
        jw_key(&w, "r2"); jw_double(&w, r2);
        jw_key(&w, "warnings");
        jw_arr_begin(&w);
        for (int i = 0; i < nwarn; i++)
            jw_str(&w, warn[i]);
        jw_arr_end(&w);
        jw_key(&w, "points");
        jw_arr_begin(&w);
        for (int i = 0; i < p.npos; i++) {
            jw_obj_begin(&w);
            jw_key(&w, "f"); jw_double(&w, f[i]);
            jw_key(&w, "t"); jw_double(&w, t[i]);
            jw_key(&w, "fit"); jw_double(&w, a + b * x[i]);
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        jw_obj_end(&w);
        jw_finish(&w);
    } else {
        char hz[32];
        fprintf(o, "fit t = a + b * f0/f, f0 = %s (r^2 = %.4f)\n",
                cp_hz(hz, f0, 9), r2);
        fprintf(o, "a (does not scale):  %.6g s\n", a);
        fprintf(o, "b (scales at f0):    %.6g s\n", b);
        fprintf(o, "share that scales with the clock at f0: %.1f%%\n", 100 * share);
        fprintf(o, "\n%14s %14s %14s\n", "clock_hz", "time_s", "fit_s");
        for (int i = 0; i < p.npos; i++)
            fprintf(o, "%14g %14.6g %14.6g\n", f[i], t[i], a + b * x[i]);
    }
    return CLI_OK;
}

/* ---- calc miss-cost ---- */

enum { MC_CLOCK, MC_NOPT };
static const cli_opt miss_opts[] = {
    [MC_CLOCK] = {"clock", 0, "FREQ", "CPU clock (required), e.g. 125M"},
    [MC_NOPT] = {0},
};
static int calc_miss_fn(cli_ctx *ctx, int argc, char **argv);
static const cli_cmd calc_miss = {
    .name = "miss-cost",
    .parent = &cmd_calc,
    .fn = calc_miss_fn,
    .summary = "cycles per cache miss from two images' times and miss counts",
    .usage = "--clock FREQ TIME_A:MISSES_A TIME_B:MISSES_B",
    .description =
        "Two builds that differ only in layout do the same work; the difference\n"
        "in time per iteration divided by the difference in misses per iteration\n"
        "is what one miss costs: (t_a - t_b) * clock / (m_a - m_b) cycles.\n\n"
        "example:\n"
        "  codeplace calc miss-cost --clock 125M 3.1ms:2277 1.9ms:940",
    .opts = miss_opts,
    .globals = CLI_G_JSON | CLI_G_OUT,
};

static int calc_miss_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg;
    double clk = 0, t[2], m[2];
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        if (rc == MC_CLOCK && arg_si(ctx, "--clock", arg, &clk) < 0)
            return CLI_USAGE;
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos != 2 || !(clk > 0))
        return cli_usage_error(ctx, "calc miss-cost: give --clock and two TIME:MISSES");
    for (int i = 0; i < 2; i++) {
        char *c = strchr(pos[i], ':');
        if (!c)
            return cli_usage_error(ctx, "calc miss-cost: '%s' is not TIME:MISSES", pos[i]);
        *c = 0;
        if (arg_si(ctx, "calc miss-cost", pos[i], &t[i]) < 0 ||
            arg_si(ctx, "calc miss-cost", c + 1, &m[i]) < 0)
            return CLI_USAGE;
    }
    if (m[0] == m[1]) {
        cli_error("calc miss-cost: the miss counts are equal; nothing to divide by");
        return CLI_FAIL;
    }
    double cyc = (t[0] - t[1]) * clk / (m[0] - m[1]);
    if (cli_out_open(ctx) < 0)
        return CLI_FAIL;
    if (ctx->json) {
        jw w;
        jw_init(&w, ctx->out, 1);
        jw_obj_begin(&w);
        jw_key(&w, "cycles_per_miss"); jw_double(&w, cyc);
        jw_key(&w, "ns_per_miss"); jw_double(&w, cyc / clk * 1e9);
        jw_key(&w, "miss_share_a"); jw_double(&w, cyc * m[0] / clk / t[0]);
        jw_obj_end(&w);
        jw_finish(&w);
    } else {
        char hz[32];
        fprintf(ctx->out, "cycles per miss: %.1f (%.1f ns at %s)\n", cyc,
                cyc / clk * 1e9, cp_hz(hz, clk, 9));
        fprintf(ctx->out, "time in misses:  A %.1f%%, B %.1f%%\n",
                100 * cyc * m[0] / clk / t[0], 100 * cyc * m[1] / clk / t[1]);
    }
    return CLI_OK;
}

/* ---- calc bus ---- */

enum { B_BITS, B_CLOCK, B_TIME, B_WIDTH, B_DDR, B_NOPT };
static const cli_opt bus_opts[] = {
    [B_BITS] = {"bits", 0, "N", "bits moved (e.g. misses x line bytes x 8, "
                "plus command and address bits)"},
    [B_CLOCK] = {"clock", 0, "FREQ", "bus clock, e.g. 62.5M"},
    [B_TIME] = {"time", 0, "TIME", "wall time, e.g. 1s or 250ms"},
    [B_WIDTH] = {"width", 0, "LINES", "data lines (1 SPI, 4 QSPI, 8 octal; "
                 "default 1)"},
    [B_DDR] = {"ddr", 0, NULL, "two transfers per clock"},
    [B_NOPT] = {0},
};
static int calc_bus_fn(cli_ctx *ctx, int argc, char **argv);
static const cli_cmd calc_bus = {
    .name = "bus",
    .parent = &cmd_calc,
    .fn = calc_bus_fn,
    .summary = "bus utilisation from bits moved, bus clock and wall time",
    .usage = "--bits N --clock FREQ --time TIME [--width LINES] [--ddr]",
    .description =
        "utilisation = bits / (clock x width x (2 if DDR) x time).\n\n"
        "example:\n"
        "  codeplace calc bus --bits 2.4M --clock 62.5M --width 4 --time 100ms",
    .opts = bus_opts,
    .globals = CLI_G_JSON | CLI_G_OUT,
};

static int calc_bus_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg;
    double bits = -1, clk = 0, t = 0, width = 1;
    int ddr = 0, rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case B_BITS: if (arg_si(ctx, "--bits", arg, &bits) < 0) return CLI_USAGE; break;
        case B_CLOCK: if (arg_si(ctx, "--clock", arg, &clk) < 0) return CLI_USAGE; break;
        case B_TIME: if (arg_si(ctx, "--time", arg, &t) < 0) return CLI_USAGE; break;
        case B_WIDTH: if (arg_si(ctx, "--width", arg, &width) < 0) return CLI_USAGE; break;
        case B_DDR: ddr = 1; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos || bits < 0 || !(clk > 0) || !(t > 0) || !(width >= 1))
        return cli_usage_error(ctx, "calc bus: give --bits, --clock and --time "
                               "(positive), --width >= 1");
    double cap = clk * width * (ddr ? 2 : 1) * t;
    double u = bits / cap;
    if (cli_out_open(ctx) < 0)
        return CLI_FAIL;
    if (ctx->json) {
        jw w;
        jw_init(&w, ctx->out, 1);
        jw_obj_begin(&w);
        jw_key(&w, "capacity_bits"); jw_double(&w, cap);
        jw_key(&w, "utilisation"); jw_double(&w, u);
        jw_key(&w, "mbps"); jw_double(&w, bits / t / 1e6);
        jw_obj_end(&w);
        jw_finish(&w);
    } else {
        fprintf(ctx->out, "bus utilisation: %.1f%% (%g of %g bits; %.3f Mbit/s "
                "of %.3f)\n", 100 * u, bits, cap, bits / t / 1e6, cap / t / 1e6);
    }
    return CLI_OK;
}

/* ---- calc energy ---- */

enum { EN_MW, EN_MBPS, EN_NOPT };
static const cli_opt energy_opts[] = {
    [EN_MW] = {"mw", 0, "MW", "power in milliwatts"},
    [EN_MBPS] = {"mbps", 0, "MBPS", "throughput in Mbit/s"},
    [EN_NOPT] = {0},
};
static int calc_energy_fn(cli_ctx *ctx, int argc, char **argv);
static const cli_cmd calc_energy = {
    .name = "energy",
    .parent = &cmd_calc,
    .fn = calc_energy_fn,
    .summary = "energy per bit from power and throughput",
    .usage = "--mw MW --mbps MBPS",
    .description =
        "mW / (Mbit/s) = nJ per bit.\n\n"
        "example:\n"
        "  codeplace calc energy --mw 95 --mbps 8.2",
    .opts = energy_opts,
    .globals = CLI_G_JSON | CLI_G_OUT,
};

static int calc_energy_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    cli_parser p;
    const char *arg;
    double mw = -1, mbps = 0;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        if (rc == EN_MW && cli_arg_double(ctx, "mw", arg, &mw) < 0)
            return CLI_USAGE;
        if (rc == EN_MBPS && cli_arg_double(ctx, "mbps", arg, &mbps) < 0)
            return CLI_USAGE;
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos || mw < 0 || !(mbps > 0))
        return cli_usage_error(ctx, "calc energy: give --mw >= 0 and --mbps > 0");
    double nj = mw / mbps;
    if (cli_out_open(ctx) < 0)
        return CLI_FAIL;
    if (ctx->json) {
        jw w;
        jw_init(&w, ctx->out, 1);
        jw_obj_begin(&w);
        jw_key(&w, "nj_per_bit"); jw_double(&w, nj);
        jw_key(&w, "uj_per_kbyte"); jw_double(&w, nj * 8192 / 1000);
        jw_obj_end(&w);
        jw_finish(&w);
    } else {
        fprintf(ctx->out, "energy: %.4g nJ/bit (%.4g pJ/bit, %.4g uJ per KiB)\n",
                nj, nj * 1000, nj * 8192 / 1000);
    }
    return CLI_OK;
}

/* ---- the calc table ---- */

static const cli_cmd *const calc_cmds[] = {&calc_clock, &calc_miss, &calc_bus,
                                           &calc_energy, NULL};

const cli_cmd cmd_calc = {
    .name = "calc",
    .summary = "clock scaling, miss cost, bus utilisation, energy per bit",
    .usage = "SUBCOMMAND [options]",
    .description =
        "example:\n"
        "  codeplace calc clock 125M:3.1ms 100M:3.6ms 50M:6.1ms",
    .subs = calc_cmds,
};
