/*
 * The event writer: what an enabled tracepoint runs.
 *
 * Fast path (every event): check the thread's busy flag, read the process
 * id from st__live, then for each session in the mask: bump the thread's
 * write offset in its current sub-buffer, copy the record, publish the new
 * commit offset with a release store. No lock, no system call, no atomic
 * read-modify-write, no allocation; errno untouched.
 *
 * Slow path (first event of a thread, full sub-buffer, session recreated):
 * claim a ring buffer from the session's pool, close the full sub-buffer and
 * open the next. It may make system calls (pool creation, the sub-buffer
 * notification); it saves and restores errno.
 *
 * Stop: each record is bracketed by slot->writing = 1 ... 0 (plain stores
 * to the slot's own cache line), and between the two the writer reads the
 * session's enable bit again. The daemon stopping a session clears the
 * bits, then runs membarrier(MEMBARRIER_CMD_GLOBAL), which puts a full
 * barrier in every running thread: afterwards a writer either sees the
 * bit clear (and writes nothing) or had already set `writing`, which the
 * daemon waits to see back at 0 before its final drain. No fence here.
 *
 * Reentrancy: st__tls.busy is 1 while an event is written and 2 while tracer
 * code runs. A tracepoint hit meanwhile (a signal handler interrupting a
 * write, or a traced call the tracer makes itself) is not written: for
 * busy == 1 it is counted as lost (lost_nested), so the interrupted record
 * is never torn and nothing disappears without a count.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"
#include "sys.h"

static pthread_key_t exit_key;
static int exit_key_ok;

/* A signal handler interrupted an event write: count what it would write. */
static void drop_nested(struct st__thread *t, uint32_t mask)
{
	if (t->busy != 1)
		return; /* tracer internals: the tracer's own calls are not events */
	while (mask) {
		uint32_t s = (uint32_t)__builtin_ctz(mask);
		struct st__writer *w = t->w[s];

		mask &= mask - 1;
		if (w)
			/* One instruction: a further nested handler cannot split it,
			 * and only this thread writes this slot's counters. */
			__asm__ __volatile__("addq $1, %0" : "+m"(w->slot->lost_nested));
		else if (st__control)
			__atomic_fetch_add(&st__control->lost_no_buffer[s], 1, __ATOMIC_RELAXED);
	}
}

static void count_no_buffer(uint32_t s, bool no_memory)
{
	if (st__control)
		__atomic_fetch_add(no_memory ? &st__control->lost_no_memory[s]
					     : &st__control->lost_no_buffer[s],
				   1, __ATOMIC_RELAXED);
}

static void count_full(struct st__writer *w)
{
	w->lost_full++;
	__atomic_store_n(&w->slot->lost_full, w->lost_full, __ATOMIC_RELAXED);
}

void st__writer_close(struct st__writer *w)
{
	struct st_abi_subbuf_msg m = {
		.hdr = { ST_MSG_SUBBUF, sizeof(m) },
		.session = w->pool->session,
		.slot = w->index,
	};

	w->ctl->events = w->events;
	w->ctl->lost = w->lost_full + w->overwritten +
		       __atomic_load_n(&w->slot->lost_nested, __ATOMIC_RELAXED);
	__atomic_store_n(&w->ctl->closed, 1, __ATOMIC_RELEASE);
	w->closed = true;
	w->off = w->sb_size; /* any further write takes the slow path */
	st__reg_notify(&m, sizeof(m));
}

/*
 * Moves w to its next sub-buffer. Returns false when the buffer is full
 * (discard mode: the consumer has not freed the oldest sub-buffer yet).
 */
static bool writer_switch(struct st__writer *w)
{
	struct st_abi_slot *slot = w->slot;
	uint32_t n = w->pool->sb_count;
	struct st_abi_subbuf *ctl;
	uint64_t next;

	if (w->opened && !w->closed)
		st__writer_close(w);
	next = w->opened ? w->seq + 1 : 0;
	if (w->pool->mode == ST_MODE_DISCARD) {
		uint64_t rseq = __atomic_load_n(&slot->rseq, __ATOMIC_ACQUIRE);

		if (next - rseq >= n)
			return false;
	}
	ctl = &slot->sb[next % n];
	if (w->pool->mode == ST_MODE_OVERWRITE && ctl->seq != 0) {
		w->overwritten += ctl->events;
		__atomic_store_n(&slot->overwritten, w->overwritten, __ATOMIC_RELAXED);
	}
	ctl->commit = 0;
	ctl->events = 0;
	ctl->closed = 0;
	__atomic_store_n(&ctl->seq, next + 1, __ATOMIC_RELEASE);
	/* Overwrite mode: the new data must not become visible before the new
	 * sequence number, or a snapshot could keep a mixed copy. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	w->seq = next;
	w->opened = true;
	w->closed = false;
	w->off = 0;
	w->events = 0;
	w->ctl = ctl;
	w->sb = w->data + (next % n) * (uint64_t)w->sb_size;
	return true;
}

static struct st__writer *writer_acquire(struct st__thread *t, uint32_t s, bool *no_memory)
{
	struct st__pool *pool = st__pool_get(s);
	struct st__writer *w;

	if (!pool)
		return NULL;
	if (!t->tid)
		t->tid = st__gettid();
	w = st__pool_claim(pool, t->tid, no_memory);
	if (!w)
		return NULL;
	if (!t->exit_hook && exit_key_ok) {
		/* The thread's buffers are flushed by this key's destructor. */
		pthread_setspecific(exit_key, (void *)1);
		t->exit_hook = true;
	}
	t->w[s] = w;
	return w;
}

