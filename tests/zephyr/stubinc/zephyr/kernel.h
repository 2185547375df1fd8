#include <stdint.h>
#include <stddef.h>
#define BUILD_ASSERT(c, m) _Static_assert(c, m)
#define SYS_INIT(f, l, p) static int (*const sysinit_##f)(void) __attribute__((used)) = f
#define CONFIG_APPLICATION_INIT_PRIORITY 90
int64_t k_uptime_get(void);
void irq_enable(unsigned); void irq_disable(unsigned);
#define ARRAY_SIZE(a) (sizeof(a)/sizeof((a)[0]))
#define MAX(a,b) ((a)>(b)?(a):(b))
#define __aligned(x) __attribute__((aligned(x)))
#define ARG_UNUSED(x) (void)(x)
#define IRQ_ZERO_LATENCY 1
#define IRQ_DIRECT_CONNECT(i,p,f,fl) do { (void)(i); (void)(f); } while (0)
