/* The PC sampler and the streaming samples file. */
#include "probe/probe.h"
#include "probe/probe_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "samples/samples.h"

/* ---- samples file ---- */

typedef struct slot {
    uint32_t addr;
    uint32_t used;
    uint64_t count;   /* total */
    uint64_t pending; /* not yet written */
} slot;

struct probe_samples {
    FILE *f;
    char *path;
    smp *head;        /* the file's header fields (samples/samples.c writes
                         the file) */
    slot *tab;
    size_t cap, n;
    uint64_t total;
    int werr;
};

static char *dupstr(const char *s)
{
    s = s ? s : "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

probe_samples *probe_samples_create(const char *path,
                                    const probe_samples_hdr *h, cp_err *err)
{
    probe_samples *s = calloc(1, sizeof *s);
    if (!s) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    s->path = dupstr(path);
    s->head = smp_new();
    s->cap = 1024;
    s->tab = calloc(s->cap, sizeof *s->tab);
    if (!s->path || !s->head || !s->tab) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    snprintf(s->head->source, sizeof s->head->source, "%s",
             h->source ? h->source : "");
    snprintf(s->head->target, sizeof s->head->target, "%s",
             h->target ? h->target : "");
    snprintf(s->head->elf, sizeof s->head->elf, "%s",
             h->elf_hash ? h->elf_hash : "");
    s->head->rate_hz = h->rate_hz;
    s->f = fopen(path, "w");
    if (!s->f) {
        cp_seterr(err, "cannot create '%s': %s", path, strerror(errno));
        goto fail;
    }
    smp_write_head(s->head, s->f);
    if (fflush(s->f) != 0) {
        cp_seterr(err, "cannot write '%s': %s", path, strerror(errno));
        fclose(s->f);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            unlink(path); /* not an empty or cut samples file left behind */
        goto fail;
    }
    return s;
fail:
    free(s->tab);
    free(s->path);
    smp_free(s->head);
    free(s);
    return NULL;
}

static slot *lookup(probe_samples *s, uint32_t addr)
{
    size_t m = s->cap - 1, i = cp_hash32(addr) & m;
    while (s->tab[i].used && s->tab[i].addr != addr)
        i = (i + 1) & m;
    return &s->tab[i];
}

int probe_samples_add(probe_samples *s, uint32_t addr, cp_err *err)
{
    if (2 * (s->n + 1) > s->cap) {
        size_t oc = s->cap;
        slot *old = s->tab;
        s->tab = calloc(2 * oc, sizeof *s->tab);
        if (!s->tab) {
            s->tab = old;
            return cp_seterr(err, "out of memory");
        }
        s->cap = 2 * oc;
        for (size_t i = 0; i < oc; i++)
            if (old[i].used)
                *lookup(s, old[i].addr) = old[i];
        free(old);
    }
    slot *e = lookup(s, addr);
    if (!e->used) {
        e->used = 1;
        e->addr = addr;
        s->n++;
    }
    e->count++;
    e->pending++;
    s->total++;
    return 0;
}

int probe_samples_flush(probe_samples *s, cp_err *err)
{
    for (size_t i = 0; i < s->cap; i++)
        if (s->tab[i].used && s->tab[i].pending) {
            smp_write_entry(s->f, s->tab[i].addr, s->tab[i].pending);
            s->tab[i].pending = 0;
        }
    if (fflush(s->f) != 0 || ferror(s->f)) {
        s->werr = 1;
        return cp_seterr(err, "cannot write '%s': %s", s->path,
                         strerror(errno));
    }
    return 0;
}

uint64_t probe_samples_total(const probe_samples *s)
{
    return s->total;
}

int probe_samples_finish(probe_samples *s, double duration_s, cp_err *err)
{
    int rc = 0;
    /* The streamed file is complete once flushed; then it is rewritten
     * whole (samples/samples.c: sorted, one line per address, the duration
     * and the total in the header). When the rewrite fails the streamed
     * file stays. */
    if (probe_samples_flush(s, err) < 0) {
        rc = -1;
        fclose(s->f);
        goto out;
    }
    if (fclose(s->f) != 0) {
        rc = cp_seterr(err, "cannot write '%s': %s", s->path, strerror(errno));
        goto out;
    }
    s->head->duration_s = duration_s;
    int ok = 1;
    for (size_t i = 0; i < s->cap && ok; i++)
        if (s->tab[i].used)
            ok = smp_add(s->head, s->tab[i].addr, s->tab[i].count, NULL) == 0;
    cp_err e = {{0}};
    if (!ok)
        cp_seterr(&e, "'%s': a count past what a samples file holds",
                  s->path);
    else if (smp_save(s->head, s->path, &e) == 0)
        goto out;
    /* The streamed file stays: every sample, but not the totals that say
     * it is complete (a full disk has room for the one and not the
     * other). */
    rc = cp_seterr(err, "%s (the samples streamed to it stay, without the "
                   "'# total' line)", e.msg);
out:
    free(s->tab);
    free(s->path);
    smp_free(s->head);
    free(s);
    return rc;
}

/* ---- sampling ---- */

double probe_halt_due(double period, double last_start, double last_end,
                      double mean_stop, double u)
{
    return period > 0 ? last_start + period * (0.5 + u)
                      : last_end + 2.0 * u * mean_stop;
}

static void sleep_until(double t)
{
    double d = t - cp_now_s();
    if (d <= 0)
        return;
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    nanosleep(&ts, NULL); /* a signal ends it early: fine */
}

int probe_dwt_enable(probe *p, int *changed, cp_err *err)
{
    /* DEMCR (0xE000EDFC) bit 24 TRCENA enables the DWT and ITM; without
     * it the DWT registers, PCSR among them, need not answer (ARMv7-M and
     * ARMv8-M Architecture Reference Manuals, "Debug Exception and Monitor
     * Control Register"). ARMv6-M names the same bit DWTENA (ARMv6-M
     * Architecture Reference Manual, C1.6.5 "Debug Exception and Monitor
     * Control Register, DEMCR"). */
    const uint32_t demcr = 0xe000edfcu, trcena = 1u << 24;
    uint32_t v;
    *changed = 0;
    if (probe_read32(p, demcr, &v, err) < 0)
        return -1;
    if (v & trcena)
        return 0;
    if (probe_write32(p, demcr, v | trcena, err) < 0)
        return -1;
    *changed = 1;
    return 0;
}

int probe_pcsr_test(probe *p, uint32_t pcsr_addr, int n,
                    probe_pcsr_verdict *vd, cp_err *err)
{
    uint32_t first = 0, v = 0;
    int same = 1, halted = 0;
    *vd = PROBE_PCSR_OK;
    for (int i = 0; i < n; i++) {
        if (probe_read32(p, pcsr_addr, &v, err) < 0) {
            cp_err e2 = *err;
            return cp_seterr(err, "cannot read DWT_PCSR at 0x%08x: %s",
                             pcsr_addr, e2.msg);
        }
        if (i == 0)
            first = v;
        else if (v != first)
            same = 0;
        halted += v == 0xffffffffu;
    }
    if (!same)
        return 0;
    /* DWT_PCSR is optional on ARMv6-M (ARMv6-M Architecture Reference
     * Manual, DDI 0419C, C1.7.2 "Program counter sampling support"; the
     * Cortex-M0+ implements it with its DWT, Cortex-M0+ TRM 7.1.3), so a
     * core may have none: an unimplemented register reads as 0.
     * 0xFFFFFFFF means the core is in Debug state or non-invasive debug is
     * not permitted. */
    if (first == 0) {
        *vd = PROBE_PCSR_ZERO;
        cp_seterr(err, "DWT_PCSR at 0x%08x reads as 0 (%d reads): this core "
                  "does not implement it", pcsr_addr, n);
    } else if (halted == n) {
        *vd = PROBE_PCSR_HALTED;
        cp_seterr(err, "DWT_PCSR at 0x%08x reads 0xFFFFFFFF (%d reads): the "
                  "core is halted, or non-invasive debug is not permitted; "
                  "let the target run", pcsr_addr, n);
    } else {
        *vd = PROBE_PCSR_CONSTANT;
        cp_seterr(err, "DWT_PCSR at 0x%08x reads the same value 0x%08x %d "
                  "times: not implemented, or the core sleeps (WFI) or is "
                  "stuck there", pcsr_addr, first, n);
    }
    return 0;
}

int probe_pcsr_check(probe *p, uint32_t pcsr_addr, int n, cp_err *err)
{
    probe_pcsr_verdict v;
    if (probe_pcsr_test(p, pcsr_addr, n, &v, err) < 0)
        return -1;
    return v == PROBE_PCSR_OK ? 0 : -1;
}

int probe_sample_run(probe *p, const probe_sampler *cfg, probe_samples *out,
                     probe_sample_stats *st, cp_err *err)
{
    memset(st, 0, sizeof *st);
    double t0 = cp_now_s(), next_flush = t0 + 0.25;
    double prog_s = cfg->progress_s > 0 ? cfg->progress_s : 1.0;
    double next_prog = t0 + prog_s;
    double period = cfg->rate_hz > 0 ? 1.0 / cfg->rate_hz : 0;
    uint32_t last = 0;
    uint64_t changes = 0, rnd = 0x9e3779b97f4a7c15ULL;
    double last_start = t0, last_end = t0;
    probe_link l0;
    probe_link_get(p, &l0);
    for (uint64_t i = 0;; i++) {
        double now = cp_now_s();
        if (cfg->stop && *cfg->stop) {
            st->stopped_by = 1;
            break;
        }
        if (cfg->duration_s > 0 && now - t0 >= cfg->duration_s)
            break;
        if (cfg->max_samples && st->samples >= cfg->max_samples) {
            st->stopped_by = 3;
            break;
        }
        rnd ^= rnd << 13;
        rnd ^= rnd >> 7;
        rnd ^= rnd << 17;
        double u = (double)(rnd >> 11) / 9007199254740992.0; /* [0, 1) */
        double due = 0;
        if (cfg->mode == PROBE_MODE_PCSR && period > 0) {
            /* A quarter period of jitter keeps a fixed rate from locking
             * onto a periodic workload (aliasing). */
            due = t0 + ((double)i + (u - 0.5) * 0.25) * period;
        } else if (cfg->mode == PROBE_MODE_HALT && st->samples > 0) {
            /* Let the core run a random while after each stop: with --rate
             * the next stop comes half to one and a half periods after
             * the start of the last one (so the rate asked for is the
             * rate taken while a stop lasts less than half a period; from
             * its end, each sample took a period plus a stop), else the
             * core runs on average as long as a stop lasts. Back-to-back
             * stops would let it run only the moment between the resume
             * and the next interrupt, so that successive samples crawl
             * through the program instead of landing anywhere in it. */
            due = probe_halt_due(period, last_start, last_end,
                                 st->halted_s / (double)st->samples, u);
        }
        if (due > 0) {
            if (cfg->duration_s > 0 && due - t0 >= cfg->duration_s)
                break;
            double slept = cp_now_s();
            sleep_until(due);
            double woke = cp_now_s();
            if (due > slept && woke > due) /* an oversleep, not a late stop */
                st->late_s += woke - due;
            if (cfg->stop && *cfg->stop) {
                st->stopped_by = 1;
                break;
            }
        }
        uint32_t pc;
        if (cfg->mode == PROBE_MODE_PCSR) {
            if (probe_read32(p, cfg->pcsr_addr, &pc, &st->error) < 0) {
                st->stopped_by = 2;
                break;
            }
            if (pc == 0xffffffffu)
                st->halted++;
            else if (st->samples == 0 || pc != last)
                changes++;
            last = pc;
        } else {
            /* The core is stopped at most from the interrupt request to
             * the sent resume: that upper bound is the intrusion. */
            double h0 = cp_now_s();
            if (probe_halt(p, &st->error) < 0) {
                st->stopped_by = 2;
                break;
            }
            double h1 = cp_now_s();
            int r = probe_read_pc(p, &pc, &st->error);
            double h2 = cp_now_s();
            cp_err e2;
            if (probe_resume(p, r < 0 ? &e2 : &st->error) < 0 && r == 0) {
                st->stopped_by = 2;
                break;
            }
            if (r < 0) {
                st->stopped_by = 2;
                break;
            }
            last_start = h0;
            last_end = cp_now_s();
            st->halt_s += h1 - h0;
            st->read_s += h2 - h1;
            st->resume_s += last_end - h2;
            double h = last_end - h0;
            st->halted_s += h;
            if (h > st->max_halt_s)
                st->max_halt_s = h;
        }
        if (probe_samples_add(out, pc, err) < 0)
            return -1;
        st->samples++;
        st->distinct = changes;
        now = cp_now_s();
        if (now >= next_flush) {
            if (probe_samples_flush(out, err) < 0)
                return -1;
            next_flush = now + 0.25;
        }
        if (cfg->progress && now >= next_prog) {
            st->elapsed_s = now - t0;
            cfg->progress(cfg->progress_arg, st);
            next_prog = now + prog_s;
        }
    }
    st->elapsed_s = cp_now_s() - t0;
    st->distinct = changes;
    probe_link l1;
    probe_link_get(p, &l1);
    st->link.waits = l1.waits - l0.waits;
    st->link.sends = l1.sends - l0.sends;
    st->link.bytes_out = l1.bytes_out - l0.bytes_out;
    st->link.bytes_in = l1.bytes_in - l0.bytes_in;
    return probe_samples_flush(out, err);
}
