/*
 * The shimtrace command's report: the analyses of a trace (cmd_report.c).
 */
#ifndef ST_CLI_CMD_REPORT_H
#define ST_CLI_CMD_REPORT_H

#include "ctl/common/cli.h"

/* Runs verb v (argv[0] is its name): the command's exit status. */
int st_cmd_report(const struct st_verb *v, int argc, char **argv);

#endif
