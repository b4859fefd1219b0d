/*
 * The per-CPU event writer (doc/percpu.md): a pool with one ring buffer
 * per CPU, written by whichever thread runs there, each record committed
 * by a restartable sequence (rseq.c). No lock, no atomic read-modify-write,
 * no system call on the way of a record.
 *
 * A record: read the CPU (the rseq area's cpu_id_start), the open
 * sub-buffer of its slot (slot.cur) and that sub-buffer's commit word
 * (offset | tid of the last record's thread << 32) and tail word (the
 * last record's time since the sub-buffer opened, and its event count);
 * prepare the record on the stack (after a thread record when the last
 * record was another thread's; the time clamped to the last one, the
 * compact header when the time since it fits); then the commit compares
 * slot.cur, the commit word and the tracepoint's enable word with what was
 * read, copies the record into the ring, and stores the new commit and
 * tail words in one 16-byte store. Another commit on that CPU in between
 * (a thread that ran there, a signal handler of this one) changes what the
 * compares look at; a preemption, migration or signal during the commit
 * restarts it. Either way the record is prepared again.
 *
 * The switch to the next sub-buffer is a commit too: it compares slot.cur
 * and the closing sub-buffer's commit word, copies a fresh control (offset
 * 0, no thread, the time, the events of the CPU so far, and the sequence
 * last: rseq.c copies downwards) over the next sub-buffer's, and stores
 * slot.cur. The consumer reads a sub-buffer only once slot.cur reached it
 * (ctl/daemon/wire/ring.c), so it never sees a half-written control; a
 * snapshot that copies the oldest sub-buffers while they are taken back
 * sees the new sequence before anything else of the new lap.
 *
 * Discard mode: a full buffer drops the event, counted in the slot's
 * lost_full by a commit of its own, or in a blocking session waits for
 * the consumer first (block.c: the threads that wait for one CPU's buffer
 * share its `waiting` flag, and each sleeps at most a slice at a time, so
 * none misses the consumer's wake for longer). Overwrite mode: the switch
 * takes the oldest sub-buffer back, read or not; the consumer counts what
 * was overwritten from the events each sub-buffer says the CPU wrote
 * before it (ctl/daemon/drain/consumer.c).
 */
#include <emmintrin.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "percpu_common.h"
#include "rseq.h"
#include "sys.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/*
 * A commit fails only when the thread was preempted, moved or signalled
 * during it, or another record was committed on its CPU in between: each
 * failure is someone's progress, and the commit is tried again. A thread
 * that a helper moves between CPUs every few microseconds on a loaded
 * machine failed 1000 times in a row (percpu-migrate.test), so the bound
 * is only a guard against a bug looping for ever: about 0.1 s of tries.
 */
#define TRIES (1 << 20)

static struct st_abi_slot *slot_of(struct st__pool *p, uint32_t cpu)
{
	return p->writers[cpu].slot;
}

/* Adds one to the slot's lost_full or lost_nested: both are compared and
 * stored together (a 16-byte commit). */
void st__percpu_lost(struct st__pool *p, bool nested)
{
	for (int tries = 0; tries < TRIES; tries++) {
		uint32_t cpu = st__rseq_cpu();
		struct st_abi_slot *slot;
		struct st_rseq_op op;

		if (cpu >= p->nslots)
			break;
		slot = slot_of(p, cpu);
		st__rseq_op_init(&op);
		op.cmp[0] = &slot->lost_full;
		op.expect[0] = st_load_relaxed(&slot->lost_full);
		op.cmp[1] = &slot->lost_nested;
		op.expect[1] = st_load_relaxed(&slot->lost_nested);
		op.store = &slot->lost_full;
		op.lo = op.expect[0] + !nested;
		op.hi = op.expect[1] + nested;
		op.cpu = cpu;
		if (st__rseq_commit(&op) == ST_RSEQ_DONE)
			return;
	}
	if (st__control)
		st_add_relaxed(&st__control->lost_no_buffer[p->session], 1);
}

enum opened { OPENED, FULL, AGAIN };

