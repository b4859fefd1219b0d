/*
 * Buffer memory: the grants of processes within the bounds of their
 * sessions and of the daemon (memory.h has the policy).
 *
 * Everything runs on the daemon's one thread. The control pages are the
 * processes' memory: the daemon reads only their claim counts there
 * (bounded by the pool's size), and counts its own decisions, never what
 * a process writes, in the bounds.
 */
#include <string.h>

#include "ctl/daemon/daemon.h"
#include "ctl/daemon/memory.h"

/* Taking back a grant stops after this many tries (each try that fails
 * saw a claim, so the next looks further). */
#define TAKE_BACK_TRIES 64

static uint64_t free_of(const struct st_membound *m)
{
	return m->bound > m->granted ? m->bound - m->granted : 0;
}

/* Buffers of session ses that fit in both bounds now, at most want. */
static uint32_t fit(const struct st_daemon *d, const struct st_session *ses, uint32_t want)
{
	uint64_t f = free_of(&ses->mem), fd = free_of(&d->mem);
	uint64_t n = (f < fd ? f : fd) / ses->slot_bytes;

	return n < want ? (uint32_t)n : want;
}

static void count(struct st_membound *m, uint64_t add, uint64_t sub)
{
	m->granted = m->granted + add - (sub < m->granted + add ? sub : m->granted + add);
	if (m->granted > m->granted_peak)
		m->granted_peak = m->granted;
}

/* Sets g, a grant of session ses, to slots, in the bounds (not in the
 * process's control page). */
static void set_slots(struct st_daemon *d, struct st_session *ses, struct st_grant *g,
		      uint32_t slots)
{
	uint64_t now = (uint64_t)g->slots * ses->slot_bytes, then = (uint64_t)slots * ses->slot_bytes;

	count(&ses->mem, then, now);
	count(&d->mem, then, now);
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
	const struct st_session *ses = d->sessions[s];
	struct st_grant *g = &p->grants[s];

	return ses && !p->ended && p->control && g->generation == ses->generation ? g : NULL;
}

/* What g (of p in session s) has granted and not claimed, beyond one
 * buffer: the buffers that can be taken back. */
static uint32_t unclaimed(const struct st_daemon *d, const struct st_proc *p, uint32_t s,
			  const struct st_grant *g)
{
	uint32_t c = st_memory_claimed(p, s, g->generation, d->sessions[s]->nslots);
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
	struct st_session *ses = d->sessions[s];
	uint32_t keep = g->slots - n;

	publish(p, s, keep);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (st_memory_claimed(p, s, g->generation, ses->nslots) > keep) {
		publish(p, s, g->slots);
		return false;
	}
	set_slots(d, ses, g, keep);
	ses->memc.taken_back += n;
	return true;
}

/*
 * Makes room for `need` buffers of session s for process p by taking back
 * unclaimed buffers: from the grant with the most (other than p's in s),
 * half of them (at least one, at most what is missing), in session s
 * while its own bound is short, else (the daemon's is) in any session;
 * then from the next, unless `one` donor is all p may take from. Halves,
 * so that processes configured while the bound is reached share what the
 * first ones were granted, rather than each taking one buffer. It may
 * make less room than asked; false if it found nothing to take back.
 */
static bool make_room(struct st_daemon *d, uint32_t s, const struct st_proc *p, uint32_t need,
		      bool one)
{
	const struct st_session *ses = d->sessions[s];

	for (int tries = 0; tries < TAKE_BACK_TRIES && fit(d, ses, need) < need; tries++) {
		bool own = free_of(&ses->mem) < ses->slot_bytes;
		struct st_proc *best = NULL;
		uint64_t most = 0;
		uint32_t best_s = 0, n;

		for (struct st_proc *q = d->procs; q; q = q->next)
			for (uint32_t t = 0; t < ST_ABI_MAX_SESSIONS; t++) {
				struct st_grant *g = (own && t != s) || (q == p && t == s)
							     ? NULL
							     : grant_of(d, q, t);
				uint64_t bytes = g ? unclaimed(d, q, t, g) * d->sessions[t]->slot_bytes : 0;

				if (bytes > most) {
					most = bytes;
					best = q;
					best_s = t;
				}
			}
		if (!best)
			return false;
		n = unclaimed(d, best, best_s, &best->grants[best_s]) / 2;
		if (best_s == s && n > need - fit(d, ses, need))
			n = need - fit(d, ses, need);
		if (take_back(d, best, best_s, &best->grants[best_s], n ? n : 1) && one)
			return true;
	}
	return true;
}

