/* nb sink: a TCP sink on one epoll loop. Every connection is accepted and
 * read as soon as it is ready, so a new connection never waits behind an
 * old one. Counts bytes per connection and per interval, closes connections
 * that stay silent (idle: sent data, then nothing for idle_s; half-open:
 * never sent a byte, or the kernel's keepalive found the peer gone) and
 * reports each event through a callback. */
#ifndef CP_NB_SINK_H
#define CP_NB_SINK_H

#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/util.h"

enum nb_sink_kind {
    NB_SINK_LISTEN,   /* the address is bound: addr */
    NB_SINK_OPEN,     /* a connection: conn, addr */
    NB_SINK_INTERVAL, /* one interval: bytes, mbps, active, conns_moving */
    NB_SINK_CONN_INTERVAL, /* per connection in an interval (per_conn) */
    NB_SINK_CLOSE,    /* conn, addr, bytes, secs, mbps, reason */
    NB_SINK_SUMMARY,  /* bytes, secs, mbps, opened, closed, peak, timed_out */
};

typedef struct nb_sink_event {
    int kind;
    double t;          /* seconds since the sink started */
    uint64_t conn;     /* connection number, from 1 */
    const char *addr;  /* "host:port" */
    uint64_t bytes;
    double secs, mbps;
    const char *reason; /* close: eof, reset, idle, half-open, stopped */
    unsigned active, conns_moving, peak;
    uint64_t opened, closed, idle, half_open;
} nb_sink_event;

typedef struct nb_sink_cfg {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    double interval_s;  /* > 0 */
    double duration_s;  /* 0: until stopped */
    double idle_s;      /* 0: never time out */
    uint64_t max_conns; /* stop once this many have closed; 0: no limit */
    int per_conn;       /* also report NB_SINK_CONN_INTERVAL */
    volatile sig_atomic_t *stop;
    void (*on_event)(void *arg, const nb_sink_event *ev);
    void *arg;
} nb_sink_cfg;

/* Runs the sink until duration, max_conns or *stop. Returns 0 or -1. */
int nb_sink_run(const nb_sink_cfg *cfg, cp_err *err);

#endif
