/* codeplace image: what a firmware image holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cmd/commands.h"
#include "image/image.h"
#include "util/jw.h"

enum { O_MAP, O_FUNCTIONS, O_SORT, O_LOOKUP, O_NOPT };

static const cli_opt opts[] = {
    [O_MAP] = {"map", 'm', "FILE", "the GNU ld map file of the same build "
               "(adds input sections, archives, objects, regions)"},
    [O_FUNCTIONS] = {"functions", 'f', NULL, "list the functions instead of "
                     "the summary"},
    [O_SORT] = {"sort", 's', "KEY", "order of --functions: addr (default), "
                "size, name"},
    [O_LOOKUP] = {"lookup", 0, "ADDR", "print the function that holds ADDR "
                  "(repeatable)"},
    [O_NOPT] = {0},
};

static int cmd_image_fn(cli_ctx *ctx, int argc, char **argv);

const cli_cmd cmd_image = {
    .name = "image",
    .fn = cmd_image_fn,
    .summary = "read a firmware ELF (and map file): functions, sections, "
               "regions, libraries",
    .usage = "ELF [--map MAP] [--functions] [--lookup ADDR]",
    .description =
        "Reads an ARM Cortex-M ELF with its symbol table and, with --map, the\n"
        "GNU ld map file of the same link. Prints a summary: sections, memory\n"
        "regions, and code bytes per library (archive). --functions lists every\n"
        "function with its address (Thumb bit cleared), size, input and output\n"
        "section, archive and object. Names that share an address are one\n"
        "function; the others are listed as aliases.\n\n"
        "example:\n"
        "  codeplace image build/fw/demo-rp2040.elf --map build/fw/demo-rp2040.map\n"
        "  codeplace image fw.elf --map fw.map --functions --sort size --csv",
    .opts = opts,
    .globals = CLI_G_ALL,
};

static const char *secflags(unsigned f, char *buf)
{
    char *p = buf;
    if (f & IMG_SEC_ALLOC)
        *p++ = 'a';
    if (f & IMG_SEC_WRITE)
        *p++ = 'w';
    if (f & IMG_SEC_EXEC)
        *p++ = 'x';
    if (f & IMG_SEC_NOBITS)
        *p++ = 'b';
    *p = 0;
    return buf;
}

/* Code bytes per library: archive basename, "(objects)" for plain object
 * files, "(no map)" without a map. */
typedef struct libsum {
    const char *name;
    size_t funcs;
    uint64_t bytes;
} libsum;

