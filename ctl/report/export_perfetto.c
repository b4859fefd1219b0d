/*
 * shimtrace export --format perfetto: a trace in Perfetto's own format (a
 * Trace message of TracePackets, protobuf), which Perfetto UI and
 * trace_processor read without converting, drawn as timeline.c decides,
 * in Perfetto's TrackEvent model:
 *   - a track per process (ProcessDescriptor: pid, name) and per thread
 *     (ThreadDescriptor: pid, tid, "main 1234" or "thread 1235", or its
 *     Java name, under its process's), each described before its first
 *     event, and again when a jvm:thread_start names it later;
 *   - spans as TYPE_SLICE_BEGIN and TYPE_SLICE_END on their thread's
 *     track, with a category and a name, the event's fields and its call
 *     site ("at") as debug annotations, and a wait's call stack as an
 *     interned callstack (pfstack.c);
 *   - the holds on a track of their thread and lock ("hold mutex 0x...",
 *     under the thread's track): hand-over-hand holds overlap on two
 *     tracks, where each nests;
 *   - instants (TYPE_INSTANT) for the other events, allocations too;
 *   - for each process with malloc-family events, a counter track "heap"
 *     (bytes): its live heap after each of them, as report malloc counts
 *     it (heapblocks.h), from the whole trace even under --time-range.
 * Timestamps are the trace's, absolute nanoseconds (TracePacket.timestamp),
 * exact at any date. Every packet is on one sequence, whose first packet
 * clears its incremental state; names, categories, annotation names and
 * stacks are interned on it, each written once, in the packet that first
 * uses it. Packets are written in the order the spans end; Perfetto
 * sorts them by time.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/report/duration.h"
#include "ctl/report/export_perfetto.h"
#include "ctl/report/grow.h"
#include "ctl/report/heapblocks.h"
#include "ctl/report/pass.h"
#include "ctl/report/pbwrite.h"
#include "ctl/report/pfintern.h"
#include "ctl/report/pfproto.h"
#include "ctl/report/pfstack.h"

/* trusted_packet_sequence_id: one writer, one sequence */
#define SEQUENCE 1
/* packets are written out a MiB at a time */
#define FLUSH_BYTES (1u << 20)
/* protobuf bytes for each byte of trace, at most about (measured: 2.4
 * for python3's allocations, each an instant and a counter point; 1 for
 * lock spans and holds) */
#define PERFETTO_PER_TRACE_BYTE 3

/* The kinds of strings interned here, each numbered from 1. */
enum { K_CATEGORY, K_NAME, K_ANNOTATION, K_SITE };

/* A track's key in tracks: a thread (pid, tid), its process (pid,
 * PROCESS), the process's heap counter (pid, HEAP), a hold track
 * (HOLDS, its timeline number); pids and tids as 32 bits. */
#define PROCESS UINT64_MAX
#define HEAP (UINT64_MAX - 1)
#define HOLDS UINT64_MAX

struct pf {
	FILE *o;
	struct st_pb out; /* packets not written to o yet */
	struct st_pb in;  /* the InternedData entries of the packet under way */
	size_t packet;	  /* the mark of the packet under way */
	bool cleared;	  /* the sequence's first packet is written */
	struct st_intern names;
	struct st_pfstack stacks;
	struct st_map tracks; /* its key -> a track's uuid */
	uint32_t ntracks;
	struct st_heapblocks heap;
	struct st_map live_of; /* (pid, 0) -> live[]: the bytes its heap holds */
	int64_t *live;
	uint32_t nlive, live_cap;
};

static void flush(struct pf *x)
{
	if (x->out.n && !x->out.failed)
		fwrite(x->out.v, 1, x->out.n, x->o); /* (an error stays in o: the caller's fclose) */
	x->out.n = 0;
}

/* A packet: its fields follow until packet_end. ts < 0: none (a track
 * descriptor). */
static void packet_begin(struct pf *x, int64_t ts)
{
	x->packet = st_pb_begin(&x->out, ST_PF_TRACE_PACKET);
	if (ts >= 0)
		st_pb_varint(&x->out, ST_PF_PACKET_TIMESTAMP, (uint64_t)ts);
	st_pb_varint(&x->out, ST_PF_PACKET_SEQUENCE, SEQUENCE);
}

/* The packet's end, with the interned entries its fields added; interned:
 * whether it refers to interned data. 0, or -1 when out of memory. */
