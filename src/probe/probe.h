/* probe: a debug probe reached through a protocol it already serves: the
 * GDB remote serial protocol (OpenOCD, pyOCD, Black Magic Probe, J-Link GDB
 * server, probe-rs, QEMU) or OpenOCD's Tcl RPC. One handle type for both;
 * memory reads and writes of 32-bit words, halt / read PC / resume, and
 * the PC sampler that `codeplace record` drives. */
#ifndef CP_PROBE_H
#define CP_PROBE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/util.h"

typedef struct probe probe;

typedef enum probe_kind {
    PROBE_GDB,     /* GDB remote serial protocol over TCP */
    PROBE_OPENOCD, /* OpenOCD Tcl RPC (default port 6666) */
} probe_kind;

typedef struct probe_opts {
    int timeout_ms;      /* per reply; 0 = 3000 */
    const char *core;    /* OpenOCD target name (`targets NAME`), or NULL */
    int nonstop;         /* GDB: non-stop mode (memory reads while the
                            target runs): 0 no, 1 required, 2 if the stub
                            offers it */
} probe_opts;

/* Connects to HOST:PORT (a bare PORT means localhost; OpenOCD's default
 * port is 6666). Errors name the address and say what failed. */
probe *probe_open(probe_kind kind, const char *addr, const probe_opts *o,
                  cp_err *err);
/* Leaves the target running when it was running (GDB: detaches). */
void probe_close(probe *p);

probe_kind probe_get_kind(const probe *p);
const char *probe_addr(const probe *p);
/* 1 when memory can be read while the target runs (OpenOCD; GDB in
 * non-stop mode). */
int probe_reads_while_running(const probe *p);
/* GDB: the packet size the stub announced (qSupported PacketSize). */
size_t probe_packet_size(const probe *p);

/* Memory. GDB splits reads to the stub's packet size. */
int probe_read(probe *p, uint32_t addr, void *buf, size_t len, cp_err *err);
int probe_read32(probe *p, uint32_t addr, uint32_t *v, cp_err *err);
int probe_write32(probe *p, uint32_t addr, uint32_t v, cp_err *err);
/* Byte writes (up to 1024 bytes). */
int probe_write_bytes(probe *p, uint32_t addr, const void *buf, size_t len,
                      cp_err *err);

/* What went over a probe's connection since it was opened: the times it
 * waited for the probe (each a round trip, at least), what it sent and
 * received. */
typedef struct probe_link {
    uint64_t waits;     /* polls for a reply: the data was not there yet */
    uint64_t sends;     /* send() calls */
    uint64_t bytes_out, bytes_in;
} probe_link;

void probe_link_get(const probe *p, probe_link *l);

/* Run control. probe_halt stops the target (GDB: interrupt and wait for the
 * stop reply); probe_resume lets it run; probe_read_pc reads the PC of a
 * halted target. probe_is_halted reports what the probe last said. */
int probe_halt(probe *p, cp_err *err);
int probe_resume(probe *p, cp_err *err);
int probe_read_pc(probe *p, uint32_t *pc, cp_err *err);
int probe_is_halted(const probe *p);

/* OpenOCD only: runs one Tcl command and returns its result in out (cap
 * bytes, NUL-terminated). A Tcl error comes back as -1 with the message. */
int probe_tcl(probe *p, const char *cmd, char *out, size_t cap, cp_err *err);

/* ---- sampling ---- */

typedef enum probe_mode {
    PROBE_MODE_PCSR, /* read DWT_PCSR while the target runs */
    PROBE_MODE_HALT, /* interrupt, read PC, resume */
} probe_mode;

/* A streaming samples file (docs/formats/samples.md): counts are kept in a
 * table and the ones that changed are written and flushed every flush
 * interval, so an interrupted recording is a valid file. */
typedef struct probe_samples probe_samples;

typedef struct probe_samples_hdr {
    const char *source;   /* "probe-pcsr", "probe-halt" */
    const char *target;   /* preset name or "" */
    const char *elf_hash; /* or "" */
    double rate_hz;       /* asked for; 0 = as fast as possible */
} probe_samples_hdr;

