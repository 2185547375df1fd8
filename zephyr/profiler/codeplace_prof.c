/* codeplace on-target profiler: a timer interrupt that the kernel's
 * irq_lock() does not mask samples the interrupted PC into a RAM buffer.
 *
 *   i.MX RT (ARMv7-M)  PIT channel CONFIG_CODEPLACE_PROFILER_PIT_CHANNEL,
 *                      connected with IRQ_DIRECT_CONNECT(..., IRQ_ZERO_LATENCY):
 *                      priority 0, above BASEPRI, so it also interrupts code
 *                      that runs under irq_lock(). Code in ITCM, buffer in DTCM.
 *   RP2040 (ARMv6-M)   no BASEPRI: irq_lock() sets PRIMASK, which masks every
 *                      interrupt but the NMI. TIMER alarm
 *                      CONFIG_CODEPLACE_PROFILER_RP2040_ALARM is routed to
 *                      core 0's NMI with SYSCFG PROC0_NMI_MASK (RP2040
 *                      datasheet 2.3.2 "Interrupts" and 2.21 "Syscfg"); while
 *                      sampling, VTOR points at a RAM copy of the vector table
 *                      whose NMI entry is our handler. Code and buffer in SRAM.
 *
 * The handler is naked: at its first instruction LR holds EXC_RETURN and the
 * exception frame is untouched on MSP or PSP; it passes (EXC_RETURN, MSP, PSP)
 * to sample(), which returns straight to the interrupted code. */
#include <errno.h>
#include <zephyr/init.h>
#include <zephyr/kernel.h>
#include <zephyr/irq.h>
#include <zephyr/sys/util.h>
#include <zephyr/linker/section_tags.h>
#include <cmsis_core.h>

#include "codeplace_prof.h"

BUILD_ASSERT((CONFIG_CODEPLACE_PROFILER_BUCKETS &
	      (CONFIG_CODEPLACE_PROFILER_BUCKETS - 1)) == 0,
	     "CONFIG_CODEPLACE_PROFILER_BUCKETS must be a power of two");

#if defined(CONFIG_CODEPLACE_PROFILER_IMXRT)
#include <fsl_clock.h>
#define CP_FAST __itcm_section
#define CP_BUF __dtcm_bss_section
#define CP_CPU "cortex-m7"
#elif defined(CONFIG_SOC_RP2040)
#include <hardware/structs/timer.h>
#include <hardware/structs/syscfg.h>
#define CP_FAST __ramfunc
#define CP_BUF
#define CP_CPU "cortex-m0plus"
#else
#error "codeplace profiler: no timer back end for this SoC"
#endif

static CP_BUF uint32_t bucket_pc[CONFIG_CODEPLACE_PROFILER_BUCKETS];
static CP_BUF uint32_t bucket_count[CONFIG_CODEPLACE_PROFILER_BUCKETS];
static CP_BUF cpprof_buf buf;
static CP_BUF volatile int running;
static uint32_t rate_now;
static int64_t t_start, t_stop;

/* ------------------------------------------------------------------ */
#if defined(CONFIG_CODEPLACE_PROFILER_IMXRT)

/* PIT: all four channels share NVIC line 122 (PIT_IRQn in the MIMXRT1062
 * device header); LDVAL counts down at PERCLK_CLK_ROOT and TFLG[TIF] is
 * write-1-to-clear (i.MX RT1060 RM, "Periodic Interrupt Timer (PIT)"). */
#define CH CONFIG_CODEPLACE_PROFILER_PIT_CHANNEL

static CP_FAST void timer_ack(void)
{
	PIT->CHANNEL[CH].TFLG = PIT_TFLG_TIF_MASK;
	__DSB(); /* the flag clears before the exception returns */
}

static void timer_start(uint32_t rate_hz)
{
	CLOCK_EnableClock(kCLOCK_Pit);
	PIT->MCR = 0; /* enable the module (MDIS = 0), run in debug */
	PIT->CHANNEL[CH].TCTRL = 0;
	PIT->CHANNEL[CH].LDVAL = CONFIG_CODEPLACE_PROFILER_PIT_CLOCK_HZ / rate_hz - 1u;
	PIT->CHANNEL[CH].TFLG = PIT_TFLG_TIF_MASK;
	PIT->CHANNEL[CH].TCTRL = PIT_TCTRL_TIE_MASK | PIT_TCTRL_TEN_MASK;
	irq_enable(PIT_IRQn);
}

static void timer_stop(void)
{
	PIT->CHANNEL[CH].TCTRL = 0;
	PIT->CHANNEL[CH].TFLG = PIT_TFLG_TIF_MASK;
	irq_disable(PIT_IRQn);
}

#elif defined(CONFIG_SOC_RP2040)

/* TIMER: a 1 MHz counter (RP2040 datasheet 4.6.1: one microsecond ticks
 * from the watchdog's tick generator, 4.7.2); writing ALARMn arms alarm n,
 * which fires when the low 32 bits of the counter equal it; INTR bit n is
 * write-1-to-clear (4.6.5 list of registers). TIMER_IRQ_n is IRQ n
 * (2.3.2 "Interrupts"). */
#define ALARM CONFIG_CODEPLACE_PROFILER_RP2040_ALARM
static uint32_t period_us;
static uint32_t next_at;

