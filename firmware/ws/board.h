/*
 * Whole-system echo firmware: the two QEMU boards it runs on.
 *
 * Built once per board (mk/firmware.mk passes -DWS_BOARD_AN385 or
 * -DWS_BOARD_AN500). Everything below comes from QEMU's hw/arm/mps2.c
 * (QEMU 7.2), mps2_common_init() and the mps2_an385/an500 class_init
 * functions, which model ARM Application Notes AN385 (Cortex-M3) and AN500
 * (Cortex-M7):
 *   - ZBT SSRAM1, 4 MiB at 0x00000000 (code; QEMU boots from its vector
 *     table), ZBT SSRAM 2&3, 4 MiB at 0x20000000 (data), on both boards;
 *   - the Ethernet controller is a LAN9220 in hardware, modelled as a
 *     LAN9118 ("software compatible except that it doesn't support the
 *     checksum-offload feature"): mmc->ethernet_base is 0x40200000 on AN385
 *     but 0xA0000000 on AN500; its interrupt is NVIC input 13 on both
 *     (mmc->fpga_type == FPGA_AN511 ? 47 : 13);
 *   - the NVIC has 32 external interrupts ("num-irq" 32);
 *   - CMSDK APB UART0 at 0x40004000 (QEMU's serial 0), SYSCLK 25 MHz
 *     (SYSCLK_FRQ), which also clocks the CPU and so SysTick.
 */
#ifndef WS_BOARD_H
#define WS_BOARD_H

#if defined(WS_BOARD_AN385)
#define WS_BOARD_NAME   "mps2-an385"
#define WS_ETH_BASE     0x40200000u
#elif defined(WS_BOARD_AN500)
#define WS_BOARD_NAME   "mps2-an500"
#define WS_ETH_BASE     0xA0000000u
#else
#error "define WS_BOARD_AN385 or WS_BOARD_AN500"
#endif

#define WS_ETH_IRQ      13u           /* NVIC input of the LAN9118 */
#define WS_NUM_IRQ      32u           /* external interrupts of the NVIC */
#define WS_UART0_BASE   0x40004000u   /* CMSDK APB UART 0 */
#define WS_SYSCLK_HZ    25000000u     /* SYSCLK_FRQ */

#endif
