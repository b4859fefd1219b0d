/*
 * A trace as a timeline, whatever the file format (see timeline.h): what
 * each event class is drawn as, the holds open on each thread, the call
 * stack each thread's last wait carried, the call sites as text, and the
 * size warning.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/report/duration.h"
#include "ctl/report/grow.h"
#include "ctl/report/javasyms.h"
#include "ctl/report/map.h"
#include "ctl/report/meaning.h"
#include "ctl/report/pass.h"
#include "ctl/report/site.h"
#include "ctl/report/stacks.h"
#include "ctl/report/symbols.h"
#include "ctl/report/timeline.h"
#include "shimtrace/tracepoint.h"
#include "wrappers/meanings-gen.h"

/* What an event class becomes: ... S_MON_BEGIN, a Java monitor wait's
 * start (a contended enter, Object.wait), kept for S_MON_END, its end,
 * which draws it. */
enum shape { S_SKIP, S_LOCK, S_UNLOCK, S_TIMED, S_INSTANT, S_MON_BEGIN, S_MON_END };

struct tcls {
	bool known;
	bool opens; /* a call's entry event ("_begin"): where its span begins */
	bool java_thread; /* jvm:thread_start: names its thread */
	bool object_wait; /* a monitor's Object.wait, not its enter */
	enum shape shape;
	int addr, wait_ns, dur_ns, result, stack, jclass;
	char name[64]; /* the event's name without the provider */
};

struct hold {
	int64_t since;
	char what[80];
	uint64_t id; /* its track: of its thread and lock */
	uint64_t ip; /* where the lock was taken */
};

struct st_tl {
	const struct st_export_opts *opts;
	const struct st_tl_sink *sink;
	void *ctx;
	struct tcls *cls;
	uint32_t ncls;
	struct st_map held; /* (pid << 32 | tid, lock) -> holds[] */
	struct hold *holds;
	uint32_t nholds, holds_cap;
	uint32_t *free_holds;
	uint32_t nfree, free_cap;
	struct st_map named; /* (pid, tid) -> 1: its thread callback made */
	struct st_map tracks; /* (pid << 32 | tid, lock) -> its hold track */
	uint32_t ntracks;
	uint64_t holds_cut;
	/* call sites as text, each made once: (pid, ip) -> site_texts[] */
	struct st_map sites;
	char **site_texts;
	uint32_t nsites, sites_cap;
	int64_t t0;
	bool started, warned;
	const struct st_pass *pass;
	/* what is kept of each thread: (pid << 32 | tid, 0) -> threads[] */
	struct st_map thread_of;
	struct thread {
		/* the call stack of its last wait event (a wait, a futex
		 * wait_begin), for the span that ends the wait, or of the
		 * call its span is (a slow I/O call) */
		uint64_t pcs[ST_STACK_MAX];
		uint32_t n;
		/* the time of its last call's entry event, if any since its
		 * last span */
		int64_t opened;
		bool has_opened;
		/* of its spans drawn, the one that ends last: where the next
		 * must begin, or end, or nest */
		int64_t begin, end;
		/* the Java monitor wait it is in (S_MON_BEGIN): which, since
		 * when */
		int32_t pid;
		bool mon_open, mon_object_wait;
		uint64_t mon;
		int64_t mon_since;
	} *threads;
	uint32_t nthreads, threads_cap;
	uint64_t time_cut;
};

/* How long after a call's entry event its own event may be written, at
 * most, beyond the call's duration: the entry is the call's start only
 * then (else it was a call whose own event is missing) */
#define ENTRY_SLACK_NS 1000000

/* The lock events (the pthread spec's means=): a take, tried or not (its
 * wait and its hold begin), a release (the hold ends), and the wait
 * events, whose span the take writes whole; the others are drawn as any
 * event (-1). FIELD is the lock's address. */
enum {
	LS_ACQUIRE = S_LOCK,
	LS_TRY = S_LOCK,
	LS_RELEASE = S_UNLOCK,
	LS_WAIT = S_SKIP,
	LS_INIT = -1,
	LS_WAIT_BEGIN = -1,
	LS_WAIT_END = -1,
};
#define LOCK_SHAPE(name, what, kind, field) { name, LS_##what, 0, field },
static const struct st_meaning lock_shapes[] = { ST_PTHREAD_MEANINGS(LOCK_SHAPE) };
#undef LOCK_SHAPE

