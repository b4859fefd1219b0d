/*
 * Lock statistics from the pthread and futex families' events, and the
 * jvm provider's monitor events (see lockstat.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/report/duration.h"
#include "ctl/report/grow.h"
#include "ctl/report/hist.h"
#include "ctl/report/lockstat.h"
#include "ctl/report/map.h"
#include "ctl/report/meaning.h"
#include "ctl/report/stacks.h"
#include "wrappers/meanings-gen.h"

enum action { A_NONE, A_ACQUIRE, A_TRY, A_RELEASE, A_WAIT, A_INIT, A_WAIT_BEGIN, A_WAIT_END,
	      A_BLOCK, A_BLOCKED, A_WAKE, A_MON_ENTER, A_MON_ENTERED, A_MON_HELD, A_MON_WAIT,
	      A_MON_WAITED };

struct st_lock_cls {
	bool known; /* resolved */
	enum action action;
	enum st_lock_kind kind;
	int addr, result, wait_ns, mutex, err, stack;
	int jclass, timed_out; /* a monitor event's */
};

/* The kinds of lock the pthread and futex specs name. A rwlock's unlock and init
 * name no side: they go to the read side, whose release ends the hold of
 * either side (release), and whose init is noted there. */
enum { K_MUTEX = ST_LK_MUTEX, K_RDLOCK = ST_LK_RDLOCK, K_WRLOCK = ST_LK_WRLOCK,
       K_RWLOCK = ST_LK_RDLOCK, K_SPIN = ST_LK_SPIN, K_COND = ST_LK_COND, K_FUTEX = ST_LK_FUTEX };

/* What the pthread and futex families' events mean (their specs'
 * means=). */
#define MEANING(name, what, kind, field) { name, A_##what, K_##kind, field },
static const struct st_meaning meanings[] = { ST_PTHREAD_MEANINGS(MEANING)
						      ST_FUTEX_MEANINGS(MEANING) };
#undef MEANING

/* What the jvm provider's monitor events mean (jvm/jvm-tp.h). */
static const struct st_meaning java_meanings[] = {
	{ "jvm:monitor_contended_enter", A_MON_ENTER, ST_LK_MONITOR, "monitor" },
	{ "jvm:monitor_contended_entered", A_MON_ENTERED, ST_LK_MONITOR, "monitor" },
	{ "jvm:monitor_held", A_MON_HELD, ST_LK_MONITOR, "monitor" },
	{ "jvm:monitor_wait", A_MON_WAIT, ST_LK_MONITOR_WAIT, "monitor" },
	{ "jvm:monitor_waited", A_MON_WAITED, ST_LK_MONITOR_WAIT, "monitor" },
};

const char *st_lock_kind_name(enum st_lock_kind k)
{
	static const char *names[ST_LK_KINDS] = { "mutex", "rwlock(rd)", "rwlock(wr)", "spinlock",
						   "cond", "futex", "monitor", "monitor(wait)" };

	return k < ST_LK_KINDS ? names[k] : "?";
}

void st_lockstat_init(struct st_lockstat *ls)
{
	memset(ls, 0, sizeof(*ls));
}

void st_lockstat_fini(struct st_lockstat *ls)
{
	for (uint32_t i = 0; i < ls->nlocks; i++) {
		free(ls->locks[i].hist);
		free(ls->locks[i].far_threads);
	}
	for (uint32_t i = 0; i < ls->nthreads; i++) {
		free(ls->threads[i].held);
		free(ls->threads[i].snap);
	}
	free(ls->locks);
	free(ls->sites);
	free(ls->threads);
	free(ls->edges);
	st_stacks_fini(&ls->stacks);
	st_map_free(&ls->lock_ix);
	st_map_free(&ls->site_ix);
	st_map_free(&ls->thread_ix);
	st_map_free(&ls->edge_ix);
	free(ls->cls);
	memset(ls, 0, sizeof(*ls));
}

/* ---- the tables, each found through a map of its keys ---- */

