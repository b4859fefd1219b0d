/*
 * Buffer memory: the grants of processes within the bounds of their
 * sessions, of the daemon and of their users (memory.h has the policy).
 *
 * Everything runs on the daemon's one thread. The control pages are the
 * processes' memory: the daemon reads only their claim counts there
 * (bounded by the pool's size), honours a claim only while the pool's
 * pages can back it, and counts its own decisions, never what a process
 * writes, in the bounds.
 *
 * Owns: the buffer memory bounds (the daemon's, each session's, each
 *       user's) and each process's grants (its memory part).
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, model.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/model/userpool.h"
#include "ctl/daemon/wire/ring.h"

/* Taking back a grant stops after this many tries (each try that fails
 * saw a claim, so the next looks further). */
#define TAKE_BACK_TRIES 64
/* A claim whose buffer has no pages this long is not honoured any more
 * (a thread makes its buffer's pages resident as it claims it: 30 to 70
 * ms for 32 MiB here, seconds on a machine short of memory). */
#define UNBACKED_MS 5000
/* A pool holding more pages than the bounds let it have this long is
 * refused. */
#define OVER_MS 10000
/* Buffers checked for pages in one look at a grant (the rest at the next
 * tick). */
#define CHECKS_PER_LOOK 64
/* How often the pages of every pool are counted (a system call per pool
 * and session: not at every tick). */
#define COUNT_EVERY_MS 1000

/* The time of the last tick: the deadlines above count in it; and
 * whether this tick counts the pages of the pools. */
static uint64_t clock_ms, counted_ms;
static bool count_pages;

static uint64_t free_of(const struct st_membound *m)
{
	return m->bound > m->granted ? m->bound - m->granted : 0;
}

/* The account p's grants count against: its user's, but for the daemon's
 * own user (root's processes, for the system daemon; every process, for a
 * user's daemon or record's), whose bounds are the sessions' alone. */
static struct st_user *account(const struct st_daemon *d, const struct st_proc *p)
{
	return p->uid == d->uid ? NULL : p->user;
}

/* The same for a per-user pool of uid's (userpool.c). */
static struct st_user *account_of(const struct st_daemon *d, uid_t uid)
{
	return uid == d->uid ? NULL : st_user_of(uid);
}

/* What account u (NULL: none) has free of its memory quota. */
static uint64_t user_free(const struct st_user *u)
{
	uint64_t limit = st_quota_limit(ST_Q_MEMORY);

	if (!u)
		return UINT64_MAX;
	return limit > u->used[ST_Q_MEMORY] ? limit - u->used[ST_Q_MEMORY] : 0;
}

/* Buffers of session ses that fit in the bounds of p now, at most want. */
static uint32_t fit(const struct st_daemon *d, const struct st_session *ses,
		    const struct st_proc *p, uint32_t want)
{
	uint64_t f = free_of(&ses->mem), fd = free_of(&d->mem), fu = user_free(account(d, p));
	uint64_t n = (f < fd ? f : fd);

	n = (n < fu ? n : fu) / ses->slot_bytes;
	return n < want ? (uint32_t)n : want;
}

static void count(struct st_membound *m, uint64_t add, uint64_t sub)
{
	m->granted = m->granted + add - (sub < m->granted + add ? sub : m->granted + add);
	if (m->granted > m->granted_peak)
		m->granted_peak = m->granted;
}

/* Bytes of session ses, held by account u (NULL: none), from now to
 * then, in the bounds of the session, the daemon and u. */
static void charge(struct st_daemon *d, struct st_session *ses, struct st_user *u, uint64_t then,
		   uint64_t now)
{
	count(&ses->mem, then, now);
	count(&d->mem, then, now);
	if (u) {
		u->used[ST_Q_MEMORY] += then;
		st_quota_give(u, ST_Q_MEMORY, now);
	}
}

/* Sets g, p's grant of session ses, to slots, in the bounds (not in the
 * process's control page). */
static void set_slots(struct st_daemon *d, struct st_session *ses, struct st_proc *p,
		      struct st_grant *g, uint32_t slots)
{
	charge(d, ses, account(d, p), (uint64_t)slots * ses->slot_bytes,
	       (uint64_t)g->slots * ses->slot_bytes);
	g->slots = slots;
}

static void publish(struct st_proc *p, uint32_t s, uint32_t slots)
{
	__atomic_store_n(&p->control->slots_allowed[s], slots, __ATOMIC_SEQ_CST);
}

