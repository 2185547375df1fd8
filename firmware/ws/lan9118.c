/*
 * SMSC LAN9118 driver. Register map and formats from the SMSC LAN9118
 * datasheet, revision 1.5 (07-11-08): chapter 5 "Register Description"
 * (system control and status registers at the offsets below; MAC control
 * and status registers reached indirectly through MAC_CSR_CMD /
 * MAC_CSR_DATA; the PHY through the MAC's MII_ACC / MII_DATA), 3.12
 * "Transmit Data Path Operation" (3.12.2 TX command 'A' and 'B': first and
 * last segment bits 13 and 12, buffer size bits 10:0, packet tag in B's
 * bits 31:16; TX status, error status bit 15) and 3.13 "Receive Data Path
 * Operation" (3.13.3 RX status format: packet length bits 29:16, error
 * status bit 15; the RX data FIFO).
 *
 * What QEMU's hw/net/lan9118.c models, and so what this driver relies on:
 * 32-bit PIO through the FIFOs, RX status "packet length" including the
 * 4-byte FCS and the FIFO holding ceil(length / 4) words, TX status words
 * holding the packet tag, the MAC address in ADDRH/ADDRL, MAC_CSR and MII
 * busy bits that are already clear when read back, and of the interrupts
 * the RX status FIFO level (RSFL, set when the FIFO holds more entries
 * than FIFO_INT's RX status level). QEMU drives its interrupt line active
 * low unless IRQ_CFG selects push-pull and active high, which the NVIC
 * input needs.
 */
#include "lan9118.h"

#include "board.h"
#include "cortexm.h"
#include "kernel.h"

#include <stddef.h>

#define LAN_REG(off)        (*(volatile uint32_t *)(WS_ETH_BASE + (off)))
#define LAN_RX_DATA_FIFO    LAN_REG(0x00u)
#define LAN_TX_DATA_FIFO    LAN_REG(0x20u)
#define LAN_RX_STATUS_FIFO  LAN_REG(0x40u)
#define LAN_TX_STATUS_FIFO  LAN_REG(0x48u)
#define LAN_ID_REV          LAN_REG(0x50u)
#define LAN_IRQ_CFG         LAN_REG(0x54u)
#define LAN_INT_STS         LAN_REG(0x58u)
#define LAN_INT_EN          LAN_REG(0x5Cu)
#define LAN_BYTE_TEST       LAN_REG(0x64u)
#define LAN_FIFO_INT        LAN_REG(0x68u)
#define LAN_RX_CFG          LAN_REG(0x6Cu)
#define LAN_TX_CFG          LAN_REG(0x70u)
#define LAN_HW_CFG          LAN_REG(0x74u)
#define LAN_RX_DP_CTRL      LAN_REG(0x78u)
#define LAN_RX_FIFO_INF     LAN_REG(0x7Cu)
#define LAN_TX_FIFO_INF     LAN_REG(0x80u)
#define LAN_PMT_CTRL        LAN_REG(0x84u)
#define LAN_MAC_CSR_CMD     LAN_REG(0xA4u)
#define LAN_MAC_CSR_DATA    LAN_REG(0xA8u)

#define BYTE_TEST_VALUE     0x87654321u
#define ID_REV_ID(v)        ((v) >> 16)       /* 0x0118 for the LAN9118 */
#define IRQ_CFG_IRQ_EN      (1u << 8)
#define IRQ_CFG_IRQ_POL     (1u << 4)         /* 1: active high */
#define IRQ_CFG_IRQ_TYPE    (1u << 0)         /* 1: push-pull */
#define INT_RSFL            (1u << 3)         /* RX status FIFO level */
#define INT_RXE             (1u << 14)        /* receiver error */
#define INT_TXE             (1u << 13)        /* transmitter error */
#define FIFO_INT_DEFAULT    0x48000000u       /* TX levels as at reset */
#define TX_CFG_TX_ON        (1u << 1)
#define HW_CFG_SRST         (1u << 0)
#define PMT_CTRL_READY      (1u << 0)
#define RX_DP_CTRL_FFWD     (1u << 31)
#define RX_FIFO_INF_RXSUSED(v) (((v) >> 16) & 0xFFu)
#define TX_FIFO_INF_TDFREE(v)  ((v) & 0xFFFFu)
#define TX_FIFO_INF_TXSUSED(v) (((v) >> 16) & 0xFFu)
#define RX_STS_LEN(v)       (((v) >> 16) & 0x3FFFu)
#define RX_STS_ES           (1u << 15)
#define TX_STS_ES           (1u << 15)
#define TX_CMDA_FIRST       (1u << 13)
#define TX_CMDA_LAST        (1u << 12)

