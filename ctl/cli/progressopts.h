/*
 * --progress and --no-progress, of export and the reports
 * (progressopts.c): whether the pass over the trace shows a progress
 * line on standard error (ctl/report/progress.h).
 */
#ifndef ST_CLI_PROGRESSOPTS_H
#define ST_CLI_PROGRESSOPTS_H

#include <stdbool.h>

#include "ctl/common/cli.h"
#include "ctl/report/progress.h"

/* If o is one of them: sets *mode, true; false when it is another. */
bool st_progress_opt(const struct st_opt *o, enum st_progress_mode *mode);

/* Their entries in a verb's option table. */
#define ST_PROGRESS_OPTS                                                                      \
	{ "progress", 0, NULL,                                                                \
	  "show progress on standard error, a line per update when it is not a terminal",     \
	  "Without it, a reading of the trace that lasts more than a second is shown, when "  \
	  "standard error is a terminal, by a line updated in place a few times a second "    \
	  "and cleared at the end: \"shimtrace export: 41% (9.4M events, 1.2 GiB of 2.7 GiB " \
	  "read)\", the share of the trace's stream files read. With it, on any standard "    \
	  "error: on one that is not a terminal (a log), each update is a line of its own, "  \
	  "printed when the percentage grew, the last one 100%; none in the first second "    \
	  "either way." },                                                                     \
	{ "no-progress", 0, NULL, "show no progress line", NULL },

#endif
