/*
 * The link layer the frames travel in: each frame is followed by its
 * CRC-16/CCITT-FALSE (big-endian), stuffed with COBS (Cheshire and Baker,
 * "Consistent Overhead Byte Stuffing", 1999: no zero byte inside a packet)
 * and ended by a zero byte.
 */
#include "proto.h"

/* COBS: each run of non-zero bytes (up to 254) after a code byte of
 * run length + 1; a code of 0xff means a full run with no zero after it */
static size_t cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    size_t o = 1, code_at = 0, i;
    uint8_t code = 1;

    if (cap == 0)
        return 0;
    for (i = 0; i < len; i++) {
        if (o >= cap)
            return 0;
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        } else {
            out[o++] = in[i];
            if (++code == 0xff) {
                if (o >= cap)
                    return 0;
                out[code_at] = code;
                code_at = o++;
                code = 1;
            }
        }
    }
    out[code_at] = code;
    return o;
}

static int cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *n)
{
    size_t i = 0, o = 0;

    while (i < len) {
        unsigned code = in[i++], k;
        if (code == 0)
            return -1;
        for (k = 1; k < code; k++) {
            if (i >= len || o >= cap || in[i] == 0)
                return -1;
            out[o++] = in[i++];
        }
        if (code != 0xff && i < len) {
            if (o >= cap)
                return -1;
            out[o++] = 0;
        }
    }
    *n = o;
    return 0;
}

size_t link_wrap(const uint8_t *frame, size_t len, uint8_t *out, size_t cap)
{
    uint8_t tmp[LINK_MTU + 2];
    uint16_t crc;
    size_t n;

    if (len > LINK_MTU)
        return 0;
    for (n = 0; n < len; n++)
        tmp[n] = frame[n];
    crc = crc16_ccitt(0xffffu, frame, len);
    tmp[len] = (uint8_t)(crc >> 8);
    tmp[len + 1] = (uint8_t)crc;
    n = cobs_encode(tmp, len + 2, out, cap);
    if (n == 0 || n >= cap)
        return 0;
    out[n] = 0;
    return n + 1;
}

int link_unwrap(const uint8_t *in, size_t len, uint8_t *frame, size_t cap, size_t *flen)
{
    size_t n;
    uint16_t crc;

    if (cobs_decode(in, len, frame, cap, &n) || n < 3)
        return -1;
    crc = crc16_ccitt(0xffffu, frame, n - 2);
    if (frame[n - 2] != (uint8_t)(crc >> 8) || frame[n - 1] != (uint8_t)crc)
        return -1;
    *flen = n - 2;
    return 0;
}
