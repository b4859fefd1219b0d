/*
 * Which events a command shows (filter.c): a process, a thread, event
 * names (globs over provider:name) and a time range, the same for view,
 * every report and the export.
 */
#ifndef ST_REPORT_FILTER_H
#define ST_REPORT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/reader.h"

#define ST_FILTER_PATTERNS 16

struct st_filter {
	int32_t pid, tid; /* -1: any */
	const char *patterns[ST_FILTER_PATTERNS]; /* -e: any of them */
	uint32_t npatterns;
	/* --time-range: each end relative to the trace's first event (ns),
	 * or absolute (wall clock, ns since the epoch), or a time of day
	 * (ns since local midnight, on the first event's day) */
	bool range;
	struct st_filter_end {
		enum { ST_END_NONE, ST_END_REL, ST_END_ABS, ST_END_DAY } kind;
		int64_t ns;
	} from, to;
	/* (resolved at the first event: absolute bounds, and per event class
	 * whether a pattern matches: 0 unknown, 1 no, 2 yes) */
	bool resolved;
	int64_t lo, hi;
	uint8_t *cls;
	uint32_t ncls;
};

/* An empty filter: everything. */
void st_filter_init(struct st_filter *f);
void st_filter_fini(struct st_filter *f);

/*
 * --time-range FROM,TO: each end "+1.5s" or "1.5" (seconds after the
 * trace's first event; ms, us and ns suffixes too), "2026-11-27
 * 01:58:53.38" (local wall-clock time, as view prints it), or "01:58:53.38"
 * (a time of the first event's day); either end may be empty. 0, or -1
 * with the problem in err.
 */
int st_filter_range(struct st_filter *f, const char *arg, char *err, size_t errlen);
/* -e PATTERN: 0, or -1 with the problem in err (a bad glob, too many). */
int st_filter_pattern(struct st_filter *f, const char *pattern, char *err, size_t errlen);

/* Whether ev passes; first_ns: the trace's first event's time. */
bool st_filter_event(struct st_filter *f, const struct st_event *ev, int64_t first_ns);
/* Whether the filter names anything (then an empty result is said). */
bool st_filter_any(const struct st_filter *f);

#endif