void st_memory_grant(struct st_daemon *d, struct st_proc *p, uint32_t s)
{
	struct st_session *ses = d->sessions[s];
	struct st_grant *g = &p->grants[s];
	uint32_t n;

	if (g->generation != ses->generation) {
		memset(g, 0, sizeof(*g));
		g->generation = ses->generation;
		g->lost_seen = __atomic_load_n(&p->control->lost_no_memory[s], __ATOMIC_RELAXED);
		if (fit(d, ses, ses->nslots) < ses->nslots)
			make_room(d, s, p, ses->nslots, true);
		n = fit(d, ses, ses->nslots);
		set_slots(d, ses, g, n);
		if (n < ses->nslots)
			st_log(ST_LOG_INFO, "session %s: process %d (%s) granted %u of its %u thread buffers "
					    "(the memory bound is reached)",
			       ses->name, p->pid, p->name, n, ses->nslots);
		if (!n)
			ses->memc.refused++;
		else if (n < ses->nslots)
			ses->memc.shrunk++;
	}
	/* (again after a stop: the grant lives as long as the pool) */
	publish(p, s, g->slots);
}

uint64_t st_memory_committed(const struct st_daemon *d, const struct st_session *only)
{
	uint64_t sum = 0;

	for (struct st_proc *p = d->procs; p; p = p->next)
		for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
			const struct st_session *ses = d->sessions[s];
			const struct st_grant *g = grant_of(d, p, s);

			if (g && (!only || only == ses))
				sum += (uint64_t)st_memory_claimed(p, s, g->generation, ses->nslots) *
				       ses->slot_bytes;
		}
	return sum;
}

/* The committed memory now, in the peaks (one pass over the processes). */
static void sample(struct st_daemon *d)
{
	uint64_t by[ST_ABI_MAX_SESSIONS] = { 0 }, all = 0;

	for (struct st_proc *p = d->procs; p; p = p->next)
		for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
			const struct st_grant *g = grant_of(d, p, s);

			if (g)
				by[s] += (uint64_t)st_memory_claimed(p, s, g->generation,
								     d->sessions[s]->nslots) *
					 d->sessions[s]->slot_bytes;
		}
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st_session *ses = d->sessions[s];

		if (ses && by[s] > ses->mem.committed_peak)
			ses->mem.committed_peak = by[s];
		all += by[s];
	}
	if (all > d->mem.committed_peak)
		d->mem.committed_peak = all;
}

void st_memory_release(struct st_daemon *d, struct st_proc *p)
{
	sample(d); /* (its claims count in the peak) */
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st_session *ses = d->sessions[s];
		struct st_grant *g = &p->grants[s];

		if (ses && g->generation == ses->generation)
			set_slots(d, ses, g, 0);
		memset(g, 0, sizeof(*g));
	}
}

void st_memory_session_gone(struct st_daemon *d, uint32_t s)
{
	struct st_session *ses = d->sessions[s];

	for (struct st_proc *p = d->procs; ses && p; p = p->next) {
		struct st_grant *g = &p->grants[s];

		if (g->generation == ses->generation)
			set_slots(d, ses, g, 0);
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
	struct st_session *ses = d->sessions[s];
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
	if (!*dry && fit(d, ses, want) < want && !make_room(d, s, p, want, false))
		*dry = true;
	n = fit(d, ses, want);
	if (!n)
		return;
	set_slots(d, ses, g, g->slots + n);
	publish(p, s, g->slots);
	ses->memc.raised++;
}

void st_memory_tick(struct st_daemon *d)
{
	/* (nothing unclaimed in reach of session s: not looked for again
	 * this tick, however many of its processes are short) */
	bool dry[ST_ABI_MAX_SESSIONS] = { false };

	for (struct st_proc *p = d->procs; p; p = p->next)
		for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
			struct st_grant *g = grant_of(d, p, s);

			if (g)
				raise_if_short(d, p, s, g, &dry[s]);
		}
	sample(d);
}
