/* libFuzzer harness for the OpenOCD Tcl RPC client (src/probe/ocd.c): the
 * bytes OpenOCD sends back. The input is the peer's side of a connection
 * (a socket pair, closed after the input): 0x1a-terminated messages that
 * answer, in order, `version`, a read_memory of N words (N from the first
 * byte), `reg pc`, `halt`, a write_memory and `resume`, with notifications
 * or stale replies anywhere. Every call must end in a result or an error
 * whose message is a NUL-terminated string.
 *   sh tests/fuzz/run ocd          (make fuzz runs every harness) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe/probe_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* More would not fit the socket pair's buffer before the client reads. */
#define MAX_INPUT 65536

static void check_err(const cp_err *e)
{
    if (!memchr(e->msg, 0, sizeof e->msg))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > MAX_INPUT)
        return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return 0;
    int buf = 4 * MAX_INPUT;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    size_t words = (size_t)(data[0] % 64) + 1;
    if (write(sv[1], data + 1, size - 1) != (ssize_t)(size - 1)) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    shutdown(sv[1], SHUT_WR); /* the client sees the end of the input */

    probe *p = calloc(1, sizeof *p);
    if (!p) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    p->kind = PROBE_OPENOCD;
    snprintf(p->addr, sizeof p->addr, "fuzz:6666");
    p->u.o.c.fd = sv[0];
    p->u.o.c.timeout_ms = 1000;
    snprintf(p->u.o.c.addr, sizeof p->u.o.c.addr, "fuzz:6666");

    cp_err err;
    char out[256];
    if (probe_tcl(p, "version", out, sizeof out, &err) < 0)
        check_err(&err);
    else if (!memchr(out, 0, sizeof out))
        abort();
    uint32_t v[64];
    if (probe_read(p, 0x20000000, v, 4 * words, &err) < 0)
        check_err(&err);
    uint32_t pc;
    if (probe_read_pc(p, &pc, &err) < 0)
        check_err(&err);
    if (probe_halt(p, &err) < 0)
        check_err(&err);
    if (probe_write32(p, 0xe000edfc, 0x01000000, &err) < 0)
        check_err(&err);
    if (probe_resume(p, &err) < 0)
        check_err(&err);
    probe_close(p); /* closes sv[0] */
    close(sv[1]);
    return 0;
}
