/* nb udp: the UDP echo rate sweep. Requests leave at fixed rates, one rate
 * per step, on absolute deadlines; each payload carries a run id, the step,
 * a sequence number and the send time; replies are matched by sequence.
 *
 * Pacing never catches up after a stall: a slot whose deadline has passed
 * is still sent if the next slot is not yet due (counted sent_late); a slot
 * whose successor is also overdue is skipped (counted skipped). The rate
 * never rises above the requested one to make up for lost time.
 *
 * Before the first step one warm-up request (step 0) goes out and its reply
 * is not counted: address resolution and peers that set up on their first
 * datagram (socat UDP-LISTEN) do not cost the first step a request.
 *
 * A reply exactly k times the request size holds k replies: echoes that
 * relay through a byte stream (socat ... PIPE, EXEC:cat) merge datagrams
 * that arrive together.
 *
 * Replies: answered (first reply within the timeout), late (first reply
 * after it), duplicated (every further reply to the same request),
 * reordered (a first reply within the timeout whose sequence is below one
 * already answered in the step), stray (replies to an earlier step, or not ours), lost (sent and
 * never answered by the end of the step's wait: twice the timeout after the
 * last request). */
#ifndef CP_NB_UDP_H
#define CP_NB_UDP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/util.h"

/* The payload: magic "CPNB", run id, step, sequence, send time (ns,
 * CLOCK_MONOTONIC), all big-endian. Requests are at least this long. */
#define NB_UDP_HDR 24
#define NB_UDP_MAX_RATE 100000.0
#define NB_UDP_MAX_SIZE 65507

/* What one step measured. */
typedef struct nb_udp_step {
    unsigned pass;        /* 1-based */
    unsigned index;       /* step within the pass, 0-based */
    double rate;          /* requested requests per second */
    uint64_t requested;   /* slots in the step: rate x step duration */
    uint64_t sent, skipped, sent_late, send_errors;
    uint64_t answered, lost, late, duplicated, reordered, stray;
    double achieved_rate; /* sent / time from the first slot to the last */
    double reply_rate;    /* answered / the step's nominal duration */
    double loss_pct;      /* 100 * (requested - answered) / requested */
    double rtt_median_us, rtt_p99_us, rtt_min_us, rtt_max_us; /* answered */
} nb_udp_step;

/* One pass's summary. */
typedef struct nb_udp_pass {
    unsigned pass;
    /* Highest rate at which every request sent was answered in time
     * (answered == sent: none lost or late); 0 if none. Slots the host
     * skipped are not requests the device failed: they are reported as
     * skipped, per step. */
    double all_answered_rate;
    double peak_reply_rate;   /* highest reply rate of the pass */
} nb_udp_pass;

typedef struct nb_udp_cfg {
    struct sockaddr_storage peer;
    socklen_t peerlen;
    const double *rates;
    size_t nrates;
    double step_s;     /* seconds per step */
    unsigned passes;
    size_t size;       /* payload bytes, NB_UDP_HDR..NB_UDP_MAX_SIZE */
    double timeout_s;  /* a reply later than this is late */
    double spin_us;    /* spin this long before each deadline */
    double gap_s;      /* pause between steps (after the reply wait) */
    int realtime;      /* run the sender under SCHED_FIFO (needs root) */
    volatile sig_atomic_t *stop; /* set (e.g. by SIGINT) to stop early */
    /* Called after every finished step (from the calling thread). */
    void (*on_step)(void *arg, const nb_udp_step *st);
    void *arg;
    /* Sink for the RTTs of answered requests, in microseconds (may be NULL):
     * called once per finished step with that step's samples. */
    void (*on_rtts)(void *arg, const nb_udp_step *st, const double *rtt_us,
                    size_t n);
} nb_udp_cfg;

/* Runs the sweep. Returns 0 (also when stopped early: *interrupted is then
 * 1 and only finished steps were reported) or -1 with err filled. */
int nb_udp_sweep(const nb_udp_cfg *cfg, int *interrupted, cp_err *err);

/* Per-pass summaries from a list of steps (in any order). passes has room
 * for the highest pass number; returns the number of passes filled. */
size_t nb_udp_summarize(const nb_udp_step *steps, size_t n,
                        nb_udp_pass *passes, size_t max_passes);

/* Parses "START:STOP:STEP" or "R1,R2,...": rates in requests per second,
 * each in (0, NB_UDP_MAX_RATE]. *rates is malloc'ed. */
int nb_parse_rates(const char *s, double **rates, size_t *n, cp_err *err);

/* A UDP echo server on an already bound socket until *stop is set. Counts
 * datagrams echoed. Returns 0 or -1. */
int nb_udp_echo_serve(int fd, volatile sig_atomic_t *stop, uint64_t *count,
                      cp_err *err);

#endif
