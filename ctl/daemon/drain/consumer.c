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
 * Shared memory is found through ring.c alone. A range is copied out of
 * shared memory first, or (discard mode, after a slot's first lap: see
 * in_place) read where it is; either way each byte is read once and what
 * is checked is what is written (the process could change the original
 * under us): each record must carry an event id of this process (an index
 * in p->classes.cls) and a payload that fits; the id is replaced by the trace's id
 * of the class (declared in the trace's metadata first), the vpid by the
 * process's real pid, and timestamps are clamped (below). What does not
 * parse is dropped and counted as corrupt, and only this process's stream
 * is affected.
 *
 * Times. A record's time is the process's word, and a trace whose times
 * run past what its reader can convert (babeltrace2 refuses a stream whose
 * clock, in ns from its origin, overflows 64 bits: the whole trace, every
 * user's, then reads as nothing) is unreadable for everyone in it. So
 * each time that reaches a trace is clamped to its stream's range: never
 * before the stream's last time (nor, for a slot's first, before the
 * session began tracing the process), never after the daemon's clock now
 * plus a margin (st_clock_latest). Clamped, not dropped: an honest
 * writer's times never go back in a slot (core/writer.c) and are read
 * after they were written, so only a forged time is moved, and the
 * process keeps its events (its own trace is what it spoils, with wrong
 * times); a record dropped would take the rest of its range with it.
 * Packet times are the first and last clamped times of their records, so
 * timestamp_begin <= each record <= timestamp_end, and the trace's 16-bit
 * compact times are written only for deltas below 2^16 from a time below
 * the bound: a reader's reconstruction never wraps.
 *
 * Owns: the drain state of each slot of a pool (its cursor, stream and
 *       what it emitted).
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, drain, model, objects, out, wire.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/resident.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/drain/testlose.h"
#include "ctl/daemon/model/metastream.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/model/userpool.h"
#include "ctl/daemon/objects/callsite.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/wire/record.h"
#include "ctl/daemon/wire/ring.h"


/* A run of ring records of one thread, as written into the trace. */
struct seg {
	uint64_t used;	 /* ring bytes read: whole records */
	uint64_t out;	 /* trace bytes written */
	uint64_t events;
	uint64_t first_ts, last_ts;
	struct st_ring_pos pos; /* in: where the run starts; out: its end */
	bool corrupt;	 /* stopped at a record that does not parse */
	bool switched;	 /* stopped after a thread record of another process
			  * (a per-user pool's: the caller finds it) */
	bool unsettled;	 /* a caller's line table is on its way */
	bool may_wait;	 /* in: then the run is not emitted (stop there) */
	uint64_t dropped; /* records the test mode lost, before its events */
};

/* The most trace bytes len ring bytes make: a ring record has at least a
 * compact header and the ip (10 bytes), its trace record at most
 * ST_TRACE_REC_MAX_HDR (25) before the same fields; and 8 bytes of slack
 * for the last record's fields copied in words. */
static uint64_t seg_capacity(uint64_t len)
{
	return len + (len / (ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES) + 1) *
			     (ST_TRACE_REC_MAX_HDR - ST_ABI_HDR_COMPACT - ST_ABI_IP_BYTES) + 8;
}

/* Trace bytes a packet holds at most, unless one record needs more: the
 * packet buffers stay small enough to be kept resident (resident.c). */
#define PACKET_MAX (1u << 20)

/* The packet buffer for len ring bytes: room for all they can make, or
 * PACKET_MAX and at least one record of all of them (transform stops
 * before a record that might not fit). */
static uint64_t packet_capacity(uint64_t len)
{
	uint64_t all = seg_capacity(len), one = len + ST_TRACE_REC_MAX_HDR + 8;

	if (all <= PACKET_MAX)
		return all;
	return one > PACKET_MAX ? one : PACKET_MAX;
}

/* Whether a record of up to `fields` bytes of fields fits in dst (cap
 * bytes, out used) with the slack of copy_words. */
static inline bool fits(uint64_t out, uint64_t fields, uint64_t cap)
{
	return out + ST_TRACE_REC_MAX_HDR + 8 + fields <= cap;
}

/* Copies n bytes of fixed-size fields in whole words (a call to memcpy
 * costs more than these few bytes): up to 7 bytes past them are read,
 * which the caller keeps within src's range, and written, within dst's
 * slack. */
static inline void copy_words(uint8_t *dst, const uint8_t *src, int32_t n)
{
	for (int32_t k = 0; k < n; k += 8) {
		uint64_t v;

		memcpy(&v, src + k, 8);
		memcpy(dst + k, &v, 8);
	}
}

/* Swaps the two entries of a two-entry cache. */
#define swap(a)                           \
	do {                              \
		__typeof__((a)[0]) t_ = (a)[0]; \
		(a)[0] = (a)[1];          \
		(a)[1] = t_;              \
	} while (0)

/*
 * Writes the ring records at src (len bytes: the process's shared memory,
 * or a copy of it) into dst as trace records of trace t, up to the end, a
 * record that does not parse, or a thread record after the first event
 * (the next packet is another thread's). Each record must carry an event
 * id of this process (an index in p->classes.cls, never one of the daemon's own
 * classes, which it could otherwise forge) and fields that fit; the id
 * becomes the trace's, the process id is the process's real one, call
 * sites are refined, and each time is clamped to [min_ts, max_ts], never
 * going back (see the top of the file). The ring's own times (the base of
 * its compact records, sg->pos.ts) are kept as the process wrote them.
 */
static void transform(struct st_daemon *d, struct st_proc *p, bool by_writer, struct st_trace *t,
		      const uint8_t *src, uint64_t len, uint8_t *dst, uint64_t cap, uint64_t min_ts,
		      uint64_t max_ts, struct seg *sg)
{
	uint64_t off = 0, out = 0, prev_out = 0, ring_ts = sg->pos.ts;
	/* The last two classes and call sites: events come in pairs (lock,
	 * unlock) from one place, over and over. */
	struct {
		uint32_t id;	  /* the process's */
		int32_t tid;	  /* the trace's */
		struct st_evclass *c;
		int32_t fast;	  /* its fixed size, when its records may take
				   * the fast path; else -1 */
	} cls[2] = { { UINT32_MAX, -1, NULL, -1 }, { UINT32_MAX, -1, NULL, -1 } };
	struct {
		uint64_t in, out;
	} site[2] = { { 0, 0 }, { 0, 0 } };
	const int32_t vpid = p ? p->pid : 0;

	sg->events = sg->dropped = 0;
	sg->corrupt = sg->unsettled = sg->switched = false;
	/* (a stream already past a later now stays where it is: min_ts wins,
	 * and min_ts <= max_ts holds from here on) */
	if (max_ts < min_ts)
		max_ts = min_ts;
	while (off < len) {
		struct st_ring_rec r;
		uint64_t ts = ring_ts, ip;
		struct st_evclass *c;
		int32_t tid;
		uint32_t h;
		int64_t size;

		/* The fast path, in registers, for as long as it may: a compact
		 * record of one of the last two classes (of fixed size and a
		 * compact trace id) from one of the last two call sites, whose
		 * trace record is compact too. Anything else goes the long way
		 * below, one record, which also fills the caches. */
		while (sg->events) {
			uint64_t w0, low, rts, ots, fip, fout;
			uint32_t hdr, k;
			uint16_t w16;
			int32_t fsz;

			if (len - off < ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES + 8)
				break;
			memcpy(&w0, src + off, 8);
			k = (w0 & 0xff) == cls[0].id ? 0 : (w0 & 0xff) == cls[1].id ? 1 : 2;
			if (k == 2 || cls[k].fast < 0)
				break;
			fsz = cls[k].fast;
			if (len - off - (ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES) < (uint64_t)fsz + 8 ||
			    !fits(out, (uint64_t)fsz, cap))
				break;
			memcpy(&w16, src + off + 8, 2);
			fip = w0 >> 32 | (uint64_t)w16 << 32;
			if (fip && fip == site[0].in)
				fout = site[0].out;
			else if (fip && fip == site[1].in)
				fout = site[1].out;
			else
				break;
			low = (w0 >> 8) & ST_RING_TS_MASK;
			rts = ring_ts + ((low - ring_ts) & ST_RING_TS_MASK);
			ots = rts < min_ts ? min_ts : rts > max_ts ? max_ts : rts;
			if (ots - prev_out >= (1u << ST_TRACE_TS_BITS))
				break;
			hdr = (uint32_t)cls[k].tid | (uint32_t)(ots & 0xffff) << 8;
			memcpy(dst + out, &hdr, 4); /* (3 bytes are the header) */
			memcpy(dst + out + ST_TRACE_HDR_COMPACT, &vpid, 4);
			memcpy(dst + out + ST_TRACE_HDR_COMPACT + 4, &fout, 8);
			copy_words(dst + out + ST_TRACE_HDR_COMPACT + ST_TRACE_CTX_BYTES,
				   src + off + ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES, fsz);
			ring_ts = rts;
			min_ts = prev_out = ots;
			sg->events++;
			off += ST_ABI_HDR_COMPACT + ST_ABI_IP_BYTES + (uint64_t)fsz;
			out += ST_TRACE_HDR_COMPACT + ST_TRACE_CTX_BYTES + (uint64_t)fsz;
		}
		if (off >= len)
			break;
		if (!st_ring_rec_decode(src + off, len - off, &ts, &r)) {
			sg->corrupt = true;
			break;
		}
		if (r.id == ST_ABI_ID_THREAD) {
			bool other = by_writer && r.writer != sg->pos.writer;

			if (sg->events)
				break; /* the next run */
			sg->pos.tid = r.tid;
			sg->pos.writer = r.writer;
			ring_ts = ts;
			off += r.hdr;
			if (other || (by_writer && !p)) {
				sg->switched = true; /* (the caller finds its process) */
				break;
			}
			continue;
		}
		if (!p) {
			sg->corrupt = true; /* (a run of no process known) */
			break;
		}
		if (r.id != cls[0].id) {
			if (r.id == cls[1].id) {
				swap(cls);
			} else {
				cls[1] = cls[0];
				cls[0].c = r.id < p->classes.ncls ? p->classes.cls[r.id] : NULL;
				cls[0].tid = cls[0].c ? st_trace_class_id(t, cls[0].c, p->uid) : -1;
				cls[0].id = r.id;
				cls[0].fast = cls[0].tid >= 0 && cls[0].tid < (int32_t)ST_ABI_ID_EXTENDED &&
							      r.id < ST_ABI_ID_EXTENDED &&
							      !st_test_lose_class(cls[0].c)
						      ? cls[0].c->fixed_size
						      : -1;
			}
		}
		c = cls[0].c;
		tid = cls[0].tid;
		if (tid < 0) {
			sg->corrupt = true;
			break;
		}
		/* (the test mode's losses: the packet ends before one, and it is
		 * counted in the next: testlose.c) */
		if (__builtin_expect(cls[0].fast < 0, 0) && st_test_lose(c, r.ts) &&
		    (uint64_t)c->fixed_size <= len - off - r.hdr) {
			if (sg->events)
				break;
			ring_ts = r.ts;
			sg->dropped++;
			off += r.hdr + (uint64_t)c->fixed_size;
			continue;
		}
		/* (the next packet, when this record might not fit: the first
		 * always does) */
		if (!fits(out, c->fixed_size >= 0 ? (uint64_t)c->fixed_size : len - off - r.hdr, cap))
			break;
		ts = r.ts < min_ts ? min_ts : r.ts > max_ts ? max_ts : r.ts;
		if (sg->events == 0)
			sg->first_ts = prev_out = ts;
		if (r.ip != site[0].in || !r.ip) {
			if (r.ip && r.ip == site[1].in) {
				swap(site);
			} else {
				bool unsettled = false;

				site[1] = site[0];
				site[0].out = st_callsite(d, p, r.ip, &unsettled);
				/* (asked again: it may be settled then) */
				site[0].in = unsettled ? 0 : r.ip;
				sg->unsettled |= unsettled;
				if (unsettled && sg->may_wait)
					break; /* (not emitted: emit_range) */
			}
		}
		ip = site[0].out;
		h = st_trace_rec_header(dst + out, (uint32_t)tid, ts, &prev_out, vpid, ip);
		if (c->fixed_size >= 0 && (uint64_t)c->fixed_size + 8 <= len - off - r.hdr) {
			copy_words(dst + out + h, src + off + r.hdr, c->fixed_size);
			size = c->fixed_size;
		} else {
			size = st_evclass_payload_copy(c, src + off + r.hdr, len - off - r.hdr,
						       dst + out + h);
		}
		if (size < 0) {
			sg->corrupt = true;
			break;
		}
		ring_ts = r.ts;
		min_ts = ts;
		sg->events++;
		off += r.hdr + (uint64_t)size;
		out += h + (uint64_t)size;
	}
	sg->pos.ts = ring_ts;
	sg->last_ts = min_ts; /* (both paths: the last event's time) */
	sg->used = off;
	sg->out = out;
}

static void warn_once(struct st_proc *p, enum st_proc_warning which, const char *what)
{
	if (p->warned[which])
		return;
	p->warned[which] = true;
	if (p->user_pool) /* (a user's buffers: any of its processes wrote it) */
		st_log_user(p->uid, ST_LOG_WARN, "the per-user buffers of uid %u: %s",
			    (unsigned)p->uid, what);
	else
		st_log_user(p->uid, ST_LOG_WARN, "process %d (%s): %s", p->pid, p->name, what);
}

static struct st_stream *slot_stream(struct st_daemon *d, struct st_proc *p, uint32_t s,
				     uint32_t slot)
{
	struct st_slot_state *st = &p->pools[s].slots[slot];
	struct st_session *ses = st_session_at(d, s, p);
	char name[64];

	if (!st->has_stream) {
		st_stream_name(name, sizeof(name), p, ses->runs, "buf%u", slot);
		st_stream_open(&ses->trace, &st->stream, name, p->pid, p->instance);
		/* (nothing of the process's is dated before the session traced
		 * it: the earliest time its first records may say) */
		st->stream.last_ts = p->traced_since[s];
		st->has_stream = true;
	}
	return &st->stream;
}

/* The events of a run of a per-user pool, in its process's statistics
 * (the pool's holder counts its losses). */
static void credit(struct st_daemon *d, const struct st_user_pool *up, const struct st_trace *t,
		   struct st_proc *owner, uint64_t events)
{
	struct st_session *ses = st_session_at(d, up->session, owner);
	/* (a snapshot's events are not the session's) */
	struct st_session_stats *stats =
		ses && t == &ses->trace ? st_session_stats_for(ses, owner, true) : NULL;

	if (stats)
		stats->events += events;
}

/*
 * Emits the ring records at src (len bytes, starting at *pos) into stream,
 * a packet for each run of one thread's records; returns the events
 * written, and *used, the bytes of src emitted. p's pool, or the pool p
 * holds for a user (p->user_pool), whose runs each name their process.
 * With may_wait, a run whose callers need a line table on its way is left
 * where it is, with what follows: the table was asked for, and the rest is
 * read again once it is here, or the wait is over. Records that do not parse end the range:
 * dropped, their bytes added to *corrupt (if not NULL).
 */
static uint64_t emit_range(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
			   struct st_stream *stream, const uint8_t *src, uint64_t len,
			   struct st_ring_pos *pos, uint64_t discarded, bool may_wait, uint64_t *used,
			   uint64_t *corrupt)
{
	/* (read after the records were: all of them were written before) */
	uint64_t events = 0, off = 0, latest = st_clock_latest(&d->clock, st_clock_now(&d->clock));
	const struct st_user_pool *up = p->user_pool;
	bool fresh = false;

	while (off < len) {
		uint64_t cap = packet_capacity(len - off), room;
		/* (after the stream's packet just made, if the buffer has room:
		 * one write for many short runs of threads) */
		uint8_t *buf = fresh ? NULL : st_packet_more(stream, &room);
		bool more = buf != NULL;
		struct seg sg = { .pos = *pos, .may_wait = may_wait };
		/* whose records these are: a per-user pool's runs say it */
		struct st_proc *owner = up ? st_user_pool_writer(up, pos->writer) : p;

		if (more)
			cap = room < cap ? room : cap;
		else if (!(buf = st_packet_buf(cap)))
			break;
		transform(d, owner, up != NULL, t, src + off, len - off, buf, cap, stream->last_ts,
			  latest, &sg);
		fresh = more && sg.used == 0 && !sg.corrupt && !(sg.unsettled && may_wait);
		if (fresh)
			continue; /* (its first record did not fit there) */
		if (sg.unsettled && may_wait) {
			st_objects_lines_wait(owner);
			break;
		}
		if (sg.dropped)
			st_stream_lost(stream, sg.dropped);
		if (sg.events) {
			stream->tid = sg.pos.tid;
			stream->pid = owner->pid;
			st_stream_packet(t, stream, buf, sg.out, sg.events, sg.first_ts, sg.last_ts,
					 discarded);
			events += sg.events;
			if (up)
				credit(d, up, t, owner, sg.events);
		}
		*pos = sg.pos;
		off += sg.used;
		if (sg.corrupt) {
			if (corrupt)
				*corrupt += len - off;
			warn_once(p, ST_WARN_CORRUPT, "invalid records in its buffers were dropped");
			off = len;
		}
		if (sg.used == 0)
			break;
	}
	*used = off;
	/* (taken from the buffers: those lost writing are counted as such) */
	return events;
}

/* A private copy of shared memory the producer may reuse meanwhile. */
static uint8_t *staging(uint64_t len)
{
	static uint8_t *buf;
	static uint64_t cap;

	if (len > cap) {
		uint8_t *n = st_resident_alloc(len);

		if (!n)
			return NULL;
		st_resident_free(buf, cap);
		buf = n;
		cap = len;
	}
	return buf;
}

/* Beyond this, buffers grow when used: sub-buffers this large are for
 * long runs, which the first drains do not delay much. */
#define PREPARE_MAX (8u << 20)

void st_consume_prepare(uint32_t sb_size)
{
	if (sb_size > PREPARE_MAX)
		return;
	staging(sb_size);
	st_packet_prepare(packet_capacity(sb_size));
}

/*
 * Copies len bytes at off of sub-buffer (seq, idx) of slot i out of ring r
 * (ring.h: pread is cheaper than reading the mapping) and emits the copy,
 * which is what is checked: a misbehaving process changing the range
 * meanwhile only spoils its own records. Returns the events written, or
 * -1 when the copy fails (empty, or reused by the producer meanwhile);
 * *used as emit_range's.
 */
static int64_t copy_emit(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
			 struct st_stream *stream, const struct st_ring *r, uint32_t i,
			 uint32_t idx, uint64_t seq, uint64_t off, uint64_t len,
			 struct st_ring_pos *pos, uint64_t discarded, bool may_wait, uint64_t *used,
			 uint64_t *corrupt)
{
	uint8_t *buf = len ? staging(len) : NULL;

	if (!buf || !st_ring_copy(r, i, idx, seq, off, len, buf))
		return -1;
	return (int64_t)emit_range(d, p, t, stream, buf, len, pos, discarded, may_wait, used,
				   corrupt);
}

uint64_t st_emit_subbuf(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
			struct st_stream *stream, const struct st_ring *r, uint32_t i, uint32_t idx,
			uint64_t seq, uint64_t *off, struct st_ring_pos *pos, uint64_t discarded,
			uint64_t *corrupt)
{
	uint64_t commit = st_ring_commit(r, i, idx, seq), used;
	int64_t events = commit > *off ? copy_emit(d, p, t, stream, r, i, idx, seq, *off,
						   commit - *off, pos, discarded, false, &used,
						   corrupt)
				       : -1;

	if (events < 0)
		return 0;
	*off = commit;
	return (uint64_t)events;
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

	/* (a CPU's buffer has no owner to count what it overwrites: its
	 * slot's count stays 0, and the consumer counts them) */
	if (pool->ring.percpu)
		return st_ring_lost(slot) + st->overwritten;
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

/* A sub-buffer goes to being read in place on lap (idx + lap) % SPREAD
 * == 0: SPREAD laps spread the cost of the first reads over. */
#define SPREAD 4u

/*
 * Whether range g of slot i is read in place, in the daemon's mapping,
 * rather than copied out first. On this machine's hypervisor, reading a
 * page of a mapping the first time costs about 2.5 us (the shadow page
 * table is filled), against 0.6 us a lap for pread (ring.h), and reads
 * after the first cost the transform's cache misses alone: a 1 MiB
 * sub-buffer costs 0.31 to 0.40 ms copied out and transformed, 0.22 to
 * 0.30 ms transformed in place. So a slot's first lap is copied out (short
 * runs never pay the first reads), and later laps move its sub-buffers in
 * place a few at a time (a lap reading all of them for the first time
 * would fall behind the producer). Discard mode only: the producer does not
 * reuse a sub-buffer before it is given back, and what a misbehaving
 * process changes meanwhile spoils only its own records (transform reads
 * each byte once). Overwrite mode's copies are checked for reuse.
 */
static bool in_place(const struct st_ring *r, struct st_slot_state *st,
		     const struct st_ring_range *g)
{
	uint64_t lap = (g->seq - 1) / r->sb_count, bit = 1ull << (g->idx % 64);
	uint64_t *word;

	if (r->mode != ST_MODE_DISCARD)
		return false;
	if (r->fd < 0)
		return true; /* (copied from the mapping anyway) */
	if (lap == 0)
		return false;
	if (!st->in_place && !(st->in_place = calloc((r->sb_count + 63) / 64, sizeof(uint64_t))))
		return false;
	word = &st->in_place[g->idx / 64];
	if (!(*word & bit) && (g->idx + lap) % SPREAD == 0)
		*word |= bit;
	return *word & bit;
}

/*
 * Emits a range of slot i into session s's trace, in place or copied out
 * first (copy_emit). Returns the bytes emitted: fewer than the range's
 * when the rest is left for later (may_wait: see emit_range), all of them
 * when the copy fails (the sub-buffer is then given back).
 */
static uint64_t emit(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t i,
		     const struct st_ring_range *g, uint64_t discarded, bool may_wait)
{
	struct st_session *ses = st_session_at(d, s, p);
	struct st_session_stats *stats = st_session_stats_for(ses, p, true);
	struct st_slot_state *st = &p->pools[s].slots[i];
	const struct st_ring *r = &p->pools[s].ring;
	struct st_stream *stream = slot_stream(d, p, s, i);
	uint64_t corrupt = 0, used;
	int64_t n;

	if (in_place(r, st, g))
		n = (int64_t)emit_range(d, p, &ses->trace, stream, st_ring_data(r, i, g->idx) + g->off,
					g->len, &st->pos, discarded, may_wait, &used, &corrupt);
	else
		n = copy_emit(d, p, &ses->trace, stream, r, i, g->idx, g->seq, g->off, g->len,
			      &st->pos, discarded, may_wait, &used, &corrupt);
	if (n < 0)
		return g->len;
	if (stats) {
		if (!p->user_pool) /* (emit_range credits each run's process) */
			stats->events += (uint64_t)n;
		stats->corrupt_bytes += corrupt;
	}
	return used;
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
			warn_once(p, ST_WARN_COMMIT, "a buffer held an impossible commit count");
		/* Losses as of the sub-buffer's close; an open one's are not
		 * known yet (a later packet, or the final one, carries them). */
		if (g.len) {
			uint64_t all = stream_lost(st, st_slot_lost(pool, i));
			uint64_t lost = g.closed ? stream_lost(st, g.lost) : st->stream.discarded;
			uint64_t used = emit(d, p, s, i, &g, lost < all ? lost : all, may_wait);

			if (used < g.len) {
				/* the rest is left in place, read again later */
				g.len = used;
				g.closed = false;
				st_ring_taken(&pool->ring, i, &st->cur, &g);
				break;
			}
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
	uint64_t commit = st_ring_commit(&pool->ring, i, idx, seq), ts = pool->slots[i].pos.ts;
	uint8_t head[ST_ABI_THREAD_REC_MAX + ST_ABI_RECORD_MAX_HDR];
	uint64_t n = commit > off ? commit - off : 0;
	struct st_ring_rec r;
	uint8_t *buf;

	/* The first event's time: after the thread record, if one is first. */
	n = n < sizeof(head) ? n : sizeof(head);
	if (!n || !st_ring_copy(&pool->ring, i, idx, seq, off, n, head) ||
	    !st_ring_rec_decode(head, n, &ts, &r) ||
	    (r.id == ST_ABI_ID_THREAD && !st_ring_rec_decode(head + r.hdr, n - r.hdr, &ts, &r)))
		return false;
	if (lost == 0)
		return true;
	/* (the process's word: kept within what is possible) */
	first = r.ts < since ? since : r.ts > now ? now : r.ts;
	buf = st_packet_buf(0);
	if (buf)
		st_stream_packet(&st_session_at(d, s, p)->trace, slot_stream(d, p, s, i), buf, 0, 0, since,
				 first, lost);
	return true;
}

/*
 * Per-CPU overwrite mode: a CPU's buffer is written by any thread, so no
 * writer counts what it overwrites; each sub-buffer says instead how many
 * events the CPU wrote before it. Those written before a point of the ring
 * that were neither emitted nor counted yet were overwritten: written,
 * the events before sub-buffer (idx, seq) and, when a drain emitted part
 * of it already, those it emitted of it.
 */
static void count_overwritten(struct st_proc_pool *pool, uint32_t i, uint32_t idx, uint64_t seq,
			      bool to_end)
{
	struct st_slot_state *st = &pool->slots[i];
	uint64_t before, in, written;

	if (!st_ring_cpu_events(&pool->ring, i, idx, seq, &before, &in))
		return;
	written = before + (to_end ? in
			   : st->taken && st->taken[idx].seq == seq ? st->taken[idx].events
								  : 0);
	if (written > st->emitted + st->overwritten)
		st->overwritten = written - st->emitted;
}

/* The first sub-buffer (of order's n) a drain emits from: the oldest not
 * emitted whole, with a record (one with none may be a switch the process
 * was killed in: its counts may be the next lap's). -1 if none. */
static int first_to_emit(struct st_proc_pool *pool, uint32_t i, uint64_t (*order)[2], int n)
{
	const struct st_slot_state *st = &pool->slots[i];

	for (int k = 0; k < n; k++)
		if (order[k][0] >= st->cur.rseq &&
		    st_ring_commit(&pool->ring, i, (uint32_t)order[k][1], order[k][0]) >
			    (order[k][0] == st->cur.rseq ? st->cur.roff : 0))
			return k;
	return -1;
}

/* Overwrite mode: emit what the ring holds, oldest sub-buffer first. */
static void drain_overwrite(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t i)
{
	struct st_proc_pool *pool = &p->pools[s];
	struct st_slot_state *st = &pool->slots[i];
	struct st_session *ses = st_session_at(d, s, p);
	struct st_session_stats *stats = st_session_stats_for(ses, p, true);
	uint64_t (*order)[2], corrupt = 0, lost;
	int n, first;

	/* (out of memory: what is emitted now would be counted lost as well
	 * if the session started again) */
	if (!st->taken)
		st->taken = calloc(pool->ring.sb_count, sizeof(*st->taken));
	n = st_ring_order(&pool->ring, i, &order);
	if (pool->ring.percpu && (first = first_to_emit(pool, i, order, n)) >= 0)
		count_overwritten(pool, i, (uint32_t)order[first][1], order[first][0], false);
	lost = stream_lost(st, st_slot_lost(pool, i));
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
					idx, seq, &off, &st->pos, lost, &corrupt);
		if (stats && !p->user_pool)
			stats->events += events;
		if (st->taken && st->taken[idx].seq != seq)
			st->taken[idx] = (struct st_taken){ seq, 0 };
		if (st->taken)
			st->taken[idx].events += events;
		st->emitted += events;
		st->cur.rseq = seq;
		st->cur.roff = (uint32_t)off;
	}
	/* (what the newest sub-buffer says the CPU wrote, and the drain did
	 * not find: final_losses declares it) */
	if (pool->ring.percpu && n > 0)
		count_overwritten(pool, i, (uint32_t)order[n - 1][1], order[n - 1][0], true);
	if (stats)
		stats->corrupt_bytes += corrupt;
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
		st_stream_packet(&st_session_at(d, s, p)->trace, stream, buf, 0, 0, now, now, lost);
}

void st_consume_slot(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t slot,
		     enum st_drain how)
{
	struct st_proc_pool *pool;
	struct st_session *ses;

	if (s >= ST_ABI_MAX_SESSIONS)
		return;
	pool = &p->pools[s];
	ses = st_session_at(d, s, p);
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

void st_consume_all(struct st_daemon *d, struct st_proc *p, enum st_drain how)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++)
		for (uint32_t i = 0, n = st_ring_slots_used(&p->pools[s].ring); i < n; i++)
			st_consume_slot(d, p, s, i, how);
}

void st_consume_user_pools(struct st_daemon *d, enum st_drain how)
{
	for (struct st_user_pool *up = d->user_pools; up; up = up->next)
		st_consume_all(d, up->holder, how);
}

void st_consume_user_pools_of(struct st_daemon *d, struct st_proc *p)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st_user_pool *up = p->user_gen[s] ? st_user_pool_of(d, p, s) : NULL;
		struct st_proc_pool *pool;

		if (!up)
			continue;
		pool = &up->holder->pools[s];
		/* What it wrote is decoded now, with its classes: everything
		 * the pool holds (overwrite mode: the ring, as a process's own
		 * is emitted when it ends). */
		for (uint32_t i = 0; i < pool->ring.nslots; i++)
			st_consume_slot(d, up->holder, s, i,
					pool->ring.mode == ST_MODE_OVERWRITE ? ST_DRAIN_FINAL
									     : ST_DRAIN_FLUSH_NOW);
	}
}
