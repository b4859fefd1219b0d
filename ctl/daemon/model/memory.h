/*
 * Buffer memory (memory.c): what the daemon grants the processes of each
 * session, within the session's bound (`--max-memory`), the daemon's
 * (`shimtraced --max-memory`) and the bound of the process's user (the
 * `memory` quota: one user cannot take every session's memory, in root's
 * sessions, which trace every user, nor in sessions of their own).
 *
 * A process's pool is sized for its share (`--process-memory`: the
 * session's nslots thread buffers), but its threads claim a buffer never
 * claimed before only within the process's grant, slots_allowed in its
 * control page (core/abi.h): a buffer's pages are committed when a thread
 * claims it, so the grant is what the process may commit, and the sum of
 * the grants never exceeds a bound.
 *
 *   configured   granted its share if the bounds have room; else what
 *                they have left and half the unclaimed buffers of the
 *                grant with the most ("taken back": each keeps the
 *                buffers its threads claimed, and at least one), so that
 *                processes share the bound (shrunk); with nothing to
 *                take, refused (none): its threads' events are lost,
 *                counted as no_memory
 *   short        its threads lost events for want of a grant since the
 *                last tick: granted twice as much (at most its share)
 *                from what the bounds have free (given back by processes
 *                that ended), else taken back from others' unclaimed
 *   ended        its grants are given back; so are a destroyed session's
 *
 * A buffer a thread claimed is never taken back, so a process never loses
 * a buffer it has used; unclaimed grants go where threads need them; and
 * once memory runs short, a process that writes nothing holds one buffer.
 * A process that was refused, or is short, records again as soon as the
 * daemon has something for it: a thread without a buffer tries again at
 * each event.
 *
 * The claims are the process's to write, so they are checked against the
 * pages its pool really holds (the pool's allocated blocks, which the
 * kernel counts): a claim that stays without pages for UNBACKED_MS is not
 * honoured any more, and what it held is taken back like any unclaimed
 * buffer. A pool that holds more pages than its grant (a process that
 * writes where it claimed nothing) is granted them if the bounds have
 * room; one that goes on holding more than the bounds allow for OVER_MS
 * is refused: its connection is closed, its pools dropped, and it runs on
 * untraced.
 */
#ifndef ST_DAEMON_MEMORY_H
#define ST_DAEMON_MEMORY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A process's grant in one session. */
struct st_grant {
	uint32_t generation; /* of the session; 0: none */
	uint32_t slots;	     /* thread buffers it may claim, counted in the bounds */
	uint64_t lost_seen;  /* its lost_no_memory at the last tick */
	uint32_t backed;     /* buffers from the first known to have their pages */
	uint64_t unbacked_since; /* ms: claims without pages since then; 0: none */
	uint64_t over_since;	 /* ms: pages beyond the grant since then; 0: none */
};

/* A bound and what is granted against it, in bytes. */
struct st_membound {
	uint64_t bound;
	uint64_t granted;
	uint64_t granted_peak;
	/* buffers claimed (committed), the most seen at a tick or a process's
	 * end: a sample, below or at the true peak */
	uint64_t committed_peak;
	/* of granted, the per-user pools' (committed whole: userpool.c) */
	uint64_t user_pools;
};

/* What a session did to stay within its bounds, since it was created. */
struct st_memory_counts {
	uint32_t shrunk;     /* processes granted less than their share */
	uint32_t refused;    /* processes granted nothing */
	uint32_t raised;     /* grants raised for threads that found none */
	uint32_t taken_back; /* unclaimed buffers taken back for a newcomer */
};

struct st_daemon;
struct st_proc;
struct st_proc_pool;
struct st_session;

/* The grant of process p in session s, which is configuring it: decided
 * if new, and written into its control page. none: it writes its user's
 * buffers (userpool.c): nothing granted, unless its threads ask later. */
void st_memory_grant(struct st_daemon *d, struct st_proc *p, uint32_t s, bool none);
/* Process p ended: its grants are given back. */
void st_memory_release(struct st_daemon *d, struct st_proc *p);
/* Session ses is being destroyed: its grants are given back. */
void st_memory_session_gone(struct st_daemon *d, struct st_session *ses);
/* Raises the grants of processes whose threads found none; takes back
 * claims without pages; refuses processes over their bounds; samples the
 * committed memory. */
void st_memory_tick(struct st_daemon *d);
/*
 * Per-CPU pools: their pages allocated by the daemon (fallocate of the
 * pool's memfd), so that the process's writers find them there, rather
 * than a thread's event allocating them (a fault each: microseconds on
 * this machine's hypervisor) or the process's first event making all of
 * them resident at once (tens of milliseconds). At most `units`
 * sub-buffers of pool now, of the CPU buffers below `claimed` (the
 * process's claims within its grant: nothing beyond): the first
 * sub-buffer of each first, then the second of each, and so on. The tick
 * goes on with what is left, a bounded amount each time.
 */
void st_memory_fill(struct st_proc_pool *pool, uint32_t claimed, uint64_t units);
/* The same, at time now_ms (CLOCK_MONOTONIC ms: the unit tests' clock). */
void st_memory_tick_at(struct st_daemon *d, uint64_t now_ms);
/* Bytes of the buffers claimed now in session ses (NULL: all sessions):
 * the claims honoured (see above). */
uint64_t st_memory_committed(const struct st_daemon *d, const struct st_session *ses);
/* Buffers of p's pool of session s (generation gen, nslots buffers)
 * claimed so far, as its control page says (at most nslots). */
uint32_t st_memory_claimed(const struct st_proc *p, uint32_t s, uint32_t gen, uint32_t nslots);
/* Per-user pools (userpool.c): bytes of buffers for user uid in session
 * ses, counted in the bounds if they fit (true), else nothing; and given
 * back. A pool is committed whole: all its CPUs' buffers are written. */
bool st_memory_take(struct st_daemon *d, struct st_session *ses, uid_t uid, uint64_t bytes);
void st_memory_give(struct st_daemon *d, struct st_session *ses, uid_t uid, uint64_t bytes);

#endif
