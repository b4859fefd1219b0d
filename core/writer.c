/*
 * The event writer: what an enabled tracepoint runs.
 *
 * Fast path (every event): check the thread's busy flag, read the process
 * id from st__live, then for each session in the mask: write the record at
 * the thread's write offset in its current sub-buffer (a 4-byte header when
 * the id and the time since the previous record fit, see core/abi.h),
 * publish the new commit offset with a release store. No lock, no system
 * call, no atomic read-modify-write, no allocation; errno untouched.
 *
 * Slow path (first event of a thread, full sub-buffer, session recreated):
 * claim a ring buffer from the session's pool, close the full sub-buffer and
 * open the next, and write the thread record that begins each sub-buffer
 * and each new owner's records. It makes system calls (pool creation and
 * mapping, a claimed buffer made resident, tgkill's signal 0 to find a
 * dead owner's buffer, the pool or the sub-buffer notice sent when the
 * connection lock is free: pool.c, registration.c) and takes try-locks
 * only; it saves and restores errno. Two waits: for a pool another thread
 * is making (once per session and process, about 0.1 ms, at most 10 ms:
 * pool.c), and in a blocking session (--blocking) for the consumer when a
 * buffer is full (block.c), only when the user asked for it.
 *
 * Stop: each record is bracketed by slot->writing = 1 ... 0 (a relaxed and
 * a release store: plain moves on x86-64), and between the two the writer
 * reads the session's enable bit again. The daemon stopping a session
 * clears the bits, then runs membarrier(MEMBARRIER_CMD_GLOBAL), which puts
 * a full barrier in every running thread: afterwards a writer either sees
 * the bit clear (and writes nothing) or had already set `writing`, which
 * the daemon waits to see back at 0 before its final drain. No fence here.
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
#include "percpu_common.h"
#include "sys.h"

static pthread_key_t exit_key;
static int exit_key_ok;

/*
 * A signal handler interrupted an event write. A per-CPU buffer takes its
 * event all the same: the interrupted record is prepared on its own stack
 * frame and committed by a restartable sequence, which the commit made
 * here makes it prepare again (percpu.c). A thread's own buffer would be
 * torn: the event is counted instead.
 */
static void nested(struct st__thread *t, const struct st_tracepoint *tp, uint32_t mask,
		   uint64_t ts, uint64_t site, const void *payload, uint32_t len)
{
	if (t->busy != 1)
		return; /* tracer internals: the tracer's own calls are not events */
	while (mask) {
		uint32_t s = (uint32_t)__builtin_ctz(mask);
		struct st__writer *w = t->w[s];

		mask &= mask - 1;
		/* (a fork child not registered yet writes nothing, as below) */
		if (w && w->percpu && w->generation == *w->live_generation && st__live->pid != 0)
			st__percpu_event(w->pool, t, tp, s, tp->state->id[tp->slot], ts, site, payload,
					 len, true);
		else if (w && w->percpu)
			st__percpu_lost(w->pool, true);
		else if (w)
			/* One instruction: a further nested handler cannot split it,
			 * and only this thread writes this slot's counters. */
			st_add_unlocked(&w->slot->lost_nested, 1);
		else if (st__control)
			st_add_relaxed(&st__control->lost_no_buffer[s], 1);
	}
}

static void count_no_buffer(uint32_t s, bool no_memory)
{
	if (st__control)
		st_add_relaxed(no_memory ? &st__control->lost_no_memory[s]
					 : &st__control->lost_no_buffer[s],
			       1);
}

static void count_full(struct st__writer *w)
{
	w->lost_full++;
	st_store_relaxed(&w->slot->lost_full, w->lost_full);
}

void st__writer_close(struct st__writer *w)
{
	w->ctl->events = w->events;
	w->ctl->lost = w->lost_full + w->overwritten +
		       st_load_relaxed(&w->slot->lost_nested);
	st_store_release(&w->ctl->closed, 1);
	w->closed = true;
	w->off = w->sb_size; /* any further write takes the slow path */
	st__reg_subbuf_ready(w->pool->session, w->index);
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
		uint64_t rseq = st_load_acquire(&slot->rseq);

		if (next - rseq >= n)
			return false;
	}
	ctl = &slot->sb[next % n];
	if (w->pool->mode == ST_MODE_OVERWRITE && ctl->seq != 0) {
		w->overwritten += ctl->events;
		st_store_relaxed(&slot->overwritten, w->overwritten);
	}
	ctl->commit = 0;
	ctl->events = 0;
	ctl->closed = 0;
	st_store_release(&ctl->seq, next + 1);
	/* Overwrite mode: the new data must not become visible before the new
	 * sequence number, or a snapshot could keep a mixed copy. */
	st_fence_release();
	w->seq = next;
	w->opened = true;
	w->closed = false;
	w->off = 0;
	w->events = 0;
	w->ctl = ctl;
	w->sb = w->data + st_abi_subbuf_offset(w->sb_size, (uint32_t)(next % n));
	w->tid = 0; /* a sub-buffer begins with a thread record */
	return true;
}

