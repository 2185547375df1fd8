/* mktrace: writes a trace file from a text description, for the sim tests.
 *   mktrace OUT [TARGET [ELF_HASH]] < description
 * Each line: "F ADDR LEN NINSN [FLAGS]" (a fetch run), "D ADDR LEN" (a
 * flash data read), "M N" (iteration mark), "R K" (repeat the lines since
 * the previous R, or else since the first M, K more times), "E REASON"
 * (how the recording ended, "done" by default: "instruction limit"), or
 * "# comment". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mktrace OUT [TARGET [ELF_HASH]] < text\n");
        return 2;
    }
    trc_header h = {TRC_VERSION, "", "", "", "mktrace"};
    if (argc > 2)
        snprintf(h.target, sizeof h.target, "%s", argv[2]);
    if (argc > 3)
        snprintf(h.elf_hash, sizeof h.elf_hash, "%s", argv[3]);
    cp_err err;
    trc_writer *w = trc_create(argv[1], &h, &err);
    if (!w) {
        fprintf(stderr, "mktrace: %s\n", err.msg);
        return 1;
    }
    trc_rec *recs = NULL;
    size_t n = 0, cap = 0, mark_from = (size_t)-1;
    char line[256];
    unsigned next_mark = 0;
    while (fgets(line, sizeof line, stdin)) {
        trc_rec r = {0};
        unsigned long a = 0, l = 0, k = 0, f = 0;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (line[0] == 'E' && line[1] == ' ') {
            line[strcspn(line, "\n")] = 0;
            trc_set_end(w, line + 2);
            continue;
        }
        if (line[0] == 'R' && sscanf(line + 1, "%lu", &k) == 1) {
            size_t end = n;
            if (mark_from == (size_t)-1)
                mark_from = 0;
            for (unsigned long i = 0; i < k; i++)
                for (size_t j = mark_from; j < end; j++) {
                    trc_rec c = recs[j];
                    if (c.kind == TRC_MARK)
                        c.addr = next_mark++;
                    if (trc_write(w, &c, &err) < 0)
                        goto fail;
                }
            mark_from = n;
            continue;
        }
        if (line[0] == 'F' && sscanf(line + 1, "%li %lu %lu %lu", &a, &l, &k, &f) >= 3)
            r = (trc_rec){TRC_FETCH, (uint32_t)a, (uint32_t)l, (uint32_t)k, (unsigned)f};
        else if (line[0] == 'D' && sscanf(line + 1, "%li %lu", &a, &l) == 2)
            r = (trc_rec){TRC_DREAD, (uint32_t)a, (uint32_t)l, 0, 0};
        else if (line[0] == 'M') {
            r = (trc_rec){TRC_MARK, next_mark++, 0, 0, 0};
            if (mark_from == (size_t)-1)
                mark_from = n;
        }
        else {
            fprintf(stderr, "mktrace: bad line: %s", line);
            return 1;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            recs = realloc(recs, cap * sizeof *recs);
            if (!recs)
                return 1;
        }
        recs[n++] = r;
        if (trc_write(w, &r, &err) < 0)
            goto fail;
    }
    free(recs);
    if (trc_finish(w, &err) < 0) {
        fprintf(stderr, "mktrace: %s\n", err.msg);
        return 1;
    }
    return 0;
fail:
    fprintf(stderr, "mktrace: %s\n", err.msg);
    return 1;
}
