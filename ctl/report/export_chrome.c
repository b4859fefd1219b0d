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
 *     neither (thread_create, exec...), with their fields as args (a
 *     floating-point one as a number, NaN and the infinities as the
 *     strings "NaN", "Infinity", "-Infinity": ctl/common/numtext.h);
 *   - the process and thread names ("M"; a Java thread's name from its
 *     jvm:thread_start, in a second record when the thread was drawn
 *     before it);
 *   - a Java monitor's contended enters and Object.waits as spans too,
 *     named after the monitor's class and the site.
 * What is drawn, and when, is timeline.c's; this file writes it.
 * Times are microseconds from the first event written, exact: written
 * from the integer nanoseconds, never through a double of the absolute
 * time (whose 53 bits are 256 ns at today's dates). --pid and
 * --time-range keep a large trace usable: only those events are written.
 * Where the trace lost events, the holds of the threads whose buffer lost
 * them end there, unwritten (the unlock may be what was lost; gapscope.h),
 * and are counted in otherData.
 */
#include <inttypes.h>
#include <string.h>

#include "ctl/common/escape.h"
#include "ctl/common/numtext.h"
#include "ctl/report/export_chrome.h"
#include "ctl/report/pass.h"

struct exp {
	FILE *o;
	bool first;
	uint64_t written;
};

/* A time (ns), as microseconds from the first event drawn, exactly:
 * "12.345", "-0.020". */
static void put_ts(struct exp *x, struct st_tl *tl, int64_t ns)
{
	int64_t d = ns - st_tl_t0(tl);
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

/* ", "at": SITE" of ip in pid, when there is one. */
static void at(struct exp *x, struct st_tl *tl, int32_t pid, uint64_t ip)
{
	const char *s = st_tl_site(tl, pid, ip);

	if (s) {
		fputs(", \"at\": ", x->o);
		st_json_write(x->o, s);
	}
}

/* ", "stack": [SITE...]": the callers of the wait that span s is (a
 * return address resolved one byte back, in its call); nothing when it
 * has none. */
static void span_stack(struct exp *x, struct st_tl *tl, const struct st_tl_span *s)
{
	if (!s->nstack)
		return;
	fputs(", \"stack\": [", x->o);
	for (uint32_t f = 0; f < s->nstack; f++) {
		const char *site = st_tl_site(tl, s->ev->pid, s->stack[f] - 1);

		fputs(f ? ", " : "", x->o);
		st_json_write(x->o, site ? site : "?");
	}
	fputs("]", x->o);
}

/* The fields of ev as JSON members (a call stack: its frames; the
 * frames themselves go with the span: span_stack), and where it was
 * called ("at"), the object left open. */
static void args_open(struct exp *x, struct st_tl *tl, const struct st_event *ev)
{
	const struct st_plan *p = &ev->cls->fields;
	char num[ST_DOUBLE_TEXT_MAX];

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
		else if (f->kind == ST_FIELD_FLOAT)
			fwrite(num, 1, st_double_json(num, st_value_double(f, v)), x->o);
		else
			fputs("null", x->o);
	}
	at(x, tl, ev->pid, ev->ip);
}

static int on_thread(void *ctx, struct st_tl *tl, const struct st_event *ev, bool new_process,
		     const char *name)
{
	char dflt[32];

	struct exp *x = ctx;

	if (new_process) {
		begin_record(x);
		fprintf(x->o, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %" PRId32 ", \"args\": {\"name\": ",
			ev->pid);
		st_json_write(x->o, st_pass_name(st_tl_pass(tl), ev->pid));
		fputs("}}", x->o);
	}
	/* (a later record names the thread anew: its Java name) */
	snprintf(dflt, sizeof(dflt), "%s %" PRId32, ev->tid == ev->pid ? "main" : "thread", ev->tid);
	begin_record(x);
	fprintf(x->o,
		"{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %" PRId32 ", \"tid\": %" PRId32
		", \"args\": {\"name\": ",
		ev->pid, ev->tid);
	st_json_write(x->o, name ? name : dflt);
	fputs("}}", x->o);
	return 0;
}

static int on_span(void *ctx, struct st_tl *tl, const struct st_tl_span *s)
{
	struct exp *x = ctx;

	begin_record(x);
	fprintf(x->o, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", s->cat);
	st_json_write(x->o, s->name);
	fprintf(x->o, ", \"pid\": %" PRId32 ", \"tid\": %" PRId32 ", \"ts\": ", s->ev->pid, s->ev->tid);
	put_ts(x, tl, s->start);
	fputs(", \"dur\": ", x->o);
	put_dur(x, s->dur);
	fputs(", \"args\": ", x->o);
	args_open(x, tl, s->ev);
	span_stack(x, tl, s);
	fputs("}}", x->o);
	return 0;
}

/* Hold h: its two ends on its track. */
static int on_hold(void *ctx, struct st_tl *tl, const struct st_tl_hold *h)
{
	struct exp *x = ctx;
	const char ph[2] = { 'b', 'e' };

	for (int i = 0; i < 2; i++) {
		begin_record(x);
		fprintf(x->o, "{\"ph\": \"%c\", \"cat\": \"lock\", \"name\": ", ph[i]);
		st_json_write(x->o, h->what);
		fprintf(x->o,
			", \"id2\": {\"local\": \"0x%" PRIx64 "\"}, \"pid\": %" PRId32 ", \"tid\": %" PRId32
			", \"ts\": ",
			h->track, h->ev->pid, h->ev->tid);
		put_ts(x, tl, i ? h->ev->ns : h->since);
		if (i) {
			fputs("}", x->o);
		} else {
			fprintf(x->o, ", \"args\": {\"tid\": %" PRId32, h->ev->tid);
			at(x, tl, h->ev->pid, h->ip);
			fputs("}}", x->o);
		}
	}
	return 0;
}

static int on_instant(void *ctx, struct st_tl *tl, const struct st_event *ev, const char *name)
{
	struct exp *x = ctx;
	const char *colon = strchr(ev->cls->name, ':');

	begin_record(x);
	/* (class names come from the trace's metadata: escaped) */
	fputs("{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"", x->o);
	st_esc_write(x->o, ev->cls->name, colon ? (size_t)(colon - ev->cls->name) : 0, ST_ESC_JSON);
	fputs("\", \"name\": ", x->o);
	st_json_write(x->o, name);
	fprintf(x->o, ", \"pid\": %" PRId32 ", \"tid\": %" PRId32 ", \"ts\": ", ev->pid, ev->tid);
	put_ts(x, tl, ev->ns);
	fputs(", \"args\": ", x->o);
	args_open(x, tl, ev);
	fputs("}}", x->o);
	return 0;
}

static void on_end(void *ctx, const struct st_tl_totals *t)
{
	struct exp *x = ctx;

	fprintf(x->o, "\n], \"otherData\": {\"trace\": ");
	st_json_write(x->o, t->dir);
	fprintf(x->o, ", \"events\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"written\": %" PRIu64
		      ", \"time_cut\": %" PRIu64 ", \"holds_cut\": %" PRIu64 "}}\n",
		t->events, t->lost, x->written, t->time_cut, t->holds_cut);
}

/* JSON bytes for each byte of trace, about (5 measured: lock and I/O
 * spans, allocation instants) */
#define JSON_PER_TRACE_BYTE 5

int st_export_chrome(const struct st_export_opts *eo, FILE *o, char *err, size_t errlen)
{
	static const struct st_tl_sink chrome = {
		.thread = on_thread,
		.span = on_span,
		.hold = on_hold,
		.instant = on_instant,
		.end = on_end,
		.bytes_per_trace_byte = JSON_PER_TRACE_BYTE,
	};
	struct exp x = { .o = o, .first = true };

	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", o);
	return st_timeline_write(eo, &chrome, &x, err, errlen);
}
