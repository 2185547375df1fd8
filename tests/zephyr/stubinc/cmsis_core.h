#include <stdint.h>
typedef struct { volatile uint32_t VTOR; } SCB_Type;
extern SCB_Type *SCB;
static inline void __DSB(void) { __asm__ volatile("dsb"); }
static inline void __ISB(void) { __asm__ volatile("isb"); }
typedef struct { volatile uint32_t LDVAL, CVAL, TCTRL, TFLG; } PIT_CH;
typedef struct { volatile uint32_t MCR; uint32_t pad[63]; PIT_CH CHANNEL[4]; } PIT_Type;
#define PIT ((PIT_Type *)0x40084000u)
#define PIT_TFLG_TIF_MASK 1u
#define PIT_TCTRL_TIE_MASK 2u
#define PIT_TCTRL_TEN_MASK 1u
#define PIT_IRQn 122