#define MAC_CSR_BUSY        (1u << 31)
#define MAC_CSR_READ        (1u << 30)
#define MAC_CR              1u
#define MAC_ADDRH           2u
#define MAC_ADDRL           3u
#define MAC_MII_ACC         6u
#define MAC_MII_DATA        7u
#define MAC_CR_RXEN         (1u << 2)
#define MAC_CR_TXEN         (1u << 3)
#define MAC_CR_FDPX         (1u << 20)
#define MII_ACC_BUSY        (1u << 0)
#define MII_ACC_WRITE       (1u << 1)
#define PHY_ADDR            1u                /* the internal PHY */
#define PHY_BSR             1u                /* basic status */
#define PHY_BSR_LINK        (1u << 2)

#define SPIN_LIMIT          100000u

struct lan9118_stats lan9118_stats;
struct k_sem lan9118_rx_sem;
static uint16_t tx_tag;

static int wait_clear(volatile uint32_t *reg, uint32_t bit)
{
    uint32_t n;

    for (n = 0; n < SPIN_LIMIT; n++)
        if ((*reg & bit) == 0)
            return 0;
    return -1;
}

static int mac_read(uint32_t reg, uint32_t *val)
{
    if (wait_clear(&LAN_MAC_CSR_CMD, MAC_CSR_BUSY) != 0)
        return -1;
    LAN_MAC_CSR_CMD = MAC_CSR_BUSY | MAC_CSR_READ | reg;
    if (wait_clear(&LAN_MAC_CSR_CMD, MAC_CSR_BUSY) != 0)
        return -1;
    *val = LAN_MAC_CSR_DATA;
    return 0;
}

static int mac_write(uint32_t reg, uint32_t val)
{
    if (wait_clear(&LAN_MAC_CSR_CMD, MAC_CSR_BUSY) != 0)
        return -1;
    LAN_MAC_CSR_DATA = val;
    LAN_MAC_CSR_CMD = MAC_CSR_BUSY | reg;
    return wait_clear(&LAN_MAC_CSR_CMD, MAC_CSR_BUSY);
}

static int phy_read(uint32_t reg, uint32_t *val)
{
    uint32_t acc;

    if (mac_write(MAC_MII_ACC, (PHY_ADDR << 11) | (reg << 6) | MII_ACC_BUSY) != 0)
        return -1;
    do {
        if (mac_read(MAC_MII_ACC, &acc) != 0)
            return -1;
    } while (acc & MII_ACC_BUSY);
    return mac_read(MAC_MII_DATA, val);
}

int lan9118_init(uint8_t mac[6])
{
    uint32_t hi, lo;

    if (LAN_BYTE_TEST != BYTE_TEST_VALUE)
        return -1;
    if (ID_REV_ID(LAN_ID_REV) != 0x0118u)
        return -1;
    LAN_HW_CFG = HW_CFG_SRST;
    if (wait_clear(&LAN_HW_CFG, HW_CFG_SRST) != 0)
        return -1;
    for (hi = 0; hi < SPIN_LIMIT && (LAN_PMT_CTRL & PMT_CTRL_READY) == 0; hi++)
        ;
    if ((LAN_PMT_CTRL & PMT_CTRL_READY) == 0)
        return -1;

    if (mac_read(MAC_ADDRH, &hi) != 0 || mac_read(MAC_ADDRL, &lo) != 0)
        return -1;
    mac[0] = (uint8_t)lo;
    mac[1] = (uint8_t)(lo >> 8);
    mac[2] = (uint8_t)(lo >> 16);
    mac[3] = (uint8_t)(lo >> 24);
    mac[4] = (uint8_t)hi;
    mac[5] = (uint8_t)(hi >> 8);

    /* interrupt line: enabled, push-pull, active high */
    LAN_IRQ_CFG = IRQ_CFG_IRQ_EN | IRQ_CFG_IRQ_POL | IRQ_CFG_IRQ_TYPE;
    /* RX status level 0: interrupt as soon as one status is queued */
    LAN_FIFO_INT = FIFO_INT_DEFAULT;
    LAN_RX_CFG = 0;                       /* no offset, 4-byte end alignment */
    LAN_INT_STS = 0xFFFFFFFFu;
    LAN_INT_EN = INT_RSFL;
    /* perfect filtering of the station address plus broadcast: MAC_CR
     * leaves reset promiscuous (PRMS); this value clears it */
    if (mac_write(MAC_CR, MAC_CR_RXEN | MAC_CR_TXEN | MAC_CR_FDPX) != 0)
        return -1;
    LAN_TX_CFG = TX_CFG_TX_ON;

    cm_nvic_enable(WS_ETH_IRQ, 0x80u);
    return 0;
}

