/* codeplace target: the target presets (cache geometry, memories). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "commands.h"
#include "target/target.h"
#include "util/jw.h"

enum { O_CACHE, O_NOPT };

static const cli_opt opts[] = {
    [O_CACHE] = {"cache", 0, "SIZE,WAYS,LINE[,POLICY]",
                 "override the cache geometry (e.g. 16K,2,8,lru)"},
    [O_NOPT] = {0},
};

static int cmd_target_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_target = {
    .name = "target",
    .fn = cmd_target_fn,
    .summary = "list the target presets, or show one",
    .usage = "[NAME] [--cache SIZE,WAYS,LINE]",
    .description =
        "Without NAME, lists the presets. With NAME, shows its CPU, clock,\n"
        "cache geometry and timing, and memories. Every number in a preset\n"
        "cites its datasheet section in src/target/target.c.",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT,
};

static void show_json(jw *w, const tgt *t, const tgt_cache *c)
{
    jw_obj_begin(w);
    jw_key(w, "name");
    jw_str(w, t->name);
    jw_key(w, "board");
    jw_str(w, t->board);
    jw_key(w, "cpu");
    jw_str(w, t->cpu);
    jw_key(w, "clock_hz");
    jw_uint(w, t->clock_hz);
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
    jw_key(w, "miss_cycles");
    jw_uint(w, c->miss_cycles);
    jw_obj_end(w);
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
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
}

static int cmd_target_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *arg, *cache = NULL;
    int rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0)
        if (rc == O_CACHE)
            cache = arg;
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos > 1)
        return cli_usage_error(ctx, "target: give at most one target name");
    if (cli_out_open(ctx) < 0)
        return CLI_FAIL;
    FILE *o = ctx->out;
    if (p.npos == 0) {
        if (ctx->json) {
            jw w;
            jw_init(&w, o, 1);
            jw_arr_begin(&w);
            for (unsigned i = 0; tgt_at(i); i++)
                show_json(&w, tgt_at(i), &tgt_at(i)->cache);
            jw_arr_end(&w);
            jw_finish(&w);
            return CLI_OK;
        }
        fprintf(o, "%-10s %-20s %-14s %5s  %s\n", "target", "board", "cpu",
                "MHz", "cache");
        for (unsigned i = 0; tgt_at(i); i++) {
            const tgt *t = tgt_at(i);
            fprintf(o, "%-10s %-20s %-14s %5u  %u KiB, %u-way, %u-byte lines\n",
                    t->name, t->board, t->cpu, t->clock_hz / 1000000,
                    t->cache.size / 1024, t->cache.ways, t->cache.line);
        }
        return CLI_OK;
    }
    const tgt *t = tgt_find(pos[0]);
    if (!t) {
        cli_error("no target '%s' (try 'codeplace target' for the list)", pos[0]);
        return CLI_FAIL;
    }
    tgt_cache c = t->cache;
    cp_err err;
    if (cache && tgt_parse_cache(cache, &c, &err) < 0)
        return cli_usage_error(ctx, "--cache: %s", err.msg);
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 1);
        show_json(&w, t, &c);
        jw_finish(&w);
        return CLI_OK;
    }
    fprintf(o, "target:  %s (%s)\ncpu:     %s at %u MHz, ~%.1f cycles per "
            "instruction\n", t->name, t->board, t->cpu, t->clock_hz / 1000000,
            t->cpi);
    fprintf(o, "cache:   %u bytes, %u-way, %u-byte lines, %u sets, %s; miss "
            "costs ~%u cycles\n", c.size, c.ways, c.line, tgt_cache_sets(&c),
            tgt_repl_name(c.repl), c.miss_cycles);
    fprintf(o, "plans fill: %s\n\nmemories:\n", t->fast_mem);
    for (unsigned i = 0; i < t->nmems; i++)
        fprintf(o, "  %-14s %-15s 0x%08x  %10u bytes\n", t->mems[i].name,
                tgt_mem_kind_name(t->mems[i].kind), t->mems[i].base,
                t->mems[i].size);
    return CLI_OK;
}
