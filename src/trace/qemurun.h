/* trc: running qemu-system-arm with the codeplace-qemu.so recorder
 * (src/qplugin/plugin.c). Builds the command line, starts QEMU in its own
 * process group, waits for it with a deadline and stops it by its PID. */
#ifndef CP_TRACE_QEMURUN_H
#define CP_TRACE_QEMURUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
    int quiet;                    /* QEMU's stdout to /dev/null */
} trc_qemu_cfg;

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

#endif
