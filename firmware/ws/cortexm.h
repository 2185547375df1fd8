/*
 * The Cortex-M3 / M7 system registers the kernel and the drivers use.
 * ARMv7-M Architecture Reference Manual (DDI 0403E):
 *   B3.2.2 System control block: ICSR 0xE000ED04 (PENDSVSET bit 28),
 *          SHPR3 0xE000ED20 (PRI_14 PendSV bits 23:16, PRI_15 SysTick
 *          bits 31:24);
 *   B3.3.2 SysTick: SYST_CSR 0xE000E010 (ENABLE bit 0, TICKINT bit 1,
 *          CLKSOURCE bit 2: processor clock), SYST_RVR 0xE000E014 (24-bit
 *          reload), SYST_CVR 0xE000E018;
 *   B3.4.2 NVIC: ISER 0xE000E100, ICPR 0xE000E280, IPR 0xE000E400 (one
 *          priority byte per interrupt).
 */
#ifndef WS_CORTEXM_H
#define WS_CORTEXM_H

#include <stdint.h>

#define CM_REG(a)        (*(volatile uint32_t *)(a))
#define CM_ICSR          CM_REG(0xE000ED04u)
#define CM_ICSR_PENDSVSET (1u << 28)
#define CM_SHPR3         CM_REG(0xE000ED20u)
#define CM_SYST_CSR      CM_REG(0xE000E010u)
#define CM_SYST_RVR      CM_REG(0xE000E014u)
#define CM_SYST_CVR      CM_REG(0xE000E018u)
#define CM_SYST_ENABLE   (1u << 0)
#define CM_SYST_TICKINT  (1u << 1)
#define CM_SYST_CLKSRC   (1u << 2)
#define CM_NVIC_ISER(n)  CM_REG(0xE000E100u + 4u * (n))
#define CM_NVIC_ICPR(n)  CM_REG(0xE000E280u + 4u * (n))
#define CM_NVIC_IPR8(i)  (*(volatile uint8_t *)(0xE000E400u + (i)))

static inline uint32_t cm_irq_save(void)
{
    uint32_t primask;

    __asm__ volatile ("mrs %0, primask\n\tcpsid i" : "=r"(primask) :: "memory");
    return primask;
}

static inline void cm_irq_restore(uint32_t primask)
{
    __asm__ volatile ("msr primask, %0" :: "r"(primask) : "memory");
}

static inline void cm_nvic_enable(uint32_t irq, uint8_t prio)
{
    CM_NVIC_IPR8(irq) = prio;
    CM_NVIC_ICPR(irq / 32u) = 1u << (irq % 32u);
    CM_NVIC_ISER(irq / 32u) = 1u << (irq % 32u);
}

#endif
