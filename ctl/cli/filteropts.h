/*
 * The options that choose which events view and the reports show
 * (filteropts.c): --tid, -e PATTERN, --time-range FROM,TO.
 */
#ifndef ST_CLI_FILTEROPTS_H
#define ST_CLI_FILTEROPTS_H

#include "ctl/common/cli.h"
#include "ctl/report/filter.h"

/* o with arg into f, if it is one of them: 1; 0 when it is another; -1
 * (said, for verb) when its argument is bad. */
int st_filter_opt(const char *verb, const struct st_opt *o, const char *arg, struct st_filter *f);

/* Their entries in a verb's option table. */
#define ST_FILTER_OPTS                                                                        \
	{ "tid", 0, "TID", "only this thread's events", NULL },                               \
	{ "event", 'e', "PATTERN",                                                            \
	  "only the events whose provider:name the glob PATTERN matches (repeatable)", NULL }, \
	{ "time-range", 't', "FROM,TO",                                                       \
	  "only the events from FROM to TO: +SECONDS after the trace's first event (+1.5s, "  \
	  "+200ms), a local time YYYY-MM-DD HH:MM:SS[.frac] or HH:MM:SS[.frac] (of the first "  \
	  "event's day); either may be empty",                                                \
	  NULL },

#endif