/*
 * The thread record that says whose records follow, and from when: the
 * daemon reads the records after it without the ones before (a sub-buffer
 * is read on its own), so its timestamp is whole. Not an event: counted
 * nowhere, and not given to readers.
 */
static void write_thread_record(struct st__writer *w, int32_t tid, uint64_t ts)
{
	st__put_thread_record(w->sb + w->off, tid, ts);
	w->off += ST_ABI_THREAD_REC;
	w->tid = tid;
	w->last_ts = ts;
	st_store_release(&w->ctl->commit, w->off);
}

/*
 * A buffer of session s's pool for t, or NULL (*no_memory: for want of a
 * grant, not of a slot). A thread that found none looks again only when
 * the pool changed (a slot given back, a new grant) or every
 * ST_NOBUF_RETRY events, which also finds the slots of threads that died
 * without giving theirs back: until then its events cost this check.
 */
static struct st__writer *writer_acquire(struct st__thread *t, uint32_t s, bool *no_memory)
{
	struct st__pool *pool = st__pool_get(s, false);
	struct st__writer *w;
	uint32_t mark;

	/* (per-user buffers: the daemon sent its pool on the socket; a
	 * socket in use by registration costs this event, lost) */
	if (!pool && st__pool_from_daemon(s) && st__reg_receive())
		pool = st__pool_get(s, true);
	if (!pool)
		return NULL;
	mark = st__pool_mark(pool);
	if (t->nobuf_mark[s] == mark && t->nobuf_skip[s]) {
		t->nobuf_skip[s]--;
		*no_memory = t->nobuf_memory >> s & 1;
		return NULL;
	}
	if (!t->tid)
		t->tid = st__gettid();
	if (pool->percpu) {
		/* (every thread writes through the pool: its first writer
		 * stands for it) */
		t->w[s] = &pool->writers[0];
		return t->w[s];
	}
	w = st__pool_claim(pool, t->tid, no_memory);
	if (!w) {
		t->nobuf_mark[s] = mark;
		t->nobuf_skip[s] = ST_NOBUF_RETRY;
		t->nobuf_memory = (t->nobuf_memory & ~(1u << s)) | (uint32_t)*no_memory << s;
		return NULL;
	}
	t->nobuf_mark[s] = 0;
	if (!t->exit_hook && exit_key_ok) {
		/* The thread's buffers are flushed by this key's destructor. */
		pthread_setspecific(exit_key, (void *)1);
		t->exit_hook = true;
	}
	t->w[s] = w;
	return w;
}

/*
 * Moves w on to its next sub-buffer; when the buffer is full, a blocking
 * session's writer first waits for room (block.c). NULL when the event is
 * not written: counted as lost, or not at all if its session ended or it
 * was disabled during the wait.
 */
static struct st__writer *writer_room(struct st__writer *w, const uint32_t *enabled)
{
	for (;;) {
		enum st__wait r;

		if (writer_switch(w)) {
			w->gave_up = false;
			return w;
		}
		r = w->pool->block_ms ? st__block_wait(w, enabled) : ST_WAIT_LOST;
		if (r == ST_WAIT_ENDED)
			return NULL;
		if (r == ST_WAIT_LOST) {
			count_full(w);
			return NULL;
		}
	}
}

/*
 * Makes room for a record of at most rec bytes (header and ip included)
 * and the thread record before it if one is due; NULL when the event is
 * not written (counted, unless the session had ended). *ts is the event's
 * time, read again if the slow path took a daemon's clock; tp its
 * tracepoint (a blocking wait looks at its enable bit).
 */
static __attribute__((noinline)) struct st__writer *
writer_slow(struct st__thread *t, uint32_t s, uint32_t rec, uint64_t *ts,
	    const struct st_tracepoint *tp)
{
	int saved_errno = errno, tsc = st__clock_tsc;
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
			if (st__control && st_load_relaxed(&st__control->session[s].generation))
				count_no_buffer(s, no_memory);
			goto out;
		}
	}
	st__reg_offer_pool(w->pool); /* (until the daemon has it) */
	if (w->percpu)
		goto out; /* (percpu.c writes the event) */
	/* The slow path connected to a daemon that found the process running,
	 * and took its clock: ts is of the old one. */
	if (__builtin_expect(tsc != st__clock_tsc, 0))
		*ts = st_clock_read();
	if (*ts < w->last_ts)
		*ts = w->last_ts;
	if (rec + ST_ABI_THREAD_REC + ST_PAYLOAD_SLACK > w->sb_size) {
		count_full(w);
		w = NULL;
		goto out;
	}
	if (w->off + rec + ST_PAYLOAD_SLACK > w->sb_size ||
	    (w->tid != t->tid && w->off + ST_ABI_THREAD_REC + rec + ST_PAYLOAD_SLACK > w->sb_size)) {
		w = writer_room(w, &tp->state->mask[tp->slot]);
		if (!w)
			goto out;
	}
	if (w->tid != t->tid)
		write_thread_record(w, t->tid, *ts);
