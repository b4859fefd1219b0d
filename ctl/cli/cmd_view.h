/*
 * The shimtrace command's view: one line per event (cmd_view.c).
 */
#ifndef ST_CLI_CMD_VIEW_H
#define ST_CLI_CMD_VIEW_H

#include "ctl/common/cli.h"

/* Runs verb v (argv[0] is its name): the command's exit status. */
int st_cmd_view(const struct st_verb *v, int argc, char **argv);

#endif
