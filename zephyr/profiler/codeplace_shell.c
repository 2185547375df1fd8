/* Shell commands of the codeplace profiler:
 *   codeplace start [RATE_HZ]   clear the buffer and sample
 *   codeplace stop              stop sampling, keep the buffer
 *   codeplace status            rate, samples, dropped, buckets
 *   codeplace dump              stop and print the dump (docs/formats/dump.md)
 * Built with SHELL_STATIC_SUBCMD_SET_CREATE / SHELL_CMD_REGISTER
 * (include/zephyr/shell/shell.h). */
#include <errno.h>
#include <stdlib.h>
#include <zephyr/shell/shell.h>

#include "codeplace_prof.h"

static int cmd_start(const struct shell *sh, size_t argc, char **argv)
{
	uint32_t rate = 0;
	int err;

	if (argc > 1) {
		char *end;
		unsigned long v = strtoul(argv[1], &end, 10);

		if (*argv[1] == '\0' || *end != '\0') {
			shell_error(sh, "codeplace: '%s' is not a rate in Hz", argv[1]);
			return -EINVAL;
		}
		rate = (uint32_t)v;
	}
	err = codeplace_prof_start(rate);
	if (err == -EBUSY) {
		shell_error(sh, "codeplace: already sampling (codeplace stop first)");
	} else if (err == -EINVAL) {
		shell_error(sh, "codeplace: rate must be 100..100000 Hz");
	} else if (err == 0) {
		struct codeplace_prof_status st;

		codeplace_prof_status(&st);
		shell_print(sh, "sampling at %u Hz into %u buckets",
			    (unsigned int)st.rate_hz, (unsigned int)st.buckets);
	}
	return err;
}

static int cmd_stop(const struct shell *sh, size_t argc, char **argv)
{
	ARG_UNUSED(argc);
	ARG_UNUSED(argv);
	if (codeplace_prof_stop() != 0) {
		shell_warn(sh, "codeplace: not sampling");
		return 0;
	}
	shell_print(sh, "stopped");
	return 0;
}

static int cmd_status(const struct shell *sh, size_t argc, char **argv)
{
	struct codeplace_prof_status st;

	ARG_UNUSED(argc);
	ARG_UNUSED(argv);
	codeplace_prof_status(&st);
	shell_print(sh, "state:       %s", st.running ? "sampling" : "stopped");
	shell_print(sh, "rate_hz:     %u", (unsigned int)st.rate_hz);
	shell_print(sh, "duration_ms: %u", (unsigned int)st.duration_ms);
	shell_print(sh, "samples:     %u (measured %u Hz)", (unsigned int)st.samples,
		    st.duration_ms ? (unsigned int)((uint64_t)st.samples * 1000u / st.duration_ms)
				   : 0u);
	shell_print(sh, "dropped:     %u", (unsigned int)st.dropped);
	shell_print(sh, "buckets:     %u of %u", (unsigned int)st.buckets_used,
		    (unsigned int)st.buckets);
	return 0;
}

/* The dump arrives in pieces: collect a line, print it whole. */
struct line_out {
	const struct shell *sh;
	char line[64];
	size_t n;
};

static int dump_write(void *ctx, const char *s, size_t n)
{
	struct line_out *o = ctx;

	for (size_t i = 0; i < n; i++) {
		if (o->n < sizeof(o->line) - 1)
			o->line[o->n++] = s[i];
		if (s[i] == '\n') {
			o->line[o->n] = '\0';
			shell_fprintf(o->sh, SHELL_NORMAL, "%s", o->line);
			o->n = 0;
		}
	}
	return 0;
}

static int cmd_dump(const struct shell *sh, size_t argc, char **argv)
{
	struct line_out o = {.sh = sh, .n = 0};

	ARG_UNUSED(argc);
	ARG_UNUSED(argv);
	return codeplace_prof_dump(dump_write, &o);
}

SHELL_STATIC_SUBCMD_SET_CREATE(sub_codeplace,
	SHELL_CMD_ARG(start, NULL, "start [RATE_HZ]: clear and start sampling", cmd_start, 1, 1),
	SHELL_CMD(stop, NULL, "stop sampling, keep the samples", cmd_stop),
	SHELL_CMD(status, NULL, "rate, samples, dropped, buckets", cmd_status),
	SHELL_CMD(dump, NULL, "stop and print the samples (CPDUMP ... E N CRC)", cmd_dump),
	SHELL_SUBCMD_SET_END);

SHELL_CMD_REGISTER(codeplace, &sub_codeplace, "codeplace on-target profiler", NULL);
