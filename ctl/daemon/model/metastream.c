/*
 * The streams of the records the daemon writes for a process (its meta
 * streams: statedump, process events, what it lost for want of a buffer),
 * and the names of every stream file of a process.
 *
 * Owns: each process's meta streams in the traces of its sessions.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: model, out.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl/daemon/model/metastream.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/out/trace.h"

/*
 * A process that lives across a stop and a start keeps its buffers and its
 * instance number, and the trace directory keeps the first run's files:
 * each later run names its files with its number, never one of a file
 * that exists (stream files are created with O_EXCL).
 */
void st_stream_name(char *buf, size_t len, const struct st_proc *p, uint32_t run, const char *fmt,
		    ...)
{
	va_list ap;
	int n;

	if (p->user_pool) /* (a user's buffers: userpool.c) */
		n = snprintf(buf, len, "uid%u-%llu-", (unsigned)p->uid,
			     (unsigned long long)p->instance);
	else
		n = snprintf(buf, len, "pid%d-%llu-", p->pid, (unsigned long long)p->instance);
	if (n >= 0 && (size_t)n < len && run > 1)
		n += snprintf(buf + n, len - (size_t)n, "run%u-", run);
	if (n < 0 || (size_t)n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
}

/*
 * The daemon's events for p are dated when what they describe happened:
 * a library's load before its constructors ran. Within the process's meta
 * stream time never goes back, so a batch dated before what the stream
 * already holds (dlopens in two threads, a load-probe during a dlopen)
 * goes into a stream of its own, where it keeps its date; at most
 * LATE_STREAMS of those per process and session, then the date is moved
 * up to the stream's (a process could otherwise make files without end).
 */
#define LATE_STREAMS 64

static int late_write(struct st_session *ses, struct st_proc *p, struct st_proc_pool *pool,
		      uint8_t *buf, uint64_t len, uint64_t events, uint64_t ts_begin, uint64_t ts_end)
{
	struct st_stream late;
	char name[64];
	int ret;

	st_stream_name(name, sizeof(name), p, ses->runs, "meta%u", ++pool->late_streams);
	ret = st_stream_open(&ses->trace, &late, name, p->pid, p->instance);
	if (ret < 0)
		return ret;
	ret = st_stream_packet(&ses->trace, &late, buf, len, events, ts_begin, ts_end, 0);
	st_stream_close(&late);
	return ret;
}

int st_meta_write(struct st_daemon *d, struct st_proc *p, uint32_t s, const uint8_t *records,
		  uint64_t len, uint64_t events, uint64_t ts_begin, uint64_t ts_end)
{
	struct st_session *ses = st_session_at(d, s, p);
	struct st_proc_pool *pool = &p->pools[s];
	struct st_session_stats *stats;
	uint8_t *buf = st_packet_buf(len);
	uint64_t lost;
	char name[64];
	int ret;

	if (!ses || !buf)
		return -ENOENT;
	if (len)
		memcpy(buf, records, len);
	stats = st_session_stats_for(ses, p, true);
	/* (those lost writing are counted as such) */
	if (stats)
		stats->events += events;
	if (pool->has_meta && ts_begin < pool->meta.last_ts && pool->late_streams < LATE_STREAMS)
		return late_write(ses, p, pool, buf, len, events, ts_begin, ts_end);
	if (!pool->has_meta) {
		st_stream_name(name, sizeof(name), p, ses->runs, "meta");
		st_stream_open(&ses->trace, &pool->meta, name, p->pid, p->instance);
		pool->has_meta = true;
	}
	/* Events lost for want of a buffer are counted on this stream (those
	 * of earlier runs were said by theirs). */
	lost = st_proc_lost_unbuffered(p, s);
	ret = st_stream_packet(&ses->trace, &pool->meta, buf, len, events, ts_begin, ts_end,
			       lost > pool->meta_lost_said ? lost - pool->meta_lost_said : 0);
	pool->lost_reported = lost;
	return ret;
}