uint32_t st_memory_claimed(const struct st_proc *p, uint32_t s, uint32_t gen, uint32_t nslots)
{
	uint64_t c;

	if (!p->control)
		return 0;
	c = __atomic_load_n(&p->control->slots_claimed[s], __ATOMIC_SEQ_CST);
	if ((uint32_t)(c >> 32) != gen)
		return 0;
	return (uint32_t)c < nslots ? (uint32_t)c : nslots;
}

/* The grant of p in session s, if it has one of the session as it is. */
static struct st_grant *grant_of(const struct st_daemon *d, struct st_proc *p, uint32_t s)
{
	const struct st_session *ses = st_session_at(d, s, p);
	struct st_grant *g = &p->memory.grants[s];

	return ses && !p->conn.ended && p->control && g->generation == ses->generation ? g : NULL;
}

/* Whether every page of the sub-buffers of slot i of ring r is in the
 * pool (the header pages are not looked at: the process reads them all as
 * it looks for a free buffer, which gives them pages). */
static bool slot_backed(const struct st_ring *r, uint32_t i)
{
	off_t start = (off_t)(ST_ABI_PAGE + (uint64_t)i * r->slot_size + r->hdr_size);
	off_t end = (off_t)(ST_ABI_PAGE + (uint64_t)(i + 1) * r->slot_size);

	/* (the pool's size is sealed: these offsets are inside it) */
	return lseek(r->fd, start, SEEK_DATA) == start && lseek(r->fd, start, SEEK_HOLE) >= end;
}

/*
 * The buffers of g (p's grant in session s) whose claims are honoured:
 * all it claimed, but once a claim has waited UNBACKED_MS for its pages,
 * only those whose pages are there. Buffers are claimed lowest first, so
 * g->backed counts the buffers from the first that are known to have
 * their pages (a buffer keeps them: nothing gives pages of a pool back
 * but the process itself, which then spoils only its own share).
 */
static uint32_t held(const struct st_proc *p, uint32_t s, const struct st_grant *g,
		     uint32_t nslots)
{
	uint32_t c = st_memory_claimed(p, s, g->generation, nslots);

	if (g->unbacked_since && clock_ms - g->unbacked_since >= UNBACKED_MS && g->backed < c)
		return g->backed;
	return c;
}

/* Looks again at which of g's claims have their pages (p's pool in
 * session ses, bit s), and at what the pool holds beyond its grant. */
static void check_pages(struct st_daemon *d, struct st_proc *p, struct st_session *ses,
			uint32_t s, struct st_grant *g)
{
	const struct st_proc_pool *pool = &p->pools[s];
	uint32_t c = st_memory_claimed(p, s, g->generation, ses->nslots);
	bool mapped = pool->ring.base && pool->generation == g->generation;
	struct stat st;

	if (mapped && pool->ring.fd < 0)
		g->backed = c; /* (mapped without a descriptor: nothing to ask) */
	for (int n = 0; mapped && g->backed < c && n < CHECKS_PER_LOOK &&
			slot_backed(&pool->ring, g->backed);
	     n++)
		g->backed++;
	if (g->backed < c) {
		if (!g->unbacked_since)
			g->unbacked_since = clock_ms ? clock_ms : 1;
	} else {
		g->unbacked_since = 0;
	}
	/* What the pool holds beyond its headers and what the grant covers:
	 * a process that wrote where it claimed nothing. Granted, if the
	 * bounds have room: it is memory used for the session. */
	if (!count_pages || !mapped || pool->ring.fd < 0 || fstat(pool->ring.fd, &st) < 0)
		return;
	{
		uint64_t heads = ST_ABI_PAGE + (uint64_t)ses->nslots * pool->ring.hdr_size;
		uint64_t data = (uint64_t)st.st_blocks * 512, per = pool->ring.slot_size - pool->ring.hdr_size;
		uint64_t need = data > heads ? (data - heads + per - 1) / per : 0;
		uint32_t n;

		if (need <= g->slots) {
			g->over_since = 0;
			return;
		}
		n = fit(d, ses, p, (uint32_t)(need - g->slots < ses->nslots ? need - g->slots
									 : ses->nslots));
		if (n) {
			set_slots(d, ses, p, g, g->slots + n);
			publish(p, s, g->slots);
		}
		if (need <= g->slots) {
			g->over_since = 0;
		} else if (!g->over_since) {
			g->over_since = clock_ms ? clock_ms : 1;
		} else if (clock_ms - g->over_since >= OVER_MS && !p->memory.over) {
			p->memory.over = true;
			if (p->user)
				p->user->refused[ST_Q_MEMORY]++;
			st_log_user(p->uid, ST_LOG_WARN, "process %d (uid %u) refused: its buffers of session %s hold "
					    "%llu more than it was granted, beyond the memory bounds, "
					    "for %d s",
			       p->pid, (unsigned)p->uid, ses->name,
			       (unsigned long long)((need - g->slots) * ses->slot_bytes), OVER_MS / 1000);
		}
	}
}

