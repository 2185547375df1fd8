/* libFuzzer harness: the QEMU exec-log importer (trace --from-qemu), on the
 * image of a real ELF (CP_FUZZ_ELF, default build/fixtures/irq-an385.elf)
 * with its vector table's handlers and codeplace_mark as the mark, without
 * a limit and with -n 2. What an accepted import wrote must read back with
 * the instructions and marks it reported. Input: log text. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/emu.h"
#include "image/image.h"
#include "trace/qemu.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static img *im;
static uint32_t handlers[16 + 496], mark;
static size_t nhandlers;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("CP_FUZZ_ELF");
    cp_err err;
    uint32_t vt;
    if (!path)
        path = "build/fixtures/irq-an385.elf";
    if (!(im = img_open(path, NULL, &err)) ||
        img_symbol(im, "codeplace_mark", &mark, NULL, &err) ||
        emu_find_vectors(im, &vt, &err)) {
        fprintf(stderr, "fuzz-qemulog: %s\n", err.msg);
        exit(1);
    }
    mark &= ~1u;
    nhandlers = trc_qemu_handlers(im, vt, handlers,
                                  sizeof handlers / sizeof *handlers);
    return 0;
}

/* The trace at path holds insns instructions and marks marks. */
static void check(const char *path, uint64_t insns, uint64_t marks)
{
    cp_err err;
    trc_reader *r = trc_open(path, &err);
    if (!r) {
        fprintf(stderr, "fuzz-qemulog: an accepted import does not read "
                "back: %s\n", err.msg);
        abort();
    }
    trc_rec rec;
    uint64_t n = 0, m = 0;
    int rc;
    while ((rc = trc_next(r, &rec, &err)) == 1) {
        if (rec.kind == TRC_FETCH)
            n += rec.ninsn;
        else if (rec.kind == TRC_MARK)
            m++;
    }
    trc_close(r);
    if (rc || n != insns || m != marks) {
        fprintf(stderr, "fuzz-qemulog: read back %llu instructions, %llu "
                "marks; the import reported %llu, %llu\n",
                (unsigned long long)n, (unsigned long long)m,
                (unsigned long long)insns, (unsigned long long)marks);
        abort();
    }
}

static void one(const uint8_t *data, size_t size, uint64_t n)
{
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return;
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz-qemulog-%d.trace", (int)getpid());
    trc_header h = {TRC_VERSION, "", "", "", "qemu"};
    cp_err err;
    trc_writer *w = trc_create(path, &h, &err);
    if (!w) {
        fclose(f);
        return;
    }
    trc_qemu_in in = {im, NULL, mark, n, handlers, nhandlers};
    trc_qemu_stats st;
    int rc = trc_from_qemu_file(f, "fuzz.log", &in, w, &st, &err);
    fclose(f);
    uint64_t marks = trc_writer_totals(w)->marks;
    if (rc) {
        trc_set_end(w, "fault");
        trc_finish(w, &err);
    } else if (!trc_finish(w, &err)) {
        check(path, st.insns, marks);
    }
    free(st.iter_insns);
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    one(data, size, 0);
    one(data, size, 2);
    return 0;
}
