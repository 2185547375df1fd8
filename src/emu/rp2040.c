/* emu rp2040: the RP2040's peripherals as far as pico-sdk's start-up and
 * runtime use them. Section numbers are those of the RP2040 Datasheet
 * (Raspberry Pi Ltd, build-date 2023 and later; the 2.x/4.x chapter
 * layout). Registers outside this model read as the last value written
 * (else 0) and are counted by board.c. */
#include "emu/board.h"

#include <stdlib.h>
#include <string.h>

#include "emu/emu_int.h"

/* 2.2 "Address Map": APB blocks 16 KB apart from 0x40000000. */
#define SYSINFO   0x40000000u
#define SYSCFG    0x40004000u
#define CLOCKS    0x40008000u
#define RESETS    0x4000c000u
#define PSM       0x40010000u
#define IO_BANK0  0x40014000u
#define IO_QSPI   0x40018000u
#define PADS_BANK0 0x4001c000u
#define PADS_QSPI 0x40020000u
#define XOSC      0x40024000u
#define PLL_SYS   0x40028000u
#define PLL_USB   0x4002c000u
#define BUSCTRL   0x40030000u
#define UART0     0x40034000u
#define UART1     0x40038000u
#define TIMER     0x40054000u
#define WATCHDOG  0x40058000u
#define ROSC      0x40060000u
#define VREG      0x40064000u
#define TBMAN     0x4006c000u
#define USBCTRL_REGS 0x50110000u
#define XIP_CTRL  0x14000000u
#define SSI       0x18000000u
#define SIO       0xd0000000u
#define PPB       0xe0000000u

typedef struct rp {
    emu *e;
    board *b;
    uint32_t reset;           /* RESETS.RESET */
    /* SIO (2.3.1) */
    uint32_t gpio_out, gpio_oe, hi_out, hi_oe;
    uint32_t spin;            /* spinlocks held */
    uint32_t fifo_err;        /* FIFO_ST WOF/ROE */
    uint32_t dvd, dvs, quot, rem, div_dirty;
    /* TIMER (4.6) */
    uint64_t time_off;        /* TIMEHW/TIMELW writes move the count */
    uint32_t timehr;          /* latched by a TIMELR read */
    uint32_t alarm[4], armed, intr, inte, intf;
    /* ROSC RANDOMBIT */
    uint32_t lfsr;
    /* XOSC, ROSC COUNT: value written and when */
    uint32_t xcount, rcount;
    uint64_t xcount_at, rcount_at;
    /* SSI and the flash behind it (boot2) */
    uint8_t rxq[64];
    unsigned rxn, rxr;
    uint8_t cmd;
    unsigned idx;
    /* NVIC (Cortex-M0+ TRM / ARMv6-M ARM B3.4) */
    uint32_t nvic_en, nvic_pend;
} rp;

/* ---- time ---- */

static uint64_t now_us(rp *r)
{
    return board_us(r->b) + r->time_off;
}

/* An armed alarm fires when the low 32 bits of the count pass it (4.6.4
 * "Alarms"); checked when the firmware looks. */
static void alarms(rp *r)
{
    uint32_t lo = (uint32_t)now_us(r);
    for (unsigned i = 0; i < 4; i++)
        if ((r->armed >> i & 1) && (int32_t)(lo - r->alarm[i]) >= 0) {
            r->armed &= ~(1u << i);
            r->intr |= 1u << i;
        }
}

/* ---- the hardware divider (2.3.1.5 "Integer Divider") ---- */

static void divide(rp *r, int sgn)
{
    /* Division by zero and overflow: the datasheet leaves them undefined
     * (2.3.1.5). The values here (quotient -1 or +1 by the dividend's
     * sign, 0xffffffff unsigned, remainder the dividend; INT_MIN / -1 =
     * INT_MIN remainder 0) are those reported for the chip by others; no
     * board checked them here. pico-sdk's own wrappers never reach them:
     * they test for zero first. */
    if (!r->dvs) {
        r->quot = sgn && (int32_t)r->dvd < 0 ? 1u : 0xffffffffu;
        r->rem = r->dvd;
    } else if (sgn) {
        int32_t a = (int32_t)r->dvd, d = (int32_t)r->dvs;
        if (a == INT32_MIN && d == -1) {
            r->quot = (uint32_t)INT32_MIN;
            r->rem = 0;
        } else {
            r->quot = (uint32_t)(a / d);
            r->rem = (uint32_t)(a % d);
        }
    } else {
        r->quot = r->dvd / r->dvs;
        r->rem = r->dvd % r->dvs;
    }
    r->div_dirty = 1;
}

