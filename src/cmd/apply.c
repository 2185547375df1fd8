/* codeplace apply: carry a name list to another build and write the
 * linker snippets for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/planopt.h"
#include "cmd/commands.h"
#include "image/image.h"
#include "plan/apply.h"
#include "plan/emit.h"
#include "plan/plan.h"
#include "cli/tgtopt.h"
#include "target/target.h"
#include "util/jw.h"

enum {
    O_ELF, O_MAP, O_TARGET, O_BUDGET, O_PAD, O_EMIT, O_LIST, O_LAYOUT, O_CHECK, O_NOPT
};

static const cli_opt opts[] = {
    [O_ELF] = {"elf", 'e', "FILE", "the new build's image, as the NEW.elf "
               "argument"},
    [O_MAP] = {"map", 'm', "FILE", "GNU ld map file of the new build (input "
               "sections, archives; tells a dropped function from a missing "
               "one)"},
    [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target preset or target file "
                                    "(default: the list's target line)"),
    [O_BUDGET] = {"budget", 'b', "BYTES", "fast memory the names may fill "
                  "(default: the list's budget line)"},
    [O_PAD] = CLI_PLAN_OPT_PAD("padding the hot block may add to keep each "
                               "section at its list's cache set"),
    [O_EMIT] = {"emit", 0, "DIR", "write the GNU ld, Zephyr and pico-sdk "
                "snippets for the new build into DIR"},
    [O_LIST] = {"list", 0, "FILE", "write the name list as it resolves in "
                "the new build"},
    [O_LAYOUT] = {"layout", 'l', "FILE", "write the layout file (for "
                  "codeplace sim --layout)"},
    [O_CHECK] = {"check", 0, NULL, "exit 1 when a name is lost (for CI)"},
    [O_NOPT] = {0},
};

static int cmd_apply_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_apply = {
    .name = "apply",
    .fn = cmd_apply_fn,
    .summary = "carry a name list to another build: resolve it, write the "
               "snippets",
    .usage = "LIST NEW.elf --map NEW.map [--emit DIR] [--check]",
    .description =
        "Resolves a name list (codeplace plan --list, or the codeplace.list of\n"
        "an --emit directory) against a new build: functions by name, clones\n"
        "whose number changed (foo.constprop.0 -> foo.constprop.1), clones\n"
        "that are gone (the original is used) and functions that became\n"
        "clones; names whose section another name already moves go with it.\n"
        "What cannot be placed is listed with the reason: not in the build,\n"
        "its section dropped by the linker, several clones to choose from,\n"
        "not movable, over the fast-memory budget. The names keep the list's\n"
        "regions and order; a flash name that gives its cache set (\"set N\",\n"
        "as plan writes it) starts at that set again, with padding up to\n"
        "--pad-limit. Nothing is simulated: check the new build with\n"
        "codeplace sim or counters.\n\n"
        "example:\n"
        "  codeplace plan twin.elf --map twin.map --trace q.trace --target rp2040 \\\n"
        "      --budget 16K --list hot.list\n"
        "  codeplace apply hot.list board.elf --map board.map --emit place/ --check",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

static int write_with(const char *path, const char *what, const plan_model *m,
                      const plan_result *r, const plan_emit_info *info,
                      int layout)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("cannot create '%s': %m", path);
        return -1;
    }
    cp_err err;
    int rc = layout ? plan_emit_layout(f, m, r, info, &err)
                    : plan_emit_list(f, m, r, info);
    if (fclose(f) != 0 || rc < 0) {
        cli_error("cannot write %s '%s'", what, path);
        return -1;
    }
    return 0;
}

static const char *region_of(const tgt *t, plan_region r)
{
    return r == PLAN_FAST ? t->fast_mem : "flash";
}

static void report_json(FILE *o, const plan_apply *a, const char *list,
                        const img *im, const tgt *t)
{
    jw w;
    jw_init(&w, o, 1);
    jw_obj_begin(&w);
    jw_key(&w, "list");
    jw_str(&w, list);
    jw_key(&w, "image");
    jw_str(&w, img_path(im));
    jw_key(&w, "target");
    jw_str(&w, t->name);
    jw_key(&w, "budget");
    if (a->budget == UINT32_MAX)
        jw_null(&w);
    else
        jw_uint(&w, a->budget);
    jw_key(&w, "names");
    jw_uint(&w, a->n);
    jw_key(&w, "resolved");
    jw_uint(&w, a->nresolved);
    jw_key(&w, "renamed");
    jw_uint(&w, a->nrenamed);
    jw_key(&w, "lost");
    jw_uint(&w, a->nlost);
    jw_key(&w, "fast_bytes");
    jw_uint(&w, a->res->fast_bytes);
    jw_key(&w, "hot_bytes");
    jw_uint(&w, a->res->hot_bytes);
    jw_key(&w, "pad_bytes");
    jw_uint(&w, a->res->pad_bytes);
    jw_key(&w, "sets_kept");
    jw_uint(&w, a->sets_kept);
    jw_key(&w, "sets_drifted");
    jw_uint(&w, a->sets_drifted);
    jw_key(&w, "entries");
    jw_arr_begin(&w);
    for (size_t i = 0; i < a->n; i++) {
        const plan_apply_name *n = &a->names[i];
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, n->name);
        jw_key(&w, "line");
        jw_uint(&w, n->line);
        jw_key(&w, "region");
        jw_str(&w, region_of(t, n->region));
        jw_key(&w, "how");
        jw_str(&w, plan_apply_how_name(n->how));
        jw_key(&w, "placed");
        jw_bool(&w, !plan_apply_lost(n->how));
        jw_key(&w, "shared");
        jw_bool(&w, n->shared);
        jw_key(&w, "now");
        jw_str(&w, n->now);
        jw_key(&w, "why");
        jw_str(&w, n->why[0] ? n->why : NULL);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
}

static void report_text(FILE *o, const plan_apply *a, const char *list,
                        const plan_model *m, const tgt *t)
{
    char b1[32], b2[32];
    const plan_result *r = a->res;
    size_t nf = 0;
    for (size_t i = 0; i < r->nitems; i++)
        nf += r->items[i].region == PLAN_FAST;
    fprintf(o, "name list: %s (%s%s%starget %s)\n", list,
            a->strategy[0] ? "strategy " : "", a->strategy,
            a->strategy[0] ? ", " : "", t->name);
    fprintf(o, "new build: %s\n", img_path(plan_model_image(m)));
    fprintf(o, "resolved:  %zu of %zu names (%zu renamed), %zu lost\n",
            a->nresolved, a->n, a->nrenamed, a->nlost);
    fprintf(o, "placed:    %zu sections in %s (%s bytes", nf, t->fast_mem,
            cp_commas(b1, r->fast_bytes));
    if (a->budget != UINT32_MAX)
        fprintf(o, " of %s", cp_commas(b2, a->budget));
    fprintf(o, ", %u veneers), %zu in the flash hot block (%s bytes, %s of "
            "padding beyond the sections' sizes rounded up to 8)\n", r->veneers, r->nitems - nf,
            cp_commas(b1, r->hot_bytes), cp_commas(b2, r->pad_bytes));
    fprintf(o, "colours:   %zu hot sections at the cache set the list gives, "
            "%zu right after code that grew\n", a->sets_kept, a->sets_drifted);
    if (a->sets_dropped_at < a->n)
        fprintf(o, "note: the padding limit was reached at %s (line %zu): "
                "the hot sections from there on are packed\n",
                a->names[a->sets_dropped_at].name,
                a->names[a->sets_dropped_at].line);
    int head = 0;
    for (size_t i = 0; i < a->n; i++) {
        const plan_apply_name *n = &a->names[i];
        if (n->how != PLAN_APPLY_RENUMBERED && n->how != PLAN_APPLY_UNCLONED &&
            n->how != PLAN_APPLY_CLONED)
            continue;
        if (!head++)
            fputs("\nrenamed:\n", o);
        fprintf(o, "  %-32s -> %-32s %s\n", n->name, n->now,
                plan_apply_how_name(n->how));
    }
    head = 0;
    for (size_t i = 0; i < a->n; i++) {
        const plan_apply_name *n = &a->names[i];
        if (!plan_apply_lost(n->how))
            continue;
        if (!head++)
            fputs("\nnot placed:\n", o);
        fprintf(o, "  %-32s %-6s %s: %s\n", n->name, region_of(t, n->region),
                plan_apply_how_name(n->how), n->why);
    }
}

static int cmd_apply_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *map = NULL, *tname = NULL, *emit = NULL, *list_out = NULL;
    const char *elf = NULL;
    const char *layout = NULL, *arg;
    uint32_t budget = UINT32_MAX, pad = PLAN_PAD_LIMIT;
    int check = 0, rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_ELF: elf = arg; break;
        case O_MAP: map = arg; break;
        case O_TARGET: tname = arg; break;
        case O_BUDGET:
            if (cli_arg_u32(ctx, "budget", arg, 1, &budget) < 0)
                return CLI_USAGE;
            break;
        case O_PAD:
            if (cli_plan_pad_arg(ctx, arg, &pad) < 0)
                return CLI_USAGE;
            break;
        case O_EMIT: emit = arg; break;
        case O_LIST: list_out = arg; break;
        case O_LAYOUT: layout = arg; break;
        case O_CHECK: check = 1; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (cli_elf_arg(ctx, pos, &p.npos, elf, 2, &elf) < 0)
        return CLI_USAGE;
    if (!elf || p.npos != 1)
        return cli_usage_error(ctx, "apply: give a name list and the new "
                               "build's ELF file");
    const char *list = pos[0];
    cp_err err;
    char ltarget[32];
    uint32_t lbudget;
    if (plan_apply_header(list, ltarget, sizeof ltarget, &lbudget, &err) < 0) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    if (!tname && !ltarget[0])
        return cli_usage_error(ctx, "apply: %s names no target: give "
                               "--target", list);
    cli_tgt to = {.name = tname};
    if ((rc = cli_tgt_resolve(ctx, &to, NULL, ltarget[0] ? ltarget : NULL,
                              1)) != CLI_OK)
        return rc;
    const tgt *t = &to.t;
    if (tname && ltarget[0] && strcmp(t->name, ltarget))
        cli_warn("%s was planned for %s; applying it for %s", list, ltarget,
                 t->name);
    img *im = img_open(elf, map, &err);
    if (!im || img_map_check(im, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    if (!map)
        cli_warn("no --map: assuming each function has its own section "
                 "(.text.NAME, -ffunction-sections)");
    int status = CLI_FAIL;
    plan_apply *a = NULL;
    plan_model *m = plan_model_new(im, t, &t->cache, &err);
    if (!m || !(a = plan_apply_list(m, list, map, budget, pad, &err))) {
        cli_error("%s", err.msg);
        goto out;
    }
    char basis[400];
    snprintf(basis, sizeof basis, "applied from the name list %s, not "
             "simulated (check with codeplace sim or counters)", list);
    plan_emit_info info = {.t = t, .strategy = "applied",
                           .budget = a->budget,
                           .no_prediction = 1, .basis = basis};
    if (emit && plan_emit_snippets(emit, m, a->res, &info, &err) < 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    if (list_out && write_with(list_out, "name list", m, a->res, &info, 0) < 0)
        goto out;
    if (layout && write_with(layout, "layout", m, a->res, &info, 1) < 0)
        goto out;
    if (cli_out_open(ctx) < 0)
        goto out;
    if (ctx->json)
        report_json(ctx->out, a, list, im, t);
    else
        report_text(ctx->out, a, list, m, t);
    status = CLI_OK;
    if (check && a->nlost) {
        cli_error("%zu of the %zu names of %s are not placed in %s", a->nlost,
                  a->n, list, elf);
        status = CLI_FAIL;
    }
out:
    plan_apply_free(a);
    plan_model_free(m);
    img_free(im);
    return status;
}