probe_samples *probe_samples_create(const char *path,
                                    const probe_samples_hdr *h, cp_err *err);
int probe_samples_add(probe_samples *s, uint32_t addr, cp_err *err);
/* Writes the counts that changed since the last flush and flushes. */
int probe_samples_flush(probe_samples *s, cp_err *err);
/* Flushes, rewrites the file sorted with its duration and total, closes.
 * -1 when it cannot be written whole (err says why; the samples streamed
 * to it stay, without the total). Frees s in every case. */
int probe_samples_finish(probe_samples *s, double duration_s, cp_err *err);
uint64_t probe_samples_total(const probe_samples *s);

typedef struct probe_sample_stats {
    uint64_t samples;      /* samples taken (including halted ones) */
    uint64_t halted;       /* PCSR read 0xFFFFFFFF */
    uint64_t distinct;     /* distinct PCSR values seen */
    double elapsed_s;      /* wall time of the recording */
    double halted_s;       /* halt mode: total time the target was stopped */
    double max_halt_s;     /* halt mode: the longest single stop */
    probe_link link;       /* the connection's use during the recording */
    double halt_s, read_s, resume_s; /* halt mode: the stops' time in the
                                        interrupt and stop reply, the PC
                                        read, the resume */
    double late_s;         /* time the sampler woke after a sample was due,
                              where it slept (a loaded machine's
                              scheduling) */
    int stopped_by;        /* 0 duration, 1 signal, 2 probe error,
                              3 max_samples reached */
    cp_err error;          /* when stopped_by == 2: what went wrong */
} probe_sample_stats;

typedef struct probe_sampler {
    probe_mode mode;
    uint32_t pcsr_addr;     /* DWT_PCSR, 0xE000101C */
    double rate_hz;         /* 0 = as fast as the link allows */
    double duration_s;      /* 0 = until *stop */
    uint64_t max_samples;   /* stop after this many; 0 = no limit */
    volatile sig_atomic_t *stop; /* set by a signal handler; may be NULL */
    /* Called about every progress_s seconds (may be NULL). */
    void (*progress)(void *arg, const probe_sample_stats *st);
    void *progress_arg;
    double progress_s;
} probe_sampler;

/* Sets DEMCR.TRCENA (DWT on) when it is clear; *changed says whether it
 * was. */
int probe_dwt_enable(probe *p, int *changed, cp_err *err);

/* What n reads of DWT_PCSR with the target running showed. */
typedef enum probe_pcsr_verdict {
    PROBE_PCSR_OK,       /* the value changes: the register samples */
    PROBE_PCSR_ZERO,     /* every read 0: not implemented (it is optional
                            on ARMv6-M) */
    PROBE_PCSR_CONSTANT, /* one value every time: not implemented, or a
                            core that sleeps (WFI) or is stuck */
    PROBE_PCSR_HALTED,   /* every read 0xFFFFFFFF: the core is halted or
                            non-invasive debug is not permitted */
} probe_pcsr_verdict;

/* Reads DWT_PCSR n times and classifies what came back in *v; when it is
 * not PROBE_PCSR_OK, err says why in words. Returns -1 only when a read
 * fails (err names the address). */
int probe_pcsr_test(probe *p, uint32_t pcsr_addr, int n,
                    probe_pcsr_verdict *v, cp_err *err);

/* probe_pcsr_test that fails (-1) unless the verdict is PROBE_PCSR_OK. */
int probe_pcsr_check(probe *p, uint32_t pcsr_addr, int n, cp_err *err);

/* Samples until the duration ends, *stop is set, or the probe fails. Each
 * sample goes to out as it arrives. A probe failure mid-way is not an
 * error of the recording: it ends it (st->stopped_by = 2, st->error) and
 * everything measured is kept. Returns -1 only when out cannot be
 * written. */
int probe_sample_run(probe *p, const probe_sampler *cfg, probe_samples *out,
                     probe_sample_stats *st, cp_err *err);

#endif