/*
 * A CPU's buffer on its first lap in this process: its pages are mapped
 * and made resident a chunk at a time (64 KiB, 1 << p->chunk_shift),
 * with MADV_POPULATE_WRITE (about 20 us a chunk here), before records
 * reach them: the chunk a record ends in and the one after, when a record
 * crosses into a chunk (the common path leaves such records to the
 * general loop) or a sub-buffer opens. A page a record reached first
 * would cost a fault instead, 11 to 14 us on this kind of virtual machine
 * where the daemon's allocation (st_memory_fill) had not come yet, 3 to 4
 * where it had. Whole sub-buffers at a switch cost 0.3 ms a MiB in the
 * event path, with the program's lock held (and a thread's first event
 * on a CPU made two resident: its lock came 0.6 ms late). It only faults
 * pages in: a writer of another process that reaches them meanwhile
 * (per-user buffers) loses nothing. A bit per chunk says it is done in
 * this process; threads of the process on one CPU race on it only
 * through preemption, and a chunk made resident twice costs only the
 * time. An error (an older kernel) leaves the pages to the faults.
 */
static void ensure_resident(struct st__pool *p, uint32_t cpu, uint64_t at)
{
	struct st__writer *w = &p->writers[cpu];
	uint64_t chunks = (uint64_t)p->sb_count * p->sb_size >> p->chunk_shift;
	uint64_t c = (at >> p->chunk_shift) % chunks;

	for (int k = 0; k < 2; k++, c = (c + 1) % chunks) {
		uint64_t *word = &w->resident[c / 64], bit = 1ull << (c % 64), v = st_load_relaxed(word);

		if (v & bit)
			continue;
		st_store_relaxed(word, v | bit);
		st__sys3(SYS_madvise, w->data + (c << p->chunk_shift), 1ul << p->chunk_shift,
			 MADV_POPULATE_WRITE);
	}
}

/*
 * Moves slot (CPU cpu's) on from sub-buffer cur: to cur + 1, or to cur
 * itself when it was never opened (the slot's first record). ts: the time
 * the new sub-buffer begins with.
 */
static enum opened open_next(struct st__pool *p, struct st_abi_slot *slot, uint32_t cpu,
			     uint64_t cur, uint64_t ts)
{
	uint32_t n = p->sb_count;
	uint64_t target = st__percpu_next(p, slot, cur);
	struct st_abi_subbuf *ctl = &slot->sb[cur % n], *next = &slot->sb[target % n];
	/* (its lost: the slot's losses before it, which the consumer puts in
	 * the packets of the sub-buffer before, as the per-thread writer's
	 * close does; its events: the CPU's before it, from the one it
	 * closes, whose commit word the commit compares: then its tail, stored
	 * with that word, is the one read here) */
	uint64_t full = st_load_relaxed(&slot->lost_full), word = st_load_relaxed(&ctl->commit);
	uint64_t before = target == cur ? 0
					: st_load_relaxed(&ctl->events) +
						  ST_ABI_TAIL_EVENTS(st_load_relaxed(&ctl->tail));
	struct st_abi_subbuf fresh = { .seq = target + 1,
				       .events = before,
				       .lost = full + st_load_relaxed(&slot->lost_nested),
				       .begin_ts = ts };
	struct st_rseq_op op;

	/* (the consumer's position only grows: a stale one errs toward full;
	 * overwrite mode takes the oldest sub-buffer back, read or not) */
	if (p->mode != ST_MODE_OVERWRITE && target - st_load_acquire(&slot->rseq) >= n)
		return FULL;
	st__rseq_op_init(&op);
	op.cmp[0] = &slot->cur;
	op.expect[0] = cur;
	op.cmp[1] = &ctl->commit;
	op.expect[1] = word;
	op.cmp[2] = &slot->lost_full;
	op.expect[2] = full;
	op.src = &fresh;
	op.dst = next;
	op.words = sizeof(fresh) / 8;
	op.store = &slot->cur;
	op.lo = target;
	op.hi = target % n; /* (cur_pad: its index, so that writers divide not) */
	op.cpu = cpu;
	if (st__rseq_commit(&op) != ST_RSEQ_DONE)
		return AGAIN;
	st_store_relaxed(&p->writers[cpu].gave_up, false); /* (room again: block.c) */
	ensure_resident(p, cpu, st_abi_subbuf_offset(p->sb_size, (uint32_t)(target % n)));
	if (target != cur)
		st__reg_subbuf_ready(p->session, cpu);
	st__reg_offer_pool(p); /* (until the daemon has it) */
	return OPENED;
}

