/*
 * shimtrace export --format chrome: a trace as Chrome's trace-event JSON,
 * which Perfetto UI and chrome://tracing open: one track per thread
 * (named after its process), with
 *   - spans ("X") for the waits for locks (a lock event's wait_ns, from the
 *     call's start), the condition waits, and every call with a duration
 *     (I/O, joins...): on a thread's track they nest, as a thread does one
 *     call at a time;
 *   - the holds, from the acquisition to the unlock, as async spans ("b"
 *     and "e"), one track for each lock a thread took: hand-over-hand
 *     locking (a, b, unlock a) gives holds that overlap without nesting,
 *     which a thread's track cannot show;
 *   - instants ("i") for allocations and frees, and for events that are
 *     neither (thread_create, exec...), with their fields as args;
 *   - the process and thread names ("M").
 * Times are microseconds from the first event written, exact: written
 * from the integer nanoseconds, never through a double of the absolute
 * time (whose 53 bits are 256 ns at today's dates). --pid and
 * --time-range keep a large trace usable: only those events are written.
 * Where the trace lost events, the holds of the threads whose buffer lost
 * them end there, unwritten (the unlock may be what was lost; gapscope.h),
 * and are counted in otherData.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/escape.h"
#include "ctl/report/duration.h"
#include "ctl/report/export_chrome.h"
#include "ctl/report/grow.h"
#include "ctl/report/map.h"
#include "ctl/report/meaning.h"
#include "ctl/report/pass.h"
#include "shimtrace/tracepoint.h"
#include "ctl/report/site.h"
#include "wrappers/meanings-gen.h"

/* What an event class becomes. */
enum shape { S_SKIP, S_LOCK, S_UNLOCK, S_TIMED, S_INSTANT };

struct ccls {
	bool known;
	enum shape shape;
	int addr, wait_ns, dur_ns, result, stack;
	char name[64]; /* the event's name without the provider */
};

struct hold {
	int64_t since;
	char what[80];
	uint64_t id; /* its track: of its thread and lock */
	uint64_t ip; /* where the lock was taken */
};

struct exp {
	const struct st_export_opts *opts;
	FILE *o;
	struct ccls *cls;
	uint32_t ncls;
	struct st_map held; /* (pid << 32 | tid, lock) -> holds[] */
	struct hold *holds;
	uint32_t nholds, holds_cap;
	uint32_t *free_holds;
	uint32_t nfree, free_cap;
	struct st_map named; /* (pid, tid) -> 1: names written */
	struct st_map tracks; /* (pid << 32 | tid, lock) -> its async track's id */
	uint32_t ntracks;
	uint64_t holds_cut; /* open when a gap came: not written */
	/* call sites as text, each made once: (pid, ip) -> site_texts[] */
	struct st_map sites;
	char **site_texts;
	uint32_t nsites, sites_cap;
	int64_t t0;
	bool started, first, warned;
	uint64_t written;
	const struct st_pass *pass;
	/* each thread's call stack of its last wait event (a wait, a futex
	 * wait_begin), for the span that ends the wait:
	 * (pid << 32 | tid, 0) -> stacks[] */
	struct st_map stack_of;
	struct pending_stack {
		uint64_t pcs[ST_STACK_MAX];
		uint32_t n;
	} *stacks;
	uint32_t nstacks, stacks_cap;
};

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

static const struct ccls *cls_of(struct exp *x, const struct st_event_class *c)
{
	struct ccls *k = st_class_slot(&x->cls, &x->ncls, sizeof(*x->cls), c->index);
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
	k->stack = st_event_class_field(c, "stack");
	if (k->stack >= 0 && c->fields.v[k->stack].kind != ST_FIELD_BYTES)
		k->stack = -1;
	k->addr = -1;
	m = st_meaning_find(c->name, lock_shapes, sizeof(lock_shapes) / sizeof(lock_shapes[0]));
	if (m) {
		shape = m->what;
		k->addr = st_event_class_field(c, m->field);
	}
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
	return k;
}

/* A time (ns), as microseconds from t0, exactly: "12.345", "-0.020". */
static void put_ts(struct exp *x, int64_t ns)
{
	int64_t d = ns - x->t0;
	uint64_t a = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;

	fprintf(x->o, "%s%" PRIu64 ".%03" PRIu64, d < 0 ? "-" : "", a / 1000, a % 1000);
}