/* ---- SIO (2.3.1.7 "List of Registers"); no atomic aliases (2.1.2) ---- */

static int sio_read(rp *r, uint32_t off, uint32_t *v)
{
    if (off >= 0x100 && off < 0x180) { /* SPINLOCK0..31 (2.3.1.3) */
        uint32_t bit = 1u << ((off - 0x100) / 4);
        *v = r->spin & bit ? 0 : bit;
        r->spin |= bit;
        return 1;
    }
    switch (off) {
    case 0x000: *v = 0; return 1;                 /* CPUID: core 0 */
    case 0x004: *v = r->gpio_out & r->gpio_oe; return 1; /* GPIO_IN */
    case 0x008: *v = r->hi_out & r->hi_oe; return 1;     /* GPIO_HI_IN */
    case 0x010: *v = r->gpio_out; return 1;
    case 0x020: *v = r->gpio_oe; return 1;
    case 0x030: *v = r->hi_out; return 1;
    case 0x040: *v = r->hi_oe; return 1;
    /* FIFO_ST (2.3.1.4): one core runs, nothing arrives; TX never fills. */
    case 0x050: *v = 0x2 | r->fifo_err; return 1;
    case 0x058: r->fifo_err |= 0x8; *v = 0; return 1; /* read empty: ROE */
    case 0x05c: *v = r->spin; return 1;           /* SPINLOCK_ST */
    case 0x060: case 0x068: *v = r->dvd; return 1;
    case 0x064: case 0x06c: *v = r->dvs; return 1;
    case 0x070: *v = r->quot; r->div_dirty = 0; return 1;
    case 0x074: *v = r->rem; return 1;
    case 0x078: *v = 1 | r->div_dirty << 1; return 1; /* READY, DIRTY */
    }
    return 0;
}

static void sio_write(rp *r, uint32_t off, uint32_t v)
{
    if (off >= 0x100 && off < 0x180) {
        r->spin &= ~(1u << ((off - 0x100) / 4));
        return;
    }
    switch (off) {
    case 0x010: r->gpio_out = v; return;
    case 0x014: r->gpio_out |= v; return;
    case 0x018: r->gpio_out &= ~v; return;
    case 0x01c: r->gpio_out ^= v; return;
    case 0x020: r->gpio_oe = v; return;
    case 0x024: r->gpio_oe |= v; return;
    case 0x028: r->gpio_oe &= ~v; return;
    case 0x02c: r->gpio_oe ^= v; return;
    case 0x030: r->hi_out = v; return;
    case 0x034: r->hi_out |= v; return;
    case 0x038: r->hi_out &= ~v; return;
    case 0x03c: r->hi_out ^= v; return;
    case 0x040: r->hi_oe = v; return;
    case 0x044: r->hi_oe |= v; return;
    case 0x048: r->hi_oe &= ~v; return;
    case 0x04c: r->hi_oe ^= v; return;
    case 0x050: r->fifo_err &= ~(v & 0xc); return; /* write clears */
    case 0x054: r->fifo_err |= 0; return;          /* no core 1 to read */
    case 0x060: r->dvd = v; divide(r, 0); return;  /* UDIVIDEND */
    case 0x064: r->dvs = v; divide(r, 0); return;  /* UDIVISOR */
    case 0x068: r->dvd = v; divide(r, 1); return;  /* SDIVIDEND */
    case 0x06c: r->dvs = v; divide(r, 1); return;  /* SDIVISOR */
    case 0x070: r->quot = v; r->div_dirty = 1; return; /* save/restore */
    case 0x074: r->rem = v; r->div_dirty = 1; return;
    }
    bd_reg *g = board_reg(r->b, SIO + off); /* e.g. the interpolators */
    if (g) {
        g->val = v;
        g->written = 1;
    }
}

/* ---- SSI (4.10) and the W25Q080 flash boot2 talks to ---- */

/* The flash's answer to the idx-th byte of a command: status register 2
 * (0x35) has QE set so boot2 skips programming it; status 1 (0x05) shows
 * no write in progress; JEDEC ID (0x9f) of a W25Q16JV. */
static uint8_t flash_answer(rp *r, uint8_t out)
{
    if (r->idx == 0) {
        r->cmd = out;
        return 0;
    }
    switch (r->cmd) {
    case 0x35: return 0x02;
    case 0x05: return 0x00;
    case 0x9f: return r->idx == 1 ? 0xef : r->idx == 2 ? 0x40 : 0x15;
    }
    return 0;
}

