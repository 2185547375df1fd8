/* trc: running qemu-system-arm with the codeplace-qemu.so recorder
 * (src/qplugin/plugin.c). Builds the command line, starts QEMU in its own
 * process group, waits for it with a deadline and stops it by its PID. */
#ifndef CP_TRACE_QEMURUN_H
#define CP_TRACE_QEMURUN_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emu/emu.h"
#include "image/image.h"
#include "target/target.h"
#include "util/util.h"

#define TRC_QEMU_MAX_WIN 8
#define TRC_QEMU_MAX_VEC 128

typedef struct trc_qemu_win {
    uint32_t base, size;
} trc_qemu_win;

typedef struct trc_qemu_vec {
    uint32_t exc;     /* exception number (2..) */
    uint32_t handler; /* its handler's address */
} trc_qemu_vec;

typedef struct trc_qemu_cfg {
    const char *qemu;    /* the QEMU binary ("qemu-system-arm") */
    const char *machine; /* -M */
    const char *elf;     /* -kernel */
    const char *plugin;  /* path of codeplace-qemu.so */
    const char *out;     /* the trace */
    const char *endfile; /* where the end reason is left for the plugin */
    const char *target, *cpu, *elf_hash; /* header fields */
    uint32_t mark;
    uint64_t n, skip;
    trc_qemu_win cached[TRC_QEMU_MAX_WIN], noalloc[TRC_QEMU_MAX_WIN];
    unsigned ncached, nnoalloc;
    trc_qemu_vec vec[TRC_QEMU_MAX_VEC];
    unsigned nvec;
    unsigned udp_host, udp_guest; /* user-mode network forward (0: none) */
    uint32_t guest_ip;   /* the guest's IPv4 address (host order); 0: QEMU's
                            default network, the guest at 10.0.2.15 */
    uint32_t guest_mask; /* its netmask; the user network is set to its
                            subnet, the host side at host_ip */
    uint32_t host_ip;
    const char *pcap;    /* with udp_guest: QEMU dumps the user network's
                            frames here (filter-dump, first 64 bytes) */
    int quiet;           /* QEMU's stdout to /dev/null */
} trc_qemu_cfg;

/* ---- QEMU's Cortex-M machines ---- */

/* CPU and the memory the code runs from, which the recorder treats as the
 * cached window unless a target says otherwise. */
typedef struct trc_qemu_machine {
    const char *name, *cpu;
    uint32_t code_base, code_size;
} trc_qemu_machine;

/* The machine called name; NULL when there is none. */
const trc_qemu_machine *trc_qemu_find_machine(const char *name);
/* The machines' names, comma separated, for a message. */
const char *trc_qemu_machine_names(void);

/* The recorder's windows and the trace header's target and CPU: from t
 * (its flash is the cached window, its no-allocate flash the uncached
 * one; its header name goes to tname, cap bytes), or without a target
 * from the machine's code memory. Returns 1 when t does not hold the
 * marker c->mark in its cached window nor in RAM (an image linked for
 * another memory map), else 0. */
int trc_qemu_windows(trc_qemu_cfg *c, const trc_qemu_machine *m,
                     const tgt *t, char *tname, size_t cap);

/* The exception handlers of the image's vector table (entries 2.. whose
 * value is the Thumb start of a function) into c->vec; its address in
 * *vt. -1 with err when the image has no vector table. */
int trc_qemu_vectors(const img *im, trc_qemu_cfg *c, uint32_t *vt,
                     cp_err *err);

/* ---- the guest's address on QEMU's user network ---- */

/* QEMU's user network without net=: 10.0.2.0/24, the host at 10.0.2.2 and
 * the first DHCP address, 10.0.2.15 (QEMU's manual, "-netdev user": the
 * dhcpstart default), where hostfwd sends when no guest address is given */
#define TRC_QEMU_DEFAULT_GUEST 0x0a00020fu