static __attribute__((noinline)) struct st__writer *
writer_slow(struct st__thread *t, uint32_t s, uint32_t rec)
{
	int saved_errno = errno;
	struct st__writer *w = t->w[s];

	if (w && w->generation != *w->live_generation) {
		/* The session was destroyed or recreated since w was claimed. */
		st__writer_release(w);
		t->w[s] = NULL;
		w = NULL;
	}
	if (!w) {
		bool no_memory = false;

		w = writer_acquire(t, s, &no_memory);
		if (!w) {
			/* A session switched off while this event was under way
			 * (stop, destroy) did not lose it: it had ended. */
			if (st__control && __atomic_load_n(&st__control->session[s].generation,
							   __ATOMIC_RELAXED))
				count_no_buffer(s, no_memory);
			goto out;
		}
	}
	st__reg_offer_pool(w->pool); /* (until the daemon has it) */
	if (rec > w->sb_size || (w->off + rec > w->sb_size && !writer_switch(w))) {
		count_full(w);
		w = NULL;
	}
out:
	errno = saved_errno;
	return w;
}

/*
 * Copies a payload in whole 8-byte words: up to 7 bytes past `len` are read
 * (the emitters' buffers have ST_PAYLOAD_SLACK spare bytes) and written
 * (the fast path keeps that much room at the end of the sub-buffer, and
 * bytes past the commit offset are not data yet). Payloads are a few dozen
 * bytes: a call to memcpy would cost more than the copy.
 */
static inline void copy_words(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	for (uint32_t i = 0; i < len; i += 8) {
		uint64_t v;

		memcpy(&v, src + i, 8);
		memcpy(dst + i, &v, 8);
	}
}

ST_API ST_TLS_USER void st_event_write(const struct st_tracepoint *tp, uint32_t mask, uint64_t ts,
			   const void *ip, const void *payload, uint32_t len)
{
	struct st__thread *t = &st__tls;
	struct st_abi_record h;
	uint32_t rec;

	if (__builtin_expect(t->busy != 0, 0)) {
		drop_nested(t, mask);
		return;
	}
	t->busy = 1;
	st__barrier();
	h.vpid = st__live->pid;
	if (__builtin_expect(h.vpid == 0, 0))
		goto out; /* not registered, or a fork child not yet registered */
	h.id = (uint16_t)tp->state->id[tp->slot];
	h.ip = (uint64_t)(uintptr_t)ip;
	rec = ST_ABI_RECORD_HDR + len;
	do {
		uint32_t s = (uint32_t)__builtin_ctz(mask);
		struct st__writer *w = t->w[s];
		uint8_t *p;

		mask &= mask - 1;
		if (__builtin_expect(w == NULL || w->off + rec + ST_PAYLOAD_SLACK > w->sb_size ||
					     w->generation != *w->live_generation,
				     0)) {
			int tsc = st__clock_tsc;

			w = writer_slow(t, s, rec);
			if (!w)
				continue;
			/* The slow path connected to a daemon that found the process
			 * running, and took its clock: ts is of the old one. */
			if (__builtin_expect(tsc != st__clock_tsc, 0))
				ts = st_clock_read();
		}
		__atomic_store_n(&w->slot->writing, 1, __ATOMIC_RELAXED);
		st__barrier();
		/* (the bit again: a stop may have cleared it since the caller
		 * looked; see the top of the file) */
		if (__builtin_expect(!(__atomic_load_n(&tp->state->mask[tp->slot], __ATOMIC_RELAXED) &
				       (1u << s)),
				     0)) {
			__atomic_store_n(&w->slot->writing, 0, __ATOMIC_RELEASE);
			continue;
		}
		if (ts < w->last_ts)
			ts = w->last_ts; /* never backwards within a stream */
		w->last_ts = ts;
		h.timestamp = ts;
		h.vtid = t->tid; /* known once the thread has a buffer */
		p = w->sb + w->off;
		memcpy(p, &h, sizeof(h));
		if (__builtin_expect(w->off + rec + ST_PAYLOAD_SLACK <= w->sb_size, 1))
			copy_words(p + sizeof(h), payload, len);
		else
			memcpy(p + sizeof(h), payload, len); /* the slow path let it in */
		w->off += rec;
		w->events++;
		__atomic_store_n(&w->ctl->commit, w->off, __ATOMIC_RELEASE);
		__atomic_store_n(&w->slot->writing, 0, __ATOMIC_RELEASE);
	} while (mask);
out:
	st__barrier();
	t->busy = 0;
}

ST_TLS_USER void st__thread_flush(void)
{
	struct st__thread *t = &st__tls;
	uint32_t busy = t->busy;

	t->busy = 2;
	st__barrier();
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		if (t->w[s]) {
			st__writer_release(t->w[s]);
			t->w[s] = NULL;
		}
	}
	t->exit_hook = false;
	st__barrier();
	t->busy = busy;
}

/* Fork child: the writers in t->w belong to the parent's buffers. */
ST_TLS_USER void st__thread_forget(void)
{
	struct st__thread *t = &st__tls;

	memset(t->w, 0, sizeof(t->w));
	t->tid = 0;
}

static void thread_exit(void *arg)
{
	(void)arg;
	st__thread_flush();
}

/*
 * The exit hook is a thread-specific value whose destructor releases the
 * thread's buffers. glibc keeps the values of the first 32 keys in the
 * thread itself; a later key (this library loaded late, by load-probe,
 * into a program that made many keys) would make pthread_setspecific
 * allocate, which the writer must not do. Without the hook, the slot of an
 * exited thread is taken over when no free one is left (pool.c).
 */
void st__writer_init(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0)
		return;
	if (exit_key < 32)
		exit_key_ok = 1;
	else
		pthread_key_delete(exit_key);
}
