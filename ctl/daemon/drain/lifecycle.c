/*
 * Sessions started, stopped and destroyed: what each of these does to the
 * processes a session traces -- enable bits written, the final drains
 * (finish.c), writers waited for (quiesce.c), the trace completed or
 * removed.
 *
 * Life of a session: created (nothing recorded), started (enable bits set),
 * stopped (bits cleared, everything drained, the trace's files complete on
 * disk), started again (new stream files in the same trace, named with the
 * run's number, and a new statedump), destroyed. A process keeps its
 * buffer pool for a session across stop and start.
 *
 * Owns: nothing kept: a session's start, stop and destruction, carried out
 *       on the model.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, drain, model, objects, out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/drain/finish.h"
#include "ctl/daemon/drain/lifecycle.h"
#include "ctl/daemon/drain/procconn.h"
#include "ctl/daemon/drain/quiesce.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/model/userpool.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/out/relaylive.h"
#include "ctl/daemon/out/trace.h"

/* A relay daemon away when its session is destroyed is waited for this
 * long before what it was not sent is counted as lost. */
#define RELAY_END_WAIT_MS 10000

int st_session_start(struct st_daemon *d, struct st_session *ses, char *err, size_t errlen)
{
	int ret;

	if (ses->active) {
		snprintf(err, errlen, "session '%s' is already started", ses->name);
		return -EALREADY;
	}
	ses->trace.finished = false;
	ret = st_trace_metadata(&ses->trace, &d->clock, true);
	if (ret < 0) {
		snprintf(err, errlen, "cannot write the trace metadata in %s: %s", ses->trace.dir,
			 strerror(-ret));
		return -EIO;
	}
	st_trace_reserve(&ses->trace);
	st_consume_prepare(ses->sb_size);
	ses->active = true;
	ses->runs++;
	ses->state = ST_SESSION_STARTED;
	st_session_mark_active(d);
	for (struct st_proc *p = d->procs; p; p = p->next) {
		struct st_proc_pool *pool = &p->pools[ses->index];

		st_session_apply(d, p);
		/* A process that kept its pool from an earlier run sends no
		 * new one (on_pool gives a new pool its statedump): this run's
		 * files must describe its objects all the same. */
		if (!p->conn.ended &&
		    ((pool->ring.base && pool->generation == ses->generation) ||
		     p->user_gen[ses->index] == ses->generation) &&
		    st_session_traces(ses, p))
			st_statedump_session(d, p, ses->index);
	}
	return 0;
}

/* Closes the session's streams in process p; its pool stays mapped. The
 * streams of a next run declare only the losses these did not. */
static void close_streams(struct st_proc *p, uint32_t s)
{
	struct st_proc_pool *pool = &p->pools[s];

	for (uint32_t i = 0; pool->slots && i < pool->ring.nslots; i++)
		if (pool->slots[i].has_stream) {
			pool->slots[i].lost_said += pool->slots[i].stream.discarded;
			st_stream_close(&pool->slots[i].stream);
			pool->slots[i].has_stream = false;
		}
	if (pool->has_meta) {
		pool->meta_lost_said += pool->meta.discarded;
		st_stream_close(&pool->meta);
		pool->has_meta = false;
	}
	pool->late_streams = 0; /* (the next run's are named with its number) */
}

int st_session_stop(struct st_daemon *d, struct st_session *ses)
{
	uint32_t s = ses->index;
	bool live = false;

	if (!ses->active)
		return -ENOENT;
	/* Processes gone whose end the loop has yet to take are ended first:
	 * the trace then says how they ended (procend.c). */
	st_proc_end_gone(d, true);
	/* Switch the session off everywhere, wait for the writers that
	 * already saw the bit to finish their record, then drain. */
	ses->active = false;
	for (struct st_proc *p = d->procs; p; p = p->next) {
		st_session_apply(d, p);
		live |= !p->conn.ended;
	}
	if (live)
		st_writers_quiesce(d, ses);
	ses->active = true;
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (!p->conn.ended && st_session_covers(ses, p)) {
			st_statedump_owed(d, p);
			st_session_finish_proc(d, p, s);
		}
	for (struct st_user_pool *up = d->user_pools; up; up = up->next)
		if (st_user_pool_serves(up, ses))
			st_session_finish_proc(d, up->holder, s);
	ses->active = false;
	ses->state = ST_SESSION_STOPPED;
	st_session_mark_active(d);
	st_clock_refine(&d->clock);
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (st_session_covers(ses, p))
			close_streams(p, s);
	for (struct st_user_pool *up = d->user_pools; up; up = up->next)
		if (st_user_pool_serves(up, ses))
			close_streams(up->holder, s);
	/* The trace is complete on disk when stop returns, and its final
	 * metadata says what could not be written. */
	st_trace_finish(&ses->trace, &d->clock);
	st_session_take_lost(ses);
	return 0;
}

bool st_session_destroy(struct st_daemon *d, struct st_session *ses)
{
	struct st_session **pp;
	bool removed = false;

	if (ses->active)
		st_session_stop(d, ses);
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (st_session_covers(ses, p))
			st_proc_pool_close(p, ses->index);
	/* never started, nothing written: the directory it made goes too */
	if (ses->state == ST_SESSION_CREATED)
		removed = st_trace_remove_unused(&ses->trace);
	if (ses->relay) {
		/* (its thread sends what is left, then lets go) */
		st_relaylive_end(ses->relay, RELAY_END_WAIT_MS);
		st_relaylive_release(ses->relay);
		ses->relay = NULL;
	}
	st_trace_close(&ses->trace);
	st_user_pools_destroy(d, ses);
	st_memory_session_gone(d, ses);
	for (pp = &d->sessions; *pp != ses; pp = &(*pp)->next)
		;
	*pp = ses->next;
	if (ses->owner != d->uid)
		st_quota_give(st_user_of(ses->owner), ST_Q_SESSIONS, 1);
	/* processes forget the session (their writers see the generation go) */
	for (struct st_proc *p = d->procs; p; p = p->next)
		st_session_apply(d, p);
	free(ses->rules);
	free(ses->stats);
	free(ses);
	return removed;
}