static int64_t lock_of(struct st_lockstat *ls, int32_t pid, enum st_lock_kind kind, uint64_t addr)
{
	/* (the process and the kind in one key word) */
	uint64_t who = (uint64_t)(uint32_t)pid | (uint64_t)kind << 32;
	int64_t i;
	struct st_lock *l;

	if (ls->last_lock.valid && ls->last_lock.who == who && ls->last_lock.addr == addr)
		return ls->last_lock.i;
	i = st_map_get(&ls->lock_ix, who, addr);
	if (i >= 0) {
		ls->last_lock.who = who;
		ls->last_lock.addr = addr;
		ls->last_lock.i = i;
		ls->last_lock.valid = true;
		return i;
	}
	if (st_grow(&ls->locks, &ls->locks_cap, ls->nlocks, sizeof(*ls->locks)) < 0 ||
	    st_map_put(&ls->lock_ix, who, addr, ls->nlocks) < 0)
		return -1;
	l = &ls->locks[ls->nlocks];
	memset(l, 0, sizeof(*l));
	l->pid = pid;
	l->kind = kind;
	l->addr = addr;
	return ls->nlocks++;
}

static struct st_lock_thread *thread_of(struct st_lockstat *ls, int32_t pid, int32_t tid)
{
	struct st_lock_recent *r = &ls->recent_threads[(uint32_t)tid % ST_LOCKSTAT_RECENT];
	int64_t i;
	struct st_lock_thread *t;

	if (r->i && r->pid == pid && r->tid == tid)
		return &ls->threads[r->i - 1];
	i = st_map_get(&ls->thread_ix, (uint32_t)pid, (uint32_t)tid);
	if (i < 0) {
		if (st_grow(&ls->threads, &ls->threads_cap, ls->nthreads, sizeof(*ls->threads)) < 0 ||
		    st_map_put(&ls->thread_ix, (uint32_t)pid, (uint32_t)tid, ls->nthreads) < 0)
			return NULL;
		t = &ls->threads[ls->nthreads];
		memset(t, 0, sizeof(*t));
		t->pid = pid;
		t->tid = tid;
		i = ls->nthreads++;
	}
	*r = (struct st_lock_recent){ .pid = pid, .tid = tid, .i = (uint32_t)i + 1 };
	return &ls->threads[i];
}

/* A site's key beside its lock: its ip, or with stacks its stack. */
static uint64_t site_key(const struct st_lockstat *ls, uint64_t ip, uint32_t stack)
{
	return ls->by_stack && stack ? 1ull << 63 | stack : ip;
}

static int site_wait(struct st_lockstat *ls, uint32_t lock, uint64_t ip, uint32_t stack,
		     uint64_t wait)
{
	uint64_t key = site_key(ls, ip, stack);
	int64_t i = st_map_get(&ls->site_ix, lock, key);

	if (i >= 0) {
		ls->sites[i].waits++;
		ls->sites[i].wait_total += wait;
		return 0;
	}
	if (st_grow(&ls->sites, &ls->sites_cap, ls->nsites, sizeof(*ls->sites)) < 0 ||
	    st_map_put(&ls->site_ix, lock, key, ls->nsites) < 0)
		return -1;
	ls->sites[ls->nsites++] = (struct st_lock_site){
		.lock = lock, .ip = ip, .stack = ls->by_stack ? stack : 0, .waits = 1, .wait_total = wait
	};
	return 0;
}

/* ---- stacks ---- */

/* The stack a wait event carries (its stack field: return addresses, 8
 * bytes each), under its call site ip: 1 + its index, 0 when it has
 * none (or stacks are not wanted), -1 when out of memory. */
static int64_t wait_stack(struct st_lockstat *ls, const struct st_lock_cls *k,
			  const struct st_event *ev)
{
	if (!ls->by_stack || k->stack < 0)
		return 0;
	return st_stacks_of_field(&ls->stacks, ev->ip, &ev->fields[k->stack]);
}

static int edge_add(struct st_lockstat *ls, uint32_t a, uint32_t b, int32_t tid, uint64_t a_ip,
		    uint64_t b_ip)
{
	int64_t i = st_map_get(&ls->edge_ix, a, b);

	if (i >= 0) {
		ls->edges[i].count++;
		return 0;
	}
	if (st_grow(&ls->edges, &ls->edges_cap, ls->nedges, sizeof(*ls->edges)) < 0 ||
	    st_map_put(&ls->edge_ix, a, b, ls->nedges) < 0)
		return -1;
	ls->edges[ls->nedges++] =
		(struct st_lock_edge){ .a = a, .b = b, .tid = tid, .a_ip = a_ip, .b_ip = b_ip, .count = 1 };
	return 0;
}

/* ---- waits ---- */

uint64_t st_lock_percentile(const struct st_lock *l, double q)
{
	return st_hist_percentile(l->hist, l->waits, l->wait_max, q);
}

