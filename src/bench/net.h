/* nb net: the pieces the network benchmarks share: resolving HOST[:PORT],
 * a monotonic clock in nanoseconds, and sleeping until an absolute
 * deadline (clock_nanosleep TIMER_ABSTIME, spinning the last microseconds). */
#ifndef CP_NB_NET_H
#define CP_NB_NET_H

#include <stdint.h>
#include <sys/socket.h>

#include "util/util.h"

/* Resolves "HOST", "HOST:PORT", "[V6]:PORT" (numeric or by name) for the
 * given socket type. Returns 0 or -1 with err filled. */
int nb_resolve(const char *hostport, unsigned default_port, int socktype,
               struct sockaddr_storage *addr, socklen_t *len, cp_err *err);
/* The same for an address to listen on: port 0 (any free port) allowed. */
int nb_resolve_listen(const char *hostport, unsigned default_port,
                      int socktype, struct sockaddr_storage *addr,
                      socklen_t *len, cp_err *err);
/* "127.0.0.1:9000" / "[::1]:9000" into buf (at least 64 bytes). */
const char *nb_addr_str(const struct sockaddr_storage *addr, char *buf,
                        size_t size);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t nb_now_ns(void);
/* Sleeps until the monotonic time deadline: clock_nanosleep with
 * TIMER_ABSTIME until spin_ns before it, then spins. Returns the time it
 * woke (>= deadline). */
uint64_t nb_wait_until(uint64_t deadline, uint64_t spin_ns);
/* Lowers the calling thread's timer slack to 1 ns so that absolute sleeps
 * wake on time (the default slack is 50 us). */
void nb_tight_timers(void);

#endif
