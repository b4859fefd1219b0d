/*
 * shimtrace report locks and report deadlocks (report_locks.c), and the
 * top of report locks for record's summary.
 */
#ifndef ST_REPORT_REPORT_LOCKS_H
#define ST_REPORT_REPORT_LOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/report/pass.h"

/* Each reads the trace in opts->dir and prints to out; returns 0, or an
 * exit status (1: the trace could not be read, 2: a bad option) with a
 * one-line message in err. */
int st_report_locks(const struct st_report_opts *opts, FILE *out, char *err, size_t errlen);
int st_report_deadlocks(const struct st_report_opts *opts, FILE *out, char *err, size_t errlen);

/* The first n lines of `report locks` for record's summary, each line
 * starting with prefix: the locks threads waited for longest (or none
 * waited) and the lock-order cycles. */
int st_report_locks_top(const char *dir, uint32_t n, const char *prefix, FILE *out, char *err,
			size_t errlen);

#endif
