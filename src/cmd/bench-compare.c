/* codeplace bench compare: interleaved runs with bootstrap intervals, or sweep files compared. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ctrfile.h"
#include "bench/sweepfile.h"
#include "cmd/bench.h"
#include "cmd/commands.h"
#include "report/svg.h"
#include "util/stats.h"
#include "util/wfile.h"

enum { C_RUN, C_N, C_METRIC, C_LEVEL, C_ITERS, C_SVG, C_NOPT };

static const cli_opt cmp_opts[] = {
    [C_RUN] = {"run", 0, "NAME=COMMAND", "a configuration: a shell command "
               "that prints the figure (repeatable)"},
    [C_N] = {"times", 0, "N", "runs of each configuration (default 5)"},
    [C_METRIC] = {"metric", 0, "KEY", "take the figure from '\"KEY\": NUMBER' "
                  "in the output (the last one); default: the last number"},
    [C_LEVEL] = {"level", 0, "P", "confidence level (default 0.95)"},
    [C_ITERS] = {"iters", 0, "N", "bootstrap resamples (default 4000)"},
    [C_SVG] = {"svg", 0, "FILE", "with result files: a bar chart of the peak "
               "reply rate, mean +- SD"},
    [C_NOPT] = {0},
};

static int bench_compare_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_bench_compare = {
    .name = "compare",
    .parent = &cmd_bench,
    .fn = bench_compare_fn,
    .summary = "compare configurations (interleaved runs) or earlier sweep results",
    .usage = "--run A=CMD --run B=CMD [--times N] | SWEEP.csv... [--svg FILE]",
    .description =
        "With --run: runs the configurations interleaved (A B C A B C ...), each\n"
        "N times, so that drift hits all alike; prints each one's median with a\n"
        "bootstrap confidence interval and, for each against the first, the\n"
        "interval of the difference of medians: when it holds 0 the difference\n"
        "is inside the noise. With files: reads CSV results of bench udp and\n"
        "prints per label (image) the peak reply rate and the all-answered rate,\n"
        "mean +- SD over the passes. JSON files of codeplace counters --ping\n"
        "--label L join them: misses per echo and echo rate per label, next\n"
        "to the peak reply rate of the sweeps of the same label.\n\n"
        "example:\n"
        "  codeplace bench compare --times 5 \\\n"
        "      --run 'stock=codeplace bench udp 192.168.7.2:7 --rates 2000 --json -q' \\\n"
        "      --run 'placed=codeplace bench udp 192.168.7.2:7 --rates 2000 --json -q' \\\n"
        "      --metric peak_reply_rate_mean\n"
        "  codeplace bench compare stock.csv placed.csv --svg peak.svg",
    .opts = cmp_opts,
    .globals = CLI_G_ALL,
};

static char *run_capture(const char *cmd, int *status)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + len, 1, cap - len - 1, f);
        if (r == 0)
            break;
        len += r;
    }
    *status = pclose(f);
    if (buf)
        buf[len] = 0;
    return buf;
}

typedef struct group {
    char name[64];
    double *v;      /* run figures, or per-pass peak reply rates */
    double *all;    /* per-pass all-answered rates (files) */
    size_t n, cap, capall;
} group;

/* Counters results (codeplace counters --json) per label. */
typedef struct ctr_group {
    char name[64];
    double *mpe, *rate; /* misses per echo, echo rate per file */
    size_t n, cap, capr;
} ctr_group;

static double median_of(const double *v, size_t n)
{
    cp_summary s;
    cp_summarize(v, n, &s);
    return s.median;
}

/* Misses per echo and echo rate per image, with the peak reply rate of
 * the sweeps of the same label when there are any. */
