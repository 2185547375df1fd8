/*
 * The heavy workload's QEMU reference runs: codeplace_main() prints
 * codeplace_result after 1, 10 and 100 iterations through semihosting and
 * exits 0; a fault exits 3. Semihosting is called directly (BKPT 0xAB,
 * operation in r0, argument in r1: Arm "Semihosting for AArch32 and
 * AArch64" 2.2: SYS_WRITE0 0x04, SYS_EXIT_EXTENDED 0x20 with
 * ADP_Stopped_ApplicationExit 0x20026), so the board builds' newlib
 * system calls stay stubs.
 *
 * Output, one line per checkpoint:
 *   codeplace_result after N iterations: 0xXXXXXXXX
 */
extern "C" {
#include "codeplace.h"
}

#include <stdint.h>
#include <stdio.h>

namespace {
constexpr uint32_t kLast = 100;

uint32_t semihost(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile ("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

[[noreturn]] void sh_exit(uint32_t code)
{
    static uint32_t block[2];
    block[0] = 0x20026u;
    block[1] = code;
    semihost(0x20u, block);
    for (;;)
        ;
}
}

extern "C" void codeplace_main(void)
{
    char buf[64];
    for (uint32_t n = 1; n <= kLast; n++) {
        codeplace_mark();
        codeplace_iteration();
        if (n == 1 || n == 10 || n == kLast) {
            snprintf(buf, sizeof buf, "codeplace_result after %lu iterations: 0x%08lx\n",
                     (unsigned long)n, (unsigned long)codeplace_result);
            semihost(0x04u, buf);
        }
    }
    sh_exit(0);
}

extern "C" void codeplace_on_fault(uint32_t ipsr)
{
    char buf[48];
    snprintf(buf, sizeof buf, "codeplace: fault, exception %lu\n", (unsigned long)(ipsr & 0xfffu));
    semihost(0x04u, buf);
    sh_exit(3);
}