/* The jvm provider's (jvm/jvm-tp.h): its monitor waits, its statedump
 * (bookkeeping: not drawn), its threads' names. KIND 1: Object.wait. */
enum { J_THREAD = S_INSTANT + 100 };
static const struct st_meaning java_shapes[] = {
	{ "jvm:monitor_contended_enter", S_MON_BEGIN, 0, "monitor" },
	{ "jvm:monitor_contended_entered", S_MON_END, 0, "monitor" },
	{ "jvm:monitor_wait", S_MON_BEGIN, 1, "monitor" },
	{ "jvm:monitor_waited", S_MON_END, 1, "monitor" },
	{ "jvm:class", S_SKIP, 0, NULL },
	{ "jvm:method", S_SKIP, 0, NULL },
	{ "jvm:method_line", S_SKIP, 0, NULL },
	{ "jvm:thread_start", J_THREAD, 0, NULL },
};

static const struct tcls *cls_of(struct st_tl *x, const struct st_event_class *c)
{
	struct tcls *k = st_class_slot(&x->cls, &x->ncls, sizeof(*x->cls), c->index);
	const char *colon = strchr(c->name, ':');
	const struct st_meaning *m;
	int shape = -1;

	if (!k || k->known)
		return k;
	k->known = true;
	snprintf(k->name, sizeof(k->name), "%s", colon ? colon + 1 : c->name);
	k->wait_ns = st_event_class_field(c, "wait_ns");
	k->dur_ns = st_event_class_field(c, "dur_ns");
	k->result = st_event_class_field(c, "result");
	k->stack = st_stack_field(c);
	k->addr = -1;
	m = st_meaning_find(c->name, lock_shapes, sizeof(lock_shapes) / sizeof(lock_shapes[0]));
	if (m) {
		shape = m->what;
		k->addr = st_event_class_field(c, m->field);
	}
	m = m ? NULL : st_meaning_find(c->name, java_shapes, sizeof(java_shapes) / sizeof(java_shapes[0]));
	if (m) {
		shape = m->what == J_THREAD ? S_INSTANT : m->what;
		k->java_thread = m->what == J_THREAD;
		k->object_wait = m->kind == 1;
		k->addr = m->field ? st_event_class_field(c, m->field) : -1;
		k->jclass = st_event_class_field(c, "class");
	}
	/* (a monitor event without its monitor, class or wait is someone
	 * else's) */
	if ((shape == S_MON_BEGIN || shape == S_MON_END) &&
	    (k->addr < 0 || k->jclass < 0 || (shape == S_MON_END && k->wait_ns < 0)))
		shape = -1;
	/* (a lock event without its lock or result is someone else's) */
	if ((shape == S_LOCK || shape == S_UNLOCK) &&
	    (k->addr < 0 || (shape == S_LOCK && k->result < 0)))
		shape = -1;
	if (shape >= 0)
		k->shape = shape;
	else if (strncmp(c->name, "lttng_ust_", 10) == 0 ||
		 strcmp(c->name, "shimtrace:process") == 0 || strstr(k->name, "_begin"))
		k->shape = S_SKIP; /* bookkeeping, or the start of a span written whole later */
	else if (k->wait_ns >= 0 || k->dur_ns >= 0)
		k->shape = S_TIMED;
	else
		k->shape = S_INSTANT;
	k->opens = k->shape == S_SKIP && strstr(k->name, "_begin");
	return k;
}

int64_t st_tl_t0(const struct st_tl *tl)
{
	return tl->t0;
}

const struct st_pass *st_tl_pass(const struct st_tl *tl)
{
	return tl->pass;
}

