/* libFuzzer harness: the map reading of src/plan/ldstub.c, which rebuilds
 * the section ids of a link from the map's LOAD lines and archive members
 * and the input files they name. The map is written beside the fixtures
 * (build/fuzz/ldstub/), so that its relative paths (build/fixtures/fx-m0.o)
 * resolve against its parents as a map's do. The seeds name the demo
 * firmware's objects and a small archive of them made here
 * (build/fuzz/ldstub/libfx.a): the toolchain's libc.a would take a second
 * per input. A name not in the link has no id. Input: map file text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/ldstub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char map[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mkdir("build/fuzz/ldstub", 0700);
    if (system("cd build/fw/obj/m0/demo && rm -f ../../../../fuzz/ldstub/"
               "libfx.a && ar rcs ../../../../fuzz/ldstub/libfx.a calib.o "
               "crc32.o filter.o sensor.o") != 0) {
        fprintf(stderr, "fuzz-ldstub: cannot make build/fuzz/ldstub/libfx.a "
                "from the demo firmware's objects (make firmware)\n");
        exit(1);
    }
    snprintf(map, sizeof map, "build/fuzz/ldstub/fuzz-%ld.map",
             (long)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(map, "wb");
    if (!f)
        return 0;
    size_t w = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || w != size)
        return 0;
    cp_err err;
    plan_ldstub_link *k = plan_ldstub_link_read(map, NULL, &err);
    if (!k) {
        if (!memchr(err.msg, 0, sizeof err.msg))
            abort();
        return 0;
    }
    if (plan_ldstub_sec_id(k, "build/fixtures/no-such.o", ".text") != -1)
        abort();
    (void)plan_ldstub_sec_id(k, "build/fixtures/fx-m0.o", ".text.main");
    plan_ldstub_link_free(k);
    return 0;
}