static int count_wait(struct st_lockstat *ls, uint32_t li, const struct st_lock_thread *t,
		      uint64_t ip, uint32_t stack, uint64_t w)
{
	struct st_lock *l = &ls->locks[li];

	if (ls->on_wait && ls->on_wait(ls->on_wait_arg, li, t, ip, w) < 0)
		return -1;

	if (!l->hist) {
		l->hist = calloc(ST_HIST_BUCKETS, sizeof(*l->hist));
		if (!l->hist)
			return -1;
	}
	l->hist[st_hist_bucket(w)]++;
	l->waits++;
	l->wait_total += w;
	if (w > l->wait_max)
		l->wait_max = w;
	return site_wait(ls, li, ip, stack, w);
}

/* ---- holds ---- */

/* Thread t took lock l (of t's process: one thread is one tid there). */
static int note_thread(const struct st_lockstat *ls, struct st_lock *l,
		       const struct st_lock_thread *t)
{
	uint32_t ti = (uint32_t)(t - ls->threads);

	if (ti < 64) {
		if (!(l->near_threads & 1ull << ti)) {
			l->near_threads |= 1ull << ti;
			l->ntids++;
		}
		return 0;
	}
	for (uint32_t i = 0; i < l->nfar; i++)
		if (l->far_threads[i] == ti)
			return 0;
	if (st_grow(&l->far_threads, &l->far_cap, l->nfar, sizeof(*l->far_threads)) < 0)
		return -1;
	l->far_threads[l->nfar++] = ti;
	l->ntids++;
	return 0;
}

/* Whether locks a and b of one process are one: the same, or two sides
 * of one rwlock (a monitor's tag is no address: itself only). */
static bool one_lock(const struct st_lock *a, const struct st_lock *b)
{
	return a == b || (a->addr == b->addr && a->kind != ST_LK_MONITOR && b->kind != ST_LK_MONITOR);
}

/* A blocking attempt at lock li under the locks t holds, and the
 * monitors it was last said to own (its snapshot): edges of the lock
 * order (a lock held already, recursive, gives none). Made when the
 * thread waits, for a thread that never gets the lock (a deadlock), and
 * when it takes it. */
static int order_edges(struct st_lockstat *ls, struct st_lock_thread *t, uint32_t li, uint64_t ip)
{
	for (uint32_t i = 0; i < t->nheld; i++)
		if (!one_lock(&ls->locks[t->held[i].lock], &ls->locks[li]) &&
		    edge_add(ls, t->held[i].lock, li, t->tid, t->held[i].ip, ip) < 0)
			return -1;
	for (uint32_t i = 0; i < t->nsnap; i++)
		if (t->snap[i].lock != li &&
		    edge_add(ls, t->snap[i].lock, li, t->tid, t->snap[i].ip, ip) < 0)
			return -1;
	return 0;
}

/* Monitor li owned by t, at the frame of site ip: into its snapshot. */
static int snap_add(struct st_lock_thread *t, uint32_t li, uint64_t ip)
{
	for (uint32_t i = 0; i < t->nsnap; i++)
		if (t->snap[i].lock == li)
			return 0; /* (re-entered: its outermost frame) */
	if (st_grow(&t->snap, &t->snap_cap, t->nsnap, sizeof(*t->snap)) < 0)
		return -1;
	t->snap[t->nsnap++] = (struct st_lock_held){ .lock = li, .ip = ip };
	return 0;
}

static int hold(struct st_lockstat *ls, struct st_lock_thread *t, uint32_t li, int64_t since,
		uint64_t ip, bool order)
{
	for (uint32_t i = 0; i < t->nheld; i++)
		if (t->held[i].lock == li) {
			t->held[i].depth++; /* a recursive lock: one hold */
			return 0;
		}
	/* (a try cannot wait, so cannot deadlock: no edge) */
	if (order && order_edges(ls, t, li, ip) < 0)
		return -1;
	if (st_grow(&t->held, &t->held_cap, t->nheld, sizeof(*t->held)) < 0)
		return -1;
	t->held[t->nheld++] = (struct st_lock_held){ .lock = li, .depth = 1, .since = since, .ip = ip,
						     .addr = ls->locks[li].addr,
						     .kind = ls->locks[li].kind };
	return 0;
}

/* Ends t's hold of a lock at addr (either side of a rwlock), at time now;
 * depth: all of it (a condition wait releases a mutex however held).
 * Returns the kind of the lock whose hold it found, or -1 for none. */
static int release(struct st_lockstat *ls, struct st_lock_thread *t, uint64_t addr,
		   enum st_lock_kind kind, int64_t now, bool all)
{
	bool side = kind == ST_LK_RDLOCK || kind == ST_LK_WRLOCK;

