/* codeplace diff: functions that changed size, appeared or disappeared
 * between two builds, and how much of a name list still resolves. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cmd/commands.h"
#include "image/image.h"
#include "report/diff.h"
#include "util/jw.h"

enum { O_ELF, O_LIST, O_ALL, O_NOPT };

static const cli_opt opts[] = {
    [O_ELF] = {"elf", 'e', "FILE", "OLD, then NEW: the ELF arguments "
               "(give both this way, or neither)"},
    [O_LIST] = {"list", 0, "FILE", "a name list (one function name per "
                "line, # comments): how many names still resolve in NEW"},
    [O_ALL] = {"all", 'a', NULL, "also list functions that did not change"},
    [O_NOPT] = {0},
};

static int cmd_diff_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_diff = {
    .name = "diff",
    .fn = cmd_diff_fn,
    .summary = "functions that changed size, appeared or disappeared between "
               "two builds",
    .usage = "OLD.elf NEW.elf [--list NAMES]",
    .description =
        "Compares the functions of two ELF files by name: size changes\n"
        "(largest first), functions only in NEW (+) and only in OLD (-).\n"
        "Static functions that share a name are paired in address order.\n"
        "With --list, checks a name list (the portable form of a placement\n"
        "plan) against NEW: names that no longer resolve are listed; a plan\n"
        "made on OLD silently loses them. Exit 0 either way; 1 on errors.\n\n"
        "example:\n"
        "  codeplace diff build-1.2/fw.elf build-1.3/fw.elf\n"
        "  codeplace diff old.elf new.elf --list firmware/placement.txt --json",
    .opts = opts,
    .globals = CLI_G_JSON | CLI_G_OUT | CLI_G_VERB,
};

static const char *kind_name(rep_diff_kind k)
{
    static const char *const n[] = {"same", "changed", "added", "removed"};
    return n[k];
}

static void text_out(FILE *o, const rep_diff *d, const rep_names *l,
                     const img *oldi, const img *newi, int all)
{
    char b1[32], b2[32];
    fprintf(o, "old:       %s (%zu functions, %s bytes)\n", img_path(oldi),
            img_nfuncs(oldi), cp_commas(b1, d->old_bytes));
    fprintf(o, "new:       %s (%zu functions, %s bytes)\n", img_path(newi),
            img_nfuncs(newi), cp_commas(b2, d->new_bytes));
    fprintf(o, "functions: %zu changed size, %zu added, %zu removed, %zu the "
            "same", d->nchanged, d->nadded, d->nremoved, d->nsame);
    if (d->nnosize)
        fprintf(o, " (%zu of them have no size in the symbol table and "
                "inferred sizes that differ: not compared)", d->nnosize);
    fputc('\n', o);
    fprintf(o, "code:      %+" PRId64 " bytes\n",
            (int64_t)d->new_bytes - (int64_t)d->old_bytes);
    if (d->nchanged + d->nadded + d->nremoved || all) {
        fprintf(o, "\n  %8s %8s %8s  %s\n", "old", "new", "delta", "function");
        for (size_t i = 0; i < d->n; i++) {
            const rep_diff_row *r = &d->rows[i];
            if (r->kind == REP_DIFF_SAME && !all)
                continue;
            char c = r->kind == REP_DIFF_ADDED ? '+' : r->kind == REP_DIFF_REMOVED
                     ? '-' : r->kind == REP_DIFF_CHANGED ? '~' : ' ';
            if (r->kind == REP_DIFF_ADDED)
                fprintf(o, "%c %8s", c, "-");
            else
                fprintf(o, "%c %8" PRIu32, c, r->old_size);
            if (r->kind == REP_DIFF_REMOVED)
                fprintf(o, " %8s", "-");
            else
                fprintf(o, " %8" PRIu32, r->new_size);
            fprintf(o, " %+8" PRId64 "  %s\n",
                    (int64_t)r->new_size - (int64_t)r->old_size, r->name);
        }
    }
    if (!l)
        return;
    size_t ok = 0;
    for (size_t i = 0; i < l->n; i++)
        ok += img_find(newi, l->name[i]) != NULL;
    fprintf(o, "\nname list: %zu of %zu names resolve in the new build",
            ok, l->n);
    if (l->n)
        fprintf(o, " (%.1f%%)", 100.0 * (double)ok / (double)l->n);
    fputc('\n', o);
    for (size_t i = 0; i < l->n; i++) {
        if (img_find(newi, l->name[i]))
            continue;
        fprintf(o, "  missing: %-32s line %zu%s\n", l->name[i], l->line[i],
                img_find(oldi, l->name[i]) ? " (was in the old build)" : "");
    }
}

static void json_out(FILE *o, const rep_diff *d, const rep_names *l,
                     const img *oldi, const img *newi, int all)
{
    jw w;
    jw_init(&w, o, 1);
    jw_obj_begin(&w);
    jw_key(&w, "old");
    jw_str(&w, img_path(oldi));
    jw_key(&w, "new");
    jw_str(&w, img_path(newi));
    jw_key(&w, "old_bytes");
    jw_uint(&w, d->old_bytes);
    jw_key(&w, "new_bytes");
    jw_uint(&w, d->new_bytes);
    jw_key(&w, "changed");
    jw_uint(&w, d->nchanged);
    jw_key(&w, "added");
    jw_uint(&w, d->nadded);
    jw_key(&w, "removed");
    jw_uint(&w, d->nremoved);
    jw_key(&w, "same");
    jw_uint(&w, d->nsame);
    jw_key(&w, "same_not_compared");
    jw_uint(&w, d->nnosize);
    jw_key(&w, "functions");
    jw_arr_begin(&w);
    for (size_t i = 0; i < d->n; i++) {
        const rep_diff_row *r = &d->rows[i];
        if (r->kind == REP_DIFF_SAME && !all)
            continue;
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, r->name);
        jw_key(&w, "status");
        jw_str(&w, kind_name(r->kind));
        jw_key(&w, "old_size");
        if (r->kind == REP_DIFF_ADDED)
            jw_null(&w);
        else
            jw_uint(&w, r->old_size);
        jw_key(&w, "new_size");
        if (r->kind == REP_DIFF_REMOVED)
            jw_null(&w);
        else
            jw_uint(&w, r->new_size);
        jw_key(&w, "delta");
        jw_int(&w, (int64_t)r->new_size - (int64_t)r->old_size);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "name_list");
    if (!l) {
        jw_null(&w);
    } else {
        size_t ok = 0;
        for (size_t i = 0; i < l->n; i++)
            ok += img_find(newi, l->name[i]) != NULL;
        jw_obj_begin(&w);
        jw_key(&w, "names");
        jw_uint(&w, l->n);
        jw_key(&w, "resolve");
        jw_uint(&w, ok);
        jw_key(&w, "missing");
        jw_arr_begin(&w);
        for (size_t i = 0; i < l->n; i++) {
            if (img_find(newi, l->name[i]))
                continue;
            jw_obj_begin(&w);
            jw_key(&w, "name");
            jw_str(&w, l->name[i]);
            jw_key(&w, "line");
            jw_uint(&w, l->line[i]);
            jw_key(&w, "in_old");
            jw_bool(&w, img_find(oldi, l->name[i]) != NULL);
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        jw_obj_end(&w);
    }
    jw_obj_end(&w);
    jw_finish(&w);
}

static int cmd_diff_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *arg, *list = NULL, *elfs[2];
    int all = 0, nelf = 0, rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_ELF:
            if (nelf == 2)
                return cli_usage_error(ctx, "diff: --elf names OLD and NEW; "
                                       "a third is one too many");
            elfs[nelf++] = arg;
            break;
        case O_LIST: list = arg; break;
        case O_ALL: all = 1; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (nelf && p.npos)
        return cli_usage_error(ctx, "diff: give OLD and NEW both as "
                               "arguments or both with --elf");
    if (!nelf && p.npos == 2) {
        elfs[0] = pos[0];
        elfs[1] = pos[1];
        nelf = 2;
    }
    if (nelf != 2)
        return cli_usage_error(ctx, "diff: give two ELF files, OLD and NEW");
    cp_err err;
    img *a = img_open(elfs[0], NULL, &err), *b = NULL;
    rep_names *l = NULL;
    rep_diff *d = NULL;
    int status = CLI_FAIL;
    if (!a || !(b = img_open(elfs[1], NULL, &err)) ||
        (list && !(l = rep_names_read(list, &err))) ||
        !(d = rep_diff_build(a, b, &err))) {
        cli_error("%s", err.msg);
        goto out;
    }
    if (cli_out_open(ctx) < 0)
        goto out;
    if (ctx->json)
        json_out(ctx->out, d, l, a, b, all);
    else
        text_out(ctx->out, d, l, a, b, all);
    status = CLI_OK;
out:
    rep_diff_free(d);
    rep_names_free(l);
    img_free(a);
    img_free(b);
    return status;
}