/* What g (of p in session s) has granted and not claimed, beyond one
 * buffer: the buffers that can be taken back. */
static uint32_t unclaimed(const struct st_daemon *d, const struct st_proc *p, uint32_t s,
			  const struct st_grant *g)
{
	uint32_t c = held(p, s, g, st_session_at(d, s, p)->nslots);
	uint32_t keep = c > 1 ? c : 1;

	return g->slots > keep ? g->slots - keep : 0;
}

/*
 * Takes back n buffers of g, p's grant in session s, unless the process
 * claimed one of them meanwhile: the daemon's half of the exchange in
 * core/abi.h (lower the grant, then look at the claims).
 */
static bool take_back(struct st_daemon *d, struct st_proc *p, uint32_t s, struct st_grant *g,
		      uint32_t n)
{
	struct st_session *ses = st_session_at(d, s, p);
	uint32_t keep = g->slots - n;

	publish(p, s, keep);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (held(p, s, g, ses->nslots) > keep) {
		publish(p, s, g->slots);
		return false;
	}
	set_slots(d, ses, p, g, keep);
	ses->memc.taken_back += n;
	return true;
}

/*
 * Makes room for `need` buffers of session ses for process p by taking
 * back unclaimed buffers: from the grant with the most (other than p's in
 * ses), half of them (at least one, at most what is missing) -- in
 * session ses while its own bound is short, among p's user's grants while
 * the user's is, else (the daemon's is) anywhere; then from the next,
 * unless `one` donor is all p may take from. Halves, so that processes
 * configured while a bound is reached share what the first ones were
 * granted, rather than each taking one buffer. It may make less room
 * than asked; false if it found nothing to take back.
 */
static bool make_room(struct st_daemon *d, struct st_session *ses, const struct st_proc *p,
		      uint32_t need, bool one)
{
	uint32_t s = ses->index;

	for (int tries = 0; tries < TAKE_BACK_TRIES && fit(d, ses, p, need) < need; tries++) {
		bool own = free_of(&ses->mem) < ses->slot_bytes;
		/* (the user's bound is what holds p back: only its own
		 * grants can make room in it) */
		const struct st_user *u = account(d, p);
		const struct st_user *mine = user_free(u) < (uint64_t)need * ses->slot_bytes ? u : NULL;
		struct st_proc *best = NULL;
		uint64_t most = 0;
		uint32_t best_s = 0, n, missing;

		for (struct st_proc *q = d->procs; q; q = q->next) {
			if (mine && q->user != mine)
				continue;
			for (uint32_t t = 0; t < ST_ABI_MAX_SESSIONS; t++) {
				struct st_grant *g = (own && t != s) || (q == p && t == s)
							     ? NULL
							     : grant_of(d, q, t);
				uint64_t bytes;

				if (!g || (own && st_session_at(d, t, q) != ses))
					continue;
				bytes = unclaimed(d, q, t, g) * st_session_at(d, t, q)->slot_bytes;
				if (bytes > most) {
					most = bytes;
					best = q;
					best_s = t;
				}
			}
		}
		if (!best)
			return false;
		n = unclaimed(d, best, best_s, &best->memory.grants[best_s]) / 2;
		missing = need - fit(d, ses, p, need);
		if (st_session_at(d, best_s, best) == ses && n > missing)
			n = missing;
		if (take_back(d, best, best_s, &best->memory.grants[best_s], n ? n : 1) && one)
			return true;
	}
	return true;
}

