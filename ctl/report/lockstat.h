/*
 * Lock statistics of a trace: per lock, per call site that waited, per
 * thread, the threads still waiting at the end, and the lock-order graph
 * (which lock a thread took while holding which), from the pthread
 * family's events. Memory grows with the locks, threads and call sites,
 * not with the events.
 *
 * A lock is a mutex, a spinlock, one side of a rwlock (read and write
 * apart) or a condition variable (its waits), of one process. An
 * acquisition is contended when the thread wrote a *_wait event for it
 * first (it found the lock busy); its wait is the wait_ns the lock event
 * carries. A hold runs from the acquisition (the lock event's time: the
 * wrappers date it when the lock was taken, after any wait) to the
 * unlock, and a condition wait (dated at its start) releases its mutex
 * for its duration. A recursive lock taken again by its holder is one hold.
 *
 * A Java monitor (the jvm provider: jvm/jvm-tp.h) is a lock of its
 * process keyed by the agent's tag for it. JVMTI tells its contended
 * enters only, each with its wait: no uncontended enter, no exit, so its
 * holds are unknown (none is opened: a monitor is never held in the
 * trace, gives no hold time and no edge from its holds). The monitors a
 * thread owns are told by jvm:monitor_held events just before it waits
 * (for a monitor, or for a native lock): that snapshot gives the lock
 * order edges of the thread's next lock event, and is then forgotten.
 * Object.wait on a monitor is a wait for work, as a condition wait: its
 * lock is the monitor's other kind, ST_LK_MONITOR_WAIT.
 *
 * A futex word (the futex family: a lock that bypasses pthread) has no
 * holder the trace can see: only its waits and wakes. Its waits ended by
 * a wake-up are its contended waits (waits, wait_total; acquired counts
 * every wait that slept); those that timed out are idle; a wait that did
 * not sleep because the word had changed is a busy try.
 *
 * Stacks: a wait event may carry the call stack above its call site
 * (record --stack). With `by_stack` set before the first event, the call
 * sites that waited are told apart by their whole stack (interned: the
 * same frames are one stack), not by the call site alone.
 *
 * Gaps: where a buffer lost events, any thread whose events it held may
 * have lost a lock, an unlock or a wait there, so each such thread starts
 * over: the locks it held, the monitors it was said to own and the wait
 * it was in are forgotten (counted, but for the monitors),
 * and no hold or lock-order edge spans the gap (which threads: gapscope.h).
 */
#ifndef ST_REPORT_LOCKSTAT_H
#define ST_REPORT_LOCKSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/reader.h"
#include "ctl/report/map.h"
#include "ctl/report/stacks.h"

enum st_lock_kind { ST_LK_MUTEX, ST_LK_RDLOCK, ST_LK_WRLOCK, ST_LK_SPIN, ST_LK_COND, ST_LK_FUTEX,
		   ST_LK_MONITOR, ST_LK_MONITOR_WAIT, ST_LK_KINDS };

/* Whether a lock of kind k is waited on for work (a condition variable,
 * a monitor's Object.wait), not for a lock. */
static inline bool st_lock_kind_idles(enum st_lock_kind k)
{
	return k == ST_LK_COND || k == ST_LK_MONITOR_WAIT;
}

/* Whether the acquisitions and holds of a lock of kind k are known: not a
 * monitor's (JVMTI tells its contended enters only, and no exit). */
static inline bool st_lock_kind_holds_known(enum st_lock_kind k)
{
	return k != ST_LK_MONITOR;
}

struct st_lock {
	/* (first what an acquisition and its release read and write: one
	 * cache line of the 64 bytes, for a lock an event hits at random) */
	int32_t pid;
	enum st_lock_kind kind;
	uint64_t addr;	    /* a monitor: its tag */
	uint64_t first_ip;  /* where it was initialised, else first used */
	uint64_t acquired;  /* acquisitions (a condition variable: its waits) */
	uint64_t hold_total, hold_max, holds;
	/* the threads that took it (ntids), by their index in
	 * st_lockstat.threads: the first 64 as bits of near_threads, a test
	 * per acquisition; the others listed */
	uint64_t near_threads;
	uint32_t *far_threads;
	uint32_t ntids, nfar, far_cap;
	uint32_t jclass; /* a monitor: its object's class (javasyms.h; read by
			  * the reports only, out of the first line) */
	bool from_init;
	uint64_t contended; /* of those, after a wait */
	uint64_t failed;    /* blocking calls that did not acquire (timeouts) */
	uint64_t busy_tries;
	uint64_t wait_total, wait_max, waits;
	/* a condition variable's waits woken (for work), and its idle ones:
	 * those that timed out (no work came) and those still going at the
	 * end (once st_lockstat_finish ran, which is not in the waits above),
	 * each with their time */
	uint64_t woken_waits, woken_total, idle_waits, idle_total;
	/* a futex word's wake calls, and the threads they woke */
	uint64_t wakes, woken;
	uint32_t *hist; /* ST_HIST_BUCKETS, for the contended waits */
};

