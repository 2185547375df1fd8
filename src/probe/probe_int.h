/* probe internals shared by the transports (gdb.c, ocd.c) and probe.c. */
#ifndef CP_PROBE_INT_H
#define CP_PROBE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "probe/probe.h"
#include "probe/rsp.h"

/* A TCP connection with a receive buffer. */
typedef struct probe_conn {
    int fd;
    char addr[300];       /* "host:port" for messages */
    int timeout_ms;
    char buf[8192];
    size_t pos, len;      /* unread bytes: buf[pos..len) */
    probe_link link;      /* what went over it */
} probe_conn;

int probe_conn_open(probe_conn *c, const char *addr, int default_port,
                    int timeout_ms, cp_err *err);
void probe_conn_close(probe_conn *c);
int probe_conn_send(probe_conn *c, const void *data, size_t n, cp_err *err);
/* Waits until bytes are buffered (c->pos < c->len). Returns 0, or -1 on a
 * timeout or a closed connection (err says which). */
int probe_conn_fill(probe_conn *c, int timeout_ms, cp_err *err);

typedef struct probe_gdb {
    probe_conn c;
    probe_rsp_parser *ps;
    int noack;            /* QStartNoAckMode accepted */
    int nonstop;          /* QNonStop:1 accepted */
    size_t pktsize;       /* PacketSize from qSupported */
    int halted;
    int pc_by_g;          /* 'p' unsupported: read 'g' */
    int xml;              /* qXfer:features:read offered */
    int detach_ok;
    int ack_due;          /* a packet received, its '+' not sent yet: it
                             goes with the next packet sent, or alone
                             before waiting for the stub */
} probe_gdb;

typedef struct probe_ocd {
    probe_conn c;
    unsigned seq;
    char *reply;          /* last reply, grown as needed */
    size_t rcap;
    int halted;
    int was_running;
} probe_ocd;

struct probe {
    probe_kind kind;
    char addr[300];
    union {
        probe_gdb g;
        probe_ocd o;
    } u;
};

int probe_gdb_open(probe *p, const char *addr, const probe_opts *o,
                   cp_err *err);
void probe_gdb_close(probe *p);
int probe_gdb_read(probe *p, uint32_t addr, void *buf, size_t len,
                   cp_err *err);
int probe_gdb_write(probe *p, uint32_t addr, const void *buf, size_t len,
                    cp_err *err);
int probe_gdb_halt(probe *p, cp_err *err);
int probe_gdb_resume(probe *p, cp_err *err);
int probe_gdb_read_pc(probe *p, uint32_t *pc, cp_err *err);

int probe_ocd_open(probe *p, const char *addr, const probe_opts *o,
                   cp_err *err);
void probe_ocd_close(probe *p);
int probe_ocd_read32(probe *p, uint32_t addr, uint32_t *v, size_t n,
                     cp_err *err);
int probe_ocd_write32(probe *p, uint32_t addr, uint32_t v, cp_err *err);
int probe_ocd_halt(probe *p, cp_err *err);
int probe_ocd_resume(probe *p, cp_err *err);
int probe_ocd_read_pc(probe *p, uint32_t *pc, cp_err *err);
int probe_ocd_tcl(probe *p, const char *cmd, char *out, size_t cap,
                  cp_err *err);

/* The halting sampler's next stop, u in [0, 1): with a period, half to
 * one and a half periods after the start of the last stop; without, after
 * its end, on average as long as a stop (mean_stop). */
double probe_halt_due(double period, double last_start, double last_end,
                      double mean_stop, double u);

#endif
