#define __itcm_section __attribute__((section(".itcm")))
#define __dtcm_bss_section __attribute__((section(".dtcm_bss")))
#define __ramfunc __attribute__((noinline)) __attribute__((long_call, section(".ramfunc")))