static void print_counters(cli_ctx *ctx, jw *w, const ctr_group *c, size_t nc,
                           const group *g, size_t ng)
{
    FILE *o = ctx->out;
    if (!ctx->json && !ctx->csv)
        fprintf(o, "%s%-16s %4s %16s %14s %18s\n", ng ? "\n" : "", "name",
                "n", "misses/echo", "echoes/s", "peak reply rate");
    else if (ctx->json) {
        jw_key(w, "counters");
        jw_arr_begin(w);
    }
    for (size_t i = 0; i < nc; i++) {
        double peak = NAN;
        for (size_t k = 0; k < ng; k++)
            if (!strcmp(g[k].name, c[i].name) && g[k].n)
                peak = median_of(g[k].v, g[k].n);
        double m = median_of(c[i].mpe, c[i].n), r = median_of(c[i].rate, c[i].n);
        if (ctx->json) {
            jw_obj_begin(w);
            jw_key(w, "name"); jw_str(w, c[i].name);
            jw_key(w, "n"); jw_uint(w, c[i].n);
            bench_json_num(w, "misses_per_echo_median", m);
            bench_json_num(w, "echo_rate_median", r);
            bench_json_num(w, "peak_reply_rate_median", peak);
            jw_obj_end(w);
        } else if (!ctx->csv) {
            char pk[32] = "-", rt[32] = "-";
            if (!isnan(peak))
                snprintf(pk, sizeof pk, "%.0f", peak);
            if (!isnan(r))
                snprintf(rt, sizeof rt, "%.1f", r);
            fprintf(o, "%-16s %4zu %16.1f %14s %18s\n", c[i].name, c[i].n, m,
                    rt, pk);
        }
    }
    if (ctx->json)
        jw_arr_end(w);
    else if (!ctx->csv)
        for (size_t i = 1; i < nc; i++) {
            double a = median_of(c[0].mpe, c[0].n), b = median_of(c[i].mpe, c[i].n);
            fprintf(o, "%s - %s: %+.1f misses per echo (%+.1f%%)\n", c[i].name,
                    c[0].name, b - a, a != 0 ? 100 * (b - a) / a : NAN);
        }
}

static void print_groups(cli_ctx *ctx, group *g, size_t ng, double level,
                         uint32_t iters, int files, const ctr_group *cg,
                         size_t ncg)
{
    FILE *o = ctx->out;
    jw w;
    if (ctx->json) {
        jw_init(&w, o, 1);
        jw_obj_begin(&w);
        jw_key(&w, "level");
        jw_double(&w, level);
        jw_key(&w, "configs");
        jw_arr_begin(&w);
    } else if (ctx->csv) {
        fputs("name,n,median,ci_lo,ci_hi,mean,sd,diff_median,diff_lo,diff_hi,"
              "inside_noise\n", o);
    } else {
        fprintf(o, "%-16s %4s %12s %27s %12s %10s%s\n", "name", "n",
                files ? "peak median" : "median",
                files ? "CI" : "CI", "mean", "sd",
                files ? "   all-answered mean +- sd" : "");
    }
    double base = NAN;
    for (size_t i = 0; i < ng; i++) {
        cp_summary s;
        cp_summarize(g[i].v, g[i].n, &s);
        double lo, hi, dlo = NAN, dhi = NAN, d = NAN;
        cp_boot_median(g[i].v, g[i].n, iters, level, 1 + i, &lo, &hi);
        if (i == 0)
            base = s.median;
        else {
            d = s.median - base;
            cp_boot_median_diff(g[0].v, g[0].n, g[i].v, g[i].n, iters, level,
                                77 + i, &dlo, &dhi);
        }
        int noise = i > 0 && dlo <= 0 && dhi >= 0;
        if (ctx->json) {
            jw_obj_begin(&w);
            jw_key(&w, "name"); jw_str(&w, g[i].name);
            jw_key(&w, "n"); jw_uint(&w, g[i].n);
            jw_key(&w, "values");
            jw_arr_begin(&w);
            for (size_t k = 0; k < g[i].n; k++)
                jw_double(&w, g[i].v[k]);
            jw_arr_end(&w);
            bench_json_num(&w, "median", s.median);
            bench_json_num(&w, "ci_lo", lo);
            bench_json_num(&w, "ci_hi", hi);
            bench_json_num(&w, "mean", s.mean);
            bench_json_num(&w, "sd", s.sd);
            if (files) {
                bench_json_num(&w, "all_answered_mean", cp_mean(g[i].all, g[i].n));
                bench_json_num(&w, "all_answered_sd", cp_sd(g[i].all, g[i].n));
            }
            if (i > 0) {
                bench_json_num(&w, "diff_median", d);
                bench_json_num(&w, "diff_lo", dlo);
                bench_json_num(&w, "diff_hi", dhi);
                jw_key(&w, "inside_noise");
                jw_bool(&w, noise);
            }
            jw_obj_end(&w);
        } else if (ctx->csv) {
            fprintf(o, "%s,%zu", g[i].name, g[i].n);
            bench_csv_num(o, s.median);
            bench_csv_num(o, lo);
            bench_csv_num(o, hi);
            bench_csv_num(o, s.mean);
            bench_csv_num(o, s.sd);
            bench_csv_num(o, d);
            bench_csv_num(o, dlo);
            bench_csv_num(o, dhi);
            fprintf(o, ",%s\n", i == 0 ? "" : noise ? "yes" : "no");
        } else {
            char ci[64];
            snprintf(ci, sizeof ci, "[%.6g, %.6g]", lo, hi);
            fprintf(o, "%-16s %4zu %12.6g %27s %12.6g %10.3g", g[i].name,
                    g[i].n, s.median, ci, s.mean, s.sd);
            if (files)
                fprintf(o, "   %.0f +- %.0f", cp_mean(g[i].all, g[i].n),
                        cp_sd(g[i].all, g[i].n));
            fputc('\n', o);
        }
    }
    if (ctx->json) {
        jw_arr_end(&w);
        if (ncg)
            print_counters(ctx, &w, cg, ncg, g, ng);
        jw_obj_end(&w);
        jw_finish(&w);
    } else if (!ctx->csv) {
        for (size_t i = 1; i < ng; i++) {
            double lo, hi;
            cp_summary a, b;
            cp_summarize(g[0].v, g[0].n, &a);
            cp_summarize(g[i].v, g[i].n, &b);
            cp_boot_median_diff(g[0].v, g[0].n, g[i].v, g[i].n, iters, level,
                                77 + i, &lo, &hi);
            double d = b.median - a.median;
            fprintf(o, "%s - %s: %+.6g (%+.1f%%), %.0f%% CI [%.6g, %.6g]: %s\n",
                    g[i].name, g[0].name, d,
                    a.median != 0 ? 100 * d / a.median : NAN, level * 100, lo,
                    hi, lo <= 0 && hi >= 0 ? "inside the noise"
                                           : d > 0 ? "higher" : "lower");
        }
    }
    if (!ctx->json && !ctx->csv && ncg)
        print_counters(ctx, NULL, cg, ncg, g, ng);
}