/* A call site that waited for a lock; with stacks, one stack of it. */
struct st_lock_site {
	uint32_t lock;
	uint64_t ip;
	uint32_t stack; /* its number in st_lockstat.stacks; 0: none */
	uint64_t waits, wait_total;
};

struct st_lock_held {
	uint32_t lock;
	uint32_t depth;
	int64_t since;
	uint64_t ip;
	/* the lock's, so that an unlock finds its hold without reading the
	 * locks it passes over */
	uint64_t addr;
	enum st_lock_kind kind;
};

struct st_lock_thread {
	int32_t pid, tid;
	uint64_t acquired, contended, wait_total;
	struct st_lock_held *held;
	uint32_t nheld, held_cap;
	/* the monitors it owns, as its last jvm:monitor_held events said
	 * (lock, ip: the owning frame's site), for its next lock event */
	struct st_lock_held *snap;
	uint32_t nsnap, snap_cap;
	bool waiting; /* at the end of the trace: still blocked */
	uint32_t wait_stack; /* the wait's stack (st_lock_site.stack) */
	uint32_t wait_lock;
	uint64_t wait_ip;
	int64_t wait_since;
};

/* Lock B taken (blocking) while A was held: the first time, and by whom. */
struct st_lock_edge {
	uint32_t a, b;
	int32_t tid;
	uint64_t a_ip, b_ip;
	uint64_t count;
};

#define ST_LOCKSTAT_RECENT 64

/* A thread found: i is its index + 1 (0: an empty slot). */
struct st_lock_recent {
	int32_t pid, tid;
	uint32_t i;
};

struct st_lockstat {
	bool by_stack; /* sites told apart by stack (set before the events) */
	/* if set (before the events): told of each contended wait as it is
	 * counted, its lock (index in locks), thread, call site and wait;
	 * -1 (out of memory) fails the event. shimtrace top's breakdown of
	 * a lock's waits by site and thread in an interval. */
	int (*on_wait)(void *arg, uint32_t lock, const struct st_lock_thread *t, uint64_t ip,
		       uint64_t wait);
	void *on_wait_arg;
	struct st_lock *locks;
	uint32_t nlocks, locks_cap;
	struct st_lock_site *sites;
	uint32_t nsites, sites_cap;
	struct st_lock_thread *threads;
	uint32_t nthreads, threads_cap;
	struct st_lock_edge *edges;
	uint32_t nedges, edges_cap;
	struct st_stacks stacks; /* of the waits, when by_stack is set */
	/* the arrays' indexes by key: (pid and kind, address), (pid, tid),
	 * (lock, ip), (lock a, lock b) */
	struct st_map lock_ix, site_ix, thread_ix, edge_ix;
	/* the last lock found in its map: the next event is often the same
	 * thread's, on the same lock */
	struct {
		bool valid;
		uint64_t who, addr;
		int64_t i;
	} last_lock;
	/* threads found in their map, by tid modulo the size: the threads of
	 * a process have tids close together, and per-CPU buffers interleave
	 * them event by event, which a single last one would miss */
	struct st_lock_recent recent_threads[ST_LOCKSTAT_RECENT];
	/* per event class (st_event_class.index): what it means to us */
	struct st_lock_cls *cls;
	uint32_t ncls;
	int64_t end_ns; /* the trace's last event */
	/* the gaps (lost events) met, and what the threads that started over
	 * at them had: holds and waits that were cut */
	uint64_t gaps, holds_cut, waits_cut;
	/* unlocks of a lock the thread did not hold in the trace: taken before
	 * it began, or its lock was lost */
	uint64_t unpaired;
};

void st_lockstat_init(struct st_lockstat *ls);
void st_lockstat_fini(struct st_lockstat *ls);
/* One event, in time order; returns -1 when out of memory. */
int st_lockstat_event(void *ls, const struct st_event *ev);
/* A gap, in its place among the events, touching the threads of process
 * pid (-1: of every process; see above); 0. */
int st_lockstat_gap(void *ls, const struct st_lost *gap, int32_t pid);
/* At the end of the trace: the condition waits still going count as idle
 * (see st_lock), for as long as they went on. */
void st_lockstat_finish(struct st_lockstat *ls);
/* The holds still open at the end of the trace (no unlock in it). */
uint64_t st_lockstat_open_holds(const struct st_lockstat *ls);

/* The wait below which a fraction q (0..1) of a lock's contended waits
 * fall, from its histogram (a bucket's upper bound, capped at the max). */
uint64_t st_lock_percentile(const struct st_lock *l, double q);

const char *st_lock_kind_name(enum st_lock_kind k);

#endif
