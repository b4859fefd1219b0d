/*
 * The shimtrace command's record: run a command and record it (cmd_record.c).
 */
#ifndef ST_CLI_CMD_RECORD_H
#define ST_CLI_CMD_RECORD_H

#include "ctl/common/cli.h"

/* Runs verb v (argv[0] is its name): the command's exit status. */
int st_cmd_record(const struct st_verb *v, int argc, char **argv);

#endif