	for (uint32_t i = t->nheld; i-- > 0;) {
		struct st_lock_held *h = &t->held[i];
		struct st_lock *l;

		if (h->addr != addr || (side ? h->kind != ST_LK_RDLOCK && h->kind != ST_LK_WRLOCK
					     : h->kind != kind))
			continue;
		if (!all && --h->depth > 0)
			return (int)h->kind;
		l = &ls->locks[h->lock];
		if (now >= h->since) {
			uint64_t d = st_ns_since(h->since, now);

			l->hold_total += d;
			if (d > l->hold_max)
				l->hold_max = d;
		}
		l->holds++;
		t->held[i] = t->held[--t->nheld];
		return (int)l->kind;
	}
	/* (taken before the trace began, or its lock lost: no hold to end) */
	ls->unpaired++;
	return -1;
}

/* ---- gaps ---- */

/* Thread t starts over: what it held and waited for is forgotten. */
static void start_over(struct st_lockstat *ls, struct st_lock_thread *t)
{
	ls->holds_cut += t->nheld;
	t->nheld = 0;
	t->nsnap = 0;
	if (t->waiting)
		ls->waits_cut++;
	t->waiting = false;
}

int st_lockstat_gap(void *arg, const struct st_lost *gap, int32_t pid)
{
	struct st_lockstat *ls = arg;

	(void)gap;
	ls->gaps++;
	for (uint32_t k = 0; k < ls->nthreads; k++)
		if (pid < 0 || ls->threads[k].pid == pid)
			start_over(ls, &ls->threads[k]);
	return 0;
}

void st_lockstat_finish(struct st_lockstat *ls)
{
	for (uint32_t k = 0; k < ls->nthreads; k++) {
		const struct st_lock_thread *t = &ls->threads[k];
		struct st_lock *l = &ls->locks[t->wait_lock];

		if (t->waiting && st_lock_kind_idles(l->kind)) {
			l->idle_waits++;
			l->idle_total += st_ns_since(t->wait_since, ls->end_ns);
			(void)note_thread(ls, l, t); /* (out of memory: one thread less said) */
		}
	}
}

uint64_t st_lockstat_open_holds(const struct st_lockstat *ls)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < ls->nthreads; k++)
		n += ls->threads[k].nheld;
	return n;
}

/* ---- events ---- */

static const struct st_lock_cls *cls_of(struct st_lockstat *ls, const struct st_event_class *c)
{
	struct st_lock_cls *k;
	const struct st_meaning *m;

	/* (known after the class's first event: what every other one finds) */
	if (c->index < ls->ncls && ls->cls[c->index].known)
		return &ls->cls[c->index];
	k = st_class_slot(&ls->cls, &ls->ncls, sizeof(*ls->cls), c->index);
	if (!k || k->known)
		return k;
	k->known = true;
	k->action = A_NONE;
	m = st_meaning_find(c->name, meanings, sizeof(meanings) / sizeof(meanings[0]));
	if (!m)
		m = st_meaning_find(c->name, java_meanings,
				    sizeof(java_meanings) / sizeof(java_meanings[0]));
	if (m) {
		k->addr = st_event_class_field(c, m->field);
		k->result = st_event_class_field(c, "result");
		k->wait_ns = st_event_class_field(c, "wait_ns");
		k->mutex = st_event_class_field(c, "mutex");
		k->err = st_event_class_field(c, "err");
		k->stack = st_stack_field(c);
		k->jclass = st_event_class_field(c, "class");
		k->timed_out = st_event_class_field(c, "timed_out");
		k->action = m->what;
		k->kind = m->kind;
		/* the fields each action reads, or the class is not ours */
		if (k->addr < 0 ||
		    ((k->action == A_ACQUIRE || k->action == A_TRY || k->action == A_WAIT_END) &&
		     k->result < 0) ||
		    ((k->action == A_ACQUIRE || k->action == A_WAIT_END) && k->wait_ns < 0) ||
		    ((k->action == A_WAIT_BEGIN || k->action == A_WAIT_END) && k->mutex < 0) ||
		    ((k->action == A_BLOCKED || k->action == A_WAKE) && (k->result < 0 || k->err < 0)) ||
		    (k->action == A_BLOCKED && k->wait_ns < 0) ||
		    (k->action >= A_MON_ENTER && k->jclass < 0) ||
		    ((k->action == A_MON_ENTERED || k->action == A_MON_WAITED) && k->wait_ns < 0) ||
		    (k->action == A_MON_WAITED && k->timed_out < 0))
			k->action = A_NONE;
	}
	return k;
}

