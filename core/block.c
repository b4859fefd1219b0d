/*
 * Blocking sessions (--blocking): the one wait the event path makes.
 *
 * A writer whose buffer is full (discard mode: the consumer has not given
 * the oldest sub-buffer back yet) waits here, on the slow path, instead of
 * dropping the event, when the user made the session blocking. No thread
 * of ours runs meanwhile: the writing thread sleeps on a shared futex (the
 * low half of slot.rseq, core/abi.h) in slices of at most SLICE_MS, and the
 * consumer wakes it when it gives a sub-buffer back. Between slices it
 * looks again at what ends the wait:
 *
 *   room           the consumer gave a sub-buffer back: the event is written
 *   session over   its generation changed (stop, destroy) or the event was
 *                  disabled: the event is not written and not lost, as when
 *                  the session is off
 *   TIMEOUT        --blocking=TIMEOUT passed: the event is lost (counted),
 *                  and so is every event the thread writes until its buffer
 *                  has room again, without a wait each
 *   daemon gone    the event is lost (counted), and no thread of the
 *                  process waits for this pool again until the daemon's
 *                  heartbeat moves
 *
 * The daemon is gone when its heartbeat (control.heartbeat, raised every
 * ST_ABI_HEARTBEAT_MS, 100 ms, while it serves the process; it counts only
 * once the daemon has taken the pool, control.pool_taken) has stood still
 * for DEAD_MS and its process has exited (a pidfd of control.daemon_pid
 * says so, a zombie too), or has stood still for STALE_MS whatever its
 * process does (it dropped this process, or it is stopped). A daemon that
 * is only slow, on a busy machine, still lives: its writers wait. (From
 * another pid namespace daemon_pid may name no process, or another: then
 * the heartbeat alone decides, after DEAD_MS or STALE_MS.) The control
 * socket is not looked at: a daemon may serve a process whose connection
 * is closed.
 *
 * A slice that ends with nothing changed repeats the sub-buffer notice, in
 * case the one sent at the close did not go (the connection lock busy, the
 * socket full): the daemon then drains this buffer at once rather than on
 * its next timer; and it offers the pool again if the daemon never got it
 * (the first offer found the lock busy or the socket full).
 *
 * Signals: a handler that interrupts the wait (or any event write) and
 * writes an event finds st__tls.busy set: its event is counted as nested
 * and never waits. A handler that writes while its thread was elsewhere
 * may wait here, as the thread itself would, within the same bounds.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <time.h>

#include "internal.h"
#include "sys.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define SLICE_MS 20
#define DEAD_MS 2000
#define STALE_MS 10000

/* A heartbeat that stood still for DEAD_MS missed many beats, not one
 * late beat of a busy daemon. */
_Static_assert(DEAD_MS >= 10 * ST_ABI_HEARTBEAT_MS,
	       "a daemon is judged gone after ten missed heartbeats at least");

static uint64_t now_ms(void)
{
	return st__clock_monotonic() / 1000000u;
}

/* Whether the daemon's process has exited, as far as this process can see. */
static bool daemon_exited(void)
{
	int32_t pid = st_load_relaxed(&st__control->daemon_pid);
	struct pollfd p = { .events = POLLIN };
	long fd;
	bool exited;

	if (pid <= 0)
		return true;
	fd = st__sys2(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		/* (no pidfds: a zombie daemon passes for alive, STALE_MS decides) */
		return fd == -ESRCH || st__sys2(SYS_kill, pid, 0) == -ESRCH;
	p.fd = (int)fd;
	exited = st__sys3(SYS_poll, &p, 1, 0) > 0;
	st__close((int)fd);
	return exited;
}

/* The daemon's heartbeat as last seen, and since when (ms). */
struct beat {
	uint64_t value, since;
};

static uint64_t heartbeat(void)
{
	return st_load_relaxed(&st__control->heartbeat);
}

/* Whether the daemon has mapped pool p (it says so in the control page). */
static bool pool_taken(const struct st__pool *p)
{
	return st_load_acquire(&st__control->pool_taken[p->session]) == p->generation;
}

static bool daemon_gone(struct beat *b, const struct st__pool *p, uint64_t now)
{
	uint64_t v = heartbeat();

	/* (a daemon that has not taken the pool does not serve this buffer:
	 * as if its heartbeat stood still) */
	if (v != b->value && pool_taken(p)) {
		b->value = v;
		b->since = now;
		return false;
	}
	return now - b->since >= STALE_MS || (now - b->since >= DEAD_MS && daemon_exited());
}

/* The same test as writer_switch's (or, for a CPU's buffer, percpu.c's
 * open_next): the consumer freed the next sub-buffer. */
static bool room(const struct st__writer *w, uint64_t rseq)
{
	uint64_t next;

	if (w->percpu)
		next = st__percpu_next(w->pool, w->slot, st_load_relaxed(&w->slot->cur));
	else
		next = w->opened ? w->seq + 1 : 0;
	return next - rseq < w->pool->sb_count;
}

enum st__wait st__block_wait(struct st__writer *w, const uint32_t *enabled)
{
	struct st__pool *p = w->pool;
	struct st_abi_slot *slot = w->slot;
	uint32_t bit = 1u << p->session;
	uint64_t start = now_ms();
	struct beat b = { heartbeat(), start };
	enum st__wait ret;

	uint64_t unserved = st_load_relaxed(&p->unserved);

	/* (found gone before: waits again once the heartbeat moved on with
	 * the pool taken) */
	/* (a CPU's buffer is shared by the threads that run there: its
	 * gave_up too, read and written as such) */
	if (st_load_relaxed(&w->gave_up) ||
	    (unserved && (unserved == 1 + b.value || !pool_taken(p))))
		return ST_WAIT_LOST;
	for (;;) {
		struct timespec slice = { 0, SLICE_MS * 1000000L };
		uint64_t rseq, now;
		long r;

		/* Announce the wait, then look (see core/abi.h): either the
		 * consumer sees `waiting` after its store of rseq, or we see
		 * its new rseq here and do not sleep. */
		st_store_seq_cst(&slot->waiting, 1);
		st_fence_full();
		rseq = st_load_acquire(&slot->rseq);
		if (room(w, rseq)) {
			ret = ST_WAIT_ROOM;
			break;
		}
		if (st_load_acquire(w->live_generation) != w->generation ||
		    !(st_load_relaxed(enabled) & bit)) {
			ret = ST_WAIT_ENDED;
			break;
		}
		now = now_ms();
		if (p->block_ms != ST_ABI_BLOCK_FOREVER) {
			if (now - start >= p->block_ms) {
				st_store_relaxed(&w->gave_up, true);
				ret = ST_WAIT_LOST;
				break;
			}
			if (p->block_ms - (now - start) < SLICE_MS)
				slice.tv_nsec = (long)(p->block_ms - (now - start)) * 1000000L;
		}
		if (daemon_gone(&b, p, now)) {
			st_store_relaxed(&p->unserved, 1 + b.value);
			ret = ST_WAIT_LOST;
			break;
		}
		/* A shared futex (not FUTEX_PRIVATE): the daemon wakes it
		 * through its own mapping of the pool. */
		r = st__sys4(SYS_futex, &slot->rseq, FUTEX_WAIT, (uint32_t)rseq, &slice);
		if (r == -ETIMEDOUT) {
			st__reg_offer_pool(p); /* (if an earlier offer could not go) */
			st__reg_subbuf_ready(p->session, w->index);
		}
	}
	st_store_relaxed(&slot->waiting, 0);
	return ret;
}