static int grow_push(double **v, size_t *cap, size_t n, double x)
{
    if (cp_grow((void **)v, cap, n + 1, sizeof **v) < 0)
        return -1;
    (*v)[n] = x;
    return 0;
}

/* Reads a bench udp CSV and adds its per-pass summaries to the group of
 * its label (the file name when it has none). */
static int read_sweep_csv(const char *path, group **gs, size_t *ng,
                          size_t *gcap, cp_err *err)
{
    nb_sweep_file sf;
    if (nb_sweep_read(path, &sf, err) < 0)
        return -1;
    const char *label = sf.label[0] ? sf.label : cp_basename(path);
    nb_udp_pass ps[1000];
    size_t np = nb_udp_summarize(sf.steps, sf.n, ps, 1000);
    size_t gi = 0;
    int rc = -1;
    while (gi < *ng && strcmp((*gs)[gi].name, label))
        gi++;
    if (gi == *ng) {
        if (cp_grow((void **)gs, gcap, *ng + 1, sizeof **gs) < 0) {
            cp_seterr(err, "out of memory");
            goto out;
        }
        memset(&(*gs)[gi], 0, sizeof **gs);
        snprintf((*gs)[gi].name, sizeof (*gs)[gi].name, "%s", label);
        (*ng)++;
    }
    group *g = &(*gs)[gi];
    for (size_t i = 0; i < np; i++) {
        if (grow_push(&g->v, &g->cap, g->n, ps[i].peak_reply_rate) < 0 ||
            grow_push(&g->all, &g->capall, g->n, ps[i].all_answered_rate) < 0) {
            cp_seterr(err, "out of memory");
            goto out;
        }
        g->n++;
    }
    rc = 0;
out:
    nb_sweep_free(&sf);
    return rc;
}

/* A counters JSON file: 1 when path is one and was added to the group of
 * its label (the file name without one), -1 on an error, 0 when path is
 * something else (a sweep CSV). */
