/* Functions for the Zephyr placement test (tests/cli/t7200). */
volatile int sink;
__attribute__((noinline)) int net_hot(int x) { return x + sink; }
__attribute__((noinline)) int k_hot(int x) { return x * sink; }
__attribute__((noinline)) int flash_hot(int x) { return x - sink; }
__attribute__((noinline)) int via_ramfunc_snippet(int x) { return x ^ sink; }
__attribute__((noinline)) int cold(int x) { return x | sink; }
void reset(void);
void reset(void)
{
    sink = net_hot(1) + k_hot(2) + flash_hot(3) + via_ramfunc_snippet(4) + cold(5);
    for (;;)
        ;
}
__attribute__((section(".vectors"), used)) void (*const vectors[2])(void) = {
    (void (*)(void))0x20042000u, reset};