/* What a lock call's result means: taken (EOWNERDEAD: taken, its owner
 * died holding it). */
static bool taken(int64_t result)
{
	return result == 0 || result == EOWNERDEAD;
}

/* A futex wait of w ns on lock li ended with result res (err): woken (a
 * contended wait), timed out (idle), returned at once because the word
 * had changed (a busy try), or failed. */
static int futex_waited(struct st_lockstat *ls, struct st_lock_thread *t, uint32_t li,
			const struct st_event *ev, int64_t res, int64_t err, uint64_t w)
{
	struct st_lock *l = &ls->locks[li];

	if (note_thread(ls, l, t) < 0)
		return -1;
	if (res < 0 && err == EAGAIN) {
		l->busy_tries++;
		return 0;
	}
	l->acquired++;
	if (res < 0 && err == ETIMEDOUT) {
		l->idle_waits++;
		l->idle_total += w;
		return 0;
	}
	if (res < 0) {
		l->failed++;
		return 0;
	}
	l->contended++;
	t->contended++;
	t->wait_total += w;
	return count_wait(ls, li, t, ev->ip, t->wait_stack, w);
}

/* Thread t begins to wait for lock li at event ev (stack: the waiting
 * call's stack, 0 when none is recorded). */
static void wait_begins(struct st_lock_thread *t, uint32_t li, uint32_t stack,
			const struct st_event *ev)
{
	t->waiting = true;
	t->wait_stack = stack;
	t->wait_lock = li;
	t->wait_ip = ev->ip;
	t->wait_since = ev->ns;
}

/* A condition wait or Object.wait on l ended after w ns: woken (notified,
 * signalled), or idle (timed out: no work came). */
static void wait_ended(struct st_lock *l, bool idle, uint64_t w)
{
	l->acquired++;
	l->contended++;
	if (idle) {
		l->idle_waits++;
		l->idle_total += w;
	} else {
		l->woken_waits++;
		l->woken_total += w;
	}
}

/* A monitor event of thread t (jvm/jvm-tp.h) on lock li. */
static int monitor_event(struct st_lockstat *ls, const struct st_lock_cls *k,
			 struct st_lock_thread *t, uint32_t li, const struct st_event *ev)
{
	struct st_lock *l = &ls->locks[li];
	uint64_t w = k->wait_ns >= 0 ? ev->fields[k->wait_ns].u : 0;

	if (!l->jclass)
		l->jclass = (uint32_t)ev->fields[k->jclass].u;
	if (!l->first_ip)
		l->first_ip = ev->ip;
	switch (k->action) {
	case A_MON_HELD:
		return snap_add(t, li, ev->ip);
	case A_MON_ENTER:
		if (order_edges(ls, t, li, ev->ip) < 0)
			return -1;
		/* fall through */
	case A_MON_WAIT:
		wait_begins(t, li, 0, ev);
		return 0;
	case A_MON_ENTERED:
		/* (each is contended, its wait in it: counted even when its
		 * enter was lost; and opens no hold, none being seen to end) */
		t->waiting = false;
		l->acquired++;
		l->contended++;
		t->acquired++;
		t->contended++;
		t->wait_total += w;
		if (note_thread(ls, l, t) < 0)
			return -1;
		return count_wait(ls, li, t, ev->ip, 0, w);
	case A_MON_WAITED:
		/* Object.wait: woken (notify), or timed out */
		t->waiting = false;
		wait_ended(l, ev->fields[k->timed_out].u != 0, w);
		if (note_thread(ls, l, t) < 0)
			return -1;
		return count_wait(ls, li, t, ev->ip, 0, w);
	default:
		return 0;
	}
}

/* A pthread or futex event of thread t. */
static int pthread_event(struct st_lockstat *ls, const struct st_lock_cls *k,
			 struct st_lock_thread *t, const struct st_event *ev)
{
	uint64_t w = 0, addr = ev->fields[k->addr].u;
	int64_t li, mi, res = 0, stack;
	bool contended;