static int read_counters_json(const char *path, ctr_group **cs, size_t *nc,
                              size_t *cap, cp_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0; /* read_sweep_csv names the problem */
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    if (!nb_ctr_is_counters(buf))
        return 0;
    nb_ctr_file cf;
    if (nb_ctr_parse(buf, path, &cf, err) < 0)
        return -1;
    const char *label = cf.label[0] ? cf.label : cp_basename(path);
    size_t i = 0;
    while (i < *nc && strcmp((*cs)[i].name, label))
        i++;
    if (i == *nc) {
        if (cp_grow((void **)cs, cap, *nc + 1, sizeof **cs) < 0)
            return cp_seterr(err, "out of memory");
        memset(&(*cs)[i], 0, sizeof **cs);
        snprintf((*cs)[i].name, sizeof (*cs)[i].name, "%s", label);
        (*nc)++;
    }
    ctr_group *c = &(*cs)[i];
    if (grow_push(&c->mpe, &c->cap, c->n, cf.misses_per_echo) < 0 ||
        grow_push(&c->rate, &c->capr, c->n, cf.echo_rate_hz) < 0)
        return cp_seterr(err, "out of memory");
    c->n++;
    return 1;
}

static void print_counters_only(cli_ctx *ctx, const ctr_group *cg, size_t ncg)
{
    jw w;
    if (ctx->json) {
        jw_init(&w, ctx->out, 1);
        jw_obj_begin(&w);
    }
    print_counters(ctx, &w, cg, ncg, NULL, 0);
    if (ctx->json) {
        jw_obj_end(&w);
        jw_finish(&w);
    }
}

typedef struct compare_svg_arg {
    const group *g;
    size_t ng;
} compare_svg_arg;

/* Peak reply rate per image: mean with +- SD error bars. */
static int put_compare_svg(FILE *f, void *arg, cp_err *err)
{
    const compare_svg_arg *a = arg;
    rep_svg_bar *bars = calloc(a->ng ? a->ng : 1, sizeof *bars);
    if (!bars)
        return cp_seterr(err, "out of memory");
    for (size_t i = 0; i < a->ng; i++) {
        const group *g = &a->g[i];
        double m = cp_mean(g->v, g->n), sd = cp_sd(g->v, g->n);
        bars[i] = (rep_svg_bar){.label = g->name, .value = m,
                                .err_lo = m - sd, .err_hi = m + sd,
                                .color = rep_svg_color(i)};
    }
    const char *title = "Peak UDP echo reply rate (mean +- SD over passes)";
    rep_svg_chart c = {.title = title, .ylabel = "replies per second",
                       .value_labels = 1, .cls = "compare"};
    int rc = -1;
    rep_svg *sv = rep_svg_begin(f, 640, 400, title);
    if (sv) {
        rep_svg_vbars(sv, &(rep_svg_box){0, 0, 640, 400}, bars, a->ng, &c);
        rc = rep_svg_end(sv, err);
    }
    free(bars);
    return rc;
}

