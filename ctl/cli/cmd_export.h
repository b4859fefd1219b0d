/*
 * The shimtrace command's export: a trace for other viewers (cmd_export.c).
 */
#ifndef ST_CLI_CMD_EXPORT_H
#define ST_CLI_CMD_EXPORT_H

#include "ctl/common/cli.h"

/* Runs verb v (argv[0] is its name): the command's exit status. */
int st_cmd_export(const struct st_verb *v, int argc, char **argv);

#endif
