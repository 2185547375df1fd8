/* The commands, one per src/cmd-<name>.c. Each file defines its cli_cmd
 * (name, function, summary, usage, option table); src/main.c lists them. */
#ifndef CP_COMMANDS_H
#define CP_COMMANDS_H

#include "cli/cli.h"

extern const cli_cmd cmd_image;
extern const cli_cmd cmd_target;
extern const cli_cmd cmd_plan;

#endif
