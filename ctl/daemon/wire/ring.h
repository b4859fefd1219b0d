/*
 * The one reader of a process's ring buffers (ring.c): where a slot and a
 * sub-buffer are, which sub-buffers may be consumed, and the copy that is
 * kept only if the producer did not reuse the sub-buffer meanwhile. The
 * consumer's drains, stop, snapshots and the unit tests all read shared
 * memory through it; the protocol it follows is described in core/abi.h.
 *
 * Nothing here trusts the process: commit counts are bounds-checked, and
 * sequence numbers only select among sub-buffers, never address memory.
 * Depends on core/abi.h only, so the unit tests link it alone.
 */
#ifndef ST_DAEMON_RING_H
#define ST_DAEMON_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "core/abi.h"

/*
 * A mapped pool, with the geometry the daemon configured (not the one
 * the pool's header claims). Headers are read in the mapping; records are
 * copied out with pread(2) of the pool's memfd when there is one: on a
 * machine whose hypervisor shadows page tables, the first read of each
 * page of a mapping costs microseconds (30 to 38 ms for a 32 MiB buffer,
 * paid when the consumer is behind, against 4 ms a lap for pread, which
 * goes through the kernel's own mapping). Reads after the first cost no
 * more than any memory's, so the consumer reads later laps of a discard
 * buffer in place (consumer.c, in_place).
 */
struct st_ring {
	uint8_t *base;
	int fd;		/* the pool's memfd, read with pread; -1: from base */
	uint64_t size;
	uint32_t mode, sb_size, sb_count, nslots;
	uint64_t slot_size, hdr_size;
	/* a buffer per CPU (doc/percpu.md): a sub-buffer is there once
	 * slot.cur reached it, and closed once slot.cur is past it */
	bool percpu;
};

/* Sets r up for the pool mapped at base (size bytes) with this buffer
 * configuration; 0, or -1 when the configuration is out of bounds or the
 * mapping is not the size it implies. */
int st_ring_init(struct st_ring *r, uint8_t *base, int fd, uint64_t size, uint32_t mode,
		 uint32_t sb_size, uint32_t sb_count, uint32_t nslots);
struct st_abi_slot *st_ring_slot(const struct st_ring *r, uint32_t i);
/* The data of sub-buffer idx of slot i. */
const uint8_t *st_ring_data(const struct st_ring *r, uint32_t i, uint32_t idx);
/* Slots the producer ever claimed (it says so in the pool header). */
uint32_t st_ring_slots_used(const struct st_ring *r);
/* Events the producer of slot i could not keep, all causes. */
uint64_t st_ring_lost(const struct st_abi_slot *slot);
/*
 * Per-CPU buffers: the events written on slot i's CPU before sub-buffer
 * (idx, seq) opened, and in it so far; false if it holds another sequence
 * by now. The process's word: a count to check against what was read.
 */
bool st_ring_cpu_events(const struct st_ring *r, uint32_t i, uint32_t idx, uint64_t seq,
			uint64_t *before, uint64_t *in);

/*
 * Discard mode. A cursor names what comes next for the consumer: sub-buffer
 * sequence rseq, of which roff bytes were taken already.
 */
struct st_ring_cursor {
	uint64_t rseq;
	uint32_t roff;
};

/* A range of a sub-buffer that may be consumed. */
struct st_ring_range {
	uint32_t idx;	    /* the sub-buffer */
	uint64_t seq;	    /* its sb.seq (s + 1) */
	uint64_t off, len;  /* the bytes not taken yet */
	uint64_t lost;	    /* the slot's losses as of its close (closed only) */
	bool closed;	    /* the producer left it: taking it frees it */
	bool impossible;    /* its commit count was out of bounds (ignored) */
};

/*
 * The next range of slot i after c: that of a closed sub-buffer, or (with
 * partial) what the open one holds. Returns false when there is none.
 */
bool st_ring_next(const struct st_ring *r, uint32_t i, const struct st_ring_cursor *c,
		  bool partial, struct st_ring_range *out);
/* The range was taken: moves c past it, and gives a closed sub-buffer back
 * to the producer (waking it if it waits for room: --blocking). */
void st_ring_taken(const struct st_ring *r, uint32_t i, struct st_ring_cursor *c,
		   const struct st_ring_range *g);

/*
 * Overwrite mode: the sub-buffers of slot i that hold data, oldest first,
 * as (sequence number, index) pairs; those a newer lap already reuses are
 * left out. Returns how many (*out: the caller frees), -1 if out of memory.
 */
int st_ring_order(const struct st_ring *r, uint32_t i, uint64_t (**out)[2]);
/* The bytes sub-buffer (seq, idx) of slot i holds: 0 when it was reused
 * or its commit count is impossible. */
uint64_t st_ring_commit(const struct st_ring *r, uint32_t i, uint32_t idx, uint64_t seq);

/*
 * The sequence-checked copy: copies len bytes at offset off of sub-buffer
 * idx of slot i into dst, and keeps the copy only if the sub-buffer still
 * holds sequence seq afterwards (the producer publishes a new sequence
 * before it writes new data, so an unchanged seq means the copy is not
 * torn). Returns true if the copy is good.
 */
bool st_ring_copy(const struct st_ring *r, uint32_t i, uint32_t idx, uint64_t seq, uint64_t off,
		  uint64_t len, uint8_t *dst);

#endif