const char *st_tl_site(struct st_tl *x, int32_t pid, uint64_t ip)
{
	int64_t i = ip ? st_map_get(&x->sites, (uint64_t)(uint32_t)pid, ip) : -1;
	char text[512];
	char *s;

	if (!ip)
		return NULL;
	if (i >= 0)
		return x->site_texts[i];
	st_site_text(x->pass->syms, pid, ip, text, sizeof(text));
	s = strdup(text);
	if (!s || st_grow(&x->site_texts, &x->sites_cap, x->nsites, sizeof(*x->site_texts)) < 0 ||
	    st_map_put(&x->sites, (uint64_t)(uint32_t)pid, ip, x->nsites) < 0) {
		free(s);
		return NULL;
	}
	x->site_texts[x->nsites++] = s;
	return s;
}

/* What is kept of ev's thread; NULL when out of memory. */
static struct thread *thread_of(struct st_tl *x, const struct st_event *ev)
{
	uint64_t key = (uint64_t)(uint32_t)ev->pid << 32 | (uint32_t)ev->tid;
	int64_t i = st_map_get(&x->thread_of, key, 0);

	if (i >= 0)
		return &x->threads[i];
	if (st_grow(&x->threads, &x->threads_cap, x->nthreads, sizeof(*x->threads)) < 0 ||
	    st_map_put(&x->thread_of, key, 0, x->nthreads) < 0)
		return NULL;
	x->threads[x->nthreads] = (struct thread){ .begin = INT64_MIN, .end = INT64_MIN, .pid = ev->pid };
	return &x->threads[x->nthreads++];
}

/* Keeps the call stack wait event ev carries (field k) for its thread's
 * next span; 0, or -1 when out of memory. */
static int keep_stack(struct st_tl *x, const struct st_event *ev, int k)
{
	struct thread *t = thread_of(x, ev);

	if (!t)
		return -1;
	t->n = st_stack_frames(&ev->fields[k], t->pcs, ST_STACK_MAX);
	return 0;
}

/*
 * A span that ev ends, with the stack its thread's last wait event had
 * (once: the next span has its own). A thread makes one call at a time:
 * its spans nest or follow each other. Where one crosses the edge of the
 * span before it, the times of their records disagreed (a CPU's buffer
 * keeps its records in time order: a call's event written after another
 * thread's newer one there carries that time, later than the call's
 * start; two CPUs' clocks may differ): it is cut at that edge, so that
 * the track still nests, and counted (time_cut).
 */
static int span(struct st_tl *x, const struct st_event *ev, const char *cat, const char *name,
		int64_t start, uint64_t dur)
{
	struct thread *t = thread_of(x, ev);
	int64_t end = st_ns_after(start, dur);
	struct st_tl_span s = { ev, cat, name, start, dur, NULL, 0 };

	if (!t)
		return -1;
	t->has_opened = false;
	if (start > t->begin && start < t->end && end > t->end)
		s.start = t->end; /* (began inside the last, ends after it) */
	else if (start < t->begin && end > t->begin && end < t->end)
		end = t->begin; /* (began before it, ends inside it) */
	if (s.start != start || end != st_ns_after(start, dur))
		x->time_cut++;
	s.dur = st_ns_since(s.start, end);
	if (end >= t->end) {
		t->begin = s.start;
		t->end = end;
	}
	s.stack = t->pcs;
	s.nstack = t->n;
	t->n = 0;
	return x->sink->span(x->ctx, x, &s);
}

/* The Java name of ev's thread (jvm:thread_start), or NULL. */
static const char *java_name(const struct st_tl *x, const struct st_event *ev)
{
	return st_jsyms_thread(st_syms_java(x->pass->syms), ev->pid, ev->tid);
}

/* The thread callback, at the first event drawn of each thread, and
 * again at its jvm:thread_start when it was drawn before (rename). */
static int names(struct st_tl *x, const struct st_event *ev, bool rename)
{
	bool new_process = false;

	if (st_map_get(&x->named, (uint64_t)ev->pid, (uint64_t)ev->tid) >= 0)
		return rename ? x->sink->thread(x->ctx, x, ev, false, java_name(x, ev)) : 0;
	if (st_map_put(&x->named, (uint64_t)ev->pid, (uint64_t)ev->tid, 1) < 0)
		return -1;
	if (st_map_get(&x->named, (uint64_t)ev->pid, UINT64_MAX) < 0) {
		if (st_map_put(&x->named, (uint64_t)ev->pid, UINT64_MAX, 1) < 0)
			return -1;
		new_process = true;
	}
	return x->sink->thread(x->ctx, x, ev, new_process, java_name(x, ev));
}