static int packet_end(struct pf *x, bool interned)
{
	uint32_t flags = (x->cleared ? 0 : ST_PF_SEQ_CLEARED) | (interned ? ST_PF_SEQ_NEEDS : 0);

	if (x->in.n) {
		st_pb_bytes(&x->out, ST_PF_PACKET_INTERNED, x->in.v, x->in.n);
		x->in.n = 0;
	}
	if (flags)
		st_pb_varint(&x->out, ST_PF_PACKET_FLAGS, flags);
	x->cleared = true;
	st_pb_end(&x->out, x->packet);
	if (x->out.n >= FLUSH_BYTES)
		flush(x);
	return x->out.failed || x->in.failed ? -1 : 0;
}

/* The uuid of track (a, b), *fresh when it is new: described then. 0 when
 * out of memory. */
static uint64_t track_of(struct pf *x, uint64_t a, uint64_t b, bool *fresh)
{
	int64_t t = st_map_get(&x->tracks, a, b);

	*fresh = t < 0;
	if (t >= 0)
		return (uint64_t)t;
	if (st_map_put(&x->tracks, a, b, x->ntracks + 1) < 0)
		return 0;
	return ++x->ntracks;
}

/* A pid or tid as a key of 32 bits (-1, absent: 0xffffffff). */
static uint64_t id32(int32_t id)
{
	return (uint32_t)id;
}

/* A track descriptor's packet begun, with its uuid and parent (0: none);
 * returns the descriptor's mark. */
static size_t descriptor_begin(struct pf *x, uint64_t uuid, uint64_t parent)
{
	size_t m;

	packet_begin(x, -1);
	m = st_pb_begin(&x->out, ST_PF_PACKET_TRACK_DESCRIPTOR);
	st_pb_varint(&x->out, ST_PF_TRACK_UUID, uuid);
	if (parent)
		st_pb_varint(&x->out, ST_PF_TRACK_PARENT, parent);
	return m;
}

static int descriptor_end(struct pf *x, size_t m)
{
	st_pb_end(&x->out, m);
	return packet_end(x, false);
}

/* The track of process pid, described at its first use; 0 when out of
 * memory. */
static uint64_t process_track(struct pf *x, struct st_tl *tl, int32_t pid)
{
	bool fresh;
	uint64_t uuid = track_of(x, id32(pid), PROCESS, &fresh);
	size_t m, p;

	if (!uuid || !fresh)
		return uuid;
	m = descriptor_begin(x, uuid, 0);
	p = st_pb_begin(&x->out, ST_PF_TRACK_PROCESS);
	st_pb_varint(&x->out, ST_PF_PROCESS_PID, (uint64_t)(int64_t)pid);
	st_pb_string(&x->out, ST_PF_PROCESS_NAME, st_pass_name(st_tl_pass(tl), pid));
	st_pb_end(&x->out, p);
	return descriptor_end(x, m) < 0 ? 0 : uuid;
}

static int on_thread(void *ctx, struct st_tl *tl, const struct st_event *ev, bool new_process,
		     const char *java)
{
	struct pf *x = ctx;
	uint64_t process = process_track(x, tl, ev->pid), uuid;
	bool fresh;
	char name[32];
	size_t m, t;

	(void)new_process; /* (process_track knows) */
	uuid = track_of(x, id32(ev->pid), id32(ev->tid), &fresh);
	if (!process || !uuid)
		return -1;
	snprintf(name, sizeof(name), "%s %" PRId32, ev->tid == ev->pid ? "main" : "thread", ev->tid);
	/* (a descriptor again names the thread anew: its Java name) */
	m = descriptor_begin(x, uuid, process);
	t = st_pb_begin(&x->out, ST_PF_TRACK_THREAD);
	st_pb_varint(&x->out, ST_PF_THREAD_PID, (uint64_t)(int64_t)ev->pid);
	st_pb_varint(&x->out, ST_PF_THREAD_TID, (uint64_t)(int64_t)ev->tid);
	st_pb_string(&x->out, ST_PF_THREAD_NAME, java ? java : name);
	st_pb_end(&x->out, t);
	return descriptor_end(x, m);
}

/* The track of ev's thread (described at its first event). */
static uint64_t thread_track(struct pf *x, const struct st_event *ev)
{
	bool fresh;

	return track_of(x, id32(ev->pid), id32(ev->tid), &fresh);
}

/* A debug annotation begun: its value follows; returns its mark. */
static size_t annotation(struct pf *x, const char *name)
{
	size_t m = st_pb_begin(&x->out, ST_PF_EVENT_ANNOTATION);

	st_pb_varint(&x->out, ST_PF_ANN_NAME,
		     st_intern_string(&x->names, K_ANNOTATION, name, ST_PF_IN_ANNOTATION_NAMES, &x->in));
	return m;
}