void st_memory_grant(struct st_daemon *d, struct st_proc *p, uint32_t s, bool none)
{
	struct st_session *ses = st_session_at(d, s, p);
	struct st_grant *g = &p->memory.grants[s];
	uint32_t n;

	if (g->generation != ses->generation) {
		memset(g, 0, sizeof(*g));
		g->generation = ses->generation;
		g->lost_seen = __atomic_load_n(&p->control->lost_no_memory[s], __ATOMIC_RELAXED);
		if (none)
			goto publish; /* (raised if it makes a pool after all) */
		if (fit(d, ses, p, ses->nslots) < ses->nslots)
			make_room(d, ses, p, ses->nslots, true);
		n = fit(d, ses, p, ses->nslots);
		set_slots(d, ses, p, g, n);
		if (n < ses->nslots)
			st_log_user(p->uid, ST_LOG_INFO, "session %s: process %d granted %u of its %u thread buffers "
					    "(the memory bound is reached)",
			       ses->name, p->pid, n, ses->nslots);
		if (!n)
			ses->memc.refused++;
		else if (n < ses->nslots)
			ses->memc.shrunk++;
	}
publish:
	/* (again after a stop: the grant lives as long as the pool) */
	publish(p, s, g->slots);
}

uint64_t st_memory_committed(const struct st_daemon *d, const struct st_session *only)
{
	uint64_t sum = 0;

	for (struct st_proc *p = d->procs; p; p = p->next)
		for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
			const struct st_session *ses = st_session_at(d, s, p);
			const struct st_grant *g = grant_of(d, p, s);

			if (g && (!only || only == ses))
				sum += (uint64_t)held(p, s, g, ses->nslots) * ses->slot_bytes;
		}
	for (const struct st_session *ses = d->sessions; ses; ses = ses->next)
		if (!only || only == ses)
			sum += ses->mem.user_pools;
	return sum;
}

/* The committed memory now, in the peaks (one pass over the processes). */
static void sample(struct st_daemon *d)
{
	uint64_t all = 0;

	for (struct st_session *ses = d->sessions; ses; ses = ses->next)
		ses->committed_now = 0;
	for (struct st_proc *p = d->procs; p; p = p->next)
		for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
			struct st_session *ses = st_session_at(d, s, p);
			const struct st_grant *g = grant_of(d, p, s);

			if (g)
				ses->committed_now += (uint64_t)held(p, s, g, ses->nslots) * ses->slot_bytes;
		}
	for (struct st_session *ses = d->sessions; ses; ses = ses->next) {
		ses->committed_now += ses->mem.user_pools;
		if (ses->committed_now > ses->mem.committed_peak)
			ses->mem.committed_peak = ses->committed_now;
		all += ses->committed_now;
	}
	if (all > d->mem.committed_peak)
		d->mem.committed_peak = all;
}

void st_memory_release(struct st_daemon *d, struct st_proc *p)
{
	sample(d); /* (its claims count in the peak) */
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st_session *ses = st_session_at(d, s, p);
		struct st_grant *g = &p->memory.grants[s];

		if (ses && g->generation == ses->generation)
			set_slots(d, ses, p, g, 0);
		memset(g, 0, sizeof(*g));
	}
}

void st_memory_session_gone(struct st_daemon *d, struct st_session *ses)
{
	for (struct st_proc *p = d->procs; p; p = p->next) {
		struct st_grant *g = &p->memory.grants[ses->index];

		if (!st_session_covers(ses, p))
			continue;
		if (g->generation == ses->generation)
			set_slots(d, ses, p, g, 0);
		memset(g, 0, sizeof(*g));
	}
}

/* Raises g (p's grant in session s) if its threads found it too small
 * since the last look: twice as large, within its share, from what the
 * bounds have free or others have not claimed (unless *dry: a look this
 * tick found nothing unclaimed, set then). */
static void raise_if_short(struct st_daemon *d, struct st_proc *p, uint32_t s, struct st_grant *g,
			   bool *dry)
{
	struct st_session *ses = st_session_at(d, s, p);
	uint64_t lost = __atomic_load_n(&p->control->lost_no_memory[s], __ATOMIC_RELAXED);
	uint32_t want, n;

	if (lost == g->lost_seen)
		return;
	g->lost_seen = lost;
	if (g->slots >= ses->nslots)
		return;
	want = g->slots ? g->slots : 1;
	if (want > ses->nslots - g->slots)
		want = ses->nslots - g->slots;
	if (!*dry && fit(d, ses, p, want) < want && !make_room(d, ses, p, want, false))
		*dry = true;
	n = fit(d, ses, p, want);
	if (!n)
		return;
	set_slots(d, ses, p, g, g->slots + n);
	publish(p, s, g->slots);
	ses->memc.raised++;
}

