/*
 * What every report shares: the options, one pass over a trace that feeds
 * the symboliser and a report's own handler, what the pass learnt about
 * the trace (events, losses, whether it is whole, process names), and
 * the formatting of times and counts.
 */
#ifndef ST_REPORT_REPORT_H
#define ST_REPORT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/escape.h"
#include "ctl/reader/reader.h"
#include "ctl/report/symbols.h"

struct st_report_opts {
	const char *dir;
	const char *sort; /* NULL: the report's default */
	uint32_t top;	  /* rows shown; 0: all */
	int32_t pid;	  /* -1: every process */
	bool json;
};

struct st_proc_name {
	int32_t pid;
	char name[32];			/* as the trace says: data (JSON) */
	char text[ST_ESC_SIZE(31)];	/* escaped, for text */
};

/* A process that ended without exiting (shimtrace:process_end, exited 0:
 * killed, crashed, or _exit without the proc family). */
struct st_proc_unexited {
	int32_t pid;
	uint32_t threads; /* held a buffer at the end: each may have lost one event */
};

/* What one pass over the trace saw, besides what the report keeps. */
struct st_pass {
	const char *dir;
	uint64_t events, lost;
	int64_t first_ns; /* the first event's time */
	const char *incomplete; /* why the trace is not whole, or NULL */
	struct st_proc_name *names;
	uint32_t nnames, names_cap;
	uint32_t processes;
	/* of the selected processes (opts->pid), in the order they ended */
	struct st_proc_unexited *unexited;
	uint32_t nunexited, unexited_cap;
	struct st_syms *syms;
};

typedef int (*st_report_fn)(void *ctx, const struct st_event *ev);

/*
 * Reads the trace in opts->dir, in time order, feeding every event to the
 * symboliser and, when it belongs to a selected process (opts->pid), to
 * fn(ctx, ev). Returns 0, or -1 with a one-line message in err (an
 * unreadable or corrupt trace, out of memory, fn's failure).
 */
int st_report_pass(const struct st_report_opts *opts, st_report_fn fn, void *ctx,
		   struct st_pass *pass, char *err, size_t errlen);
void st_pass_fini(struct st_pass *pass);

/* The name of process pid ("?" when unknown): as the trace holds it, for
 * JSON, or escaped for text (ctl/escape.h). */
const char *st_pass_name(const struct st_pass *pass, int32_t pid);
const char *st_pass_name_text(const struct st_pass *pass, int32_t pid);

/* The trace's notes for people: losses, an incomplete trace, processes
 * that ended without exiting. */
void st_pass_warnings(const struct st_pass *pass, FILE *out);
/* Of those, only the processes that ended without exiting, each line
 * after prefix (record's summary, which counts losses itself). */
void st_pass_end_warnings(const struct st_pass *pass, const char *prefix, FILE *out);

/* The most recent trace in the working directory (record's default
 * names): 0 with its name in buf, or -1. */
int st_report_latest(char *buf, size_t n);

/* Times from a trace are untrusted: arithmetic on them must not overflow.
 * The nanoseconds from `from` to `to`, 0 when to is not after from. */
static inline uint64_t st_ns_since(int64_t from, int64_t to)
{
	return to > from ? (uint64_t)to - (uint64_t)from : 0;
}

/* ns plus d nanoseconds, at most INT64_MAX. */
static inline int64_t st_ns_after(int64_t ns, uint64_t d)
{
	int64_t r;

	return __builtin_add_overflow(ns, d, &r) || d > INT64_MAX ? INT64_MAX : r;
}

/* Grows the array *v (of *cap elements of size sz, n in use) to hold one
 * more; 0, or -1 when out of memory (*v unchanged). */
int st_grow(void *v, uint32_t *cap, uint32_t n, size_t sz);

/* The entry of a table kept per event class (by st_event_class.index) in
 * *v, of *n entries of size sz, grown and zero-filled to hold index; NULL
 * when out of memory. */
void *st_class_slot(void *v, uint32_t *n, size_t sz, uint32_t index);

/* What an event class's name means to a report (an action, a kind). */
struct st_meaning {
	const char *name; /* "provider:name" */
	int what;
};

/* What name means in table (n entries), or dflt when it is not there. */
int st_meaning_of(const char *name, const struct st_meaning *table, size_t n, int dflt);

/* Durations bucketed for percentiles: 16 exact buckets below 16, then 8
 * per power of two (a percentile within 1/8 of the true value). */
#define ST_HIST_BUCKETS (64 * 8)
uint32_t st_hist_bucket(uint64_t v);
/* The value below which a fraction q (0..1) of the n values counted in
 * hist fall (a bucket's upper bound, at most max); 0 when n is 0. */
uint64_t st_hist_percentile(const uint32_t *hist, uint64_t n, uint64_t max, double q);

/* A duration for people: "0", "850ns", "12.4us", "3.21ms", "1.52s". */
const char *st_fmt_ns(uint64_t ns, char *buf, size_t n);

/* The start of a report's JSON object: {"trace": DIR, "events": N,
 * "lost": N, "incomplete": WHY or null, "ended_without_exit": [{"pid":
 * N, "name": NAME, "threads": N}...] (what follows starts with a comma). */
void st_pass_json_head(const struct st_pass *pass, FILE *out);

/* A call site of process pid as text ("function (file:line)"...), or as a
 * JSON object {text, function, file, line, object, offset, ip}. */
void st_site_text(struct st_syms *syms, int32_t pid, uint64_t ip, char *buf, size_t n);
void st_site_json(struct st_syms *syms, int32_t pid, uint64_t ip, FILE *out);

#endif
