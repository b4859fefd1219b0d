/*
 * A trace as a timeline, whatever the file format (timeline.c): the one
 * pass that the exports share, which decides what is drawn, and calls a
 * format's sink for each thing to draw, in trace order:
 *   - a thread seen for the first time (and its process), and again
 *     when a jvm:thread_start gives it its Java name;
 *   - a span on a thread's track: a lock's wait (from the call's start,
 *     for its wait_ns), a Java monitor's contended enter and Object.wait
 *     (from the begin event to the end event), a condition wait, any call with a duration (I/O,
 *     joins...; from its entry event when it has one), with the call
 *     stack of the thread's last wait event or of the call itself; they
 *     nest (one call at a time), cut where the times of their records
 *     made one cross another (timeline.c: span);
 *   - a hold, from the acquisition to the unlock, on a track of its own
 *     for each thread and lock (hand-over-hand locking overlaps holds
 *     without nesting them): written at the unlock, whole; a recursive
 *     lock's first hold only; the holds open at a gap of their thread are
 *     cut, unwritten (the unlock may be what was lost: gapscope.h);
 *   - an instant for every other event (allocations, thread_create...).
 * --pid and --time-range select what is drawn; a sink that follows state
 * (the heap's size) sees every event beside (each).
 */
#ifndef ST_REPORT_TIMELINE_H
#define ST_REPORT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/reader.h"
#include "ctl/report/progress.h"

struct st_pass;

struct st_export_opts {
	const char *dir;
	int32_t pid;		/* -1: every process */
	int64_t from_ns, to_ns; /* from the trace's first event; from_ns -1: all */
	enum st_progress_mode progress; /* a progress line while it reads */
};

/* The pass under way: what a sink may ask it (st_tl_*). */
struct st_tl;

struct st_tl_span {
	const struct st_event *ev; /* the call's event: its fields, its site */
	const char *cat;	   /* "lock", "io" or "call" */
	/* "wait mutex 0x...", "wait monitor of CLASS at SITE", or the
	 * event's name */
	const char *name;
	int64_t start;		   /* ns */
	uint64_t dur;		   /* ns */
	/* the callers above the call site, innermost first (return
	 * addresses: the call is one byte back); nstack 0: none known */
	const uint64_t *stack;
	uint32_t nstack;
};

struct st_tl_hold {
	const struct st_event *ev; /* the unlock that ended it */
	const char *what;	   /* "hold mutex 0x..." */
	uint64_t track;		   /* 1, 2...: one for each thread and lock */
	int64_t since;		   /* the acquisition, ns */
	uint64_t ip;		   /* where the lock was taken */
};

/* What the pass read, for a format's trailer. */
struct st_tl_totals {
	const char *dir;
	uint64_t events, lost;
	uint64_t holds_cut; /* open at a gap: not written */
	/* spans and holds cut where they crossed the edge of another, or
	 * ended before they began: the times of their records disagreed */
	uint64_t time_cut;
};

/* A format. Each call returns 0, or -1 when out of memory. */
struct st_tl_sink {
	/* the first drawn event of its thread (new_process: of its process);
	 * name: its Java name (jvm:thread_start), NULL when it has none;
	 * called again, new_process false, when that name comes later */
	int (*thread)(void *ctx, struct st_tl *tl, const struct st_event *ev, bool new_process,
		      const char *name);
	int (*span)(void *ctx, struct st_tl *tl, const struct st_tl_span *s);
	int (*hold)(void *ctx, struct st_tl *tl, const struct st_tl_hold *h);
	/* name: the event's name without its provider */
	int (*instant)(void *ctx, struct st_tl *tl, const struct st_event *ev, const char *name);
	/* if not NULL: every event of the selected processes, after the
	 * calls above (shown: whether it is drawn) */
	int (*each)(void *ctx, struct st_tl *tl, const struct st_event *ev, bool shown);
	/* after the pass, whether or not it could read the trace */
	void (*end)(void *ctx, const struct st_tl_totals *t);
	/* bytes written for each byte of the trace's streams, about: a
	 * timeline of more than 1 GB is said before it is written */
	uint32_t bytes_per_trace_byte;
};

/*
 * Reads the trace in opts->dir and draws it with sink (ctx: its state).
 * Returns 0; 1 when the trace could not be read or holds nothing to draw
 * (the range missed it), with a one-line message in err; or 3 when it
 * was drawn but parts of the trace were skipped as damaged (said on
 * stderr, with the trace's other warnings).
 */
int st_timeline_write(const struct st_export_opts *opts, const struct st_tl_sink *sink, void *ctx,
		      char *err, size_t errlen);

/* The time of the first event drawn (ns). */
int64_t st_tl_t0(const struct st_tl *tl);
/* The pass: process names (st_pass_name), symbols (pass->syms). */
const struct st_pass *st_tl_pass(const struct st_tl *tl);
/* The call site ip of process pid as the reports show it ("function
 * (file:line)"), made once; NULL when ip is 0 or out of memory. */
const char *st_tl_site(struct st_tl *tl, int32_t pid, uint64_t ip);

#endif
