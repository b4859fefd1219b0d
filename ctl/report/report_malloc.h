/*
 * shimtrace report malloc (report_malloc.c).
 */
#ifndef ST_REPORT_REPORT_MALLOC_H
#define ST_REPORT_REPORT_MALLOC_H

#include <stddef.h>
#include <stdio.h>

#include "ctl/report/pass.h"

/* Reads the trace in opts->dir and prints to out; returns 0, or an exit
 * status (1: the trace could not be read, 2: a bad option) with a
 * one-line message in err. */
int st_report_malloc(const struct st_report_opts *opts, FILE *out, char *err, size_t errlen);

#endif