/* "at": where ev's call (or a lock's take, ip) was made, when known;
 * interned, as a call site comes back with every call it makes. */
static void at(struct pf *x, struct st_tl *tl, int32_t pid, uint64_t ip)
{
	const char *s = st_tl_site(tl, pid, ip);
	size_t m;

	if (!s)
		return;
	m = annotation(x, "at");
	st_pb_varint(&x->out, ST_PF_ANN_STRING_IID,
		     st_intern_string(&x->names, K_SITE, s, ST_PF_IN_ANNOTATION_STRINGS, &x->in));
	st_pb_end(&x->out, m);
}

/* The fields of ev as debug annotations (a call stack: its frames, which
 * go as the span's callstack), and where it was called. */
static void args(struct pf *x, struct st_tl *tl, const struct st_event *ev)
{
	const struct st_plan *p = &ev->cls->fields;

	for (uint32_t i = 0; i < p->n; i++) {
		const struct st_field_desc *f = &p->v[i];
		const struct st_value *v = &ev->fields[i];
		size_t m;

		if (f->kind == ST_FIELD_VARIANT)
			continue; /* (no value to show: the chosen option's fields are not kept) */
		m = annotation(x, f->name);
		if (f->kind == ST_FIELD_STRING)
			st_pb_string(&x->out, ST_PF_ANN_STRING, v->ptr ? (const char *)v->ptr : "");
		else if (f->kind == ST_FIELD_BYTES)
			st_pb_varint(&x->out, ST_PF_ANN_UINT, v->len / 8);
		else if (f->kind == ST_FIELD_SINT)
			st_pb_varint(&x->out, ST_PF_ANN_INT, (uint64_t)v->i);
		else if (f->kind == ST_FIELD_HEX)
			st_pb_varint(&x->out, ST_PF_ANN_POINTER, v->u);
		else if (f->kind == ST_FIELD_FLOAT)
			st_pb_double(&x->out, ST_PF_ANN_DOUBLE, st_value_double(f, v));
		else
			st_pb_varint(&x->out, ST_PF_ANN_UINT, v->u);
		st_pb_end(&x->out, m);
	}
	at(x, tl, ev->pid, ev->ip);
}

/* A track event begun in a packet at ts: its type, track, and for a
 * slice's begin or an instant its category and name; returns its mark. */
static size_t event_begin(struct pf *x, int64_t ts, uint32_t type, uint64_t track, const char *cat,
			  const char *name)
{
	size_t m;

	/* (a time before 1970, from a damaged trace: the earliest there is) */
	packet_begin(x, ts < 0 ? 0 : ts);
	m = st_pb_begin(&x->out, ST_PF_PACKET_TRACK_EVENT);
	st_pb_varint(&x->out, ST_PF_EVENT_TYPE, type);
	st_pb_varint(&x->out, ST_PF_EVENT_TRACK, track);
	if (cat)
		st_pb_varint(&x->out, ST_PF_EVENT_CATEGORY,
			     st_intern_string(&x->names, K_CATEGORY, cat, ST_PF_IN_CATEGORIES, &x->in));
	if (name)
		st_pb_varint(&x->out, ST_PF_EVENT_NAME,
			     st_intern_string(&x->names, K_NAME, name, ST_PF_IN_EVENT_NAMES, &x->in));
	return m;
}

static int event_end(struct pf *x, size_t m, bool interned)
{
	st_pb_end(&x->out, m);
	return packet_end(x, interned);
}

/* A slice's end on track at ts. */
static int slice_end(struct pf *x, uint64_t track, int64_t ts)
{
	return event_end(x, event_begin(x, ts, ST_PF_SLICE_END, track, NULL, NULL), false);
}

static int on_span(void *ctx, struct st_tl *tl, const struct st_tl_span *s)
{
	struct pf *x = ctx;
	uint64_t track = thread_track(x, s->ev);
	uint64_t stack = st_pfstack_of(&x->stacks, tl, s, &x->in);
	size_t m;

	if (!track)
		return -1;
	m = event_begin(x, s->start, ST_PF_SLICE_BEGIN, track, s->cat, s->name);
	args(x, tl, s->ev);
	if (stack)
		st_pb_varint(&x->out, ST_PF_EVENT_CALLSTACK, stack);
	if (event_end(x, m, true) < 0)
		return -1;
	return slice_end(x, track, st_ns_after(s->start, s->dur));
}