void st_memory_fill(struct st_proc_pool *pool, uint32_t claimed, uint64_t units)
{
	const struct st_ring *r = &pool->ring;
	uint64_t all = (uint64_t)r->nslots * r->sb_count;

	if (!r->percpu || r->fd < 0)
		return;
	for (; units && pool->filled < all; pool->filled++) {
		uint32_t k = (uint32_t)(pool->filled / r->nslots), i = (uint32_t)(pool->filled % r->nslots);
		uint64_t slot = st_abi_slot_offset(r->slot_size, i);
		uint64_t off = slot + r->hdr_size + st_abi_subbuf_offset(r->sb_size, k), len = r->sb_size;

		/* (only what the grant covers: a CPU's buffer the process
		 * claims later gets its pages from its writers' faults) */
		if (i >= claimed) {
			if (i == 0)
				return;
			continue;
		}
		units--;

		if (k == 0) {
			/* (with the slot's header) */
			off = slot;
			len += r->hdr_size;
		}
		/* (a memfd: shared memory, allocated and zeroed here; a failure,
		 * out of memory, leaves the pages to the writers' faults) */
		if (fallocate(r->fd, 0, (off_t)off, (off_t)len) < 0) {
			pool->filled = all;
			return;
		}
	}
}

/* Pages a tick allocates, all per-CPU pools together: 160 MiB/s at most,
 * in 16 MiB steps that keep the loop's turn short. */
#define FILL_PER_TICK (16ull << 20)

/* Allocates pages of pool (its claimed first CPU buffers) within *budget
 * bytes; false once the budget is spent. */
static bool fill_pool(struct st_proc_pool *pool, uint32_t claimed, uint64_t *budget)
{
	uint64_t before = pool->filled, units;

	if (!pool->ring.base || !pool->ring.percpu)
		return true;
	units = *budget / pool->ring.sb_size;
	if (!units)
		return false;
	st_memory_fill(pool, claimed, units);
	*budget -= (pool->filled - before) * pool->ring.sb_size;
	return *budget > 0;
}

static void fill(struct st_daemon *d)
{
	uint64_t budget = FILL_PER_TICK;

	for (struct st_user_pool *up = d->user_pools; up; up = up->next) {
		struct st_proc_pool *pool = &up->holder->pools[up->session];

		if (!fill_pool(pool, pool->ring.nslots, &budget))
			return;
	}

	for (struct st_proc *p = d->procs; p; p = p->next)
		for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
			struct st_proc_pool *pool = &p->pools[s];

			if (!fill_pool(pool,
				       st_memory_claimed(p, s, pool->generation, pool->ring.nslots),
				       &budget))
				return;
		}
}

void st_memory_tick_at(struct st_daemon *d, uint64_t now_ms)
{
	/* (nothing unclaimed in reach of bit s: not looked for again this
	 * tick, however many of its processes are short) */
	bool dry[ST_ABI_MAX_SESSIONS] = { false };

	clock_ms = now_ms;
	count_pages = now_ms - counted_ms >= COUNT_EVERY_MS;
	if (count_pages)
		counted_ms = now_ms;
	for (struct st_proc *p = d->procs; p; p = p->next)
		for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
			struct st_grant *g = grant_of(d, p, s);

			if (g)
				check_pages(d, p, st_session_at(d, s, p), s, g);
		}
	for (struct st_proc *p = d->procs; p; p = p->next)
		for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
			struct st_grant *g = grant_of(d, p, s);

			if (g)
				raise_if_short(d, p, s, g, &dry[s]);
		}
	fill(d);
	sample(d);
}

void st_memory_tick(struct st_daemon *d)
{
	st_memory_tick_at(d, st_now_ms());
}

bool st_memory_take(struct st_daemon *d, struct st_session *ses, uid_t uid, uint64_t bytes)
{
	struct st_user *u = account_of(d, uid);

	if (bytes > free_of(&ses->mem) || bytes > free_of(&d->mem) || bytes > user_free(u)) {
		if (u)
			u->refused[ST_Q_MEMORY]++;
		ses->memc.refused++;
		return false;
	}
	charge(d, ses, u, bytes, 0);
	ses->mem.user_pools += bytes;
	return true;
}

void st_memory_give(struct st_daemon *d, struct st_session *ses, uid_t uid, uint64_t bytes)
{
	charge(d, ses, account_of(d, uid), 0, bytes);
	ses->mem.user_pools -= bytes < ses->mem.user_pools ? bytes : ses->mem.user_pools;
}
