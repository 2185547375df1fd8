/* SHA-256 (FIPS 180-4), streaming; the control flow depends on the
 * lengths only, never on the data. */
#ifndef WS_SHA256_H
#define WS_SHA256_H

#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint32_t bytes;           /* message length so far (< 512 MiB) */
    uint32_t fill;            /* bytes in block */
    uint8_t block[64];
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const uint8_t *p, uint32_t len);
void sha256_final(struct sha256 *s, uint8_t digest[32]);

#endif
