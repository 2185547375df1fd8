/* libFuzzer harness: the image model's ELF reader. Input: ELF bytes. */
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_err err;
    img *im = img_open_buffer("fuzz.elf", data, size, NULL, NULL, 0, &err);
    if (im) {
        /* Exercise the lookups over every function. */
        for (size_t i = 0; i < img_nfuncs(im); i++) {
            const img_func *f = img_func_at(im, i);
            (void)img_lookup(im, f->addr);
            (void)img_lookup(im, f->addr + f->size - 1);
        }
        uint32_t w;
        (void)img_read(im, img_entry(im), &w, sizeof w);
        img_free(im);
    }
    return 0;
}