out:
	errno = saved_errno;
	return w;
}

/* Any event st_event_write's first try did not write. */
static ST_TLS_USER __attribute__((noinline)) void
event_write(const struct st_tracepoint *tp, uint32_t mask, uint64_t ts, uint64_t site,
	    const void *payload, uint32_t len)
{
	struct st__thread *t = &st__tls;
	uint32_t id, rec;

	if (__builtin_expect(t->busy != 0, 0)) {
		nested(t, tp, mask, ts, site, payload, len);
		return;
	}
	t->busy = 1;
	st_barrier();
	if (__builtin_expect(st__live->pid == 0, 0))
		goto out; /* not registered, or a fork child not yet registered */
	id = tp->state->id[tp->slot];
	/* (room is checked for the extended form: one comparison) */
	rec = ST_ABI_RECORD_MAX_HDR + len;
	do {
		uint32_t s = (uint32_t)__builtin_ctz(mask);
		struct st__writer *w = t->w[s];
		uint64_t delta;
		uint8_t *p;

		mask &= mask - 1;
		if (__builtin_expect(w == NULL || w->off + rec + ST_PAYLOAD_SLACK > w->sb_size ||
					     w->generation != *w->live_generation,
				     0)) {
			/* (a per-CPU pool's writer always comes here: its off
			 * stays at the end) */
			if (!w || !w->percpu || w->generation != *w->live_generation)
				w = writer_slow(t, s, rec, &ts, tp);
			if (!w)
				continue;
			if (w->percpu) {
				st__percpu_event(w->pool, t, tp, s, id, ts, site, payload, len,
						 false);
				continue;
			}
		}
		st_store_relaxed(&w->slot->writing, 1);
		st_barrier();
		/* (the bit again: a stop may have cleared it since the caller
		 * looked; see the top of the file) */
		if (__builtin_expect(!(st_load_relaxed(&tp->state->mask[tp->slot]) & (1u << s)), 0)) {
			st_store_release(&w->slot->writing, 0);
			continue;
		}
		if (ts < w->last_ts)
			ts = w->last_ts; /* never backwards within a stream */
		delta = ts - w->last_ts;
		w->last_ts = ts;
		p = w->sb + w->off;
		p = st__put_header(p, id, ts, delta, site);
		/* (the ST_PAYLOAD_SLACK bytes of room past the record cover the
		 * header's stores and the copy's last word) */
		st__copy_words(p, payload, len);
		p += len;
		w->off = (uint32_t)(p - w->sb);
		w->events++;
		st_store_release(&w->ctl->commit, w->off);
		st_store_release(&w->slot->writing, 0);
	} while (mask);
out:
	st_barrier();
	t->busy = 0;
}

/*
 * First, the common case on per-CPU buffers, with nothing to look up: one
 * session, the thread's last record in it was on this CPU (t->pc), and
 * its generation is still the live one (a fork child's thread has none:
 * st__thread_forget).
 */
ST_API ST_TLS_USER void st_event_write(const struct st_tracepoint *tp, uint32_t mask, uint64_t ts,
			   const void *ip, const void *payload, uint32_t len)
{
	struct st__thread *t = &st__tls;
	uint64_t site = (uint64_t)(uintptr_t)ip;

	if (__builtin_expect(t->busy == 0, 1)) {
		bool done = false;

		/* (busy first: a signal handler's event in between may fill
		 * t->pc for another session) */
		t->busy = 1;
		st_barrier();
		if (__builtin_expect(mask == t->pc.mask, 1) &&
		    __builtin_expect(st_load_relaxed(t->pc.live_gen) == t->pc.gen, 1))
			done = st__percpu_cached(t, tp, ts, site, payload, len);
		st_barrier();
		t->busy = 0;
		if (done)
			return;
	}
	event_write(tp, mask, ts, site, payload, len);
}

ST_TLS_USER void st__thread_flush(void)
{
	struct st__thread *t = &st__tls;
	uint32_t busy = t->busy;

	t->busy = 2;
	st_barrier();
	t->pc.mask = 0;
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		if (t->w[s]) {
			st__writer_release(t->w[s]);
			t->w[s] = NULL;
		}
	}
	t->exit_hook = false;
	st_barrier();
	t->busy = busy;
}

/* Fork child: the writers in t->w belong to the parent's buffers. */
ST_TLS_USER void st__thread_forget(void)
{
	struct st__thread *t = &st__tls;

	memset(t->w, 0, sizeof(t->w));
	t->pc.mask = 0;
	memset(t->nobuf_mark, 0, sizeof(t->nobuf_mark));
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
