/*
 * The shimtrace command's list-events: the tracepoints of the wrapper families (cmd_events.c).
 */
#ifndef ST_CLI_CMD_EVENTS_H
#define ST_CLI_CMD_EVENTS_H

#include "ctl/common/cli.h"

/* Runs verb v (argv[0] is its name): the command's exit status. */
int st_cmd_list_events(const struct st_verb *v, int argc, char **argv);

#endif
