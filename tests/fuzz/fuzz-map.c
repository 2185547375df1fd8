/* libFuzzer harness: the GNU ld map parser, applied to a real ELF (the
 * fixture named by CP_FUZZ_ELF, default build/fixtures/m0.elf) so that the
 * checks against the ELF run too. Input: map file text. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char *elf;
static size_t elf_len;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("CP_FUZZ_ELF");
    cp_err err;
    if (!path)
        path = "build/fixtures/m0.elf";
    if (cp_read_file(path, &elf, &elf_len, &err) < 0) {
        fprintf(stderr, "fuzz-map: %s\n", err.msg);
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    cp_err err;
    img *im = img_open_buffer("fuzz.elf", elf, elf_len, "fuzz.map", text, size,
                              &err);
    if (im) {
        for (size_t i = 0; i < img_nfuncs(im); i++)
            (void)img_func_at(im, i)->isec;
        (void)img_map_check(im, &err);
        img_free(im);
    }
    free(text);
    return 0;
}
