/*
 * The shimtrace command's every verb the session daemon handles (cmd_control.c).
 */
#ifndef ST_CLI_CMD_CONTROL_H
#define ST_CLI_CMD_CONTROL_H

#include "ctl/common/cli.h"

/* Runs verb v (argv[0] is its name): the command's exit status. */
int st_cmd_control(const struct st_verb *v, int argc, char **argv);

#endif
