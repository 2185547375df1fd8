/* codeplace verify: is the relinked image what the plan said it would be? */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/tgtopt.h"
#include "cmd/commands.h"
#include "image/image.h"
#include "util/jw.h"
#include "verify/verify.h"

enum { O_ELF, O_MAP, O_TARGET, O_EMIT, O_NOPT };

static const cli_opt opts[] = {
    [O_ELF] = {"elf", 'e', "FILE", "the relinked image, as the RELINKED.elf "
               "argument"},
    [O_MAP] = {"map", 'm', "FILE", "the relinked image's GNU ld map (needed "
               "for the snippet patterns and the stubs)"},
    [O_TARGET] = CLI_TGT_OPT_TARGET('t', "target preset or target file "
                                    "(default: the layout's target line)"),
    [O_EMIT] = {"emit", 0, "DIR", "the snippets the image was linked with "
                "(codeplace plan --emit DIR): every pattern must have "
                "matched a section"},
    [O_NOPT] = {0},
};

static int cmd_verify_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_verify = {
    .name = "verify",
    .fn = cmd_verify_fn,
    .summary = "check a relinked image against the plan it was linked from",
    .usage = "PLAN.layout RELINKED.elf [--map RELINKED.map] [--emit DIR] "
             "[--target NAME|FILE]",
    .description =
        "Checks that every function the layout places is where the layout\n"
        "says (flash: at its address; fast memory: in that memory, whose\n"
        "fetches never reach the cache), that every input-section pattern\n"
        "of the GNU ld snippets in --emit DIR matched a section of the\n"
        "relinked map in the memory it was meant for (ld silently ignores a\n"
        "pattern that matches nothing), and that ld's long-branch stubs are\n"
        "as many as the plan expects, at the end of .text. Prints what\n"
        "differs; exit 0 when nothing does, 1 otherwise. A note says when\n"
        "ld put its stubs in another order than the plan (that changes the\n"
        "prediction, not the placement).\n\n"
        "example:\n"
        "  codeplace plan fw.elf --map fw.map --trace run.trace --target rp2040 \\\n"
        "      --budget 16K --layout plan.layout --emit place/\n"
        "  (relink with place/codeplace_flash.ld and place/codeplace_ram.ld)\n"
        "  codeplace verify plan.layout relinked.elf --map relinked.map --emit place/",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

static void json_out(FILE *o, const vfy_result *r, const char *layout,
                     const char *elf, int have_emit)
{
    jw w;
    jw_init(&w, o, 1);
    jw_obj_begin(&w);
    jw_key(&w, "layout"); jw_str(&w, layout);
    jw_key(&w, "image"); jw_str(&w, elf);
    jw_key(&w, "target"); jw_str(&w, r->target);
    jw_key(&w, "strategy"); jw_str(&w, r->strategy);
    jw_key(&w, "ok"); jw_bool(&w, r->ndiffs == 0);
    jw_key(&w, "functions"); jw_uint(&w, r->placed);
    jw_key(&w, "functions_ok"); jw_uint(&w, r->placed_ok);
    jw_key(&w, "patterns");
    if (have_emit)
        jw_uint(&w, r->patterns);
    else
        jw_null(&w);
    jw_key(&w, "patterns_ok"); jw_uint(&w, r->patterns_ok);
    jw_key(&w, "stubs");
    if (r->stubs_checked) {
        jw_obj_begin(&w);
        jw_key(&w, "flash"); jw_uint(&w, r->stubs_flash);
        jw_key(&w, "flash_planned"); jw_uint(&w, r->stubs_flash_plan);
        jw_key(&w, "fast"); jw_uint(&w, r->stubs_fast);
        jw_key(&w, "fast_planned"); jw_uint(&w, r->stubs_fast_plan);
        jw_key(&w, "named"); jw_uint(&w, r->stubs_named);
        jw_key(&w, "elsewhere"); jw_uint(&w, r->stubs_elsewhere);
        jw_obj_end(&w);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "differences");
    jw_arr_begin(&w);
    for (size_t i = 0; i < r->ndiffs; i++) {
        jw_obj_begin(&w);
        jw_key(&w, "kind"); jw_str(&w, vfy_kind_name(r->diffs[i].kind));
        jw_key(&w, "what"); jw_str(&w, r->diffs[i].what);
        jw_key(&w, "detail"); jw_str(&w, r->diffs[i].detail);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
}

static void text_out(FILE *o, const vfy_result *r, const char *layout,
                     const char *elf, int have_emit)
{
    fprintf(o, "layout:    %s (target %s, strategy %s)\n", layout, r->target,
            r->strategy);
    fprintf(o, "image:     %s\n", elf);
    fprintf(o, "functions: %zu of %zu where the plan put them\n", r->placed_ok,
            r->placed);
    if (have_emit)
        fprintf(o, "patterns:  %zu of %zu matched a section where meant\n",
                r->patterns_ok, r->patterns);
    else
        fputs("patterns:  not checked (give the snippets with --emit DIR)\n",
              o);
    if (r->stubs_checked)
        fprintf(o, "stubs:     %u in flash (plan %u), %u in fast memory (plan "
                "%u)\n", r->stubs_flash, r->stubs_flash_plan, r->stubs_fast,
                r->stubs_fast_plan);
    else
        fputs("stubs:     not checked (needs --map and a layout that states "
              "them)\n", o);
    if (r->stubs_elsewhere)
        fprintf(o, "note:      %zu of %zu stubs reach another function than "
                "the plan's stub at their address (ld orders its stubs its "
                "own way; the first: %s), so the stubs' cache sets differ and "
                "the plan's prediction may be off by their misses: plan "
                "--refine-from this image and its map predicts it exactly\n",
                r->stubs_elsewhere, r->stubs_named, r->stub_example);
    for (size_t i = 0; i < r->ndiffs; i++)
        fprintf(o, "%-10s %s: %s\n", vfy_kind_name(r->diffs[i].kind),
                r->diffs[i].what, r->diffs[i].detail);
    fprintf(o, "result:    %s (%zu difference%s)\n",
            r->ndiffs ? "DIFFERS" : "as planned", r->ndiffs,
            r->ndiffs == 1 ? "" : "s");
}

static int cmd_verify_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc > 0 ? argc : 1];
    const char *arg, *map = NULL, *emit = NULL, *elf = NULL, *tname = NULL;
    cli_parser p;
    int rc;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_ELF: elf = arg; break;
        case O_MAP: map = arg; break;
        case O_EMIT: emit = arg; break;
        case O_TARGET: tname = arg; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (cli_elf_arg(ctx, pos, &p.npos, elf, 2, &elf) < 0)
        return CLI_USAGE;
    if (!elf || p.npos != 1)
        return cli_usage_error(ctx, "verify: give the layout and the "
                               "relinked ELF");
    if (emit && !map)
        return cli_usage_error(ctx, "verify: --emit needs the relinked map "
                               "(--map)");
    cp_err err;
    const tgt *t = NULL;
    if (tname && !(t = tgt_load(tname, &err))) {
        cli_error("%s", err.msg);
        return CLI_FAIL;
    }
    img *im = img_open(elf, map, &err);
    if (!im || img_map_check(im, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    for (size_t i = 0; i < img_nwarnings(im); i++)
        cli_warn("%s", img_warning(im, i));
    vfy_result r;
    if (vfy_run(pos[0], im, t, emit, &r, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    if (t && r.target[0] && strcmp(r.target, t->name))
        cli_warn("%s was planned for %s; verifying it for %s", pos[0],
                 r.target, t->name);
    if (r.image[0] && !strcmp(r.image, img_hash(im)))
        cli_warn("%s is the image the plan was made from (%s), not a "
                 "relinked one", elf, r.image);
    int status = CLI_FAIL;
    if (cli_out_open(ctx) == 0) {
        if (ctx->json)
            json_out(ctx->out, &r, pos[0], elf, emit != NULL);
        else
            text_out(ctx->out, &r, pos[0], elf, emit != NULL);
        status = r.ndiffs || !r.placed ? CLI_FAIL : CLI_OK;
        if (!r.placed)
            cli_error("%s: places no function at an address: nothing to "
                      "verify", pos[0]);
    }
    vfy_result_free(&r);
    img_free(im);
    return status;
}
