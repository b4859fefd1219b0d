/*
 * The last drain of a process in a session: what its buffers still hold,
 * what it lost for want of a buffer, and its losses in the session's
 * statistics (when the process ended, or the session stops).
 *
 * Owns: nothing kept: it drains and counts into the state of others.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, drain, model, wire.
 */
#include <string.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/drain/finish.h"
#include "ctl/daemon/model/metastream.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/ring.h"

/* Writes what the process lost for want of a buffer, if not yet written. */
static void flush_meta_loss(struct st_daemon *d, struct st_proc *p, uint32_t s)
{
	struct st_proc_pool *pool = &p->pools[s];
	uint64_t lost;

	if (!p->control)
		return;
	lost = st_proc_lost_unbuffered(p, s);
	if (lost > pool->lost_reported) {
		uint64_t ts = st_clock_now(&d->clock);

		st_meta_write(d, p, s, NULL, 0, 0, ts, ts);
	}
}

/* Sets a process's losses in the session's statistics: its counters, which
 * go on across the session's runs (so do the statistics). */
static void account(struct st_session *ses, struct st_proc *p, uint32_t s)
{
	struct st_proc_pool *pool = &p->pools[s];
	struct st_session_stats *st = st_session_stats_for(ses, p, pool->ring.base != NULL);

	if (!st)
		return;
	memset(st->lost_by, 0, sizeof(st->lost_by));
	for (uint32_t i = 0, n = st_ring_slots_used(&pool->ring); i < n; i++) {
		const struct st_abi_slot *slot = st_ring_slot(&pool->ring, i);
		/* (all the slot lost, less overwritten events an earlier run
		 * had written to the trace: st_slot_lost) */
		uint64_t all = st_slot_lost(pool, i), rest;

		st->lost_by[ST_LOSS_FULL] += slot->lost_full;
		st->lost_by[ST_LOSS_NESTED] += slot->lost_nested;
		rest = slot->lost_full + slot->lost_nested;
		st->lost_by[ST_LOSS_OVERWRITTEN] += all > rest ? all - rest : 0;
	}
	if (p->control) {
		st->lost_by[ST_LOSS_NO_BUFFER] = p->control->lost_no_buffer[s];
		st->lost_by[ST_LOSS_NO_MEMORY] = p->control->lost_no_memory[s];
	}
	st->lost = 0;
	for (int k = 0; k < ST_LOSS_KINDS; k++)
		st->lost += st->lost_by[k];
}

/* Final drain of session s in process p (the process ended or s stops). */
void st_session_finish_proc(struct st_daemon *d, struct st_proc *p, uint32_t s)
{
	struct st_session *ses = st_session_at(d, s, p);
	struct st_proc_pool *pool = &p->pools[s];

	if (!ses || !ses->active)
		return;
	if (pool->generation == ses->generation)
		for (uint32_t i = 0, n = st_ring_slots_used(&pool->ring); i < n; i++)
			st_consume_slot(d, p, s, i, ST_DRAIN_FINAL);
	flush_meta_loss(d, p, s);
	account(ses, p, s);
}