static int compare_svg(const char *path, const group *g, size_t ng)
{
    compare_svg_arg a = {g, ng};
    cp_err err;
    if (cp_wfile_write(path, put_compare_svg, &a, &err) < 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    return 0;
}

static int bench_compare_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    const char *runs[argc > 0 ? argc : 1];
    size_t nruns = 0;
    cli_parser p;
    const char *arg, *metric = NULL, *svg = NULL;
    uint32_t times = 5, iters = 4000;
    double level = 0.95;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case C_RUN: runs[nruns++] = arg; break;
        case C_N: if (cli_arg_u32(ctx, "times", arg, 0, &times) < 0) return CLI_USAGE; break;
        case C_METRIC: metric = arg; break;
        case C_LEVEL: if (cli_arg_double(ctx, "level", arg, &level) < 0) return CLI_USAGE; break;
        case C_ITERS: if (cli_arg_u32(ctx, "iters", arg, 0, &iters) < 0) return CLI_USAGE; break;
        case C_SVG: svg = arg; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if ((nruns == 0) == (p.npos == 0))
        return cli_usage_error(ctx, "bench compare: give --run configurations or "
                               "sweep result files, not both");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "bench compare: --json and --csv exclude each other");
    if (!(level > 0 && level < 1))
        return cli_usage_error(ctx, "option '--level': give a value in (0, 1)");
    if (times == 0 || times > 10000 || iters < 100 || iters > 1000000)
        return cli_usage_error(ctx, "bench compare: --times 1..10000, --iters 100..1000000");
    if (svg && nruns)
        return cli_usage_error(ctx, "bench compare: --svg goes with result files");
    group *g = NULL;
    size_t ng = 0, gcap = 0, ncg = 0, cgcap = 0;
    ctr_group *cg = NULL;
    cp_err err;
    int ret = CLI_OK;
    if (nruns) {
        g = calloc(nruns, sizeof *g);
        if (!g) {
            cli_error("out of memory");
            return CLI_FAIL;
        }
        ng = nruns;
        for (size_t i = 0; i < nruns; i++) {
            const char *eq = strchr(runs[i], '=');
            if (!eq || eq == runs[i] || !eq[1] || (size_t)(eq - runs[i]) >= sizeof g[i].name) {
                free(g);
                return cli_usage_error(ctx, "option '--run': '%s' is not NAME=COMMAND",
                                       runs[i]);
            }
            memcpy(g[i].name, runs[i], (size_t)(eq - runs[i]));
        }
        bench_catch_stop();
        for (uint32_t round = 0; round < times && !cp_sig_stop && ret == CLI_OK; round++)
            for (size_t i = 0; i < nruns && !cp_sig_stop; i++) {
                const char *cmd = strchr(runs[i], '=') + 1;
                int status = -1;
                char *out = run_capture(cmd, &status);
                double v;
                if (!out || status != 0) {
                    if (status != -1 && WIFEXITED(status))
                        cli_error("bench compare: '%s' failed (exit %d)", cmd,
                                  WEXITSTATUS(status));
                    else if (status != -1 && WIFSIGNALED(status))
                        cli_error("bench compare: '%s' failed (signal %d)", cmd,
                                  WTERMSIG(status));
                    else
                        cli_error("bench compare: cannot run '%s'", cmd);
                    free(out);
                    ret = CLI_FAIL;
                    break;
                }
                if (nb_extract_figure(out, metric, &v) < 0) {
                    cli_error("bench compare: '%s' printed no %s%s%s", cmd,
                              metric ? "\"" : "number", metric ? metric : "",
                              metric ? "\": NUMBER" : "");
                    free(out);
                    ret = CLI_FAIL;
                    break;
                }
                free(out);
                if (grow_push(&g[i].v, &g[i].cap, g[i].n, v) < 0) {
                    cli_error("out of memory");
                    ret = CLI_FAIL;
                    break;
                }
                g[i].n++;
                cli_info(ctx, "round %u/%u %s: %g", round + 1, times, g[i].name, v);
            }
        if (cp_sig_stop)
            cli_warn("bench compare: interrupted; comparing the finished runs");
    } else {
        for (int i = 0; i < p.npos; i++) {
            int cr = read_counters_json(pos[i], &cg, &ncg, &cgcap, &err);
            if (cr == 0 && read_sweep_csv(pos[i], &g, &ng, &gcap, &err) == 0)
                continue;
            if (cr != 1) {
                cli_error("bench compare: %s", err.msg);
                ret = CLI_FAIL;
                break;
            }
        }
    }
    int have = ng > 0 || ncg > 0;
    for (size_t i = 0; i < ng; i++)
        if (g[i].n == 0)
            have = 0;
    if (ret == CLI_OK && !have) {
        cli_error("bench compare: nothing measured to compare");
        ret = CLI_FAIL;
    }
    if (have && cli_out_open(ctx) == 0) {
        if (ng)
            print_groups(ctx, g, ng, level, iters, nruns == 0, cg, ncg);
        else
            print_counters_only(ctx, cg, ncg);
        if (svg && compare_svg(svg, g, ng) < 0)
            ret = CLI_FAIL;
    } else if (have) {
        ret = CLI_FAIL;
    }
    for (size_t i = 0; i < ng; i++) {
        free(g[i].v);
        free(g[i].all);
    }
    free(g);
    for (size_t i = 0; i < ncg; i++) {
        free(cg[i].mpe);
        free(cg[i].rate);
    }
    free(cg);
    if (cp_sig_stop && ret == CLI_OK)
        ret = CLI_FAIL;
    return ret;
}