static CP_FAST void timer_ack(void)
{
	timer_hw->intr = 1u << ALARM;
	/* Re-arm from the previous target, not from now, so that the rate does
	 * not drift with the handler's latency; skip ahead after a stall. */
	next_at += period_us;
	if ((int32_t)(next_at - timer_hw->timerawl) <= 0)
		next_at = timer_hw->timerawl + period_us;
	timer_hw->alarm[ALARM] = next_at;
}

/* The vector table copy whose NMI entry is ours: 16 system exceptions plus
 * 32 IRQs, aligned to the next power of two of its size (ARMv6-M ARM
 * B3.2.5, VTOR). */
static uint32_t __aligned(256) ram_vectors[48];
static uint32_t saved_vtor;
void codeplace_prof_isr(void);

static void timer_start(uint32_t rate_hz)
{
	const uint32_t *cur = (const uint32_t *)SCB->VTOR;

	period_us = MAX(1000000u / rate_hz, 2u);
	/* Zephyr's table has 16 + CONFIG_NUM_IRQS entries (26 IRQs are wired on
	 * the RP2040, datasheet 2.3.2); the rest of the copy stays zero. */
	for (size_t i = 0; i < ARRAY_SIZE(ram_vectors); i++)
		ram_vectors[i] = i < 16u + CONFIG_NUM_IRQS ? cur[i] : 0u;
	ram_vectors[2] = (uint32_t)codeplace_prof_isr; /* NMI */
	saved_vtor = SCB->VTOR;
	__DSB();
	SCB->VTOR = (uint32_t)ram_vectors;
	__DSB();
	__ISB();

	irq_disable(ALARM); /* NMI only, never the NVIC line */
	timer_hw->intr = 1u << ALARM;
	timer_hw->inte |= 1u << ALARM;
	syscfg_hw->proc0_nmi_mask |= 1u << ALARM;
	next_at = timer_hw->timerawl + period_us;
	timer_hw->alarm[ALARM] = next_at;
}

static void timer_stop(void)
{
	syscfg_hw->proc0_nmi_mask &= ~(1u << ALARM);
	timer_hw->inte &= ~(1u << ALARM);
	timer_hw->armed = 1u << ALARM; /* disarm */
	timer_hw->intr = 1u << ALARM;
	__DSB();
	SCB->VTOR = saved_vtor;
	__DSB();
	__ISB();
}

#endif
/* ------------------------------------------------------------------ */

/* Called by the naked handler with the values it found on entry. */
CP_FAST void codeplace_prof_sample(uint32_t exc_return, const uint32_t *msp,
				   const uint32_t *psp)
{
	timer_ack();
	if (running)
		cpprof_add(&buf, cpprof_frame_pc(exc_return, msp, psp));
}

/* r0 = EXC_RETURN, r1 = MSP, r2 = PSP, then a tail call: sample() returns
 * through LR = EXC_RETURN. ldr/bx rather than b: ARMv6-M's b reaches only
 * +-2 KiB. Valid Thumb-1 for both cores. */
__attribute__((naked)) CP_FAST void codeplace_prof_isr(void)
{
	__asm__ volatile("mov r0, lr\n\t"
			 "mrs r1, msp\n\t"
			 "mrs r2, psp\n\t"
			 "ldr r3, =codeplace_prof_sample\n\t"
			 "bx r3\n\t"
			 ".ltorg\n\t");
}

static int prof_init(void)
{
	cpprof_init(&buf, bucket_pc, bucket_count, CONFIG_CODEPLACE_PROFILER_BUCKETS);
#if defined(CONFIG_CODEPLACE_PROFILER_IMXRT)
	/* Straight into the vector table; zero latency: not masked by
	 * irq_lock() (include/zephyr/arch/arm/irq.h, z_arm_irq_priority_set). */
	IRQ_DIRECT_CONNECT(PIT_IRQn, 0, codeplace_prof_isr, IRQ_ZERO_LATENCY);
#endif
	return 0;
}
SYS_INIT(prof_init, APPLICATION, CONFIG_APPLICATION_INIT_PRIORITY);

int codeplace_prof_start(uint32_t rate_hz)
{
	if (running)
		return -EBUSY;
	if (rate_hz == 0)
		rate_hz = CONFIG_CODEPLACE_PROFILER_RATE_HZ;
	if (rate_hz < 100 || rate_hz > 100000)
		return -EINVAL;
	cpprof_reset(&buf);
	rate_now = rate_hz;
	t_start = k_uptime_get();
	t_stop = 0;
	running = 1;
	__DSB();
	timer_start(rate_hz);
	return 0;
}

int codeplace_prof_stop(void)
{
	if (!running)
		return -EALREADY;
	timer_stop();
	running = 0;
	__DSB();
	t_stop = k_uptime_get();
	return 0;
}

void codeplace_prof_status(struct codeplace_prof_status *st)
{
	st->running = running;
	st->rate_hz = rate_now;
	st->duration_ms = (uint32_t)((running ? k_uptime_get() : t_stop) - t_start);
	if (!rate_now)
		st->duration_ms = 0;
	st->samples = buf.samples;
	st->dropped = buf.dropped;
	st->buckets_used = buf.used;
	st->buckets = buf.cap;
}

int codeplace_prof_dump(cpprof_write_fn wr, void *ctx)
{
	struct codeplace_prof_status st;
	cpprof_info info;

	if (running)
		codeplace_prof_stop();
	codeplace_prof_status(&st);
	info.cpu = CP_CPU;
	info.rate_hz = st.rate_hz;
	info.duration_ms = st.duration_ms;
	return cpprof_dump(&buf, &info, wr, ctx);
}
