/* Is the map whole? img_open compares what the map and the ELF both list
 * (section addresses and sizes, global symbols); this looks for what the
 * ELF has and the map does not: the sign of a map cut short. A GNU ld map
 * lists every output section the linker wrote, the debug sections last,
 * then the OUTPUT(FILE FORMAT) line of its script: a map cut before that
 * line lacks it, and most often a section or the input sections of some
 * function too. */
#include "image/image_int.h"

#include <stdio.h>
#include <string.h>

static const img_map_osec *map_osec(const img *im, const char *name)
{
    for (size_t i = 0; i < im->nmosecs; i++)
        if (!strcmp(im->mosecs[i].name, name))
            return &im->mosecs[i];
    return NULL;
}

/* Appends ", NAME" (or "NAME" first) to buf while it fits; "..." after. */
static void add_name(char *buf, size_t cap, const char *name, size_t *shown)
{
    size_t n = strlen(buf);
    if (n + strlen(name) + 8 >= cap) {
        if (n + 5 < cap && strcmp(buf + (n >= 3 ? n - 3 : 0), "..."))
            snprintf(buf + n, cap - n, ", ...");
        return;
    }
    snprintf(buf + n, cap - n, "%s%s", *shown ? ", " : "", name);
    (*shown)++;
}

/* The ELF's sections the map does not list: their count, names in buf.
 * A listed section of another size is an error (img_open compared the
 * allocated ones already; this is the non-allocated ones). */
static int missing_sections(const img *im, size_t *nmiss, char *buf,
                            size_t cap, cp_err *err)
{
    size_t shown = 0;
    *nmiss = 0;
    buf[0] = 0;
    for (size_t i = 0; i < im->nlsecs; i++) {
        const img_linked_sec *l = &im->lsecs[i];
        const img_map_osec *o = map_osec(im, l->name);
        if (!o) {
            (*nmiss)++;
            add_name(buf, cap, l->name, &shown);
        } else if (o->size != l->size) {
            return cp_seterr(err, "map file '%s' does not match '%s': section "
                             "%s is 0x%x bytes in the map but 0x%x in the ELF "
                             "(a map from another build?)", im->map_path,
                             im->path, l->name, o->size, l->size);
        }
    }
    return 0;
}

int img_map_check(const img *im, cp_err *err)
{
    if (!im->map_path)
        return 0;
    char secs[120];
    size_t nmiss;
    if (missing_sections(im, &nmiss, secs, sizeof secs, err) < 0)
        return -1;
    const img_func *first = NULL;
    for (size_t i = 0; i < im->nfuncs && !first; i++)
        if (!im->funcs[i].isec)
            first = &im->funcs[i];
    if (!nmiss && !first && !im->map_cut_line && im->map_output)
        return 0;

    char what[400] = "";
    size_t n = 0;
    if (nmiss)
        n += (size_t)snprintf(what + n, sizeof what - n, "%zu of the ELF's "
                              "%zu sections are not in it (%s)", nmiss,
                              im->nlsecs, secs);
    if (first && n < sizeof what)
        n += (size_t)snprintf(what + n, sizeof what - n, "%s%zu function(s) "
                              "lie in no input section it lists (%s at "
                              "0x%08x first)", n ? "; " : "", im->map_unplaced,
                              first->name, first->addr);
    if (!im->map_output && n < sizeof what)
        n += (size_t)snprintf(what + n, sizeof what - n, "%sit has no "
                              "OUTPUT(...) line, which ld writes after the "
                              "sections of its script", n ? "; " : "");
    if (im->map_cut_line && n < sizeof what)
        snprintf(what + n, sizeof what - n, "%sits last line (%d) has no end",
                 n ? "; " : "", im->map_cut_line);
    return cp_seterr(err, "map file '%s' is cut short or of another build "
                     "than '%s': %s", im->map_path, im->path, what);
}