int lan9118_link_up(void)
{
    uint32_t bsr;

    if (phy_read(PHY_BSR, &bsr) != 0)
        return 0;
    return (bsr & PHY_BSR_LINK) != 0;
}

uint32_t lan9118_rx_pending(void)
{
    return RX_FIFO_INF_RXSUSED(LAN_RX_FIFO_INF);
}

uint32_t lan9118_rx(uint8_t *buf)
{
    uint32_t sts = LAN_RX_STATUS_FIFO;
    uint32_t len = RX_STS_LEN(sts);       /* with the FCS */
    uint32_t words = (len + 3u) / 4u;
    uint32_t *dst = (uint32_t *)(void *)buf;
    uint32_t i;

    if ((sts & RX_STS_ES) != 0 || len < 18u || len > LAN_FRAME_MAX + 4u) {
        lan9118_stats.rx_errors++;
        if (words >= 4u) {
            /* fast-forward over the frame */
            LAN_RX_DP_CTRL = RX_DP_CTRL_FFWD;
            (void)wait_clear(&LAN_RX_DP_CTRL, RX_DP_CTRL_FFWD);
        } else {
            for (i = 0; i < words; i++)
                (void)LAN_RX_DATA_FIFO;
        }
        return 0;
    }
    for (i = 0; i < words; i++)
        dst[i] = LAN_RX_DATA_FIFO;
    lan9118_stats.rx_frames++;
    return len - 4u;
}

static void tx_status_drain(void)
{
    uint32_t n = TX_FIFO_INF_TXSUSED(LAN_TX_FIFO_INF);

    while (n-- > 0)
        if (LAN_TX_STATUS_FIFO & TX_STS_ES)
            lan9118_stats.tx_errors++;
}

int lan9118_tx(const uint8_t *frame, uint32_t len)
{
    const uint32_t *src = (const uint32_t *)(const void *)frame;
    uint32_t words = (len + 3u) / 4u;
    uint32_t i;

    tx_status_drain();
    if (len < 14u || len > LAN_FRAME_MAX ||
        TX_FIFO_INF_TDFREE(LAN_TX_FIFO_INF) < 4u * words + 8u) {
        lan9118_stats.tx_errors++;
        return -1;
    }
    tx_tag++;
    LAN_TX_DATA_FIFO = TX_CMDA_FIRST | TX_CMDA_LAST | len;
    LAN_TX_DATA_FIFO = ((uint32_t)tx_tag << 16) | len;
    for (i = 0; i < words; i++)
        LAN_TX_DATA_FIFO = src[i];
    lan9118_stats.tx_frames++;
    tx_status_drain();
    return 0;
}

void lan9118_rx_irq_enable(void)
{
    LAN_INT_STS = INT_RSFL;
    LAN_INT_EN = INT_RSFL;
}

/* Masks the RX interrupt and wakes the network thread, which drains the
 * RX FIFO and re-enables it: RSFL stays asserted while statuses are
 * queued, so clearing it here alone would not stop the interrupt. */
void lan9118_irq_handler(void)
{
    uint32_t sts = LAN_INT_STS & LAN_INT_EN;

    LAN_INT_EN = 0;
    LAN_INT_STS = sts;
    lan9118_stats.irqs++;
    k_sem_give(&lan9118_rx_sem);
}
