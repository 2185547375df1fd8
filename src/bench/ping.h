/* nb ping: ICMP echo round trips. Uses an unprivileged ping socket
 * (SOCK_DGRAM, IPPROTO_ICMP) when net.ipv4.ping_group_range allows it, a
 * raw socket otherwise (root). IPv4 only. */
#ifndef CP_NB_PING_H
#define CP_NB_PING_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/util.h"

typedef struct nb_ping_cfg {
    struct sockaddr_storage peer;
    socklen_t peerlen;
    unsigned count;      /* probes, at most 65535 */
    double interval_s;   /* between probes, on absolute deadlines */
    size_t size;         /* ICMP payload bytes, >= 16 */
    double timeout_s;    /* wait for the last replies */
    volatile sig_atomic_t *stop;
} nb_ping_cfg;

typedef struct nb_ping_result {
    const char *socket_kind; /* "ping socket" or "raw socket" */
    uint64_t sent, answered, late, duplicated, lost;
    double *rtt_us;          /* answered RTTs in probe order; free() it */
    size_t nrtt;
    int interrupted;
} nb_ping_result;

/* Returns 0 (also when stopped: res->interrupted) or -1 with err filled
 * (e.g. no permission for either socket kind). */
int nb_ping(const nb_ping_cfg *cfg, nb_ping_result *res, cp_err *err);

#endif