/* A Java monitor wait begins on ev's thread (k: its class). */
static int mon_begin(struct st_tl *x, const struct st_event *ev, const struct tcls *k)
{
	struct thread *t = thread_of(x, ev);

	if (!t)
		return -1;
	t->mon_open = true;
	t->mon_object_wait = k->object_wait;
	t->mon = ev->fields[k->addr].u;
	t->mon_since = ev->ns;
	return 0;
}

/* A Java monitor wait ends at ev: its span, from its begin event, or
 * wait_ns before ev when that was not seen (lost at a gap, or before
 * --time-range), named after the monitor's class and the site. */
static int mon_span(struct st_tl *x, const struct st_event *ev, const struct tcls *k)
{
	struct thread *t = thread_of(x, ev);
	uint64_t w = ev->fields[k->wait_ns].u;
	int64_t start = st_ns_before(ev->ns, w);
	const char *site = st_tl_site(x, ev->pid, ev->ip);
	char name[ST_JSYMS_MONITOR_NAME_SIZE + 600], monitor[ST_JSYMS_MONITOR_NAME_SIZE];

	if (!t)
		return -1;
	if (t->mon_open && t->mon == ev->fields[k->addr].u && t->mon_object_wait == k->object_wait &&
	    t->mon_since <= ev->ns)
		start = t->mon_since;
	t->mon_open = false;
	/* (as report locks names it; the sink's JSON escapes it) */
	st_jsyms_monitor_name(st_syms_java(x->pass->syms), ev->pid, (uint32_t)ev->fields[k->jclass].u,
			      false, monitor, sizeof(monitor));
	snprintf(name, sizeof(name), "%s %s at %s", k->object_wait ? "Object.wait on" : "wait", monitor,
		 site ? site : "?");
	return span(x, ev, k->object_wait ? "call" : "lock", name, start, st_ns_since(start, ev->ns));
}

static int on_hold(struct st_tl *x, const struct st_event *ev, const struct tcls *k, int64_t since)
{
	uint64_t key = (uint64_t)(uint32_t)ev->pid << 32 | (uint32_t)ev->tid;
	uint64_t addr = ev->fields[k->addr].u;
	int64_t track;
	uint32_t h;

	if (st_map_get(&x->held, key, addr) >= 0)
		return 0; /* recursive: the first hold goes on */
	if (x->nfree) {
		h = x->free_holds[--x->nfree];
	} else {
		if (st_grow(&x->holds, &x->holds_cap, x->nholds, sizeof(*x->holds)) < 0)
			return -1;
		h = x->nholds++;
	}
	x->holds[h].since = since;
	snprintf(x->holds[h].what, sizeof(x->holds[h].what), "hold %.*s 0x%" PRIx64,
		 (int)strcspn(k->name, "_"), k->name, addr);
	/* (a track per thread and lock: a rwlock's readers overlap) */
	track = st_map_get(&x->tracks, key, addr);
	if (track < 0) {
		track = ++x->ntracks;
		if (st_map_put(&x->tracks, key, addr, (uint32_t)track) < 0)
			return -1;
	}
	x->holds[h].id = (uint64_t)track;
	x->holds[h].ip = ev->ip;
	return st_map_put(&x->held, key, addr, h);
}

/* Hold h ended: its slot is free for the next. */
static int free_hold(struct st_tl *x, uint32_t h)
{
	if (st_grow(&x->free_holds, &x->free_cap, x->nfree, sizeof(*x->free_holds)) < 0)
		return -1;
	x->free_holds[x->nfree++] = h;
	return 0;
}

/*
 * A timeline of more than 1 GB is more than a browser opens: said before it
 * is written (at the first event, the trace open), with its expected size
 * and the options that make it smaller (SHIMTRACE_EXPORT_WARN_BYTES sets
 * the bound, for tests).
 */
