/*
 * The consumer: moves committed events from a process's ring buffers into
 * the session's trace.
 *
 * Discard mode, for each slot, sub-buffers are emitted in sequence order:
 * a closed sub-buffer whole (then it is given back to the producer), the
 * open one up to its commit count when flushing (periodically, at stop,
 * and when the process is gone: a process killed with SIGKILL loses
 * nothing it committed). The slot's cursor remembers how much of the
 * current sub-buffer was already emitted, so a flushed sub-buffer is
 * continued, not repeated.
 *
 * Overwrite mode (flight recorder), at the end: the sub-buffers still held
 * are emitted in sequence order, oldest first, each kept only if the
 * producer did not reuse it during the copy.
 *
 * Shared memory is read through ring.c alone. Every range is copied out
 * of shared memory first and validated in the
 * copy (the process could change the original under us): each record must
 * carry an event id of this process (an index in p->cls) and a payload that
 * fits; the id is replaced by the trace's id of the class (declared in the
 * trace's metadata first), the vpid by the process's real pid, and
 * timestamps are kept monotonic. What does not parse is dropped and counted
 * as corrupt, and only this process's stream is affected.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/daemon/daemon.h"

/* Bytes of invalid records dropped so far (all processes). */
uint64_t st_emit_corrupt;

struct scan {
	uint64_t valid;	 /* bytes of whole, valid records */
	uint64_t events;
	uint64_t first_ts, last_ts;
	bool unsettled;	 /* a caller's line table is on its way */
};

/* Validates and fixes the records in buf (a private copy) for trace t. */
static void scan_records(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
			 uint8_t *buf, uint64_t len, uint64_t min_ts, struct scan *sc)
{
	struct st_evclass *c = NULL;
	uint64_t off = 0, prev = min_ts;
	uint32_t cid = UINT32_MAX; /* the process's id c is for: ids repeat */
	int32_t tid = -1;	   /* and the trace's */

	memset(sc, 0, sizeof(*sc));
	while (len - off >= ST_ABI_RECORD_HDR) {
		struct st_abi_record *h = (struct st_abi_record *)(buf + off);
		uint16_t id = h->id;
		uint64_t ts = h->timestamp;
		int64_t size;

		if (id != cid) {
			/* (only classes the process registered: never the
			 * daemon's own, which it could otherwise forge) */
			c = id < p->ncls ? p->cls[id] : NULL;
			tid = c ? st_trace_class_id(t, c, p->uid) : -1;
			cid = id;
		}
		if (tid < 0)
			break;
		size = st_evclass_payload_size(c, buf + off + ST_ABI_RECORD_HDR,
					       len - off - ST_ABI_RECORD_HDR);
		if (size < 0)
			break;
		if (ts < prev)
			h->timestamp = ts = prev;
		h->id = (uint16_t)tid;
		h->vpid = p->pid;
		h->ip = st_callsite(d, p, h->ip, &sc->unsettled);
		prev = ts;
		if (sc->events == 0)
			sc->first_ts = ts;
		sc->events++;
		off += ST_ABI_RECORD_HDR + (uint64_t)size;
	}
	sc->last_ts = prev;
	sc->valid = off;
}

static void warn_once(struct st_proc *p, int which, const char *what)
{
	if (p->warned[which])
		return;
	p->warned[which] = 1;
	st_log(ST_LOG_WARN, "process %d (%s): %s", p->pid, p->name, what);
}

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

	n = snprintf(buf, len, "pid%d-%llu-", p->pid, (unsigned long long)p->instance);
	if (n >= 0 && (size_t)n < len && run > 1)
		n += snprintf(buf + n, len - (size_t)n, "run%u-", run);
	if (n < 0 || (size_t)n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
}

static struct st_stream *slot_stream(struct st_daemon *d, struct st_proc *p, uint32_t s,
				     uint32_t slot)
{
	struct st_slot_state *st = &p->pools[s].slots[slot];
	struct st_session *ses = d->sessions[s];
	char name[64];

	if (!st->has_stream) {
		st_stream_name(name, sizeof(name), p, ses->runs, "buf%u", slot);
		st_stream_open(&ses->trace, &st->stream, name, p->pid, p->instance);
		st->has_stream = true;
	}
	return &st->stream;
}

/*
 * Validates the records copied into buf (from st_packet_buf, len bytes) and
 * writes them as one packet of stream in trace t; returns the events
 * written. With may_wait, a range whose callers need a line table on its
 * way is left where it is (ST_EMIT_LATER): the table was asked for, and the
 * range is read again once it is here, or the wait is over.
 */
uint64_t st_emit_into(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
		      struct st_stream *stream, uint8_t *buf, uint64_t len, uint64_t discarded,
		      bool may_wait)
{
	struct scan sc;

	scan_records(d, p, t, buf, len, stream->last_ts, &sc);
	if (sc.unsettled && may_wait) {
		if (!p->lines_waiting)
			p->lines_wait_since = st_now_ms();
		p->lines_waiting = true;
		return ST_EMIT_LATER;
	}
	if (sc.valid < len) {
		st_emit_corrupt += len - sc.valid;
		warn_once(p, 0, "invalid records in its buffers were dropped");
	}
	if (sc.events)
		st_stream_packet(t, stream, buf, sc.valid, sc.events, sc.first_ts, sc.last_ts,
				 discarded);
	/* (taken from the buffers: those lost writing are counted as such) */
	return sc.events;
}

