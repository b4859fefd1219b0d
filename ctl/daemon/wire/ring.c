/*
 * The consumer side of the sub-buffer protocol of core/abi.h: slot and
 * sub-buffer arithmetic, what may be consumed, and the sequence-checked
 * copy. See ring.h.
 *
 * Memory ordering, against the producer (the slot's owning thread):
 *   sb.seq      read with acquire: the sub-buffer's other fields, written
 *               before the producer's release store of seq, are then seen;
 *   sb.commit   read with acquire: the record bytes below it are complete;
 *   sb.closed   read with acquire: sb.events and sb.lost are final;
 *   slot.rseq   written with release after the copy: the producer reuses
 *               the sub-buffer only once our reads of it are done; then
 *               a producer waiting for it (--blocking) is woken.
 * In overwrite mode the producer does not wait for rseq, so a copy can
 * race with a new lap: the producer stores the new seq before writing new
 * data, hence an acquire fence after the copy and an unchanged seq prove
 * the copy holds the old lap's bytes only.
 *
 * Owns: nothing kept: reads and checks a ring its caller mapped.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: none.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/wire/ring.h"

int st_ring_init(struct st_ring *r, uint8_t *base, int fd, uint64_t size, uint32_t mode,
		 uint32_t sb_size, uint32_t sb_count, uint32_t nslots)
{
	struct st_abi_geometry g;

	if (st_abi_geometry(mode, sb_size, sb_count, nslots, &g) < 0 || g.size != size)
		return -1;
	r->base = base;
	r->fd = fd;
	r->size = size;
	r->mode = mode;
	r->sb_size = sb_size;
	r->sb_count = sb_count;
	r->nslots = nslots;
	r->slot_size = g.slot_size;
	r->hdr_size = g.hdr_size;
	r->percpu = false;
	return 0;
}

struct st_abi_slot *st_ring_slot(const struct st_ring *r, uint32_t i)
{
	return (struct st_abi_slot *)(r->base + st_abi_slot_offset(r->slot_size, i));
}

const uint8_t *st_ring_data(const struct st_ring *r, uint32_t i, uint32_t idx)
{
	return (const uint8_t *)st_ring_slot(r, i) + r->hdr_size +
	       st_abi_subbuf_offset(r->sb_size, idx);
}

uint32_t st_ring_slots_used(const struct st_ring *r)
{
	uint32_t used;

	if (!r->base)
		return 0;
	used = __atomic_load_n(&((const struct st_abi_pool *)r->base)->slots_used, __ATOMIC_ACQUIRE);
	return used < r->nslots ? used : r->nslots;
}

uint64_t st_ring_lost(const struct st_abi_slot *slot)
{
	return __atomic_load_n(&slot->lost_full, __ATOMIC_RELAXED) +
	       __atomic_load_n(&slot->lost_nested, __ATOMIC_RELAXED) +
	       __atomic_load_n(&slot->overwritten, __ATOMIC_RELAXED);
}

bool st_ring_cpu_events(const struct st_ring *r, uint32_t i, uint32_t idx, uint64_t seq,
			uint64_t *before, uint64_t *in)
{
	const struct st_abi_subbuf *sb = &st_ring_slot(r, i)->sb[idx];

	/* (the producer stores the sequence after the rest of a control, and
	 * the tail with the commit word after the records) */
	if (__atomic_load_n(&sb->seq, __ATOMIC_ACQUIRE) != seq)
		return false;
	*before = __atomic_load_n(&sb->events, __ATOMIC_RELAXED);
	*in = ST_ABI_TAIL_EVENTS(__atomic_load_n(&sb->tail, __ATOMIC_RELAXED));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&sb->seq, __ATOMIC_RELAXED) == seq;
}