static void ssi_push(rp *r, uint32_t v)
{
    if (r->rxn == r->rxr) /* all answers read: a new command starts */
        r->idx = 0, r->rxn = r->rxr = 0;
    uint8_t a = flash_answer(r, (uint8_t)v);
    r->idx++;
    if (r->rxn - r->rxr < sizeof r->rxq)
        r->rxq[r->rxn++ % sizeof r->rxq] = a;
}

static int ssi_read(rp *r, uint32_t off, uint32_t *v)
{
    unsigned n = r->rxn - r->rxr;
    switch (off) {
    case 0x20: *v = 0; return 1;                 /* TXFLR: sent at once */
    case 0x24: *v = n; return 1;                 /* RXFLR */
    case 0x28: *v = 0x6 | (n ? 0x8 : 0); return 1; /* SR: TFNF TFE RFNE */
    case 0x58: *v = 0x51535049; return 1;        /* IDR */
    case 0x5c: *v = 0x3430312a; return 1;        /* SSI_VERSION_ID */
    case 0x60:                                   /* DR0 */
        *v = n ? r->rxq[r->rxr++ % sizeof r->rxq] : 0;
        return 1;
    }
    return 0;
}

/* ---- UART (4.2, an Arm PL011) ---- */

static int uart_read(rp *r, uint32_t base, uint32_t off, uint32_t *v)
{
    static const uint8_t id[8] = {0x11, 0x10, 0x34, 0x00,
                                  0x0d, 0xf0, 0x05, 0xb1};
    (void)base;
    (void)r;
    switch (off) {
    case 0x000: *v = 0; return 1;    /* UARTDR: nothing is received */
    case 0x004: *v = 0; return 1;    /* UARTRSR: no errors */
    case 0x018: *v = 0x90; return 1; /* UARTFR: TXFE, RXFE; sent at once */
    case 0x03c: /* UARTRIS: TXRIS while enabled (the FIFO is always empty) */
        *v = (board_get(r->b, base + 0x030, 0x300) & 0x101) == 0x101 ? 0x20
                                                                   : 0;
        return 1;
    case 0x040: /* UARTMIS */
        uart_read(r, base, 0x03c, v);
        *v &= board_get(r->b, base + 0x038, 0);
        return 1;
    }
    if (off >= 0xfe0 && off < 0x1000) {
        *v = id[(off - 0xfe0) / 4];
        return 1;
    }
    return 0;
}

/* ---- registers with a known reset value (the "Reset" column of each
 * register table; pico-sdk's hardware/regs headers carry the same values as
 * *_RESET) that read back what was written ---- */