static void warn_size(const struct st_tl *x)
{
	const char *env = getenv("SHIMTRACE_EXPORT_WARN_BYTES");
	uint64_t bound = env ? strtoull(env, NULL, 10) : 1ull << 30;
	uint64_t expect = x->pass->stream_bytes * x->sink->bytes_per_trace_byte;

	if (bound && expect > bound)
		fprintf(stderr,
			"shimtrace export: the timeline will be about %.1f MB%s, more than a browser "
			"opens well: --pid or --time-range makes it smaller\n",
			(double)expect / 1e6,
			x->opts->pid >= 0 || x->opts->from_ns >= 0 ? " at most" : "");
}

/* Whether ev is in --time-range. */
static bool in_range(const struct st_tl *x, const struct st_event *ev)
{
	uint64_t t = st_ns_since(x->pass->first_ns, ev->ns);

	return x->opts->from_ns < 0 || (t >= (uint64_t)x->opts->from_ns && t <= (uint64_t)x->opts->to_ns);
}

/* Where the call that ev ends, of duration dur, began: at its entry
 * event when it has one (a call's event is stamped at its start, but
 * may carry a later time, as above span(); a blocking lock's, sem_wait's,
 * at its end, its entry the wait's start), else at ev. */
static int64_t call_start(struct st_tl *x, const struct st_event *ev, uint64_t dur)
{
	struct thread *t = thread_of(x, ev);

	if (t && t->has_opened && t->opened <= ev->ns &&
	    ev->ns <= st_ns_after(t->opened, dur + ENTRY_SLACK_NS))
		return t->opened;
	return ev->ns;
}

/* What ev draws (k: its class, shown). */
static int draw(struct st_tl *x, const struct st_event *ev, const struct tcls *k)
{
	uint64_t w = 0, key;
	int64_t h;
	char name[96];
	int ret;

	switch (k->shape) {
	case S_LOCK:
		/* (a lock's event is written when the call returns, the lock
		 * taken: its wait began wait_ns before; any other call's is
		 * stamped at its start) */
		if (k->wait_ns >= 0)
			w = ev->fields[k->wait_ns].u;
		if (w) {
			snprintf(name, sizeof(name), "wait %.*s 0x%" PRIx64, (int)strcspn(k->name, "_"), k->name,
				 ev->fields[k->addr].u);
			if (span(x, ev, "lock", name, st_ns_before(ev->ns, w), w) < 0)
				return -1;
		}
		if (ev->fields[k->result].i == 0)
			return on_hold(x, ev, k, ev->ns);
		return 0;
	case S_UNLOCK:
		key = (uint64_t)(uint32_t)ev->pid << 32 | (uint32_t)ev->tid;
		h = st_map_del(&x->held, key, ev->fields[k->addr].u);
		if (h < 0)
			return 0;
		/* (an unlock before its lock: their times disagreed, as above
		 * span(); it ends where it began) */
		if (ev->ns < x->holds[h].since) {
			x->holds[h].since = ev->ns;
			x->time_cut++;
		}
		ret = x->sink->hold(x->ctx, x,
				    &(struct st_tl_hold){ ev, x->holds[h].what, x->holds[h].id,
							  x->holds[h].since, x->holds[h].ip });
		return ret < 0 ? ret : free_hold(x, (uint32_t)h);
	case S_MON_END:
		return mon_span(x, ev, k);
	case S_TIMED:
		w = ev->fields[k->wait_ns >= 0 ? k->wait_ns : k->dur_ns].u;
		return span(x, ev, strncmp(ev->cls->name, "io:", 3) == 0 ? "io" : "call", k->name,
			    call_start(x, ev, w), w);
	default:
		return x->sink->instant(x->ctx, x, ev, k->name);
	}
}

static int on_event(void *arg, const struct st_event *ev)
{
	struct st_tl *x = arg;
	const struct tcls *k = cls_of(x, ev->cls);
	bool shown;

	if (!k)
		return -1;
	if (!x->warned) {
		x->warned = true;
		warn_size(x);
	}
	/* (a wait's stack is for the span its lock event draws, a slow I/O
	 * call's for its own; an instant's, a sampled allocation's, is no
	 * span's) */
	if (k->stack >= 0 && k->shape != S_INSTANT && keep_stack(x, ev, k->stack) < 0)
		return -1;
	if (k->opens) {
		struct thread *t = thread_of(x, ev);

		if (!t)
			return -1;
		t->opened = ev->ns;
		t->has_opened = true;
	}
	if (k->shape == S_MON_BEGIN && mon_begin(x, ev, k) < 0)
		return -1;
	shown = k->shape != S_SKIP && k->shape != S_MON_BEGIN && in_range(x, ev);
	if (shown) {
		if (!x->started) {
			x->started = true;
			x->t0 = ev->ns;
		}
		if (names(x, ev, k->java_thread) < 0 || draw(x, ev, k) < 0)
			return -1;
	}
	return x->sink->each ? x->sink->each(x->ctx, x, ev, shown) : 0;
}

