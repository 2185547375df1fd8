/*
 * CMSDK APB UART (Arm Cortex-M System Design Kit Technical Reference
 * Manual, DDI 0479, 4.3 "APB UART", programmers model): DATA 0x000,
 * STATE 0x004 (bit 0 TX buffer full), CTRL 0x008 (bit 0 TX enable),
 * BAUDDIV 0x010 (at least 16). QEMU's hw/char/cmsdk-apb-uart.c models it
 * and ignores the baud rate.
 */
#include "uart.h"

#include "board.h"

#define UART_REG(off)   (*(volatile uint32_t *)(WS_UART0_BASE + (off)))
#define UART_DATA       UART_REG(0x000u)
#define UART_STATE      UART_REG(0x004u)
#define UART_CTRL       UART_REG(0x008u)
#define UART_BAUDDIV    UART_REG(0x010u)
#define UART_STATE_TXF  (1u << 0)
#define UART_CTRL_TXEN  (1u << 0)

void uart_init(void)
{
    UART_BAUDDIV = WS_SYSCLK_HZ / 115200u;
    UART_CTRL = UART_CTRL_TXEN;
}

static void uart_putc(char c)
{
    while (UART_STATE & UART_STATE_TXF)
        ;
    UART_DATA = (uint8_t)c;
}

void uart_puts(const char *s)
{
    while (*s != '\0') {
        if (*s == '\n')
            uart_putc('\r');
        uart_putc(*s++);
    }
}

void uart_put_hex(uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    int i;

    uart_puts("0x");
    for (i = 28; i >= 0; i -= 4)
        uart_putc(digits[(v >> i) & 0xfu]);
}

void uart_put_dec(uint32_t v)
{
    char buf[11];
    int n = 0;

    do {
        buf[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0);
    while (n > 0)
        uart_putc(buf[--n]);
}