static int reset_value(uint32_t a, uint32_t *v)
{
    uint32_t blk = a & ~0x3fffu, off = a & 0xfffu;
    switch (blk) {
    case SYSCFG: /* 2.21 "Syscfg", its list of registers */
        if (off > 0x18)
            return 0;
        *v = off == 0x08 ? 0x10000000 : off == 0x14 ? 0x66 : 0;
        return 1;
    case CLOCKS: /* 2.15.7: CTRL 0, DIV 0x100 (integer 1) for each clock;
                  * clk_peri (6) has no DIV: a reserved word, read as 0 */
        if (off < 0x78) {
            *v = (off % 12) == 4 && off != 6 * 12 + 4 ? 0x100 : 0;
            return (off % 12) != 8;
        }
        if (off == 0x78) { *v = 0xff; return 1; } /* CLK_SYS_RESUS_CTRL */
        if (off == 0xa0 || off == 0xa8) { *v = 0xffffffff; return 1; }
        if (off == 0xa4 || off == 0xac) { *v = 0x7fff; return 1; }
        if (off >= 0xb8 && off <= 0xc0) { *v = 0; return 1; } /* INTR.. */
        return 0;
    case PSM: /* 2.13 "Power-On State Machine", its list of registers */
        if (off > 0x8)
            return 0;
        *v = 0;
        return 1;
    case IO_BANK0: /* 2.19.6.1: GPIOn_CTRL FUNCSEL 0x1f (null) */
        if (off < 0xf0) {
            *v = 0x1f;
            return (off & 4) != 0;
        }
        *v = 0;
        return off < 0x190;
    case IO_QSPI: /* 2.19.6.2: the six QSPI pins' CTRL, then INTR, INTE */
        if (off < 0x30) {
            *v = 0x1f;
            return (off & 4) != 0;
        }
        *v = 0;
        return off < 0x5c;
    case PADS_BANK0: /* 2.19.6.3 */
        *v = off == 0 ? 0 : off <= 0x78 ? 0x56 : off == 0x7c ? 0xda : 0x5a;
        return off <= 0x80;
    case PADS_QSPI: /* 2.19.6.4 */
        *v = off == 0 ? 0 : off == 0x4 ? 0x56 : off <= 0x14 ? 0x52 : 0x5a;
        return off <= 0x18;
    case XOSC: /* 2.16.7: STARTUP 0 (DORMANT has no reset value) */
        *v = 0;
        return off == 0x0c;
    case ROSC: /* 2.17.8 */
        if (off == 0x00) { *v = 0xaa0; return 1; }
        if (off == 0x04 || off == 0x08) { *v = 0; return 1; }
        if (off == 0x14) { *v = 0x8; return 1; }
        return 0;
    case PLL_SYS: case PLL_USB: /* 2.18.4 */
        switch (off) {
        case 0x0: *v = 0x1; return 1;
        case 0x4: *v = 0x2d; return 1;
        case 0x8: *v = 0; return 1;
        case 0xc: *v = 0x77000; return 1;
        }
        return 0;
    case BUSCTRL: /* 2.1.5 "Bus Performance Counters": BUS_PRIORITY 0,
                   * PERFSEL0-3 0x1f (pico_rand claims a counter whose SEL
                   * still has that value); the counters are not modelled */
        *v = off == 0 ? 0 : 0x1f;
        return off == 0 || off == 0x0c || off == 0x14 || off == 0x1c ||
               off == 0x24;
    case UART0: case UART1: /* 4.2.8 */
        switch (off) {
        case 0x020: case 0x024: case 0x028: case 0x02c: case 0x038:
        case 0x048:
            *v = 0;
            return 1;
        case 0x030: *v = 0x300; return 1;
        case 0x034: *v = 0x12; return 1;
        }
        return 0;
    case WATCHDOG: /* 4.7.6 */
        if (off == 0x00) { *v = 0x07000000; return 1; }
        if (off <= 0x28) { *v = 0; return 1; }
        return 0;
    case VREG: /* 2.10 "Core Supply Regulator", its list of registers:
                * VREG 0xb1 (1.10 V), BOD 0x91, CHIP_RESET 0 */
        *v = off == 0 ? 0xb1 : off == 4 ? 0x91 : 0;
        return off <= 8;
    }
    if (a == USBCTRL_REGS + 0x40 || a == USBCTRL_REGS + 0x4c) {
        *v = 0; /* MAIN_CTRL, SIE_CTRL (4.1.4) */
        return 1;
    }
    if (blk == XIP_CTRL) { /* 2.6.3: the XIP_CTRL register list */
        *v = off == 0 ? 0x3 : 0;
        return off == 0;
    }
    if (blk == SSI) { /* 4.10.13 */
        if (off <= 0x1c || off == 0xf0 || off == 0xf8 || off == 0x4c) {
            *v = 0;
            return 1;
        }
        if (off == 0x2c) { *v = 0; return 1; } /* IMR */
        if (off == 0xf4) { *v = 0x03000000; return 1; }
        return 0;
    }
    return 0;
}

/* ---- the Cortex-M0+ private peripheral bus (Cortex-M0+ TRM 4.1; ARMv6-M
 * ARM B3.2, B3.3, B3.4) ---- */

static int ppb_read(rp *r, uint32_t a, uint32_t *v)
{
    switch (a) {
    case 0xe000e100: case 0xe000e180: *v = r->nvic_en; return 1;
    case 0xe000e200: case 0xe000e280: *v = r->nvic_pend; return 1;
    case 0xe000ed00: *v = 0x410cc601; return 1; /* CPUID: Cortex-M0+ r0p1 */
    case 0xe000ed0c:                            /* AIRCR: VECTKEYSTAT */
        *v = 0xfa050000 | (board_get(r->b, a, 0) & 0x8000);
        return 1;
    case 0xe000ed14: /* CCR: STKALIGN and UNALIGN_TRP read as one (B3.2.8) */
        *v = 0x208;
        return 1;
    case 0xe000ed90: *v = 0x800; return 1;      /* MPU_TYPE: 8 regions */
    }
    /* SysTick, NVIC_IPR, ICSR, VTOR, SCR, SHPR2/3, SHCSR: read back (reset
     * 0, ARMv6-M ARM B3.2.2, B3.3.2, B3.4.2). */
    if ((a >= 0xe000e010 && a <= 0xe000e018) ||
        (a >= 0xe000e400 && a < 0xe000e420) ||
        (a >= 0xe000ed04 && a <= 0xe000ed24)) {
        *v = board_get(r->b, a, 0);
        return 1;
    }
    return 0;
}

