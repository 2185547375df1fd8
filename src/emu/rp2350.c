/* emu rp2350: the RP2350 on the virtual board. Its boot ROM (32 KiB at 0,
 * RP2350 datasheet 2.2 "Address map") is handled as the RP2040's: mapped
 * from --rom, else left unmapped so that the first use stops the run.
 * No peripheral is modelled yet: every register reads the last value
 * written (else 0) and is counted by board.c. */
#include "emu/board.h"

#include <stdlib.h>

#include "emu/emu_int.h"

static void *r2_init(emu *e, board *b, cp_err *err)
{
    (void)e;
    (void)err;
    return b; /* no state of its own */
}

static void r2_fini(void *cs)
{
    (void)cs;
}

static int r2_read(void *cs, uint32_t addr, uint32_t *v)
{
    (void)cs;
    (void)addr;
    (void)v;
    return 0;
}

static void r2_write(void *cs, uint32_t addr, uint32_t v, unsigned op)
{
    (void)op;
    bd_reg *r = board_reg(cs, addr);
    if (r) {
        r->val = v;
        r->written = 1;
    }
}

static int r2_reg_name(uint32_t addr, char *buf, size_t cap)
{
    (void)addr;
    (void)buf;
    (void)cap;
    return 0;
}

static const uint32_t windows[] = {0, 0};

const bd_chip bd_rp2350 = {
    .name = "rp2350",
    .init = r2_init,
    .fini = r2_fini,
    .read = r2_read,
    .write = r2_write,
    .reg_name = r2_reg_name,
    .windows = windows,
    .has_aliases = NULL,
};
