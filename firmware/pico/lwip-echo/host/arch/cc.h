/*
 * lwIP's port header for the host build of the UDP echo
 * (firmware/pico/host): gcc on the machine running the tests. pico-sdk's
 * own (src/rp2_common/pico_lwip/include/arch/cc.h) serves the board build;
 * what lwIP takes from either here is the struct packing, the assertion
 * and LWIP_RAND (which lwipopts.h fixes for both).
 */
#ifndef CODEPLACE_HOST_ARCH_CC_H
#define CODEPLACE_HOST_ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

#define PACK_STRUCT_BEGIN
#define PACK_STRUCT_STRUCT __attribute__((__packed__))
#define PACK_STRUCT_END
#define PACK_STRUCT_FIELD(x) x

#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) do { \
        fprintf(stderr, "lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
        abort(); \
    } while (0)

#endif
