/*
 * codeplace whole-system echo firmware: a preemptive kernel (kernel.h),
 * the LAN9118 driver (lan9118.h), an IPv4 host answering ARP, ICMP echo
 * and UDP echo (net.h) on QEMU's mps2-an385 and mps2-an500 (board.h).
 *
 *   codeplace_mark()        called once per UDP echo request handled: a
 *                           recorder counts one iteration per pass
 *   codeplace_mark_count    passes of codeplace_mark
 *   codeplace_result        CRC-32 of every echoed payload, folded
 *   ws_audit_chain          SHA-256 hash chain over the echo requests
 */
#ifndef WS_WS_H
#define WS_WS_H

#include <stdint.h>

#define WS_IP       0x0A00020Fu     /* 10.0.2.15: QEMU user networking's guest */
#define WS_NETMASK  0xFFFFFF00u
#define WS_GATEWAY  0x0A000202u     /* 10.0.2.2 */

extern volatile uint32_t codeplace_mark_count;
extern volatile uint32_t codeplace_result;
extern uint8_t ws_audit_chain[32];

void codeplace_mark(void);
void ws_main(void) __attribute__((noreturn));

#endif