/* ---- the chip's answer to a read ---- */

static uint32_t rosc_random(rp *r)
{
    /* RANDOMBIT (2.17.8): a bit sampled from the ring oscillator; a fixed
     * LFSR here, so every run is the same. */
    r->lfsr = (r->lfsr >> 1) ^ (-(r->lfsr & 1) & 0xd0000001u);
    return r->lfsr & 1;
}

static uint32_t countdown(rp *r, uint32_t val, uint64_t at, uint32_t mhz)
{
    /* XOSC/ROSC COUNT: counts down at the oscillator's rate to 0
     * (2.16.7, 2.17.8); the rate is nominal (12 MHz XOSC, ~6.5 MHz ROSC). */
    uint64_t ticks = (board_us(r->b) - at) * mhz;
    return ticks >= val ? 0 : val - (uint32_t)ticks;
}

static int rp_read(void *cs, uint32_t a, uint32_t *v)
{
    rp *r = cs;
    uint32_t blk = a & ~0x3fffu, off = a & 0xfffu;
    if (a >= SIO && a < SIO + 0x1000)
        return sio_read(r, a - SIO, v);
    if (a >= PPB)
        return ppb_read(r, a, v);
    switch (blk) {
    case SYSINFO: /* 2.20 "Sysinfo" */
        if (off == 0x0) {
            /* CHIP_ID: MANUFACTURER 0x927, PART 2, REVISION 1 for B0/B1
             * and 2 for B2, as the ROM's version byte (0x13: 1 B0, 2 B1,
             * 3 B2; 2.8.2) says; B2 without a ROM. */
            uint8_t rom = 3;
            emu_read(r->e, 0x13, &rom, 1);
            *v = (rom >= 3 ? 0x20000000u : 0x10000000u) | 0x2927;
            return 1;
        }
        if (off == 0x4) { *v = 0x2; return 1; } /* PLATFORM: bit 1 ASIC */
        return 0;
    case RESETS: /* 2.14.3: RESET_DONE follows RESET */
        if (off == 0x0) { *v = r->reset; return 1; }
        if (off == 0x8) { *v = ~r->reset & 0x01ffffff; return 1; }
        break;
    case CLOCKS: /* 2.15.7: CLK_x_SELECTED */
        if (off < 0x78 && off % 12 == 8) {
            unsigned i = off / 12;
            uint32_t ctrl = board_get(r->b, CLOCKS + i * 12, 0);
            /* clk_ref (4) and clk_sys (5) have glitchless muxes: one-hot
             * of CTRL.SRC; the others read 1. */
            *v = i == 4 ? 1u << (ctrl & 3) : i == 5 ? 1u << (ctrl & 1) : 1;
            return 1;
        }
        if (off == 0x7c) { *v = 0; return 1; } /* RESUS_STATUS */
        break;
    case PSM: /* 2.13: DONE: every domain is on unless forced off */
        if (off == 0xc) {
            *v = ~board_get(r->b, PSM + 4, 0) & 0x1ffff;
            return 1;
        }
        break;
    case XOSC: /* 2.16.7 */
        if (off == 0x0) {
            *v = board_get(r->b, a, 0);
            return 1;
        }
        if (off == 0x4) { /* STATUS: ENABLED, STABLE once CTRL.ENABLE=FAB */
            uint32_t en = (board_get(r->b, XOSC, 0) >> 12 & 0xfff) == 0xfab;
            *v = en ? 0x80001000u : 0;
            return 1;
        }
        if (off == 0x1c) {
            *v = countdown(r, r->xcount, r->xcount_at, 12);
            return 2;
        }
        break;
    case ROSC: /* 2.17.8 */
        if (off == 0x18) { /* STATUS: running unless disabled with 0xd1e */
            uint32_t dis = (board_get(r->b, ROSC, 0xaa0) >> 12 & 0xfff) ==
                           0xd1e;
            *v = dis ? 0 : 0x80001000u;
            return 1;
        }
        if (off == 0x1c) { *v = rosc_random(r); return 2; }
        if (off == 0x20) {
            *v = countdown(r, r->rcount, r->rcount_at, 6);
            return 2;
        }
        break;
    case PLL_SYS: case PLL_USB: /* 2.18.4: CS.LOCK once powered, FBDIV set */
        if (off == 0x0) {
            uint32_t pwr = board_get(r->b, blk + 4, 0x2d);
            uint32_t fb = board_get(r->b, blk + 8, 0);
            *v = board_get(r->b, a, 1) & 0x13f;
            if (!(pwr & 0x21) && fb)
                *v |= 0x80000000u;
            return 1;
        }
        break;
    case BUSCTRL:
        if (off == 0x4) { *v = 1; return 1; } /* BUS_PRIORITY_ACK */
        break;
    case UART0: case UART1:
        if (uart_read(r, blk, off, v))
            return 1;
        break;
    case TIMER: /* 4.6.5 */
        alarms(r);
        switch (off) {
        case 0x08: *v = r->timehr; return 2;            /* TIMEHR */
        case 0x0c: {                                    /* TIMELR */
            uint64_t t = now_us(r);
            r->timehr = (uint32_t)(t >> 32);
            *v = (uint32_t)t;
            return 2;
        }
        case 0x10: case 0x14: case 0x18: case 0x1c:
            *v = r->alarm[(off - 0x10) / 4];
            return 2;
        case 0x20: *v = r->armed; return 2;
        case 0x24: *v = (uint32_t)(now_us(r) >> 32); return 2; /* TIMERAWH */
        case 0x28: *v = (uint32_t)now_us(r); return 2;         /* TIMERAWL */
        case 0x2c: *v = board_get(r->b, a, 0x7); return 2;     /* DBGPAUSE */
        case 0x30: *v = board_get(r->b, a, 0); return 2;       /* PAUSE */
        case 0x34: *v = r->intr; return 2;
        case 0x38: *v = r->inte; return 2;
        case 0x3c: *v = r->intf; return 2;
        case 0x40: *v = (r->intr | r->intf) & r->inte; return 2;
        }
        break;
    case WATCHDOG: /* 4.7.6 */
        if (off == 0x08) { *v = 0; return 1; } /* REASON: power-on */
        if (off == 0x2c) {                     /* TICK: RUNNING when on */
            uint32_t t = board_get(r->b, a, 0x200);
            *v = t | (t & 0x200 ? 0x400 : 0);
            return 1;
        }
        break;
    case VREG:
        if (off == 0) { /* VREG: ROK, regulation is fine */
            *v = board_get(r->b, a, 0xb1) | 0x1000;
            return 1;
        }
        break;
    case TBMAN: /* 2.22 TBMAN: PLATFORM reads 0x5 (ASIC), its reset value */
        if (off == 0) { *v = 0x5; return 1; }
        break;
    }
    if (blk == XIP_CTRL && off == 0x8) { /* STAT: FLUSH_READY, FIFO_EMPTY */
        *v = 0x3;
        return 1;
    }
    if (blk == SSI && ssi_read(r, off, v))
        return 1;
    /* A register that reads back what was written. */
    uint32_t rv;
    if (reset_value(a, &rv)) {
        *v = board_get(r->b, a, rv);
        return 1;
    }
    return 0;
}