bool st_ring_next(const struct st_ring *r, uint32_t i, const struct st_ring_cursor *c,
		  bool partial, struct st_ring_range *out)
{
	struct st_abi_slot *slot = st_ring_slot(r, i);
	uint32_t idx = (uint32_t)(c->rseq % r->sb_count);
	struct st_abi_subbuf *sb = &slot->sb[idx];
	/* (per-CPU: the switch's commit of cur comes after the new control,
	 * and after every record of the sub-buffer it closes) */
	uint64_t cur = r->percpu ? __atomic_load_n(&slot->cur, __ATOMIC_ACQUIRE) : 0;
	uint64_t seq = __atomic_load_n(&sb->seq, __ATOMIC_ACQUIRE), commit;
	uint32_t closed;

	if (seq != c->rseq + 1 || (r->percpu && cur < c->rseq))
		return false;
	closed = r->percpu ? cur > c->rseq : __atomic_load_n(&sb->closed, __ATOMIC_ACQUIRE);
	commit = ST_ABI_COMMIT_OFF(__atomic_load_n(&sb->commit, __ATOMIC_ACQUIRE));
	memset(out, 0, sizeof(*out));
	if (commit > r->sb_size || commit < c->roff) {
		/* nothing more is taken from it: it is given back */
		out->impossible = true;
		commit = c->roff;
		closed = 1;
	}
	if (!closed && !partial)
		return false;
	out->idx = idx;
	out->seq = seq;
	out->off = c->roff;
	out->len = commit - c->roff;
	out->closed = closed;
	/* (per-CPU: the losses before the next sub-buffer opened, which it
	 * holds: the consumer has not given it back, so it is that one) */
	if (closed)
		out->lost = __atomic_load_n(
			r->percpu ? &slot->sb[(c->rseq + 1) % r->sb_count].lost : &sb->lost,
			__ATOMIC_RELAXED);
	return true;
}

void st_ring_taken(const struct st_ring *r, uint32_t i, struct st_ring_cursor *c,
		   const struct st_ring_range *g)
{
	struct st_abi_slot *slot = st_ring_slot(r, i);

	c->roff = (uint32_t)(g->off + g->len);
	if (!g->closed)
		return;
	c->rseq++;
	c->roff = 0;
	__atomic_store_n(&slot->rseq, c->rseq, __ATOMIC_RELEASE);
	/* A producer of a blocking session may wait for this (core/abi.h):
	 * our store of rseq before our load of `waiting`, as its store of
	 * `waiting` comes before its load of rseq. The wake never blocks,
	 * and on an address of our own mapping it is harmless whatever the
	 * process wrote there. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&slot->waiting, __ATOMIC_RELAXED))
		syscall(SYS_futex, &slot->rseq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int cmp_seq(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];

	return x < y ? -1 : x > y;
}

int st_ring_order(const struct st_ring *r, uint32_t i, uint64_t (**out)[2])
{
	const struct st_abi_slot *slot = st_ring_slot(r, i);
	uint64_t (*order)[2] = calloc(r->sb_count, sizeof(*order)), max = 0;
	uint32_t n = 0, kept = 0;

	*out = order;
	if (!order)
		return -1;
	for (uint32_t k = 0; k < r->sb_count; k++) {
		uint64_t seq = __atomic_load_n(&slot->sb[k].seq, __ATOMIC_ACQUIRE);

		/* seq is s + 1 and s lives at s % sb_count */
		if (seq == 0 || (seq - 1) % r->sb_count != k)
			continue;
		order[n][0] = seq;
		order[n][1] = k;
		max = seq > max ? seq : max;
		n++;
	}
	qsort(order, n, sizeof(*order), cmp_seq);
	for (uint32_t k = 0; k < n; k++)
		if (order[k][0] + r->sb_count > max) {
			order[kept][0] = order[k][0];
			order[kept][1] = order[k][1];
			kept++;
		}
	return (int)kept;
}

uint64_t st_ring_commit(const struct st_ring *r, uint32_t i, uint32_t idx, uint64_t seq)
{
	struct st_abi_subbuf *sb = &st_ring_slot(r, i)->sb[idx];
	uint64_t commit;

	if (__atomic_load_n(&sb->seq, __ATOMIC_ACQUIRE) != seq)
		return 0;
	commit = ST_ABI_COMMIT_OFF(__atomic_load_n(&sb->commit, __ATOMIC_ACQUIRE));
	return commit <= r->sb_size ? commit : 0;
}

bool st_ring_copy(const struct st_ring *r, uint32_t i, uint32_t idx, uint64_t seq, uint64_t off,
		  uint64_t len, uint8_t *dst)
{
	const struct st_abi_subbuf *sb = &st_ring_slot(r, i)->sb[idx];
	const uint8_t *src;

	if (off > r->sb_size || len > r->sb_size - off)
		return false;
	src = st_ring_data(r, i, idx) + off;
	if (r->fd < 0) {
		memcpy(dst, src, len);
	} else {
		/* (a memfd: never a short read within its sealed size) */
		for (uint64_t done = 0; done < len;) {
			ssize_t n = pread(r->fd, dst + done, len - done, src + done - r->base);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return false;
			done += (uint64_t)n;
		}
	}
	/* the copy's loads before the check's */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&sb->seq, __ATOMIC_RELAXED) == seq;
}