/* A Zephyr build keeps its configuration next to the image
 * (BUILD/zephyr/zephyr.elf and BUILD/zephyr/.config). When that .config
 * gives the guest a static IPv4 address (CONFIG_NET_CONFIG_MY_IPV4_ADDR,
 * _NETMASK, CONFIG_NET_CONFIG_PEER_IPV4_ADDR), fills *ip, *mask and
 * *host (the address the host side takes: the peer when it is on the
 * subnet, else the subnet's .2) and writes the file's path to from:
 * returns 1. 0: no such file or no static address (DHCP gets QEMU's
 * 10.0.2.15); -1 with err: an address that cannot be used. */
int trc_qemu_zephyr_addr(const char *elf, uint32_t *ip, uint32_t *mask,
                         uint32_t *host, char *from, size_t cap,
                         cp_err *err);

/* a.b.c.d of a host-order address into buf (16 bytes). */
const char *trc_qemu_ipstr(uint32_t ip, char *buf);

/* ---- UDP echo traffic ---- */

/* Requests carry "CPQE" and a 64-bit sequence number; the rest is a
 * pattern of the number, so a reply is checked byte for byte. */
void trc_qemu_fill(uint8_t *b, size_t n, uint64_t seq);
#define TRC_QEMU_PROBE_SEQ UINT64_MAX /* the readiness probe's number */

typedef enum trc_qemu_ready {
    TRC_QEMU_READY = 1,   /* the guest answered a probe */
    TRC_QEMU_NO_ANSWER,   /* limit_s passed */
    TRC_QEMU_GONE,        /* QEMU ended (the caller reaps it) */
    TRC_QEMU_HALTED,      /* *stop became non-zero */
} trc_qemu_ready;

typedef struct trc_qemu_await_res {
    unsigned probes;     /* probes sent */
    double arp_s;        /* when the guest first answered ARP for its
                            address (seconds since the call; -1: never) */
    double ready_s;      /* when it answered a probe */
    unsigned guest_frames;  /* frames the guest sent */
    uint32_t guest_src;  /* an IPv4 address the guest spoke from (ARP or
                            IPv4 source; 0: none seen) */
} trc_qemu_await_res;

/* Waits for the guest behind fd (a UDP socket connected to QEMU's
 * forward of the guest's port) to answer, without queueing probes it
 * cannot take. QEMU's user network holds every frame for the guest until
 * the guest answers its ARP request and then hands them over at once; a
 * Zephyr guest given more than CONFIG_NET_PKT_RX_COUNT at once drops the
 * rest in its driver, and QEMU's lan9118 loses step on that drop (its RX
 * fast-forward) so that nothing more is received. So until the dump
 * (pcap) shows the guest's ARP reply for guest_ip, one probe per 1.5 s
 * (QEMU drops an unresolved frame after 1 s: never two held); then one
 * probe at a time, each given 0.25 s, doubling to 2 s, before the next.
 * Returns a trc_qemu_ready, or -1. */
int trc_qemu_await(int fd, const char *pcap, uint32_t guest_ip, pid_t qpid,
                   size_t size, double limit_s, volatile sig_atomic_t *stop,
                   trc_qemu_await_res *res, cp_err *err);

/* Echo requests, one outstanding at a time, at most rate per second: the
 * next is sent when the previous one is answered (or given up after
 * timeout_s) and its slot in the rate has come. Counts are exact up to
 * the moment the traffic stops. */
typedef struct trc_qemu_traffic {
    int fd;
    double rate, timeout_s;
    size_t size;
    pthread_t th;
    int running;
    volatile sig_atomic_t stop;
    pthread_mutex_t lock;
    uint64_t sent, answered, wrong, unanswered;
    int inflight;            /* a request waits for its answer */
    double last_answer_s;    /* cp_now_s() of the last answer */
} trc_qemu_traffic;

int trc_qemu_traffic_start(trc_qemu_traffic *t, int fd, double rate,
                           size_t size, cp_err *err);
void trc_qemu_traffic_stop(trc_qemu_traffic *t);
/* Seconds since the last answer (or the start). */
double trc_qemu_traffic_quiet_s(trc_qemu_traffic *t);

/* A UDP socket connected to 127.0.0.1:port. */
int trc_qemu_udp_socket(unsigned port, cp_err *err);

/* The argument vector for cfg (NULL-terminated; free with
 * trc_qemu_argv_free). */
