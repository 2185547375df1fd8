/* The commands, one per src/cmd/<name>.c (nested ones in
 * src/cmd/<group>-<name>.c). Each file defines its cli_cmd (name, function,
 * summary, usage, option table); src/main.c lists the top level, and each
 * group (bench, calc) lists its subcommands. */
#ifndef CP_COMMANDS_H
#define CP_COMMANDS_H

#include "cli/cli.h"

extern const cli_cmd cmd_image;
extern const cli_cmd cmd_target;
extern const cli_cmd cmd_trace;
extern const cli_cmd cmd_sim;
extern const cli_cmd cmd_plan;
extern const cli_cmd cmd_apply;
extern const cli_cmd cmd_report;
extern const cli_cmd cmd_samples;
extern const cli_cmd cmd_diff;
extern const cli_cmd cmd_bench;
extern const cli_cmd cmd_bench_udp;
extern const cli_cmd cmd_bench_latency;
extern const cli_cmd cmd_bench_sink;
extern const cli_cmd cmd_bench_usbmon;
extern const cli_cmd cmd_bench_compare;
extern const cli_cmd cmd_bench_echo;
extern const cli_cmd cmd_calc;
extern const cli_cmd cmd_record;
extern const cli_cmd cmd_counters;
extern const cli_cmd cmd_verify;

#endif