bool st__percpu_full(struct st__thread *t)
{
	struct st__pc *c = &t->pc;

	/* (as open_next's test; the consumer's position only grows, so a
	 * stale read errs toward full, as there) */
	if (st_load_relaxed(&c->slot->cur) == c->cur &&
	    st__percpu_next(c->pool, c->slot, c->cur) - st_load_acquire(&c->slot->rseq) >=
		    c->pool->sb_count) {
		st__percpu_lost(c->pool, false);
		return true;
	}
	c->mask = 0;
	return false;
}

/* Writes the record's header at b (after a thread record if one is due):
 * returns where it ends, and the payload begins. */
static uint8_t *compose_head(uint8_t *b, bool thread_rec, int32_t tid, uint32_t writer, uint32_t id,
			     uint64_t ts, uint64_t base_ts, uint64_t site)
{
	if (thread_rec) {
		b = st__put_thread_record_of(b, tid, writer, ts);
		base_ts = ts;
	}
	return st__put_header(b, id, ts, ts - base_ts, site);
}

/*
 * The record does not fit in sub-buffer cur (or it was never opened):
 * moves the CPU's buffer on (open_next). A full buffer counts the event
 * lost, or, in a blocking session (--blocking), first waits for the
 * consumer (block.c), except in a signal handler that interrupted an event
 * being written (nested: the interrupted write may be that wait). True to
 * try the record again (*tries anew after a wait).
 */
static bool move_on(struct st__pool *p, struct st__thread *t, struct st_abi_slot *slot,
		    uint32_t cpu, uint64_t cur, uint64_t ts, const uint32_t *mask, bool nested,
		    int *tries)
{
	enum st__wait r = ST_WAIT_LOST;

	if (open_next(p, slot, cpu, cur, ts) != FULL)
		return true;
	if (p->block_ms && !nested) {
		int saved_errno = errno;

		r = st__block_wait(&p->writers[cpu], mask);
		errno = saved_errno;
	}
	if (r == ST_WAIT_ROOM) {
		*tries = 0;
		return true;
	}
	if (r == ST_WAIT_LOST) {
		/* (discard mode, no wait: the thread's next events on this CPU
		 * count their loss at once while the buffer stays full) */
		if (!p->block_ms && !nested)
			st__pc_fill(&t->pc, p, cpu, cur, (uint32_t)(cur % p->sb_count),
				    t->tid ^ (int32_t)p->key_xor, true);
		st__percpu_lost(p, false);
	}
	return false;
}

/* Any record (st__percpu_event tries the common one first): with a
 * thread record, an extended header, a switch, a CPU buffer to claim, a
 * full buffer, a commit tried again. */