/* RESETS.RESET bits (2.14.3) and the blocks they hold in reset. */
static const struct { unsigned bit; uint32_t base; } reset_bits[] = {
    {5, IO_BANK0}, {6, IO_QSPI}, {8, PADS_BANK0}, {9, PADS_QSPI},
    {12, PLL_SYS}, {13, PLL_USB}, {18, SYSCFG}, {21, TIMER}, {22, UART0},
    {23, UART1}, {24, USBCTRL_REGS},
};

static void set_reset(rp *r, uint32_t nv)
{
    uint32_t now_held = nv & ~r->reset;
    r->reset = nv & 0x01ffffff;
    for (size_t i = 0; i < sizeof reset_bits / sizeof reset_bits[0]; i++)
        if (now_held >> reset_bits[i].bit & 1) {
            board_forget(r->b, reset_bits[i].base, 0x4000);
            if (reset_bits[i].base == TIMER) {
                r->time_off = (uint64_t)0 - board_us(r->b);
                r->armed = r->intr = r->inte = r->intf = 0;
            }
        }
}

static uint32_t apply(uint32_t old, uint32_t v, unsigned op)
{
    /* 2.1.2 "Atomic Register Access": +0x1000 XOR, +0x2000 SET, +0x3000
     * CLR. */
    switch (op) {
    case 1: return old ^ v;
    case 2: return old | v;
    case 3: return old & ~v;
    }
    return v;
}

