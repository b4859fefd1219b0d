/*
 * Snapshots of an overwrite-mode session (flight recorder): what the ring
 * buffers hold now, written as a trace of its own beside the session's
 * (OUTPUT-snapshot-N: not inside it, where readers that look into
 * subdirectories would take it for part of the session's trace) while
 * recording goes on. Each is a new directory, made from the descriptor of
 * the directory that held OUTPUT when the session was created; a name
 * taken by anyone is passed by for the next N (st_trace_open_snapshot).
 *
 * The producers keep writing during the copy. Each sub-buffer is copied
 * oldest first, and a copy is kept only if the sub-buffer's sequence number
 * is unchanged after it (the producer writes a new sequence number before
 * new data): what the snapshot holds is whole records, in order. The
 * session's own consumer state is not touched. Each process's snapshot
 * starts with its statedump, so the snapshot is symbolised on its own.
 *
 * Owns: nothing kept: a snapshot is written and closed in one call.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: cmd, drain, model, objects, out, wire.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/common/control.h"
#include "ctl/common/escape.h"
#include "ctl/daemon/base/limits.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/cmd/snapshot.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/model/metastream.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/model/userpool.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/out/tracefile.h"
#include "ctl/daemon/wire/request.h"
#include "ctl/daemon/wire/ring.h"

/* Copies one slot's ring into stream; returns the events copied. */
static uint64_t snapshot_slot(struct st_daemon *d, struct st_proc *p, struct st_proc_pool *pool,
			      uint32_t i, struct st_trace *t, struct st_stream *stream)
{
	uint64_t (*order)[2], events = 0;
	int n = st_ring_order(&pool->ring, i, &order);

	for (int k = 0; k < n; k++) {
		/* (a sub-buffer begins with its thread and time) */
		struct st_ring_pos pos = { 0, 0, 0 };
		uint64_t off = 0;

		events += st_emit_subbuf(d, p, t, stream, &pool->ring, i, (uint32_t)order[k][1],
					 order[k][0], &off, &pos, 0, NULL);
	}
	free(order);
	return events;
}

/* Copies every slot of p's pool (or the user's pool p holds) into
 * streams of t; returns the events copied. */
static uint64_t snapshot_pool(struct st_daemon *d, struct st_proc *p, struct st_proc_pool *pool,
			      struct st_trace *t)
{
	uint64_t events = 0;
	char name[64];

	for (uint32_t i = 0, used = st_ring_slots_used(&pool->ring); i < used; i++) {
		struct st_stream s;

		st_stream_name(name, sizeof(name), p, 1, "buf%u", i);
		if (st_stream_open(t, &s, name, p->pid, p->instance) < 0)
			continue;
		events += snapshot_slot(d, p, pool, i, t, &s);
		st_stream_close(&s);
	}
	return events;
}

int st_cmd_snapshot(struct st_daemon *d, struct st_request *r, struct st_session *ses)
{
	char err[512], name[64], text[ST_ESC_SIZE(ST_PATH_MAX)];
	uint64_t events = 0, lost;
	uint32_t procs = 0;
	struct st_trace t;
	int werr;

	if (ses->mode != ST_MODE_OVERWRITE)
		return st_reply_error(r, ST_EXIT_FAIL,
				      "shimtrace snapshot: session '%s' is not in overwrite mode "
				      "(create it with --overwrite)",
				      ses->name);
	if (st_trace_open_snapshot(&t, &ses->trace, &ses->snapshots, err, sizeof(err)) < 0)
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace snapshot: %s", err);
	if (st_trace_metadata(&t, &d->clock, true) < 0) {
		st_trace_close(&t);
		return st_reply_error(r, ST_EXIT_FAIL, "shimtrace snapshot: cannot write the metadata");
	}
	st_trace_reserve(&t);
	for (struct st_proc *p = d->procs; p; p = p->next) {
		struct st_proc_pool *pool = &p->pools[ses->index];
		bool own = pool->ring.base && pool->generation == ses->generation &&
			   st_ring_slots_used(&pool->ring);
		struct st_stream meta;

		if (!own && p->user_gen[ses->index] != ses->generation)
			continue; /* (writes no buffer of the session's) */
		procs++;
		/* (a trace of its own: the names of a first run) */
		st_stream_name(name, sizeof(name), p, 1, "meta");
		if (st_stream_open(&t, &meta, name, p->pid, p->instance) == 0) {
			st_statedump_into(p, &t, &meta, p->objects.statedump_ts);
			st_stream_close(&meta);
		}
		if (own)
			events += snapshot_pool(d, p, pool, &t);
	}
	/* the buffers of its users (--buffers per-user) */
	for (struct st_user_pool *up = d->user_pools; up; up = up->next)
		if (st_user_pool_serves(up, ses))
			events += snapshot_pool(d, up->holder, &up->holder->pools[ses->index], &t);
	st_trace_finish(&t, &d->clock);
	lost = st_tracefile_lost_total(&t.wloss, &werr);
	st_trace_close(&t);
	st_reply(r, "snapshot of session %s: %llu events from %u processes in %s\n", ses->name,
		 (unsigned long long)(events - (lost < events ? lost : events)), procs,
		 st_esc(text, sizeof(text), t.dir));
	if (lost)
		st_reply(r, "snapshot of session %s: %llu events lost writing it (%s)\n", ses->name,
			 (unsigned long long)lost, strerror(werr));
	return ST_EXIT_OK;
}