static int on_hold(void *ctx, struct st_tl *tl, const struct st_tl_hold *h)
{
	struct pf *x = ctx;
	uint64_t thread = thread_track(x, h->ev), track;
	bool fresh;
	size_t m, a;

	track = track_of(x, HOLDS, h->track, &fresh);
	if (!thread || !track)
		return -1;
	if (fresh) {
		m = descriptor_begin(x, track, thread);
		st_pb_string(&x->out, ST_PF_TRACK_NAME, h->what);
		if (descriptor_end(x, m) < 0)
			return -1;
	}
	m = event_begin(x, h->since, ST_PF_SLICE_BEGIN, track, "lock", h->what);
	a = annotation(x, "tid");
	st_pb_varint(&x->out, ST_PF_ANN_INT, (uint64_t)(int64_t)h->ev->tid);
	st_pb_end(&x->out, a);
	at(x, tl, h->ev->pid, h->ip);
	if (event_end(x, m, true) < 0)
		return -1;
	return slice_end(x, track, h->ev->ns);
}

static int on_instant(void *ctx, struct st_tl *tl, const struct st_event *ev, const char *name)
{
	struct pf *x = ctx;
	uint64_t track = thread_track(x, ev);
	const char *colon = strchr(ev->cls->name, ':');
	char cat[64];
	size_t m;

	if (!track)
		return -1;
	/* (the provider: "malloc", "pthread", "io"...) */
	snprintf(cat, sizeof(cat), "%.*s", colon ? (int)(colon - ev->cls->name) : 0, ev->cls->name);
	m = event_begin(x, ev->ns, ST_PF_INSTANT, track, cat, name);
	args(x, tl, ev);
	return event_end(x, m, true);
}

/* The bytes process pid's heap holds, as kept in live[]; NULL when out of
 * memory. */
static int64_t *live_of(struct pf *x, int32_t pid)
{
	int64_t i = st_map_get(&x->live_of, id32(pid), 0);

	if (i >= 0)
		return &x->live[i];
	if (st_grow(&x->live, &x->live_cap, x->nlive, sizeof(*x->live)) < 0 ||
	    st_map_put(&x->live_of, id32(pid), 0, x->nlive) < 0)
		return NULL;
	x->live[x->nlive] = 0;
	return &x->live[x->nlive++];
}

/* Every event: a heap event moves its process's counter, drawn when the
 * event is. */
static int on_each(void *ctx, struct st_tl *tl, const struct st_event *ev, bool shown)
{
	struct pf *x = ctx;
	uint64_t process, track;
	int64_t *live;
	bool fresh;
	size_t m, c;

	if (st_heapblocks_event(&x->heap, ev) < 0)
		return -1;
	if (!x->heap.last_was_heap)
		return 0;
	live = live_of(x, ev->pid);
	if (!live)
		return -1;
	*live += x->heap.last_change;
	if (!shown)
		return 0;
	process = process_track(x, tl, ev->pid);
	track = track_of(x, id32(ev->pid), HEAP, &fresh);
	if (!process || !track)
		return -1;
	if (fresh) {
		m = descriptor_begin(x, track, process);
		st_pb_string(&x->out, ST_PF_TRACK_NAME, "heap");
		c = st_pb_begin(&x->out, ST_PF_TRACK_COUNTER);
		st_pb_varint(&x->out, ST_PF_COUNTER_UNIT, ST_PF_UNIT_BYTES);
		st_pb_end(&x->out, c);
		if (descriptor_end(x, m) < 0)
			return -1;
	}
	m = event_begin(x, ev->ns, ST_PF_COUNTER, track, NULL, NULL);
	st_pb_varint(&x->out, ST_PF_EVENT_COUNTER_VALUE, (uint64_t)*live);
	return event_end(x, m, false);
}

static void on_end(void *ctx, const struct st_tl_totals *t)
{
	(void)t; /* (the trace's warnings go to stderr: nothing in the file) */
	flush(ctx);
}

int st_export_perfetto(const struct st_export_opts *eo, FILE *o, char *err, size_t errlen)
{
	static const struct st_tl_sink perfetto = {
		.thread = on_thread,
		.span = on_span,
		.hold = on_hold,
		.instant = on_instant,
		.each = on_each,
		.end = on_end,
		.bytes_per_trace_byte = PERFETTO_PER_TRACE_BYTE,
	};
	struct pf x = { .o = o };
	int ret;

	st_heapblocks_init(&x.heap);
	ret = st_timeline_write(eo, &perfetto, &x, err, errlen);
	st_pb_free(&x.out);
	st_pb_free(&x.in);
	st_intern_free(&x.names);
	st_pfstack_free(&x.stacks);
	st_map_free(&x.tracks);
	st_heapblocks_fini(&x.heap);
	st_map_free(&x.live_of);
	free(x.live);
	return ret;
}