static int cmp_lib(const void *a, const void *b)
{
    const libsum *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

static const char *lib_of(const img *im, const img_func *f)
{
    if (!img_map_path(im))
        return "(no map)";
    if (f->archive)
        return f->archive;
    return f->object ? "(objects)" : "(unattributed)";
}

static libsum *library_table(const img *im, size_t *n, uint64_t *total)
{
    libsum *t = calloc(img_nfuncs(im) + 1, sizeof *t);
    if (!t)
        return NULL;
    *n = 0;
    *total = 0;
    for (size_t i = 0; i < img_nfuncs(im); i++) {
        const img_func *f = img_func_at(im, i);
        const char *name = lib_of(im, f);
        size_t k = 0;
        while (k < *n && strcmp(t[k].name, name))
            k++;
        if (k == *n) {
            t[k].name = name;
            (*n)++;
        }
        t[k].funcs++;
        t[k].bytes += f->size;
        *total += f->size;
    }
    qsort(t, *n, sizeof *t, cmp_lib);
    return t;
}

static void summary_text(FILE *o, const img *im)
{
    char b1[32], b2[32], fl[8];
    uint64_t code = 0;
    for (size_t i = 0; i < img_nfuncs(im); i++)
        code += img_func_at(im, i)->size;
    fprintf(o, "image:      %s\n", img_path(im));
    if (img_map_path(im))
        fprintf(o, "map:        %s\n", img_map_path(im));
    fprintf(o, "arch:       %s\n", img_cpu_arch(im) ? img_cpu_arch(im) : "unknown");
    fprintf(o, "entry:      0x%08x\n", img_entry(im));
    fprintf(o, "hash:       %s\n", img_hash(im));
    fprintf(o, "load bytes: %s\n", cp_commas(b1, img_flash_bytes(im)));
    fprintf(o, "functions:  %zu (%s bytes of code)\n", img_nfuncs(im),
            cp_commas(b2, code));

    fprintf(o, "\nsections:\n  %-24s %-10s  %-10s  %10s  %s\n", "name",
            "address", "load", "bytes", "flags");
    for (size_t i = 0; i < img_nsections(im); i++) {
        const img_section *s = img_section_at(im, i);
        fprintf(o, "  %-24s 0x%08x  0x%08x  %10s  %s\n", s->name, s->addr,
                s->lma, cp_commas(b1, s->size), secflags(s->flags, fl));
    }
    if (img_nregions(im)) {
        fprintf(o, "\nregions:\n  %-16s %-10s  %10s  %10s  %6s\n", "name",
                "origin", "length", "used", "use");
        for (size_t i = 0; i < img_nregions(im); i++) {
            const img_region *r = img_region_at(im, i);
            char b3[32];
            fprintf(o, "  %-16s 0x%08x  %10s  %10s  %5.1f%%\n", r->name,
                    r->origin, cp_commas(b1, r->length),
                    cp_commas(b3, r->used),
                    r->length ? 100.0 * r->used / r->length : 0.0);
        }
    }
    size_t n;
    uint64_t total;
    libsum *t = library_table(im, &n, &total);
    if (t) {
        fprintf(o, "\nlibraries (code bytes):\n  %-32s %9s  %10s  %6s\n",
                "library", "functions", "bytes", "share");
        for (size_t i = 0; i < n; i++)
            fprintf(o, "  %-32s %9zu  %10s  %5.1f%%\n", t[i].name, t[i].funcs,
                    cp_commas(b1, t[i].bytes),
                    total ? 100.0 * t[i].bytes / total : 0.0);
        free(t);
    }
}

static void summary_json(FILE *o, const img *im)
{
    jw w;
    char fl[8];
    jw_init(&w, o, 1);
    jw_obj_begin(&w);
    jw_key(&w, "image");
    jw_str(&w, img_path(im));
    jw_key(&w, "map");
    jw_str(&w, img_map_path(im));
    jw_key(&w, "arch");
    jw_str(&w, img_cpu_arch(im));
    jw_key(&w, "entry");
    jw_uint(&w, img_entry(im));
    jw_key(&w, "hash");
    jw_str(&w, img_hash(im));
    jw_key(&w, "load_bytes");
    jw_uint(&w, img_flash_bytes(im));
    jw_key(&w, "functions");
    jw_uint(&w, img_nfuncs(im));
    jw_key(&w, "sections");
    jw_arr_begin(&w);
    for (size_t i = 0; i < img_nsections(im); i++) {
        const img_section *s = img_section_at(im, i);
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, s->name);
        jw_key(&w, "addr");
        jw_uint(&w, s->addr);
        jw_key(&w, "lma");
        jw_uint(&w, s->lma);
        jw_key(&w, "size");
        jw_uint(&w, s->size);
        jw_key(&w, "flags");
        jw_str(&w, secflags(s->flags, fl));
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "regions");
    jw_arr_begin(&w);
    for (size_t i = 0; i < img_nregions(im); i++) {
        const img_region *r = img_region_at(im, i);
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, r->name);
        jw_key(&w, "origin");
        jw_uint(&w, r->origin);
        jw_key(&w, "length");
        jw_uint(&w, r->length);
        jw_key(&w, "used");
        jw_uint(&w, r->used);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    size_t n;
    uint64_t total;
    libsum *t = library_table(im, &n, &total);
    jw_key(&w, "libraries");
    jw_arr_begin(&w);
    for (size_t i = 0; t && i < n; i++) {
        jw_obj_begin(&w);
        jw_key(&w, "name");
        jw_str(&w, t[i].name);
        jw_key(&w, "functions");
        jw_uint(&w, t[i].funcs);
        jw_key(&w, "bytes");
        jw_uint(&w, t[i].bytes);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    free(t);
    jw_key(&w, "warnings");
    jw_arr_begin(&w);
    for (size_t i = 0; i < img_nwarnings(im); i++)
        jw_str(&w, img_warning(im, i));
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
}

static int sort_key;
static int cmp_func(const void *a, const void *b)
{
    const img_func *x = *(const img_func *const *)a;
    const img_func *y = *(const img_func *const *)b;
    if (sort_key == 1 && x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (sort_key == 2) {
        int r = strcmp(x->name, y->name);
        if (r)
            return r;
    }
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void csv_field(FILE *o, const char *s)
{
    if (!s)
        return;
    if (strpbrk(s, ",\"\n")) {
        fputc('"', o);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', o);
            fputc(*s, o);
        }
        fputc('"', o);
    } else {
        fputs(s, o);
    }
}

static void print_functions(cli_ctx *ctx, const img *im,
                            const img_func *const *fs, size_t n)
{
    FILE *o = ctx->out;
    if (ctx->json) {
        jw w;
        jw_init(&w, o, 1);
        jw_arr_begin(&w);
        for (size_t i = 0; i < n; i++) {
            const img_func *f = fs[i];
            jw_obj_begin(&w);
            jw_key(&w, "name");
            jw_str(&w, f->name);
            jw_key(&w, "demangled");
            jw_str(&w, f->pretty);
            jw_key(&w, "addr");
            jw_uint(&w, f->addr);
            jw_key(&w, "size");
            jw_uint(&w, f->size);
            jw_key(&w, "aliases");
            jw_arr_begin(&w);
            for (unsigned k = 0; k < f->nalias; k++)
                jw_str(&w, f->alias[k]);
            jw_arr_end(&w);
            jw_key(&w, "input_section");
            jw_str(&w, f->isec);
            jw_key(&w, "output_section");
            jw_str(&w, f->osec);
            jw_key(&w, "archive");
            jw_str(&w, f->archive);
            jw_key(&w, "object");
            jw_str(&w, f->object);
            jw_key(&w, "shared_section");
            jw_bool(&w, !!(f->flags & IMG_FN_SHARED_SEC));
            jw_key(&w, "size_inferred");
            jw_bool(&w, !!(f->flags & IMG_FN_NO_SIZE));
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        jw_finish(&w);
        return;
    }
    if (ctx->csv) {
        fputs("name,addr,size,input_section,output_section,archive,object,"
              "aliases,demangled\n", o);
        for (size_t i = 0; i < n; i++) {
            const img_func *f = fs[i];
            csv_field(o, f->name);
            fprintf(o, ",0x%08x,%u,", f->addr, f->size);
            csv_field(o, f->isec);
            fputc(',', o);
            csv_field(o, f->osec);
            fputc(',', o);
            csv_field(o, f->archive);
            fputc(',', o);
            csv_field(o, f->object);
            fputc(',', o);
            /* aliases separated by spaces */
            char buf[1024] = "";
            size_t used = 0;
            for (unsigned k = 0; k < f->nalias && used < sizeof buf - 1; k++)
                used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s",
                                         k ? " " : "", f->alias[k]);
            csv_field(o, buf);
            fputc(',', o);
            csv_field(o, f->pretty);
            fputc('\n', o);
        }
        return;
    }
    int with_map = img_map_path(im) != NULL;
    fprintf(o, "%-10s %7s  %-32s %s\n", "address", "size", "name",
            with_map ? "library(object) section" : "section");
    for (size_t i = 0; i < n; i++) {
        const img_func *f = fs[i];
        fprintf(o, "0x%08x %7u  %-32s", f->addr, f->size, f->pretty);
        if (with_map) {
            if (f->object)
                fprintf(o, " %s(%s) %s%s", f->archive ? f->archive : "",
                        f->object, f->isec,
                        (f->flags & IMG_FN_SHARED_SEC) ? " [shared]" : "");
            else
                fprintf(o, " ? %s", f->osec);
        } else {
            fprintf(o, " %s", f->osec);
        }
        if (f->nalias) {
            fputs(" aka", o);
            for (unsigned k = 0; k < f->nalias; k++)
                fprintf(o, " %s", f->alias[k]);
        }
        fputc('\n', o);
    }
}

static int do_lookup(cli_ctx *ctx, const img *im, const char *spec)
{
    uint64_t a;
    const img_func *f = NULL;
    if (cp_parse_u64(spec, 0, &a) == 0 && a <= 0xffffffffULL)
        f = img_lookup(im, (uint32_t)a & ~1u);
    else {
        cli_error("--lookup: '%s' is not an address", spec);
        return -1;
    }
    if (ctx->json) {
        jw w;
        jw_init(&w, ctx->out, 0);
        jw_obj_begin(&w);
        jw_key(&w, "addr");
        jw_uint(&w, a);
        jw_key(&w, "function");
        jw_str(&w, f ? f->name : NULL);
        jw_key(&w, "offset");
        if (f)
            jw_uint(&w, (uint32_t)a - f->addr);
        else
            jw_null(&w);
        jw_obj_end(&w);
        jw_finish(&w);
    } else if (f) {
        fprintf(ctx->out, "0x%08x %s+0x%x\n", (uint32_t)a, f->name,
                ((uint32_t)a & ~1u) - f->addr);
    } else {
        fprintf(ctx->out, "0x%08x ?\n", (uint32_t)a);
    }
    return 0;
}

static int cmd_image_fn(cli_ctx *ctx, int argc, char **argv)
{
    char *pos[argc];
    const char *lookups[argc];
    int nlookups = 0;
    const char *map = NULL, *arg;
    int functions = 0, rc;
    cli_parser p;
    cli_parser_init(&p, ctx, argc, argv, pos);
    while ((rc = cli_next(&p, &arg)) >= 0) {
        switch (rc) {
        case O_MAP: map = arg; break;
        case O_FUNCTIONS: functions = 1; break;
        case O_SORT:
            if (!strcmp(arg, "addr"))
                sort_key = 0;
            else if (!strcmp(arg, "size"))
                sort_key = 1;
            else if (!strcmp(arg, "name"))
                sort_key = 2;
            else
                return cli_usage_error(ctx, "--sort: '%s' is not addr, size or "
                                       "name", arg);
            break;
        case O_LOOKUP: lookups[nlookups++] = arg; break;
        }
    }
    if (rc != CLI_END)
        return cli_parse_exit(rc);
    if (p.npos != 1)
        return cli_usage_error(ctx, "image: give one ELF file");
    if (ctx->json && ctx->csv)
        return cli_usage_error(ctx, "image: --json and --csv exclude each other");
    if (ctx->csv && !functions)
        return cli_usage_error(ctx, "image: --csv goes with --functions");

    cp_err err;
    img *im = img_open(pos[0], map, &err);
    if (!im || img_map_check(im, &err) < 0) {
        cli_error("%s", err.msg);
        img_free(im);
        return CLI_FAIL;
    }
    for (size_t i = 0; i < img_nwarnings(im); i++)
        cli_warn("%s", img_warning(im, i));
    if (cli_out_open(ctx) < 0) {
        img_free(im);
        return CLI_FAIL;
    }
    int status = CLI_OK;
    if (nlookups) {
        for (int i = 0; i < nlookups; i++)
            if (do_lookup(ctx, im, lookups[i]) < 0)
                status = CLI_USAGE;
    } else if (functions) {
        size_t n = img_nfuncs(im);
        const img_func **fs = malloc((n + 1) * sizeof *fs);
        if (!fs) {
            cli_error("out of memory");
            img_free(im);
            return CLI_FAIL;
        }
        for (size_t i = 0; i < n; i++)
            fs[i] = img_func_at(im, i);
        qsort(fs, n, sizeof *fs, cmp_func);
        print_functions(ctx, im, fs, n);
        free(fs);
    } else if (ctx->json) {
        summary_json(ctx->out, im);
    } else {
        summary_text(ctx->out, im);
    }
    img_free(im);
    return status;
}
