/* Console on CMSDK APB UART 0 (QEMU's serial 0): transmit only, polled. */
#ifndef WS_UART_H
#define WS_UART_H

#include <stdint.h>

void uart_init(void);
void uart_puts(const char *s);
void uart_put_hex(uint32_t v);
void uart_put_dec(uint32_t v);

#endif