	/* An unlock finds its lock through the hold it ends; one that ends
	 * none, or the write side's hold (its event names the read side),
	 * still makes its lock known, in its place among the locks. */
	if (k->action == A_RELEASE && release(ls, t, addr, k->kind, ev->ns, false) == (int)k->kind)
		return 0;
	li = lock_of(ls, ev->pid, k->kind, addr);
	if (li < 0)
		return -1;
	if (k->result >= 0)
		res = ev->fields[k->result].i;
	if (k->wait_ns >= 0)
		w = ev->fields[k->wait_ns].u;
	if (!ls->locks[li].first_ip && k->action != A_RELEASE)
		ls->locks[li].first_ip = ev->ip;
	switch (k->action) {
	case A_INIT:
		if (!ls->locks[li].from_init) {
			ls->locks[li].first_ip = ev->ip;
			ls->locks[li].from_init = true;
		}
		return 0;
	case A_WAIT:
		if (order_edges(ls, t, (uint32_t)li, ev->ip) < 0)
			return -1;
		/* fall through */
	case A_BLOCK:
		/* (a futex word is held by nobody the trace sees: no edge) */
		stack = wait_stack(ls, k, ev);
		if (stack < 0)
			return -1;
		wait_begins(t, (uint32_t)li, (uint32_t)stack, ev);
		return 0;
	case A_ACQUIRE:
		contended = t->waiting && t->wait_lock == (uint32_t)li;
		t->waiting = false;
		if (contended) {
			if (count_wait(ls, (uint32_t)li, t, ev->ip, t->wait_stack, w) < 0)
				return -1;
			ls->locks[li].contended++;
			t->contended++;
			t->wait_total += w;
		}
		if (!taken(res)) {
			ls->locks[li].failed++;
			return 0;
		}
		ls->locks[li].acquired++;
		t->acquired++;
		if (note_thread(ls, &ls->locks[li], t) < 0)
			return -1;
		/* (a lock event is dated when the lock was taken: after its
		 * wait, which ends there) */
		return hold(ls, t, (uint32_t)li, ev->ns, ev->ip, true);
	case A_TRY:
		if (!taken(res)) {
			ls->locks[li].busy_tries++;
			return 0;
		}
		ls->locks[li].acquired++;
		t->acquired++;
		if (note_thread(ls, &ls->locks[li], t) < 0)
			return -1;
		return hold(ls, t, (uint32_t)li, ev->ns, ev->ip, false);
	case A_RELEASE: /* (ended above) */
		return 0;
	case A_WAIT_BEGIN:
		/* the mutex is released while the thread waits */
		release(ls, t, ev->fields[k->mutex].u, ST_LK_MUTEX, ev->ns, true);
		wait_begins(t, (uint32_t)li, 0, ev);
		return 0;
	case A_WAIT_END:
		t->waiting = false;
		/* (a timed wait that expired is idle, and failed) */
		wait_ended(&ls->locks[li], !taken(res), w);
		if (!taken(res))
			ls->locks[li].failed++;
		if (note_thread(ls, &ls->locks[li], t) < 0 ||
		    count_wait(ls, (uint32_t)li, t, ev->ip, 0, w) < 0)
			return -1;
		/* ... and taken again when the wait ends */
		mi = lock_of(ls, ev->pid, ST_LK_MUTEX, ev->fields[k->mutex].u);
		if (mi < 0)
			return -1;
		return hold(ls, t, (uint32_t)mi, st_ns_after(ev->ns, w), ev->ip, false);
	case A_BLOCKED:
		t->waiting = false;
		return futex_waited(ls, t, (uint32_t)li, ev, res, ev->fields[k->err].i, w);
	case A_WAKE:
		ls->locks[li].wakes++;
		if (res > 0)
			ls->locks[li].woken += (uint64_t)res;
		return note_thread(ls, &ls->locks[li], t);
	default:
		return 0;
	}
}

int st_lockstat_event(void *arg, const struct st_event *ev)
{
	struct st_lockstat *ls = arg;
	const struct st_lock_cls *k = cls_of(ls, ev->cls);
	struct st_lock_thread *t;
	int64_t li;
	int ret;

	if (!k)
		return -1;
	ls->end_ns = ev->ns;
	if (k->action == A_NONE)
		return 0;
	t = thread_of(ls, ev->pid, ev->tid);
	if (!t)
		return -1;
	if (k->action < A_MON_ENTER) {
		ret = pthread_event(ls, k, t, ev);
	} else {
		li = lock_of(ls, ev->pid, k->kind, ev->fields[k->addr].u);
		if (li < 0)
			return -1;
		ret = monitor_event(ls, k, t, (uint32_t)li, ev);
	}
	/* the monitors t was said to own are for its next lock event only */
	if (k->action != A_MON_HELD)
		t->nsnap = 0;
	return ret;
}