uint64_t st_emit_subbuf(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
			struct st_stream *stream, const struct st_ring *r, uint32_t i, uint32_t idx,
			uint64_t seq, uint64_t *off, uint64_t discarded)
{
	uint64_t commit = st_ring_commit(r, i, idx, seq), events;
	uint8_t *buf = commit > *off ? st_packet_buf(commit - *off) : NULL;

	if (!buf || !st_ring_copy(r, i, idx, seq, *off, commit - *off, buf))
		return 0; /* empty, or reused by the producer during the copy */
	events = st_emit_into(d, p, t, stream, buf, commit - *off, discarded, false);
	*off = commit;
	return events;
}

/*
 * Losses across the runs of a session. A process keeps its pool from one
 * run to the next, and the producer's counters go on: each run's streams
 * declare only what was lost since the earlier runs' streams last said
 * (lost_said). In overwrite mode the producer also counts as overwritten
 * the events of sub-buffers the stop of an earlier run had emitted, when
 * it reuses them: those were recorded, not lost. Each sub-buffer a drain
 * emits is remembered by index (seq, events emitted) while the ring may
 * hold it; once its index holds another sequence, the producer has
 * counted it, and its events are taken off the count (retaken).
 *
 * The producer adds to its overwritten count before it publishes the new
 * sequence (release), so reading the sequences first (acquire) and the
 * count after never takes off events the count does not hold yet.
 */
uint64_t st_slot_lost(struct st_proc_pool *pool, uint32_t i)
{
	struct st_slot_state *st = &pool->slots[i];
	const struct st_abi_slot *slot = st_ring_slot(&pool->ring, i);
	uint64_t lost;

	for (uint32_t k = 0; st->taken && k < pool->ring.sb_count; k++)
		if (st->taken[k].seq &&
		    __atomic_load_n(&slot->sb[k].seq, __ATOMIC_ACQUIRE) != st->taken[k].seq) {
			st->retaken += st->taken[k].events;
			st->taken[k].seq = st->taken[k].events = 0;
		}
	lost = st_ring_lost(slot);
	return lost > st->retaken ? lost - st->retaken : 0;
}

/* What the stream of this run declares of lost, the slot's loss count. */
static uint64_t stream_lost(const struct st_slot_state *st, uint64_t lost)
{
	return lost > st->lost_said ? lost - st->lost_said : 0;
}

/* Emits a range of slot i into session s's trace; false: left for later
 * (may_wait: see st_emit_into). */
static bool emit(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t i,
		 const struct st_ring_range *g, uint64_t discarded, bool may_wait)
{
	struct st_session *ses = d->sessions[s];
	struct st_session_stats *stats = st_session_stats_for(ses, p, true);
	uint64_t corrupt = st_emit_corrupt, n = 0;
	uint8_t *buf = st_packet_buf(g->len);

	/* (discard mode: the producer leaves the range alone until it is
	 * given back, so only a misbehaving process fails the check) */
	if (buf && st_ring_copy(&p->pools[s].ring, i, g->idx, g->seq, g->off, g->len, buf))
		n = st_emit_into(d, p, &ses->trace, slot_stream(d, p, s, i), buf, g->len, discarded,
				 may_wait);
	if (n == ST_EMIT_LATER)
		return false;
	if (stats) {
		stats->events += n;
		stats->corrupt_bytes += st_emit_corrupt - corrupt;
	}
	return true;
}

static void drain_discard(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t i,
			  bool partial, bool may_wait)
{
	struct st_proc_pool *pool = &p->pools[s];
	struct st_slot_state *st = &pool->slots[i];
	struct st_ring_range g;

	for (uint32_t guard = 0; guard <= pool->ring.sb_count; guard++) {
		if (!st_ring_next(&pool->ring, i, &st->cur, partial, &g))
			break;
		if (g.impossible)
			warn_once(p, 1, "a buffer held an impossible commit count");
		/* Losses as of the sub-buffer's close; an open one's are not
		 * known yet (a later packet, or the final one, carries them). */
		if (g.len) {
			uint64_t all = stream_lost(st, st_slot_lost(pool, i));
			uint64_t lost = g.closed ? stream_lost(st, g.lost) : st->stream.discarded;

			if (!emit(d, p, s, i, &g, lost < all ? lost : all, may_wait))
				break; /* left in place, read again later */
		}
		st_ring_taken(&pool->ring, i, &st->cur, &g);
		if (!g.closed)
			break;
	}
}

/*
 * Overwrite mode, before the first packet of slot i's stream: the events
 * overwritten since the stream's run began (lost) were written between the
 * session's switching on for p and the first event kept, at off in
 * sub-buffer (seq, idx). A packet
 * of no events spanning that time carries their count, so that readers
 * date the loss right (they take a first packet's own time range for the
 * losses it reports). False if that first event cannot be read.
 */