char **trc_qemu_argv(const trc_qemu_cfg *cfg, cp_err *err);
void trc_qemu_argv_free(char **argv);

/* Starts argv[0] in a new process group; *pid gets its PID. */
int trc_qemu_spawn(char *const *argv, int quiet, pid_t *pid, cp_err *err);

typedef enum trc_qemu_end {
    TRC_QEMU_EXITED,      /* QEMU exited by itself (*status: exit code) */
    TRC_QEMU_SIGNALLED,   /* QEMU died of a signal (*status: the signal) */
} trc_qemu_end;

/* Waits for pid. Polls every few milliseconds; when *stop becomes non-zero
 * or deadline_s (seconds since start, 0: none) passes, returns 1 without
 * reaping (the caller then stops QEMU with trc_qemu_stop). 0: QEMU ended
 * (*how, *status). */
int trc_qemu_wait(pid_t pid, double deadline_s, volatile sig_atomic_t *stop,
                  trc_qemu_end *how, int *status, cp_err *err);

/* SIGTERM to pid, then SIGKILL after grace_s seconds; reaps it. */
int trc_qemu_stop(pid_t pid, double grace_s, trc_qemu_end *how, int *status);

/* The plugin: $CODEPLACE_QEMU_PLUGIN, else next to the running binary
 * (build/codeplace-qemu.so, or PREFIX/lib/codeplace/ for PREFIX/bin).
 * Writes the path to buf; -1 when none is found. */
int trc_qemu_find_plugin(char *buf, size_t cap, cp_err *err);

/* A free UDP port on 127.0.0.1 (bound and released). */
int trc_qemu_free_udp_port(unsigned *port, cp_err *err);

/* ---- around the run ---- */

/* --run CMD: sh -c CMD in its own process group, with the forwarded UDP
 * port in its environment (CODEPLACE_UDP_HOST, CODEPLACE_UDP_PORT). */
int trc_qemu_run_cmd(const char *cmd, unsigned port, pid_t *pid,
                     cp_err *err);
/* The end reason why, left in path for the plugin's trailer when QEMU is
 * stopped. */
void trc_qemu_leave_reason(const char *path, const char *why);

/* Watching a run: QEMU, the traffic or the --run command beside it. */
typedef struct trc_qemu_watch {
    pid_t qpid;                   /* QEMU */
    pid_t cpid;                   /* the --run command, or <= 0; -1 once
                                     it ended (its wait status in cst) */
    int cst;
    trc_qemu_traffic *tr;         /* the echo traffic (tr->running) */
    double t0;                    /* cp_now_s() at QEMU's start */
    double timeout_s;             /* --timeout from t0; 0: none */
    double quiet_s;               /* the traffic's answers may pause this
                                     long */
    volatile sig_atomic_t *stop;  /* Ctrl-C */
} trc_qemu_watch;

/* Waits until QEMU ends by itself (returns 0 with *why NULL, *how and
 * *status as trc_qemu_wait's) or there is a reason to stop it: *why is
 * then "time limit", "interrupted", "no answers" (the traffic got no
 * answer for quiet_s) or "command ended" (the --run command). -1 with
 * err and *why "stopped" when QEMU cannot be waited for. */
int trc_qemu_supervise(trc_qemu_watch *w, const char **why,
                       trc_qemu_end *how, int *status, cp_err *err);

/* Ends the --run command's process group (SIGTERM) and reaps it. */
void trc_qemu_end_cmd(pid_t pid);

/* What a recording holds, read back from the trace (a partial one too). */
typedef struct trc_qemu_sum {
    uint64_t bytes, insns, pre, uncached, runs, dreads, ctxs, marks;
    uint64_t *iters;         /* instructions of each complete iteration */
    size_t nit, cap;
    uint64_t median, min, max; /* over iters (0 when none) */
    char end[32];            /* the trailer's end reason, or "truncated" */
    int truncated;
} trc_qemu_sum;

int trc_qemu_summary(const char *path, trc_qemu_sum *s, cp_err *err);
void trc_qemu_sum_free(trc_qemu_sum *s);

#endif
