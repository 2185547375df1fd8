/* probe_rsp: the GDB remote serial protocol's framing, without any I/O.
 * A packet is `$data#cs` (cs: two hex digits, the sum of the data bytes
 * modulo 256); `%data#cs` is a notification; `+` and `-` acknowledge.
 * In the data, `}` escapes the next byte (xor 0x20) and `X*n` repeats X
 * (n - 29) more times (run-length encoding, replies only). The parser is
 * fed bytes as they come and never trusts them: it is what the fuzz
 * harness (tests/fuzz/fuzz-rsp.c) drives. */
#ifndef CP_PROBE_RSP_H
#define CP_PROBE_RSP_H

#include <stddef.h>
#include <stdint.h>

/* Largest decoded packet the parser keeps (bytes); longer ones are
 * reported as PROBE_RSP_EV_OVERFLOW and dropped. */
#define PROBE_RSP_MAX 65536

typedef enum probe_rsp_ev {
    PROBE_RSP_EV_NONE = 0,  /* all input used, no event yet */
    PROBE_RSP_EV_ACK,       /* '+' */
    PROBE_RSP_EV_NAK,       /* '-' */
    PROBE_RSP_EV_PACKET,    /* a good packet: data/len hold it, decoded */
    PROBE_RSP_EV_NOTIFY,    /* a good notification (%...): data/len */
    PROBE_RSP_EV_BADSUM,    /* a packet whose checksum did not match */
    PROBE_RSP_EV_BADDATA,   /* bad escape or run length in a packet */
    PROBE_RSP_EV_OVERFLOW,  /* a packet longer than PROBE_RSP_MAX */
    PROBE_RSP_EV_INTR,      /* a raw 0x03 outside a packet */
} probe_rsp_ev;

typedef struct probe_rsp_parser {
    int state;        /* private */
    int notify;       /* the packet being read started with '%' */
    int overflow;
    uint8_t sum;      /* running sum of the raw data */
    uint8_t cs;       /* received checksum, high digit first */
    size_t rlen;      /* raw bytes of the packet being read */
    size_t junk;      /* bytes skipped outside packets (total) */
    char raw[PROBE_RSP_MAX];
    char data[PROBE_RSP_MAX + 1]; /* the decoded packet, NUL-terminated */
    size_t len;                   /* its length */
} probe_rsp_parser;

void probe_rsp_init(probe_rsp_parser *p);

/* Consumes bytes from buf[0..n) until an event or the end of the input;
 * *used is set to the bytes consumed. Returns the event. After
 * PROBE_RSP_EV_PACKET / NOTIFY, p->data and p->len hold the payload until
 * the next call. */
probe_rsp_ev probe_rsp_feed(probe_rsp_parser *p, const char *buf, size_t n,
                            size_t *used);

/* Decodes escapes and run lengths of raw[0..n) into out (cap bytes).
 * Returns the decoded length, or -1 on a bad escape, a bad run length
 * (a '*' first or last, a count byte outside 30..126), or when out is too
 * small. */
long probe_rsp_decode(const char *raw, size_t n, char *out, size_t cap);

/* Frames data[0..n) as `$...#cs` into out (cap bytes), escaping '$', '#',
 * '}' and '*'. Returns the framed length or -1 when out is too small. */
long probe_rsp_frame(const char *data, size_t n, char *out, size_t cap);

/* Hex helpers. probe_hex_decode returns bytes written or -1 when s is not
 * an even number of hex digits or does not fit. */
long probe_hex_decode(const char *s, size_t n, uint8_t *out, size_t cap);
void probe_hex_encode(const uint8_t *in, size_t n, char *out); /* 2n + NUL */

#endif