/* A duration (ns) in microseconds, exactly. */
static void put_dur(struct exp *x, uint64_t ns)
{
	fprintf(x->o, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void begin_record(struct exp *x)
{
	fputs(x->first ? "\n" : ",\n", x->o);
	x->first = false;
	x->written++;
}

/* The call site ip of process pid as a report shows it ("function
 * (file:line)"), made once; NULL when out of memory. */
static const char *site_of(struct exp *x, int32_t pid, uint64_t ip)
{
	int64_t i = st_map_get(&x->sites, (uint64_t)(uint32_t)pid, ip);
	char text[512];
	char *s;

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

/* ", "at": SITE" of ip in pid, when there is one. */
static void at(struct exp *x, int32_t pid, uint64_t ip)
{
	const char *s = ip ? site_of(x, pid, ip) : NULL;

	if (s) {
		fputs(", \"at\": ", x->o);
		st_json_write(x->o, s);
	}
}

/* Keeps the call stack wait event ev carries (field k) for its thread's
 * next span; 0, or -1 when out of memory. */
static int keep_stack(struct exp *x, const struct st_event *ev, int k)
{
	uint64_t key = (uint64_t)(uint32_t)ev->pid << 32 | (uint32_t)ev->tid;
	int64_t i = st_map_get(&x->stack_of, key, 0);
	struct pending_stack *p;

	if (i < 0) {
		if (st_grow(&x->stacks, &x->stacks_cap, x->nstacks, sizeof(*x->stacks)) < 0 ||
		    st_map_put(&x->stack_of, key, 0, x->nstacks) < 0)
			return -1;
		i = x->nstacks++;
	}
	p = &x->stacks[i];
	p->n = 0;
	for (uint64_t b = 0; b + 8 <= ev->fields[k].len && p->n < ST_STACK_MAX; b += 8)
		memcpy(&p->pcs[p->n++], (const uint8_t *)ev->fields[k].ptr + b, 8);
	return 0;
}

/* ", "stack": [SITE...]": the callers of the wait that ev's span ends,
 * as its thread's last wait event had them (a return address resolved
 * one byte back, in its call), once; nothing when it had none. */
static void span_stack(struct exp *x, const struct st_event *ev)
{
	int64_t i = st_map_get(&x->stack_of, (uint64_t)(uint32_t)ev->pid << 32 | (uint32_t)ev->tid, 0);
	struct pending_stack *p = i >= 0 ? &x->stacks[i] : NULL;

	if (!p || !p->n)
		return;
	fputs(", \"stack\": [", x->o);
	for (uint32_t f = 0; f < p->n; f++) {
		const char *site = site_of(x, ev->pid, p->pcs[f] - 1);

		fputs(f ? ", " : "", x->o);
		st_json_write(x->o, site ? site : "?");
	}
	fputs("]", x->o);
	p->n = 0;
}

/* The fields of ev as JSON members (a call stack: its frames; the
 * frames themselves go with the span: span_stack), and where it was
 * called ("at"), the object left open. */
static void args_open(struct exp *x, const struct st_event *ev)
{
	const struct st_plan *p = &ev->cls->fields;

	fputs("{", x->o);
	for (uint32_t i = 0; i < p->n; i++) {
		const struct st_field_desc *f = &p->v[i];
		const struct st_value *v = &ev->fields[i];
		const char *name = f->name;

		fprintf(x->o, "%s\"%s\": ", i ? ", " : "", name);
		if (f->kind == ST_FIELD_STRING)
			st_json_write(x->o, v->ptr ? (const char *)v->ptr : "");
		else if (f->kind == ST_FIELD_BYTES)
			fprintf(x->o, "%" PRIu64, v->len / 8); /* (a stack: its frames) */
		else if (f->kind == ST_FIELD_SINT)
			fprintf(x->o, "%" PRId64, v->i);
		else if (f->kind == ST_FIELD_HEX)
			fprintf(x->o, "\"0x%" PRIx64 "\"", v->u);
		else if (f->kind == ST_FIELD_UINT)
			fprintf(x->o, "%" PRIu64, v->u);
		else
			fputs("null", x->o);
	}
	at(x, ev->pid, ev->ip);
}

static void args(struct exp *x, const struct st_event *ev)
{
	args_open(x, ev);
	fputs("}", x->o);
}

static void names(struct exp *x, const struct st_event *ev)
{
	const char *pname = st_pass_name(x->pass, ev->pid);

	if (st_map_get(&x->named, (uint64_t)ev->pid, (uint64_t)ev->tid) >= 0)
		return;
	st_map_put(&x->named, (uint64_t)ev->pid, (uint64_t)ev->tid, 1);
	if (st_map_get(&x->named, (uint64_t)ev->pid, UINT64_MAX) < 0) {
		st_map_put(&x->named, (uint64_t)ev->pid, UINT64_MAX, 1);
		begin_record(x);
		fprintf(x->o, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %" PRId32 ", \"args\": {\"name\": ",
			ev->pid);
		st_json_write(x->o, pname);
		fputs("}}", x->o);
	}
	begin_record(x);
	fprintf(x->o,
		"{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %" PRId32 ", \"tid\": %" PRId32
		", \"args\": {\"name\": \"%s %" PRId32 "\"}}",
		ev->pid, ev->tid, ev->tid == ev->pid ? "main" : "thread", ev->tid);
}

static void span(struct exp *x, const struct st_event *ev, const char *cat, const char *name,
		 int64_t start, uint64_t dur)
{
	begin_record(x);
	fprintf(x->o, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
	st_json_write(x->o, name);
	fprintf(x->o, ", \"pid\": %" PRId32 ", \"tid\": %" PRId32 ", \"ts\": ", ev->pid, ev->tid);
	put_ts(x, start);
	fputs(", \"dur\": ", x->o);
	put_dur(x, dur);
	fputs(", \"args\": ", x->o);
	args_open(x, ev);
	span_stack(x, ev);
	fputs("}}", x->o);
}

/* Hold h, ended by unlock event ev: its two ends on its track. */
static void hold_span(struct exp *x, const struct st_event *ev, const struct hold *h)
{
	const char ph[2] = { 'b', 'e' };

	for (int i = 0; i < 2; i++) {
		begin_record(x);
		fprintf(x->o, "{\"ph\": \"%c\", \"cat\": \"lock\", \"name\": ", ph[i]);
		st_json_write(x->o, h->what);
		fprintf(x->o,
			", \"id2\": {\"local\": \"0x%" PRIx64 "\"}, \"pid\": %" PRId32 ", \"tid\": %" PRId32
			", \"ts\": ",
			h->id, ev->pid, ev->tid);
		put_ts(x, i ? ev->ns : h->since);
		if (i) {
			fputs("}", x->o);
		} else {
			fprintf(x->o, ", \"args\": {\"tid\": %" PRId32, ev->tid);
			at(x, ev->pid, h->ip);
			fputs("}}", x->o);
		}
	}
}

static int on_hold(struct exp *x, const struct st_event *ev, const struct ccls *k, int64_t since)
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
static int free_hold(struct exp *x, uint32_t h)
{
	if (st_grow(&x->free_holds, &x->free_cap, x->nfree, sizeof(*x->free_holds)) < 0)
		return -1;
	x->free_holds[x->nfree++] = h;
	return 0;
}

/* JSON bytes for each byte of trace, about (5 measured: lock and I/O
 * spans, allocation instants) */
#define JSON_PER_TRACE_BYTE 5

/*
 * A timeline of more than 1 GB is more than a browser opens: said before it
 * is written (at the first event, the trace open), with its expected size and the options that make it smaller
 * (SHIMTRACE_EXPORT_WARN_BYTES sets the bound, for tests).
 */
static void warn_size(const struct st_export_opts *eo, const struct st_pass *pass)
{
	const char *env = getenv("SHIMTRACE_EXPORT_WARN_BYTES");
	uint64_t bound = env ? strtoull(env, NULL, 10) : 1ull << 30;
	uint64_t expect = pass->stream_bytes * JSON_PER_TRACE_BYTE;

	if (bound && expect > bound)
		fprintf(stderr,
			"shimtrace export: the timeline will be about %.1f MB%s, more than a browser "
			"opens well: --pid or --time-range makes it smaller\n",
			(double)expect / 1e6, eo->pid >= 0 || eo->from_ns >= 0 ? " at most" : "");
}

static int on_event(void *arg, const struct st_event *ev)
{
	struct exp *x = arg;
	const struct ccls *k = cls_of(x, ev->cls);
	uint64_t w = 0, key;
	int64_t h;
	char name[96];

	if (!k)
		return -1;
	if (!x->warned) {
		x->warned = true;
		warn_size(x->opts, x->pass);
	}
	if (k->stack >= 0 && keep_stack(x, ev, k->stack) < 0)
		return -1;
	if (k->shape == S_SKIP)
		return 0;
	if (x->opts->from_ns >= 0 && (st_ns_since(x->pass->first_ns, ev->ns) < (uint64_t)x->opts->from_ns ||
				       st_ns_since(x->pass->first_ns, ev->ns) > (uint64_t)x->opts->to_ns))
		return 0;
	if (!x->started) {
		x->started = true;
		x->t0 = ev->ns;
	}
	names(x, ev);
	switch (k->shape) {
	case S_LOCK:
		if (k->wait_ns >= 0)
			w = ev->fields[k->wait_ns].u;
		if (w) {
			snprintf(name, sizeof(name), "wait %.*s 0x%" PRIx64, (int)strcspn(k->name, "_"), k->name,
				 ev->fields[k->addr].u);
			span(x, ev, "lock", name, ev->ns, w);
		}
		if (ev->fields[k->result].i == 0)
			return on_hold(x, ev, k, st_ns_after(ev->ns, w));
		return 0;
	case S_UNLOCK:
		key = (uint64_t)(uint32_t)ev->pid << 32 | (uint32_t)ev->tid;
		h = st_map_del(&x->held, key, ev->fields[k->addr].u);
		if (h < 0)
			return 0;
		hold_span(x, ev, &x->holds[h]);
		return free_hold(x, (uint32_t)h);
	case S_TIMED:
		w = ev->fields[k->wait_ns >= 0 ? k->wait_ns : k->dur_ns].u;
		span(x, ev, strncmp(ev->cls->name, "io:", 3) == 0 ? "io" : "call", k->name, ev->ns, w);
		return 0;
	default:
		begin_record(x);
		/* (class names come from the trace's metadata: escaped) */
		fputs("{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"", x->o);
		st_esc_write(x->o, ev->cls->name,
			     strchr(ev->cls->name, ':') ? (size_t)(strchr(ev->cls->name, ':') - ev->cls->name) : 0,
			     ST_ESC_JSON);
		fputs("\", \"name\": ", x->o);
		st_json_write(x->o, k->name);
		fprintf(x->o, ", \"pid\": %" PRId32 ", \"tid\": %" PRId32 ", \"ts\": ", ev->pid, ev->tid);
		put_ts(x, ev->ns);
		fputs(", \"args\": ", x->o);
		args(x, ev);
		fputs("}", x->o);
		return 0;
	}
}

/* A gap: the holds of the threads it touches end, unwritten. */
static int on_gap(void *arg, const struct st_lost *gap, int32_t pid)
{
	struct exp *x = arg;

	(void)gap;
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

int st_export_chrome(const struct st_export_opts *eo, FILE *o, char *err, size_t errlen)
{
	struct st_report_opts opts = { .dir = eo->dir, .pid = eo->pid, .progress = eo->progress,
				       .progress_what = "export" };
	struct exp x = { .opts = eo, .o = o, .first = true };
	struct st_pass pass;
	int ret = 0;

	x.pass = &pass;
	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", o);
	/* (pass fills the names as it goes: a process's name event comes
	 * before its other events) */
	if (st_report_pass(&opts, on_event, on_gap, &x, &pass, err, errlen) < 0) {
		ret = 1;
	} else if (!x.started && pass.ndamage) {
		/* (an empty timeline is no answer: nothing could be read) */
		snprintf(err, errlen, "no event could be read; damaged: %s%s",
			 pass.damage[0] ? pass.damage[0] : "?",
			 pass.damaged > 1 ? " (and more)" : "");
		ret = 1;
	} else if (eo->from_ns >= 0 && !x.started) {
		/* (an empty timeline is no answer: the range missed the trace) */
		char to[48] = " on";

		if (eo->to_ns != INT64_MAX)
			snprintf(to, sizeof(to), " to %.9g s", (double)eo->to_ns / 1e9);
		snprintf(err, errlen, "--time-range: no event from %.9g s%s (the trace spans %.9g s)",
			 (double)eo->from_ns / 1e9, to,
			 (double)st_ns_since(pass.first_ns, pass.last_ns) / 1e9);
		ret = 1;
	}
	fprintf(o, "\n], \"otherData\": {\"trace\": ");
	st_json_write(o, eo->dir);
	fprintf(o, ", \"events\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"written\": %" PRIu64
		   ", \"holds_cut\": %" PRIu64 "}}\n",
		pass.events, pass.lost, x.written, x.holds_cut);
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
	st_map_free(&x.stack_of);
	free(x.stacks);
	st_pass_fini(&pass);
	return ret;
}
