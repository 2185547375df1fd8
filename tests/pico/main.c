/* Bare-metal stand-in for a pico-sdk program: a vector table, a reset
 * handler that copies .data (with the .time_critical functions) to RAM like
 * pico-sdk's crt0, and functions to place. */
#include <stdint.h>

extern uint32_t __etext[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
int main(void);
int lib_hot(int x);
int lib_cold(int x);

__attribute__((section(".boot2"), used)) const uint8_t boot2[256] = {0};

volatile int sink;

__attribute__((noinline)) int hot_a(int x) { return x * 3 + sink; }
__attribute__((noinline, noclone)) static int hot_static(int x) { return x ^ sink; }
__attribute__((noinline)) int cold_c(int x) { return x - sink; }
__attribute__((noinline)) int unlisted(int x) { return x + 7; }
/* GCC may clone this one (clone_me.constprop.0): a name list must then use
 * the clone's name, and codeplace suggests it. */
__attribute__((noinline)) static int clone_me(int x, int y) { return x * y + sink; }

void _entry_point(void);
void _entry_point(void)
{
    uint32_t *src = __etext, *dst = __data_start__;
    while (dst < __data_end__)
        *dst++ = *src++;
    for (dst = __bss_start__; dst < __bss_end__; dst++)
        *dst = 0;
    main();
    for (;;)
        ;
}

__attribute__((section(".vectors"), used))
void (*const vectors[2])(void) = {(void (*)(void))0x20042000u, _entry_point};

int main(void)
{
    sink = hot_a(1) + hot_static(2) + cold_c(3) + unlisted(4) + lib_hot(5) +
           lib_cold(6) + clone_me(sink, 3);
    return 0;
}