static void store(rp *r, uint32_t a, uint32_t v, unsigned op)
{
    uint32_t old = 0;
    if (!rp_read(r, a, &old) && !reset_value(a, &old))
        old = board_get(r->b, a, 0);
    bd_reg *g = board_reg(r->b, a);
    if (g) {
        g->val = apply(old, v, op);
        g->written = 1;
    }
}

static void timer_write(rp *r, uint32_t off, uint32_t v, unsigned op)
{
    alarms(r);
    switch (off) {
    case 0x00: /* TIMEHW: takes effect with TIMELW */
        r->timehr = v;
        return;
    case 0x04:
        r->time_off = (((uint64_t)r->timehr << 32) | v) - board_us(r->b);
        return;
    case 0x10: case 0x14: case 0x18: case 0x1c: {
        unsigned i = (off - 0x10) / 4;
        r->alarm[i] = apply(r->alarm[i], v, op);
        r->armed |= 1u << i;
        return;
    }
    case 0x20: r->armed &= ~v; return; /* ARMED: write 1 to disarm */
    case 0x34: r->intr &= ~v; return; /* write 1 to clear */
    case 0x38: r->inte = apply(r->inte, v, op); return;
    case 0x3c: r->intf = apply(r->intf, v, op); return;
    }
    store(r, TIMER + off, v, op);
}

static void rp_write(void *cs, uint32_t a, uint32_t v, unsigned op)
{
    rp *r = cs;
    uint32_t blk = a & ~0x3fffu, off = a & 0xfffu;
    if (a >= SIO && a < SIO + 0x1000) {
        sio_write(r, a - SIO, v);
        return;
    }
    if (a >= PPB) {
        switch (a) {
        case 0xe000e100: r->nvic_en |= v; return;
        case 0xe000e180: r->nvic_en &= ~v; return;
        case 0xe000e200: /* NVIC_ISPR: pend an interrupt */
            if (v)
                board_stop(r->b, "the firmware pends an interrupt (NVIC_ISPR "
                           "0xe000e200): the board takes no exceptions");
            r->nvic_pend |= v;
            return;
        case 0xe000ed04: /* ICSR: PENDSVSET (28), PENDSTSET (26), NMI */
            if (v & (1u << 28 | 1u << 26 | 1u << 31))
                board_stop(r->b, "the firmware pends an exception (ICSR "
                           "0xe000ed04: PendSV, SysTick or NMI, as an RTOS "
                           "does to switch threads): the board takes no "
                           "exceptions");
            break;
        case 0xe000e280: r->nvic_pend &= ~v; return;
        }
        store(r, a, v, 0);
        return;
    }
    switch (blk) {
    case RESETS:
        if (off == 0x0) {
            set_reset(r, apply(r->reset, v, op));
            return;
        }
        break;
    case TIMER:
        timer_write(r, off, v, op);
        return;
    case UART0: case UART1:
        if (off == 0x000) { /* UARTDR: the byte goes out */
            board_uart_put(r->b, blk == UART1, (uint8_t)v);
            return;
        }
        if (off == 0x044) /* UARTICR */
            return;
        break;
    case XOSC:
        if (off == 0x1c) {
            r->xcount = v & 0xff;
            r->xcount_at = board_us(r->b);
            return;
        }
        break;
    case ROSC:
        if (off == 0x20) {
            r->rcount = v & 0xff;
            r->rcount_at = board_us(r->b);
            return;
        }
        break;
    }
    if (blk == SSI) {
        if (off == 0x60) {
            ssi_push(r, v);
            return;
        }
        if (off == 0x08 && !(apply(board_get(r->b, a, 0), v, op) & 1))
            r->rxn = r->rxr = 0; /* SSIENR 0 clears the FIFOs (4.10.13) */
    }
    store(r, a, v, op);
}

static void *rp_init(emu *e, board *b, cp_err *err)
{
    rp *r = calloc(1, sizeof *r);
    if (!r) {
        cp_seterr(err, "out of memory");
        return NULL;
    }
    r->e = e;
    r->b = b;
    r->reset = 0x01ffffff; /* 2.14.3: every block held in reset */
    r->lfsr = 0xace1u;
    return r;
}

static void rp_fini(void *cs)
{
    free(cs);
}

static int rp_aliases(uint32_t a)
{
    /* 2.1.2: APB and AHB-Lite peripherals, XIP_CTRL and SSI have the
     * aliases; SIO and the PPB do not. */
    return (a >= 0x40000000 && a < 0x40070000) ||
           (a >= 0x50000000 && a < 0x50500000) ||
           (a >> 14) == (XIP_CTRL >> 14) || (a >> 14) == (SSI >> 14);
}

