/*
 * The reports `shimtrace report KIND` runs: each reads the trace in
 * opts->dir and prints to out; returns 0, or an exit status (1: the trace
 * could not be read, 2: a bad option) with a one-line message in err.
 */
#ifndef ST_REPORT_REPORTS_H
#define ST_REPORT_REPORTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/report/report.h"

int st_report_locks(const struct st_report_opts *opts, FILE *out, char *err, size_t errlen);
/* The first n lines of `report locks` for record's summary, each line
 * starting with prefix: the locks threads waited for longest (or none
 * waited) and the lock-order cycles. */
int st_report_locks_top(const char *dir, uint32_t n, const char *prefix, FILE *out, char *err,
			size_t errlen);
int st_report_malloc(const struct st_report_opts *opts, FILE *out, char *err, size_t errlen);
int st_report_io(const struct st_report_opts *opts, FILE *out, char *err, size_t errlen);
struct st_export_opts {
	const char *dir;
	int32_t pid;		/* -1: every process */
	int64_t from_ns, to_ns; /* from the trace's first event; from_ns -1: all */
};

/* The trace as Chrome trace-event JSON on out (export_chrome.c). */
int st_export_chrome(const struct st_export_opts *opts, FILE *out, char *err, size_t errlen);

int st_report_deadlocks(const struct st_report_opts *opts, FILE *out, char *err, size_t errlen);

#endif