static bool overwritten_range(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t i,
			      uint32_t idx, uint64_t seq, uint64_t off, uint64_t lost)
{
	struct st_proc_pool *pool = &p->pools[s];
	uint64_t now = st_clock_now(&d->clock);
	uint64_t since = p->traced_since[s] < now ? p->traced_since[s] : now, first;
	struct st_abi_record h;
	uint8_t *buf;

	if (st_ring_commit(&pool->ring, i, idx, seq) < off + sizeof(h) ||
	    !st_ring_copy(&pool->ring, i, idx, seq, off, sizeof(h), (uint8_t *)&h))
		return false;
	if (lost == 0)
		return true;
	/* (the process's word: kept within what is possible) */
	first = h.timestamp < since ? since : h.timestamp > now ? now : h.timestamp;
	buf = st_packet_buf(0);
	if (buf)
		st_stream_packet(&d->sessions[s]->trace, slot_stream(d, p, s, i), buf, 0, 0, since,
				 first, lost);
	return true;
}

/* Overwrite mode: emit what the ring holds, oldest sub-buffer first. */
static void drain_overwrite(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t i)
{
	struct st_proc_pool *pool = &p->pools[s];
	struct st_slot_state *st = &pool->slots[i];
	struct st_session *ses = d->sessions[s];
	struct st_session_stats *stats = st_session_stats_for(ses, p, true);
	uint64_t (*order)[2], corrupt = st_emit_corrupt;
	uint64_t lost = stream_lost(st, st_slot_lost(pool, i));
	int n;

	/* (out of memory: what is emitted now would be counted lost as well
	 * if the session started again) */
	if (!st->taken)
		st->taken = calloc(pool->ring.sb_count, sizeof(*st->taken));
	n = st_ring_order(&pool->ring, i, &order);
	for (int k = 0; k < n; k++) {
		uint64_t seq = order[k][0], off = 0, events;
		uint32_t idx = (uint32_t)order[k][1];

		/* Only what was not emitted by an earlier drain: of the last
		 * one it emitted, what the producer wrote since. */
		if (seq < st->cur.rseq)
			continue;
		if (seq == st->cur.rseq)
			off = st->cur.roff;
		if ((!st->has_stream || st->stream.seq_num == 0) &&
		    !overwritten_range(d, p, s, i, idx, seq, off, lost))
			continue;
		events = st_emit_subbuf(d, p, &ses->trace, slot_stream(d, p, s, i), &pool->ring, i,
					idx, seq, &off, lost);
		if (stats)
			stats->events += events;
		if (st->taken && st->taken[idx].seq != seq)
			st->taken[idx] = (struct st_taken){ seq, 0 };
		if (st->taken)
			st->taken[idx].events += events;
		st->cur.rseq = seq;
		st->cur.roff = (uint32_t)off;
	}
	if (stats)
		stats->corrupt_bytes += st_emit_corrupt - corrupt;
	free(order);
}

/*
 * After the final drain: losses no packet carried yet (events dropped after
 * the last one written) go in a packet of no events, so that the trace
 * says how many were lost, and when.
 */
static void final_losses(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t i)
{
	struct st_proc_pool *pool = &p->pools[s];
	struct st_slot_state *st = &pool->slots[i];
	uint64_t lost = stream_lost(st, st_slot_lost(pool, i)), now;
	struct st_stream *stream;
	uint8_t *buf;

	if (lost == 0 || (st->has_stream && lost <= st->stream.discarded))
		return;
	stream = slot_stream(d, p, s, i);
	buf = st_packet_buf(0);
	now = st_clock_now(&d->clock);
	if (buf)
		st_stream_packet(&d->sessions[s]->trace, stream, buf, 0, 0, now, now, lost);
}

void st_consume_slot(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t slot,
		     enum st_drain how)
{
	struct st_proc_pool *pool;
	struct st_session *ses;

	if (s >= ST_ABI_MAX_SESSIONS)
		return;
	pool = &p->pools[s];
	ses = d->sessions[s];
	if (!pool->ring.base || slot >= pool->ring.nslots || !ses ||
	    ses->generation != pool->generation)
		return;
	if (pool->ring.mode == ST_MODE_OVERWRITE) {
		if (how == ST_DRAIN_FINAL)
			drain_overwrite(d, p, s, slot);
	} else {
		drain_discard(d, p, s, slot, how != ST_DRAIN_CLOSED,
			      how == ST_DRAIN_CLOSED || how == ST_DRAIN_FLUSH);
	}
	if (how == ST_DRAIN_FINAL)
		final_losses(d, p, s, slot);
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
	struct st_session *ses = d->sessions[s];
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

void st_consume_all(struct st_daemon *d, struct st_proc *p, enum st_drain how)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++)
		for (uint32_t i = 0, n = st_ring_slots_used(&p->pools[s].ring); i < n; i++)
			st_consume_slot(d, p, s, i, how);
}