/* A gap: the holds of the threads it touches end, unwritten; their
 * monitor waits' begins are forgotten (their ends draw them from their
 * wait_ns). */
static int on_gap(void *arg, const struct st_lost *gap, int32_t pid)
{
	struct st_tl *x = arg;

	(void)gap;
	for (uint32_t i = 0; i < x->nthreads; i++)
		if (pid < 0 || x->threads[i].pid == pid)
			x->threads[i].mon_open = false;
	for (uint32_t i = 0; i < x->held.size; i++) {
		struct st_map_slot *m = &x->held.v[i];

		/* (a deletion shifts slots back: this one again) */
		while (m->used && (pid < 0 || (int32_t)(m->a >> 32) == pid)) {
			uint32_t h = m->value;

			st_map_del(&x->held, m->a, m->b);
			if (free_hold(x, h) < 0)
				return -1;
			x->holds_cut++;
		}
	}
	return 0;
}

/* Why nothing was drawn, when that is an error: 1 with err, else 0. */
static int nothing_drawn(const struct st_tl *x, const struct st_pass *pass, char *err, size_t errlen)
{
	const struct st_export_opts *eo = x->opts;

	if (x->started)
		return 0;
	if (pass->ndamage) {
		/* (an empty timeline is no answer: nothing could be read) */
		snprintf(err, errlen, "no event could be read; damaged: %s%s",
			 pass->damage[0] ? pass->damage[0] : "?", pass->damaged > 1 ? " (and more)" : "");
		return 1;
	}
	if (eo->from_ns >= 0) {
		/* (an empty timeline is no answer: the range missed the trace) */
		char to[48] = " on";

		if (eo->to_ns != INT64_MAX)
			snprintf(to, sizeof(to), " to %.9g s", (double)eo->to_ns / 1e9);
		snprintf(err, errlen, "--time-range: no event from %.9g s%s (the trace spans %.9g s)",
			 (double)eo->from_ns / 1e9, to,
			 (double)st_ns_since(pass->first_ns, pass->last_ns) / 1e9);
		return 1;
	}
	return 0;
}

int st_timeline_write(const struct st_export_opts *eo, const struct st_tl_sink *sink, void *ctx,
		      char *err, size_t errlen)
{
	struct st_report_opts opts = { .dir = eo->dir, .pid = eo->pid, .progress = eo->progress,
				       .progress_what = "export" };
	struct st_tl x = { .opts = eo, .sink = sink, .ctx = ctx };
	struct st_pass pass;
	int ret = 0;

	x.pass = &pass;
	/* (pass fills the names as it goes: a process's name is known at its
	 * first event) */
	if (st_report_pass(&opts, on_event, on_gap, &x, &pass, err, errlen) < 0)
		ret = 1;
	else
		ret = nothing_drawn(&x, &pass, err, errlen);
	sink->end(ctx, &(struct st_tl_totals){ eo->dir, pass.events, pass.lost, x.holds_cut, x.time_cut });
	if (!ret && (pass.lost || pass.incomplete || pass.nunexited || pass.damaged))
		st_pass_warnings(&pass, stderr);
	if (!ret && pass.damaged)
		ret = 3;
	free(x.cls);
	free(x.holds);
	free(x.free_holds);
	st_map_free(&x.held);
	st_map_free(&x.named);
	st_map_free(&x.tracks);
	for (uint32_t i = 0; i < x.nsites; i++)
		free(x.site_texts[i]);
	free(x.site_texts);
	st_map_free(&x.sites);
	st_map_free(&x.thread_of);
	free(x.threads);
	st_pass_fini(&pass);
	return ret;
}