static const struct { uint32_t base; const char *name; } blocks[] = {
    {SYSINFO, "SYSINFO"}, {SYSCFG, "SYSCFG"}, {CLOCKS, "CLOCKS"},
    {RESETS, "RESETS"}, {PSM, "PSM"}, {IO_BANK0, "IO_BANK0"},
    {IO_QSPI, "IO_QSPI"}, {PADS_BANK0, "PADS_BANK0"},
    {PADS_QSPI, "PADS_QSPI"}, {XOSC, "XOSC"}, {PLL_SYS, "PLL_SYS"},
    {PLL_USB, "PLL_USB"}, {BUSCTRL, "BUSCTRL"}, {UART0, "UART0"},
    {UART1, "UART1"}, {0x4003c000, "SPI0"}, {0x40040000, "SPI1"},
    {0x40044000, "I2C0"}, {0x40048000, "I2C1"}, {0x4004c000, "ADC"},
    {0x40050000, "PWM"}, {TIMER, "TIMER"}, {WATCHDOG, "WATCHDOG"},
    {0x4005c000, "RTC"}, {ROSC, "ROSC"}, {VREG, "VREG_AND_CHIP_RESET"},
    {TBMAN, "TBMAN"}, {0x50000000, "DMA"}, {0x50100000, "USBCTRL"},
    {0x50200000, "PIO0"}, {0x50300000, "PIO1"}, {0x50400000, "XIP_AUX"},
    {XIP_CTRL, "XIP"}, {SSI, "SSI"}, {SIO, "SIO"}, {PPB, "PPB"},
};

/* Register names where they help a reader of "polling ..." notes. */
static const struct { uint32_t addr; const char *name; } regs[] = {
    {XOSC + 0x04, "XOSC_STATUS"}, {ROSC + 0x18, "ROSC_STATUS"},
    {PLL_SYS, "PLL_SYS_CS"}, {PLL_USB, "PLL_USB_CS"},
    {RESETS + 0x8, "RESETS_RESET_DONE"}, {0x4004c000, "ADC_CS"},
    {0x4004c004, "ADC_RESULT"}, {0x4004c008, "ADC_FCS"},
    {0x4004c00c, "ADC_FIFO"}, {0x40044070, "I2C0_IC_RAW_INTR_STAT"},
    {0x4003c00c, "SPI0_SSPSR"}, {0x40040000 + 0xc, "SPI1_SSPSR"},
    {0x4005c018, "RTC_CTRL"}, {XIP_CTRL + 0x0c, "XIP_CTR_HIT"},
    {XIP_CTRL + 0x10, "XIP_CTR_ACC"}, {SSI + 0x28, "SSI_SR"},
    {UART0 + 0x18, "UART0_UARTFR"}, {UART1 + 0x18, "UART1_UARTFR"},
    {UART0, "UART0_UARTDR"}, {UART1, "UART1_UARTDR"},
    {SIO + 0x50, "SIO_FIFO_ST"}, {SIO + 0x58, "SIO_FIFO_RD"},
    {SIO + 0x04, "SIO_GPIO_IN"},
};

static int rp_reg_name(uint32_t a, char *buf, size_t cap)
{
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
        if (regs[i].addr == a) {
            snprintf(buf, cap, "%s", regs[i].name);
            return 1;
        }
    if (a >= SIO + 0x100 && a < SIO + 0x180) {
        snprintf(buf, cap, "SIO_SPINLOCK%u", (a - SIO - 0x100) / 4);
        return 1;
    }
    for (size_t i = sizeof blocks / sizeof blocks[0]; i-- > 0;) {
        uint32_t span = blocks[i].base >= SIO ? 0x10000000u
                        : blocks[i].base >= 0x50000000u ? 0x100000u : 0x4000u;
        if (a - blocks[i].base < span) {
            snprintf(buf, cap, "%s+0x%03x", blocks[i].name,
                     a - blocks[i].base);
            return 1;
        }
    }
    return 0;
}

/* XIP_CTRL and the SSI: outside the target's memory list (2.2). */
static const uint32_t windows[] = {XIP_CTRL, 0x4000, SSI, 0x4000, 0, 0};

const bd_chip bd_rp2040 = {
    .name = "rp2040",
    .init = rp_init,
    .fini = rp_fini,
    .read = rp_read,
    .write = rp_write,
    .reg_name = rp_reg_name,
    .windows = windows,
    .has_aliases = rp_aliases,
};
