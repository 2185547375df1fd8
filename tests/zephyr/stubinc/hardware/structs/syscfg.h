typedef struct { volatile uint32_t proc0_nmi_mask, proc1_nmi_mask; } syscfg_hw_t;
#define syscfg_hw ((syscfg_hw_t *)0x40004000u)
