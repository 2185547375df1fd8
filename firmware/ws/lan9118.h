/*
 * SMSC LAN9118 Ethernet controller driver (32-bit bus, PIO through the
 * RX/TX FIFOs), interrupt on RX status FIFO level.
 */
#ifndef WS_LAN9118_H
#define WS_LAN9118_H

#include <stdint.h>

#define LAN_FRAME_MAX 1518u   /* without the 4-byte FCS */

struct lan9118_stats {
    uint32_t irqs;
    uint32_t rx_frames;
    uint32_t rx_errors;       /* status ES, or too long, or dropped */
    uint32_t tx_frames;
    uint32_t tx_errors;       /* TX status ES or no FIFO space */
};

/* 0 when the chip answers and is set up, -1 when BYTE_TEST or ID_REV are
 * wrong or reset does not complete. mac[6] receives the station address. */
int lan9118_init(uint8_t mac[6]);
/* Link state from the PHY's basic status register: 1 up, 0 down. */
int lan9118_link_up(void);
/* Frames waiting in the RX status FIFO. */
uint32_t lan9118_rx_pending(void);
/* Pops one frame into buf (at least LAN_FRAME_MAX + 4 bytes, 4-aligned);
 * returns its length without the FCS, or 0 for a frame that was dropped. */
uint32_t lan9118_rx(uint8_t *buf);
/* Queues one frame (14..LAN_FRAME_MAX bytes); the chip pads and adds the
 * FCS. Returns 0, or -1 when it does not fit in the TX data FIFO. */
int lan9118_tx(const uint8_t *frame, uint32_t len);
/* Re-enables the RX interrupt after the RX FIFO was drained. */
void lan9118_rx_irq_enable(void);

extern struct lan9118_stats lan9118_stats;

void lan9118_irq_handler(void);
/* Given by the interrupt handler each time frames arrive. */
struct k_sem;
extern struct k_sem lan9118_rx_sem;

#endif
