/*
 * The consumer (consumer.c): what processes' buffers hold, validated,
 * into their sessions' traces.
 */
#ifndef ST_DAEMON_DRAIN_CONSUMER_H
#define ST_DAEMON_DRAIN_CONSUMER_H

#include <stdint.h>

#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/wire/ring.h"

/* The consumer (consumer.c). A drain that is not final leaves in place
 * what needs a line table on its way, and sets p->lines_waiting. */
enum st_drain {
	ST_DRAIN_CLOSED, /* closed sub-buffers (discard mode) */
	ST_DRAIN_FLUSH,	 /* and what the open one holds (discard mode) */
	ST_DRAIN_FLUSH_NOW, /* the same, not waiting for line tables */
	ST_DRAIN_FINAL,	 /* everything; overwrite mode: the ring, oldest first */
};
void st_consume_slot(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t slot,
		     enum st_drain how);
void st_consume_all(struct st_daemon *d, struct st_proc *p, enum st_drain how);
/* The same for every per-user pool (model/userpool.c). */
void st_consume_user_pools(struct st_daemon *d, enum st_drain how);
/* Process p ends: what its user's pools hold is drained now, while its
 * event classes are there to decode its records (its writer numbers are
 * let go when its record is freed). */
void st_consume_user_pools_of(struct st_daemon *d, struct st_proc *p);
/* At a session's start: the consumer's buffers for sub-buffers of sb_size
 * bytes are made resident, so that the first drains do not pay for it. */
void st_consume_prepare(uint32_t sb_size);
/* Emits overwrite-mode sub-buffer (seq, idx) of slot i of ring r from
 * byte *off (at *pos) into stream, if it still holds seq after the copy;
 * the events written (*off, *pos: the end of what was emitted); the bytes
 * of invalid records dropped are added to *corrupt (if not NULL). */
uint64_t st_emit_subbuf(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
			struct st_stream *stream, const struct st_ring *r, uint32_t i, uint32_t idx,
			uint64_t seq, uint64_t *off, struct st_ring_pos *pos, uint64_t discarded,
			uint64_t *corrupt);
/* The events slot i of p's pool lost, in all runs of its session, each
 * counted once. */
uint64_t st_slot_lost(struct st_proc_pool *pool, uint32_t i);

#endif
