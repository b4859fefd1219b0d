/*
 * A progress line on standard error while a long pass reads a trace
 * (progress.c), for export and the reports:
 *
 *	shimtrace export: 41% (9.4M events, 1.2 GB of 2.9 GB read)
 *
 * The fraction is of the stream files' bytes read (st_reader_bytes_read).
 * Nothing shows in the pass's first second, and then at most a few
 * updates a second: on a terminal the line is rewritten in place and
 * cleared at the end, so the output that follows is clean; forced on
 * another file (--progress), each update is a line of its own, printed
 * only when the percentage grew, and a pass that showed any ends with its
 * 100% line.
 *
 * The pass calls st_progress_event for every event: one compare, the clock
 * read only every ST_PROGRESS_EVERY events (from a few milliseconds of a
 * report's reading to a tenth of a second of an export's, which writes
 * as it reads): no cost a benchmark sees (a 965k-event export: 0.35 s of
 * user time before and after).
 */
#ifndef ST_REPORT_PROGRESS_H
#define ST_REPORT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct st_reader;

enum st_progress_mode {
	ST_PROGRESS_OFF = 0, /* (what a zeroed st_report_opts says: record's summary) */
	ST_PROGRESS_AUTO,    /* on when standard error is a terminal */
	ST_PROGRESS_ON,	     /* --progress: on, a line per update if not a terminal */
};

#define ST_PROGRESS_EVERY 65536

struct st_progress {
	const char *what;	   /* "export", "report locks": after "shimtrace " */
	bool tty;		   /* rewritten in place (else a line per update) */
	uint64_t next;		   /* the event count at which to look again; UINT64_MAX: off */
	uint64_t every;		   /* events between two looks */
	uint64_t total;		   /* bytes of the stream files */
	int64_t start_ns, last_ns; /* the pass's start, the last update's (CLOCK_MONOTONIC) */
	int64_t after_ns;	   /* shown only after the pass ran this long */
	int64_t interval_ns;	   /* the least time between two updates */
	int shown;		   /* the widest line on the terminal, to clear */
	int percent;		   /* the last one shown; -1: none */
};

/* Starts the progress of the pass that reads r (what: the verb, as
 * above) in mode. */
void st_progress_begin(struct st_progress *p, enum st_progress_mode mode, const char *what,
		       const struct st_reader *r);

void st__progress_look(struct st_progress *p, uint64_t events, const struct st_reader *r);

/* The pass read its events-th event (counted from 1). */
static inline void st_progress_event(struct st_progress *p, uint64_t events,
				     const struct st_reader *r)
{
	if (events == p->next)
		st__progress_look(p, events, r);
}

/* The pass is over (read to the end if whole): the line is cleared, or,
 * line by line, ended with its 100% line. */
void st_progress_end(struct st_progress *p, uint64_t events, const struct st_reader *r,
		     bool whole);

#endif
