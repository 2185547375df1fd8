/* libFuzzer harness: the GNU ld snippet reader of `verify`
 * (src/verify/verify.c), which checks that each input section pattern of
 * codeplace_flash.ld and codeplace_ram.ld matched a section of the
 * relinked map. The relinked build is the one named by CP_FUZZ_ELF and
 * CP_FUZZ_MAP (default the demo firmware, build/fw/demo-rp2040.elf and
 * .map), on rp2040. Input:
 * codeplace_flash.ld, then after the first NUL byte (if any)
 * codeplace_ram.ld. The counts of patterns add up. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image.h"
#include "target/target.h"
#include "verify/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static img *im;
static const tgt *t;
static char dir[64];

static const char layout[] = "# codeplace layout 2\n"
                             "# target: rp2040 image: demo-rp2040.elf strategy: fuzz\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *elf = getenv("CP_FUZZ_ELF"), *map = getenv("CP_FUZZ_MAP");
    if (!elf)
        elf = "build/fw/demo-rp2040.elf";
    if (!map)
        map = "build/fw/demo-rp2040.map";
    cp_err err;
    if (!(t = tgt_load("rp2040", &err)) || !(im = img_open(elf, map, &err))) {
        fprintf(stderr, "fuzz-snippet: %s\n", err.msg);
        exit(1);
    }
    snprintf(dir, sizeof dir, "/tmp/fuzz-snippet-%ld", (long)getpid());
    mkdir(dir, 0700);
    return 0;
}

static int put(const char *name, const uint8_t *data, size_t size)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, size, f);
    return fclose(f) != 0 || w != size ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t flash = nul ? (size_t)(nul - data) : size;
    size_t ram_at = nul ? flash + 1 : size;
    if (put("codeplace_flash.ld", data, flash) < 0 ||
        put("codeplace_ram.ld", data + ram_at, size - ram_at) < 0)
        return 0;
    vfy_result r;
    cp_err err;
    if (vfy_run_text("fuzz.layout", layout, sizeof layout - 1, im, t, dir, &r,
                     &err) < 0) {
        if (!memchr(err.msg, 0, sizeof err.msg))
            abort();
    } else if (r.patterns_ok > r.patterns ||
               r.patterns - r.patterns_ok > r.ndiffs) {
        abort();
    }
    vfy_result_free(&r);
    return 0;
}
