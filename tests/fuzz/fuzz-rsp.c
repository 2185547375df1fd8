/* libFuzzer harness for the GDB remote protocol parser (src/probe/rsp.c):
 * the bytes a stub sends. The first byte picks the chunk size the input is
 * fed in (packets split anywhere); every decoded packet must be within
 * bounds and NUL-terminated, and framing the input as data must parse back
 * to the same bytes.
 *   sh tests/fuzz/run rsp          (make fuzz runs every harness) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe/rsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static probe_rsp_parser parser;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t chunk = (size_t)(data[0] % 16) + 1;
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    probe_rsp_init(&parser);
    size_t pos = 0;
    while (pos < n) {
        size_t end = pos + chunk < n ? pos + chunk : n;
        while (pos < end) {
            size_t used;
            probe_rsp_ev ev = probe_rsp_feed(&parser, in + pos, end - pos,
                                             &used);
            if (used == 0 || used > end - pos)
                abort();
            pos += used;
            if (ev == PROBE_RSP_EV_PACKET || ev == PROBE_RSP_EV_NOTIFY) {
                if (parser.len > PROBE_RSP_MAX || parser.data[parser.len])
                    abort();
            }
        }
    }
    /* round trip: frame the input as a packet's data and parse it back */
    size_t cap = 2 * n + 8;
    char *framed = malloc(cap);
    if (!framed)
        return 0;
    long fl = probe_rsp_frame(in, n, framed, cap);
    if (fl < 0)
        abort();
    if (n <= PROBE_RSP_MAX / 2) {
        probe_rsp_init(&parser);
        size_t used;
        probe_rsp_ev ev = probe_rsp_feed(&parser, framed, (size_t)fl, &used);
        if (ev != PROBE_RSP_EV_PACKET || parser.len != n ||
            memcmp(parser.data, in, n) != 0)
            abort();
    }
    free(framed);
    /* the decoder on its own, with a small output buffer */
    char out[64];
    (void)probe_rsp_decode(in, n, out, sizeof out);
    return 0;
}
