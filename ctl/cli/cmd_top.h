/*
 * The shimtrace command's top: a live top of contended locks (cmd_top.c).
 */
#ifndef ST_CLI_CMD_TOP_H
#define ST_CLI_CMD_TOP_H

#include "ctl/common/cli.h"

/* Runs verb v (argv[0] is its name): the command's exit status. */
int st_cmd_top(const struct st_verb *v, int argc, char **argv);

#endif
