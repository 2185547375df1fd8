/* Cache counters read through the probe: flush, zero, wait, read. */
#include "probe/counters.h"

#include <string.h>

/* Flushes the cache. RP2040: write 1 to XIP_CTRL FLUSH (RP2040 datasheet
 * 2.6.3.2 "Cache Flushing and Maintenance"); a read of FLUSH then stalls
 * until the flush is done. RP2350: no FLUSH register; invalidate by set/way
 * through the cache maintenance alias (0x18000000): a byte write to
 * 0x18000000 + offset + op with op 0 (invalidate by set/way), for each
 * 8-byte line of a 16 KiB window at the top of the 64 MiB XIP space, as
 * pico-sdk's xip_cache_invalidate_all does (RP2350 datasheet, XIP cache
 * maintenance). */
static int flush(probe *p, const probe_ctr_regs *r, cp_err *err)
{
    if (r->flush_kind == PROBE_FLUSH_REG) {
        uint32_t v;
        if (probe_write32(p, r->base + r->flush, 1, err) < 0)
            return -1;
        return probe_read32(p, r->base + r->flush, &v, err);
    }
    if (r->flush_kind == PROBE_FLUSH_RP2350) {
        const uint32_t maint = 0x18000000u, space = 0x04000000u;
        const uint32_t size = 16 * 1024, line = 8;
        if (probe_get_kind(p) == PROBE_OPENOCD) {
            char cmd[200], out[64];
            snprintf(cmd, sizeof cmd,
                     "for {set a 0x%08x} {$a < 0x%08x} {incr a %u} "
                     "{write_memory $a 8 {0}}",
                     maint + space - size, maint + space, line);
            return probe_tcl(p, cmd, out, sizeof out, err);
        }
        for (uint32_t a = maint + space - size; a < maint + space; a += line) {
            uint8_t z = 0;
            if (probe_write_bytes(p, a, &z, 1, err) < 0)
                return -1;
        }
    }
    return 0;
}

int probe_ctr_window(probe *p, const probe_ctr_regs *r,
                     int (*wait)(void *arg, double *secs, cp_err *err),
                     void *arg, probe_ctr_result *res, cp_err *err)
{
    memset(res, 0, sizeof *res);
    int must_halt = !probe_reads_while_running(p);
    if (must_halt && probe_halt(p, err) < 0)
        return -1;
    /* Write any value to clear (the counters' register descriptions). */
    if (flush(p, r, err) < 0 ||
        probe_write32(p, r->base + r->hit, 0, err) < 0 ||
        probe_write32(p, r->base + r->acc, 0, err) < 0)
        goto fail;
    if (must_halt && probe_resume(p, err) < 0)
        return -1;
    if (wait(arg, &res->seconds, err) < 0)
        return -1;
    if (must_halt && probe_halt(p, err) < 0)
        return -1;
    if (probe_read32(p, r->base + r->hit, &res->hits, err) < 0 ||
        probe_read32(p, r->base + r->acc, &res->accesses, err) < 0)
        goto fail;
    if (must_halt && probe_resume(p, err) < 0)
        return -1;
    /* 32-bit saturating counters: all ones means "at least". */
    res->saturated = res->hits == 0xffffffffu || res->accesses == 0xffffffffu;
    if (res->hits > res->accesses)
        return cp_seterr(err, "the hit counter (%u) exceeds the access "
                         "counter (%u) at 0x%08x: these are not XIP cache "
                         "counters", res->hits, res->accesses, r->base);
    res->misses = res->accesses - res->hits;
    return 0;
fail:
    if (must_halt) {
        cp_err e2;
        probe_resume(p, &e2);
    }
    return -1;
}
