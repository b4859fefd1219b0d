/*
 * The pass over a trace that every report makes (pass.c): the options of
 * a report, one pass over the trace that feeds the symboliser and the
 * report's own handler, and what the pass learnt about the trace (events,
 * losses, whether it is whole, process names) and how a report says it.
 */
#ifndef ST_REPORT_PASS_H
#define ST_REPORT_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/common/escape.h"
#include "ctl/reader/reader.h"
#include "ctl/report/gapscope.h"
#include "ctl/report/progress.h"

struct st_syms;
struct st_filter;

struct st_report_opts {
	const char *dir;
	const char *sort; /* NULL: the report's default */
	uint32_t top;	  /* rows shown; 0: all */
	int32_t pid;	  /* -1: every process */
	bool json;
	bool stack; /* report locks: call sites told apart by their stacks */
	/* the provider whose events the report reads (NULL: any), and how a
	 * trace gets them: a trace without any is an error, not an empty
	 * report */
	const char *family, *family_how;
	/* if not NULL: set to the parts of the trace skipped as damaged (the
	 * caller's exit status says so) */
	uint32_t *damaged;
	/* if not NULL: only the events it passes (--tid, -e, --time-range;
	 * filter.h), beside pid above */
	struct st_filter *filter;
	/* a progress line on stderr while the pass reads (progress.h), of
	 * "shimtrace WHAT: ..."; OFF when zeroed */
	enum st_progress_mode progress;
	const char *progress_what;
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

/* What the pass knows of each event class of a reader's metadata, found
 * once (pass.c). */
struct st_pass_classes {
	/* the classes of process names and ends (UINT32_MAX: none; one
	 * without the fields read is not ours), and those fields */
	uint32_t process, end;
	int name_field, exited_field, threads_field;
	/* the lock order of Java monitors was recorded: the metadata
	 * declares jvm:monitor_held (one came), or the trace's rules enabled
	 * it (shimtrace_rules in its env), or they are not known (record
	 * leaves it out unless asked: ctl/common/catalog_defaults.c) */
	bool monitor_order;
	uint32_t n;  /* classes in the metadata */
	uint8_t *of; /* by st_event_class.index: what each is to the pass */
};

/* What one pass over the trace saw, besides what the report keeps. */
struct st_pass {
	const char *dir;
	uint64_t events, lost;
	uint64_t stream_bytes; /* of the trace's stream files */
	int64_t first_ns, last_ns; /* the first and the last event's times */
	const char *incomplete; /* why the trace is not whole, or NULL */
	/* parts of it skipped as damaged (st_reader_damage), and how many */
	char **damage;
	uint32_t ndamage, damaged;
	struct st_proc_name *names;
	uint32_t nnames, names_cap;
	uint32_t processes;
	/* of the selected processes (opts->pid), in the order they ended */
	struct st_proc_unexited *unexited;
	uint32_t nunexited, unexited_cap;
	struct st_syms *syms;
	/* the pass's own, between its items (st_pass_item) */
	const struct st_report_opts *opts;
	struct st_filter *filter; /* NULL when it would pass every event */
	struct st_pass_classes cls;
	struct st_gapscope scope; /* which processes a gap touches */
	bool saw_family, saw_pid, saw_filtered;
};

typedef int (*st_report_fn)(void *ctx, const struct st_event *ev);
/* A gap in the trace: events its stream lost, between two it holds; pid:
 * the process whose threads it may touch, -1 for every process's (the
 * pass works it out: ctl/report/gapscope.h). */
typedef int (*st_report_gap_fn)(void *ctx, const struct st_lost *gap, int32_t pid);

/*
 * Reads the trace in opts->dir, in time order, feeding every event to the
 * symboliser and, when it belongs to a selected process (opts->pid), to
 * fn(ctx, ev); and, if gap is not NULL, every gap to gap(ctx, lost, pid),
 * in its place among the events (whatever process it names: a buffer may
 * hold the events of several). Returns 0, or -1 with a one-line message
 * in err (an unreadable or corrupt trace, out of memory, a handler's
 * failure; no event of opts->pid, or of opts->family, in the trace).
 */
int st_report_pass(const struct st_report_opts *opts, st_report_fn fn, st_report_gap_fn gap,
		   void *ctx, struct st_pass *pass, char *err, size_t errlen);
void st_pass_fini(struct st_pass *pass);

/*
 * The pass in parts, for a trace read by one reader after another (a
 * followed trace, `shimtrace top`): st_pass_begin once; st_pass_reader
 * for each reader, before its items; st_pass_item for each item, in time
 * order, which feeds fn and gap as st_report_pass does; st_pass_fini at
 * the end. Each returns 0, or -1 when out of memory (st_pass_begin says
 * so in err) or when fn or gap failed.
 */
int st_pass_begin(struct st_pass *pass, const struct st_report_opts *opts, char *err,
		  size_t errlen);
int st_pass_reader(struct st_pass *pass, const struct st_reader *r);
int st_pass_item(struct st_pass *pass, const struct st_item *it, st_report_fn fn,
		 st_report_gap_fn gap, void *ctx);

/* The name of process pid ("?" when unknown): as the trace holds it, for
 * JSON, or escaped for text (ctl/common/escape.h). */
const char *st_pass_name(const struct st_pass *pass, int32_t pid);
const char *st_pass_name_text(const struct st_pass *pass, int32_t pid);

/* The trace's notes for people: losses, an incomplete trace, damaged
 * parts skipped, processes
 * that ended without exiting. */
void st_pass_warnings(const struct st_pass *pass, FILE *out);
/* Of those, only the processes that ended without exiting, each line
 * after prefix (record's summary, which counts losses itself). */
void st_pass_end_warnings(const struct st_pass *pass, const char *prefix, FILE *out);

/* The start of a report's JSON object: {"trace": DIR, "events": N,
 * "lost": N, "incomplete": WHY or null, "damaged": N, "damage": [WHAT,
 * ...] (parts skipped as damaged), "ended_without_exit": [{"pid": N,
 * "name": NAME, "threads": N}...] (what follows starts with a comma). */
void st_pass_json_head(const struct st_pass *pass, FILE *out);

#endif