__attribute__((noinline)) void st__percpu_write(struct st__pool *p, struct st__thread *t,
						const struct st_tracepoint *tp, uint32_t s,
						uint32_t id, uint64_t ts, uint64_t site,
						const void *payload, uint32_t len, bool nested)
{
	/* (a thread record and a header, and the 16 bytes st__put_header may
	 * write) */
	uint8_t rec[ST_ABI_THREAD_REC_MAX + ST_ABI_RECORD_MAX_HDR + 16] __attribute__((aligned(8)));
	const uint32_t *mask = &tp->state->mask[tp->slot];
	/* (the aligned 8 bytes that hold it, the word the commit compares) */
	const uint64_t *mask_word = (const uint64_t *)((uintptr_t)mask & ~(uintptr_t)7);
	unsigned half = (uintptr_t)mask & 4 ? 32 : 0;
	int32_t tid = t->tid, key = tid ^ (int32_t)p->key_xor;

	/* (a record that no sub-buffer can hold: lost, as the per-thread
	 * writer counts it) */
	if (ST_ABI_THREAD_REC_MAX + ST_ABI_RECORD_MAX_HDR + len + ST_PAYLOAD_SLACK > p->sb_size) {
		st__percpu_lost(p, false);
		return;
	}
	for (int tries = 0; tries < TRIES; tries++) {
		uint64_t mw = st_load_relaxed(mask_word), cur, word, tail, begin, last, at, head, n;
		uint64_t new_word, new_tail;
		uint8_t *dst;
		uint32_t cpu = st__rseq_cpu(), off, idx;
		struct st_abi_subbuf *ctl;
		struct st_abi_slot *slot;
		bool thread_rec;

		if (!((uint32_t)(mw >> half) & (1u << s)))
			return; /* switched off since the caller looked: no event */
		if (cpu >= p->nslots) {
			if (st__control)
				st_add_relaxed(&st__control->lost_no_buffer[s], 1);
			return;
		}
		if (!p->writers[cpu].populated && !st__pool_claim_cpu(p, cpu)) {
			if (st__control)
				st_add_relaxed(&st__control->lost_no_memory[s], 1);
			return;
		}
		slot = slot_of(p, cpu);
		cur = st_load_relaxed(&slot->cur);
		/* (the index of cur, stored with it; a torn pair makes the
		 * commit's compare of cur fail) */
		idx = (uint32_t)st_load_relaxed(&slot->cur_pad);
		if (idx >= p->sb_count)
			idx = 0;
		ctl = &slot->sb[idx];
		word = st_load_relaxed(&ctl->commit);
		tail = st_load_relaxed(&ctl->tail);
		begin = st_load_relaxed(&ctl->begin_ts);
		if (st_load_relaxed(&ctl->seq) != cur + 1) {
			if (!move_on(p, t, slot, cpu, cur, ts, mask, nested, &tries))
				return;
			continue;
		}
		off = ST_ABI_COMMIT_OFF(word);
		thread_rec = (int32_t)(word >> 32) != key || off == 0;
		last = begin + ST_ABI_TAIL_TIME(tail);
		at = ts < last ? last : ts; /* never back within the stream */
		head = (uint64_t)(compose_head(rec, thread_rec, tid, p->writer, id, at, last, site) - rec);
		n = head + len;
		/* (a full sub-buffer; or its tail word would overflow: a
		 * sub-buffer idle for minutes, or 16M events in one) */
		if (off + n + ST_PAYLOAD_SLACK > p->sb_size || at - begin > ST_ABI_TAIL_TIME_MAX ||
		    ST_ABI_TAIL_EVENTS(tail) == ST_ABI_TAIL_EVENTS_MAX) {
			if (!move_on(p, t, slot, cpu, cur, at, mask, nested, &tries))
				return;
			continue;
		}
		/* (the chunk it ends in, and the next: resident before) */
		ensure_resident(p, cpu, st_abi_subbuf_offset(p->sb_size, idx) + off + n);
		dst = (uint8_t *)slot + p->geo.hdr_size + st_abi_subbuf_offset(p->sb_size, idx) + off;
		new_word = (off + n) | (uint64_t)(uint32_t)key << 32;
		new_tail = ((ST_ABI_TAIL_EVENTS(tail) + 1) << ST_ABI_TAIL_TIME_BITS) | (at - begin);
		/* (the header's last word may run into the payload's bytes:
		 * the payload's copy comes after and writes them) */
		if (st__commit_record(st__rseq_area(), cpu, &slot->cur, cur, &ctl->commit, word, mask_word,
				  mw, dst, rec, (head + 7) / 8, dst + head, payload, (len + 7) / 8,
				  _mm_set_epi64x((long long)new_tail, (long long)new_word)))
			return;
	}
	st__percpu_lost(p, false);
}
