/*
 * The trace a report reads when none is named (latest.c).
 */
#ifndef ST_REPORT_LATEST_H
#define ST_REPORT_LATEST_H

#include <stddef.h>

/* The most recent trace in the working directory (record's default
 * names): 0 with its name in buf, or -1. */
int st_report_latest(char *buf, size_t n);

#endif
