/*
 * shimtrace top's figures (locktop.c): a trace followed while it is
 * written (st_reader_follow), its events fed in time order, through the
 * pass every report makes (pass.h), to one lock statistics over the whole
 * run (lockstat.h, as report locks keeps them: the same lock identity,
 * contended acquisitions and waits); at each refresh, what changed since
 * the previous one, from a copy of each lock's counters, with its waits
 * broken down by call site and thread.
 *
 *	st_top_init(&t, dir, pid, err, n);
 *	each refresh:
 *		st_top_read(&t, &how, err, n);  (what was added to the trace)
 *		show t.rows, t.nrows; the trace's state in t.state
 *		st_top_next(&t);                (the next interval begins)
 *	st_top_fini(&t);
 *
 * Condition variables and Object.wait are left out (a thread waiting in
 * one idles; report locks lists them apart). A Java monitor is a lock
 * among the others, with its contended enters only (lockstat.h). What cannot be shown is counted: the
 * events the trace lost, the bytes written but not read yet (behind), the
 * events that came after later ones had been shown (late: fed out of
 * time order), the parts skipped as damaged.
 */
#ifndef ST_REPORT_LOCKTOP_H
#define ST_REPORT_LOCKTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/reader.h"
#include "ctl/report/lockstat.h"
#include "ctl/report/map.h"
#include "ctl/report/pass.h"

/* A lock's figures over the interval or the whole run. */
struct st_top_figs {
	uint64_t wait, contended, acquired, hold;
	/* its waits: the call site and the thread that waited longest, and
	 * how many sites and threads waited */
	uint64_t site_ip, site_wait;
	uint32_t sites;
	int32_t tid;
	uint64_t tid_wait;
	uint32_t threads;
};

/* A lock that was contended in the run, or that a thread waits for. */
struct st_top_row {
	uint32_t lock; /* index in t->ls.locks */
	struct st_top_figs iv, run;
	/* now: the threads that hold it (one of them: holder), and that wait
	 * for it */
	uint32_t holders, waiting;
	int32_t holder;
};

/* How a refresh reads the trace. */
struct st_top_how {
	int64_t lag_ns, quiet_ns; /* st_reader_follow_limit's */
	double budget_s;	  /* reading stops after this long (0: never) */
};

/* Where the followed trace is. */
struct st_top_state {
	bool waiting;	/* no metadata yet: nothing written */
	bool finished;	/* read to its end, and it will not grow */
	bool cut;	/* the last read stopped at its budget */
	int64_t from_ns, to_ns; /* the interval's events: after from, up to to */
	uint64_t events, lost, late, behind;
	uint32_t damaged;
	char damage[512];     /* the first part skipped as damaged */
	char incomplete[256]; /* why the finished trace is not whole, or "" */
};

/* The waits of an interval or of the run, by (lock, site) and (lock,
 * thread). */
struct st_top_waits {
	struct st_map site_ix, thread_ix;
	struct st_top_wait {
		uint32_t lock;
		bool site;    /* by site: key is its ip; else the thread's tid */
		uint64_t key;
		uint64_t waits, wait;
	} *v;
	uint32_t n, cap;
};

/* The counters of a lock at the previous refresh. */
struct st_top_snap {
	uint64_t contended, wait_total, acquired, hold_total;
};

struct st_top {
	struct st_report_opts opts;
	struct st_pass pass;
	struct st_lockstat ls;
	struct st_follow *follow;
	struct st_top_waits iv, run;
	struct st_top_snap *snap; /* by lock */
	uint32_t nsnap, snap_cap;
	struct st_top_row *rows;
	uint32_t nrows, rows_cap;
	struct st_top_state state;
};

/* Follows the trace in dir, of every process (pid -1) or of one; 0, or
 * -1 with the reason in err. t holds pointers to itself: not copied. */
int st_top_init(struct st_top *t, const char *dir, int32_t pid, char *err, size_t errlen);
void st_top_fini(struct st_top *t);

/* Reads what was added to the trace, and makes t->rows: 0, or -1 with
 * the reason in err (a trace that cannot be read, out of memory). */
int st_top_read(struct st_top *t, const struct st_top_how *how, char *err, size_t errlen);

/* The next interval begins: the interval figures of the next read count
 * from here. 0, or -1 when out of memory. */
int st_top_next(struct st_top *t);

#endif
