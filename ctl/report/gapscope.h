/*
 * Which processes a gap in the trace touches. A buffer that lost events
 * held the events of one thread (per-thread buffers), of any thread of
 * one process (per-CPU buffers) or of any process of one user (per-user
 * buffers): a report that pairs events (a lock with its unlock) must let
 * every thread it may have held start over at the gap. Which kind of
 * buffer a stream was is not written in the trace, so a stream is taken
 * as one process's while all its events were one process's and its name
 * is not a per-user one (uid...).
 */
#ifndef ST_REPORT_GAPSCOPE_H
#define ST_REPORT_GAPSCOPE_H

#include <stdint.h>

#include "ctl/reader/reader.h"

struct st_gapscope {
	/* per stream (st_stream_info.serial): the one process whose events
	 * it held so far; 0 none yet, -1 several */
	int32_t *pid;
	uint32_t n;
};

/* Notes that event ev was in its stream: 0, or -1 when out of memory. */
int st_gapscope_event(struct st_gapscope *g, const struct st_event *ev);
/* The process whose threads gap touches, or -1: every process's. */
int32_t st_gapscope_pid(const struct st_gapscope *g, const struct st_lost *gap);
void st_gapscope_free(struct st_gapscope *g);

#endif
