/* codeplace target: the targets (cache geometry, memories) and their
 * files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tgtopt.h"
#include "cmd/commands.h"
#include "target/target.h"
#include "util/jw.h"

enum { O_CACHE, O_AS, O_NOPT };

static const cli_opt opts[] = {
    [O_CACHE] = CLI_TGT_OPT_CACHE(0),
    [O_AS] = CLI_TGT_OPT_AS,
    [O_NOPT] = {0},
};

static int cmd_target_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_target = {
    .name = "target",
    .fn = cmd_target_fn,
    .summary = "list the targets, or show one",
    .usage = "[NAME|FILE] [--cache SIZE,WAYS,LINE] [--as NAME]",
    .description =
        "Without NAME, lists the targets found in the search directories\n"
        "($CODEPLACE_TARGETS, the source tree's targets/ when run from its\n"
        "build/, the installed share/codeplace/targets), with the file each\n"
        "came from. With NAME (or a target FILE), shows its CPU, clock, cache\n"
        "geometry and timing, and memories, after --as and --cache. Target\n"
        "files are text (docs/formats/target.md); each number cites its\n"
        "datasheet section there.\n\n"
        "example:\n"
        "  codeplace target\n"
        "  codeplace target mps2-an385 --as rp2040\n"
        "  codeplace target boards/myboard.target --json",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT,
};

static void show_json(jw *w, const tgt *t)
{
    const tgt_cache *c = &t->cache;
    jw_obj_begin(w);
    jw_key(w, "name");
    jw_str(w, t->name);
    jw_key(w, "board");
    jw_str(w, t->board);
    jw_key(w, "file");
    jw_str(w, t->path);
    jw_key(w, "cpu");
    jw_str(w, t->cpu);
    jw_key(w, "clock_hz");
    jw_uint(w, t->clock_hz);
    jw_key(w, "cpi");
    jw_double(w, t->cpi);
    jw_key(w, "cache");
    jw_obj_begin(w);
    jw_key(w, "size");
    jw_uint(w, c->size);
    jw_key(w, "ways");
    jw_uint(w, c->ways);
    jw_key(w, "line");
    jw_uint(w, c->line);
    jw_key(w, "sets");
    jw_uint(w, tgt_cache_sets(c));
    jw_key(w, "policy");
    jw_str(w, tgt_repl_name(c->repl));
    jw_key(w, "hit_cycles");
    jw_uint(w, c->hit_cycles);
    jw_key(w, "miss_cycles");
    jw_uint(w, c->miss_cycles);
    jw_key(w, "icache_only");
    jw_bool(w, t->icache_only);
    jw_obj_end(w);
    jw_key(w, "fast");
    jw_str(w, t->fast_mem);
    jw_key(w, "counters");
    jw_obj_begin(w);
    jw_key(w, "base");
    jw_uint(w, t->ctr_base);
    jw_key(w, "flush");
    jw_uint(w, t->ctr_flush);
    jw_key(w, "hit");
    jw_uint(w, t->ctr_hit);
    jw_key(w, "acc");
    jw_uint(w, t->ctr_acc);
    jw_obj_end(w);
    jw_key(w, "dwt_pcsr");
    jw_uint(w, t->dwt_pcsr);
    jw_key(w, "memories");
    jw_arr_begin(w);
    for (unsigned i = 0; i < t->nmems; i++) {
        jw_obj_begin(w);
        jw_key(w, "name");
        jw_str(w, t->mems[i].name);
        jw_key(w, "kind");
        jw_str(w, tgt_mem_kind_name(t->mems[i].kind));
        jw_key(w, "base");
        jw_uint(w, t->mems[i].base);
        jw_key(w, "size");
        jw_uint(w, t->mems[i].size);
        jw_key(w, "linker_region");
        if (t->mems[i].ld_region)
            jw_str(w, t->mems[i].ld_region);
        else
            jw_null(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
}

static int list(cli_ctx *ctx)
{
    const tgt **v;
    size_t n, bad;
    cp_err err;
    if (tgt_list(&v, &n, &bad, &err) < 0) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    if (bad)
        cli_warn("%zu target file%s could not be read; the first: %s", bad,
                 bad == 1 ? "" : "s", err.msg);
    if (!n) {
        char where[512] = "";
        size_t w = 0;
        for (unsigned i = 0; tgt_dir_at(i) && w < sizeof where; i++)
            w += (size_t)snprintf(where + w, sizeof where - w, "%s%s",
                                  i ? ", " : "", tgt_dir_at(i));
        cli_warn("no target files in %s (set CODEPLACE_TARGETS)", where);
    }
    if (cli_out_open(ctx) < 0) {
        free(v);
        return CLI_FAIL;
    }
    FILE *o = ctx->out;
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 1);
        jw_arr_begin(&w);
        for (size_t i = 0; i < n; i++)
            show_json(&w, v[i]);
        jw_arr_end(&w);
        jw_finish(&w);
    } else {
        fprintf(o, "%-12s %-20s %-14s %5s  %-28s %s\n", "target", "board",
                "cpu", "MHz", "cache", "file");
        for (size_t i = 0; i < n; i++) {
            const tgt *t = v[i];
            char cache[64];
            snprintf(cache, sizeof cache, "%u KiB, %u-way, %u-byte lines",
                     t->cache.size / 1024, t->cache.ways, t->cache.line);
            fprintf(o, "%-12s %-20s %-14s %5u  %-28s %s\n", t->name, t->board,
                    t->cpu, t->clock_hz / 1000000, cache, t->path);
        }
    }
    free(v);
    return cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
}

static int cmd_target_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *arg;
    cli_tgt to = {0};
    int rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        if (rc == O_CACHE)
            to.cache = arg;
        else if (rc == O_AS)
            to.as = arg;
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos > 1)
        return cli_usage_error(ctx, "target: give at most one target");
    if (p.npos == 0) {
        if (to.cache || to.as)
            return cli_usage_error(ctx, "target: --cache and --as go with a "
                                   "target");
        return list(ctx);
    }
    to.name = pos[0];
    to.label = "target";
    if ((rc = cli_tgt_resolve(ctx, &to, NULL, NULL, 1)) != CLI_OK)
        return rc;
    const tgt *t = &to.t;
    const tgt_cache c = t->cache;
    if (cli_out_open(ctx) < 0)
        return CLI_FAIL;
    FILE *o = ctx->out;
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 1);
        show_json(&w, t);
        jw_finish(&w);
        return cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
    }
    fprintf(o, "target:  %s (%s)\nfile:    %s\ncpu:     %s at %u MHz, ~%.1f "
            "cycles per instruction\n", t->name, t->board, t->path, t->cpu,
            t->clock_hz / 1000000, t->cpi);
    fprintf(o, "cache:   %u bytes, %u-way, %u-byte lines, %u sets, %s; miss "
            "costs ~%u cycles%s\n", c.size, c.ways, c.line, tgt_cache_sets(&c),
            tgt_repl_name(c.repl), c.miss_cycles,
            t->icache_only ? "; instruction fetches only" : "");
    if (to.as)
        fprintf(o, "         (cache and CPI from %s)\n", to.as);
    fprintf(o, "plans fill: %s\n\nmemories:\n", t->fast_mem);
    for (unsigned i = 0; i < t->nmems; i++)
        fprintf(o, "  %-14s %-15s 0x%08x  %10u bytes%s%s\n", t->mems[i].name,
                tgt_mem_kind_name(t->mems[i].kind), t->mems[i].base,
                t->mems[i].size, t->mems[i].ld_region ? "  linker: " : "",
                t->mems[i].ld_region ? t->mems[i].ld_region : "");
    return cli_out_close(ctx) < 0 ? CLI_FAIL : CLI_OK;
}
