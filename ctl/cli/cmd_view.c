/*
 * shimtrace view DIR: prints every event of a trace as one line of text,
 * in time order:
 *
 *   [2026-11-22 04:27:23.372642099] pid 18856 (t1) tid 18856 pthread:mutex_lock mutex=0x5630bb6e6060 result=0 wait_ns=0
 *
 * The time is the local wall-clock time. The pid and tid are the packet's
 * (older traces: the tid is the event context's vtid); the
 * process name comes from the process's shimtrace:process event, which
 * precedes its other events, '?' until one is seen. Fields: integers in
 * decimal, base-16 ones as 0x..., floating point exactly, in the fewest
 * digits that read back (ctl/common/numtext.h: nan, inf, -0 as
 * babeltrace2 shows them), strings quoted and escaped
 * (ctl/common/escape.h: \xHH for control bytes and bytes that are not UTF-8, \\
 * and \"), byte sequences as hex digits; a sequence's length field is shown too, as
 * babeltrace2 shows it. The events are exactly those babeltrace2 prints,
 * in the same order. Lost events go to stderr as they come, with a total
 * at the end.
 *
 * Output is built by hand in a large buffer: a trace of 20 million events
 * must print in seconds, which per-field printf does not allow. Local time
 * is computed once per second of trace time, not per event.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl/cli/cmd_view.h"
#include "ctl/cli/filteropts.h"
#include "ctl/common/cli.h"
#include "ctl/common/escape.h"
#include "ctl/common/numtext.h"
#include "ctl/reader/reader.h"

#define OUT_SIZE (1u << 20)
#define NAME_MAX_LEN 255

static const char *V = "view";

/* ---- output buffer ---- */

struct out {
	char *buf;
	size_t len;
	int err; /* errno of a failed write */
};

static void out_flush(struct out *o)
{
	size_t done = 0;

	while (done < o->len && !o->err) {
		ssize_t n = write(STDOUT_FILENO, o->buf + done, o->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? errno : EIO;
		else
			done += (size_t)n;
	}
	o->len = 0;
}

/* Room for n more bytes (n <= OUT_SIZE) at the returned pointer. */
static inline char *out_room(struct out *o, size_t n)
{
	if (OUT_SIZE - o->len < n)
		out_flush(o);
	return o->buf + o->len;
}

static inline void out_done(struct out *o, const char *end)
{
	o->len = (size_t)(end - o->buf);
}

static void out_mem(struct out *o, const void *s, size_t n)
{
	while (n) {
		size_t k;

		out_room(o, 1);
		k = OUT_SIZE - o->len < n ? OUT_SIZE - o->len : n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s = (const char *)s + k;
		n -= k;
	}
}

/* ---- numbers, written in place ---- */

static const char hexdig[] = "0123456789abcdef";

static inline char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static inline char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, 0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

static inline char *put_hex(char *p, uint64_t v)
{
	int n = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;

	*p++ = '0';
	*p++ = 'x';
	for (int i = n - 1; i >= 0; i--) {
		p[i] = hexdig[v & 15];
		v >>= 4;
	}
	return p + n;
}

/* Longest number text: "-9223372036854775808", "0x" + 16 digits, a
 * double's (numtext.h), with the NUL that st_double_text writes. */
#define NUM_TEXT_MAX ST_DOUBLE_TEXT_MAX

/* A string, double-quoted and escaped (ctl/common/escape.h: control bytes and
 * bytes that are not UTF-8 as \xHH, '"' and '\' with a backslash; UTF-8
 * stays readable). */
static void out_quoted(struct out *o, const unsigned char *s, uint64_t n)
{
	*out_room(o, 1) = '"';
	o->len++;
	while (n) {
		size_t used, room = OUT_SIZE - o->len < ST_ESC_UNIT_MAX ? ST_ESC_UNIT_MAX
									 : OUT_SIZE - o->len;
		char *p = out_room(o, room);

		o->len += st_esc_part(p, room, s, n, ST_ESC_QUOTE, &used);
		s += used;
		n -= used;
	}
	*out_room(o, 1) = '"';
	o->len++;
}

static void out_bytes(struct out *o, const unsigned char *s, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		char *p = out_room(o, 2);

		p[0] = hexdig[s[i] >> 4];
		p[1] = hexdig[s[i] & 15];
		o->len += 2;
	}
}

/* A call stack (a field named stack: return addresses, 8 bytes each,
 * little-endian): [0x...,0x...]. */
static void out_stack(struct out *o, const unsigned char *s, uint64_t n)
{
	*out_room(o, 1) = '[';
	o->len++;
	for (uint64_t i = 0; i + 8 <= n; i += 8) {
		uint64_t pc;
		char *p = out_room(o, 20);

		memcpy(&pc, s + i, 8);
		o->len += (size_t)sprintf(p, "%s0x%" PRIx64, i ? "," : "", pc);
	}
	*out_room(o, 1) = ']';
	o->len++;
}

/* ---- time ---- */

struct clock_text {
	bool valid;
	int64_t sec;
	char text[64]; /* "[YYYY-MM-DD HH:MM:SS." in local time */
	size_t len;
};

#define TIME_TEXT_MAX 74 /* text + 9 digits + ']' */

static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
			    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
			    "8081828384858687888990919293949596979899";

/* "[date time.nanoseconds]" at p; returns the end. */
static char *put_time(struct clock_text *c, char *p, int64_t ns)
{
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	if (!c->valid || c->sec != sec) {
		time_t t = (time_t)sec;
		struct tm tm;
		size_t n = 0;

		c->text[0] = '[';
		if (localtime_r(&t, &tm))
			n = strftime(c->text + 1, sizeof(c->text) - 2, "%Y-%m-%d %H:%M:%S", &tm);
		if (n == 0)
			n = (size_t)snprintf(c->text + 1, sizeof(c->text) - 2, "%lld", (long long)sec);
		c->text[n + 1] = '.';
		c->len = n + 2;
		c->valid = true;
		c->sec = sec;
	}
	memcpy(p, c->text, c->len);
	p += c->len;
	for (int i = 7; i >= 1; i -= 2) {
		memcpy(p + i, pairs + 2 * (frac % 100), 2);
		frac /= 100;
	}
	p[0] = (char)('0' + frac);
	p[9] = ']';
	return p + 10;
}

/* ---- process names, by pid ---- */

struct procs {
	struct proc_name {
		int32_t pid;
		bool used;
		char name[ST_ESC_SIZE(NAME_MAX_LEN)]; /* escaped */
	} *v;
	size_t cap, n;
	uint64_t gen; /* bumped at every change */
};

static struct proc_name *procs_slot(struct procs *p, int32_t pid)
{
	size_t i = ((uint32_t)pid * 2654435761u) & (p->cap - 1);

	while (p->v[i].used && p->v[i].pid != pid)
		i = (i + 1) & (p->cap - 1);
	return &p->v[i];
}

static const char *procs_get(struct procs *p, int32_t pid)
{
	struct proc_name *e = p->cap ? procs_slot(p, pid) : NULL;

	return e && e->used ? e->name : "?";
}

static int procs_set(struct procs *p, int32_t pid, const char *name, uint64_t len)
{
	struct proc_name *e;
	size_t used;

	if (p->n + 1 > p->cap / 2) {
		struct procs bigger = { .cap = p->cap ? p->cap * 2 : 64 };

		bigger.v = calloc(bigger.cap, sizeof(*bigger.v));
		if (!bigger.v)
			return -ENOMEM;
		for (size_t i = 0; i < p->cap; i++)
			if (p->v[i].used)
				*procs_slot(&bigger, p->v[i].pid) = p->v[i];
		free(p->v);
		p->v = bigger.v;
		p->cap = bigger.cap;
	}
	e = procs_slot(p, pid);
	if (!e->used)
		p->n++;
	e->used = true;
	e->pid = pid;
	if (len > NAME_MAX_LEN)
		len = NAME_MAX_LEN;
	/* (shown between parentheses: escaped, ctl/common/escape.h) */
	e->name[st_esc_part(e->name, sizeof(e->name) - 1, name, len, ST_ESC_TEXT, &used)] = '\0';
	p->gen++;
	return 0;
}

/* ---- events ---- */

/* What is fixed in the lines of one event class, made once. */
struct cls_text {
	char *head; /* " provider:name" */
	size_t head_len;
	char **label; /* " field=" */
	size_t *label_len;
	size_t bound; /* longest line when every field is a number */
	bool numbers_only; /* integers and floats only */
	int32_t name_field; /* shimtrace:process: its `name` field, else -1 */
};

/* " pid P (NAME) tid T", remade when the pid, tid or names change. */
struct who_text {
	bool valid;
	int32_t pid, tid;
	uint64_t gen;
	char text[ST_ESC_SIZE(NAME_MAX_LEN) + 64];
	size_t len;
};

struct view {
	struct out out;
	struct clock_text clock;
	struct procs procs;
	struct who_text who;
	struct cls_text *cls; /* per event class */
	struct st_filter filter; /* --pid, --tid, -e, --time-range */
	int64_t first_ns;	 /* the trace's first event's time */
	uint64_t events, shown;
};

static char *put_id(char *p, int32_t v)
{
	if (v < 0) {
		*p++ = '?';
		return p;
	}
	return put_u64(p, (uint64_t)v);
}

static const struct who_text *who(struct view *w, int32_t pid, int32_t tid)
{
	struct who_text *t = &w->who;
	char *p = t->text;
	const char *name;
	size_t n;

	if (t->valid && t->pid == pid && t->tid == tid && t->gen == w->procs.gen)
		return t;
	name = procs_get(&w->procs, pid);
	n = strlen(name);
	memcpy(p, " pid ", 5);
	p = put_id(p + 5, pid);
	*p++ = ' ';
	*p++ = '(';
	memcpy(p, name, n);
	p += n;
	memcpy(p, ") tid ", 6);
	p = put_id(p + 6, tid);
	t->len = (size_t)(p - t->text);
	t->valid = true;
	t->pid = pid;
	t->tid = tid;
	t->gen = w->procs.gen;
	return t;
}

static int make_cls_text(struct cls_text *t, const struct st_event_class *c)
{
	size_t n = ST_ESC_SIZE(strlen(c->name));

	/* (the name comes from the trace's metadata: escaped) */
	t->head = malloc(n + 1);
	t->label = calloc(c->fields.n + 1, sizeof(*t->label));
	t->label_len = calloc(c->fields.n + 1, sizeof(*t->label_len));
	if (!t->head || !t->label || !t->label_len)
		return -ENOMEM;
	t->head[0] = ' ';
	st_esc(t->head + 1, n, c->name);
	t->head_len = strlen(t->head);
	t->numbers_only = true;
	t->bound = TIME_TEXT_MAX + sizeof(((struct who_text *)0)->text) + t->head_len + 1;
	for (uint32_t i = 0; i < c->fields.n; i++) {
		const struct st_field_desc *f = &c->fields.v[i];
		size_t k = strlen(f->name);

		t->label[i] = malloc(k + 3);
		if (!t->label[i])
			return -ENOMEM;
		t->label[i][0] = ' ';
		memcpy(t->label[i] + 1, f->name, k);
		t->label[i][k + 1] = '=';
		t->label[i][k + 2] = '\0';
		t->label_len[i] = k + 2;
		t->bound += k + 2 + NUM_TEXT_MAX;
		if (f->kind == ST_FIELD_STRING || f->kind == ST_FIELD_BYTES)
			t->numbers_only = false;
	}
	if (t->bound > OUT_SIZE)
		t->numbers_only = false;
	t->name_field = -1;
	if (strcmp(c->name, "shimtrace:process") == 0) {
		int k = st_event_class_field(c, "name");

		if (k >= 0 && c->fields.v[k].kind == ST_FIELD_STRING)
			t->name_field = k;
	}
	return 0;
}

static void free_cls_text(struct cls_text *t, const struct st_event_class *c)
{
	if (t->label)
		for (uint32_t i = 0; i < c->fields.n; i++)
			free(t->label[i]);
	free(t->label);
	free(t->label_len);
	free(t->head);
}

static inline char *put_num(char *p, const struct st_field_desc *f, const struct st_value *v)
{
	if (f->kind == ST_FIELD_UINT)
		return put_u64(p, v->u);
	if (f->kind == ST_FIELD_SINT)
		return put_i64(p, v->i);
	if (f->kind == ST_FIELD_FLOAT)
		return p + st_double_text(p, st_value_double(f, v));
	return put_hex(p, v->u);
}

static void print_event(struct view *w, const struct st_event *ev)
{
	const struct st_event_class *c = ev->cls;
	const struct cls_text *t = &w->cls[c->index];
	const struct who_text *wt = who(w, ev->pid, ev->tid);
	struct out *o = &w->out;
	char *p = out_room(o, t->numbers_only ? t->bound : TIME_TEXT_MAX + wt->len + t->head_len);

	p = put_time(&w->clock, p, ev->ns);
	memcpy(p, wt->text, wt->len);
	p += wt->len;
	memcpy(p, t->head, t->head_len);
	p += t->head_len;
	if (t->numbers_only) {
		/* The common case: the bound is reserved, no more checks. */
		for (uint32_t i = 0; i < c->fields.n; i++) {
			memcpy(p, t->label[i], t->label_len[i]);
			p = put_num(p + t->label_len[i], &c->fields.v[i], &ev->fields[i]);
		}
		*p++ = '\n';
		out_done(o, p);
		return;
	}
	out_done(o, p);
	for (uint32_t i = 0; i < c->fields.n; i++) {
		const struct st_field_desc *f = &c->fields.v[i];
		const struct st_value *v = &ev->fields[i];

		out_mem(o, t->label[i], t->label_len[i]);
		if (f->kind == ST_FIELD_STRING)
			out_quoted(o, v->ptr, v->len);
		else if (f->kind == ST_FIELD_BYTES && strcmp(f->name, "stack") == 0)
			out_stack(o, v->ptr, v->len);
		else if (f->kind == ST_FIELD_BYTES)
			out_bytes(o, v->ptr, v->len);
		else
			out_done(o, put_num(out_room(o, NUM_TEXT_MAX), f, v));
	}
	*out_room(o, 1) = '\n';
	o->len++;
}

static void print_lost(struct view *w, const struct st_lost *l)
{
	char b[TIME_TEXT_MAX], e[TIME_TEXT_MAX], tid[32] = "";
	int nb = (int)(put_time(&w->clock, b, l->begin_ns) - b);
	int ne = (int)(put_time(&w->clock, e, l->end_ns) - e);

	out_flush(&w->out);
	if (l->tid >= 0)
		snprintf(tid, sizeof(tid), " tid %d", l->tid);
	fprintf(stderr, "shimtrace view: pid %d (%s)%s: %llu event%s lost between %.*s and %.*s\n",
		l->pid, procs_get(&w->procs, l->pid), tid, (unsigned long long)l->count,
		l->count == 1 ? "" : "s", nb, b, ne, e);
}

/* The exit status when done (help, usage error), or -1 to go on with *dir
 * and the filter in f. */
static int parse_args(const struct st_verb *v, int argc, char **argv, const char **dir,
		      struct st_filter *f)
{
	const struct st_opt *o;
	const char *arg;
	int n;

	while ((o = st_getopt(v, argc, argv, false, &arg)) != NULL) {
		int std = st_opt_standard(v, o);

		if (std >= 0)
			return std;
		if (st_opt_is(o, "pid")) {
			if (st_opt_pid(V, arg, &f->pid) < 0)
				return 2;
		} else if (st_filter_opt(V, o, arg, f) < 0) {
			return 2;
		}
	}
	n = argc - st_optind();
	if (n < 1) {
		st_err(V, "missing DIR (usage: shimtrace view [OPTIONS] DIR)");
		return 2;
	}
	if (n > 1) {
		st_err(V, "one trace directory only: unexpected '%s'", argv[st_optind() + 1]);
		return 2;
	}
	*dir = argv[st_optind()];
	return -1;
}

static int run(struct view *w, struct st_reader *r)
{
	struct st_item it;
	int ret;

	while ((ret = st_reader_next(r, &it)) > 0) {
		const struct st_event *ev = it.event;
		int32_t k;

		if (it.kind == ST_ITEM_LOST) {
			if (w->filter.pid < 0 || it.lost->pid == w->filter.pid)
				print_lost(w, it.lost);
			continue;
		}
		if (w->events++ == 0)
			w->first_ns = ev->ns;
		k = w->cls[ev->cls->index].name_field;
		if (k >= 0 && procs_set(&w->procs, ev->pid, ev->fields[k].ptr, ev->fields[k].len) < 0) {
			st_err(V, "out of memory");
			return 1;
		}
		if (!st_filter_event(&w->filter, ev, w->first_ns))
			continue;
		w->shown++;
		print_event(w, ev);
		if (w->out.err)
			break;
	}
	out_flush(&w->out);
	if (ret < 0) {
		st_err(V, "%s", st_reader_error(r));
		return 1;
	}
	if (w->out.err) {
		st_err(V, "cannot write the output: %s", strerror(w->out.err));
		return 1;
	}
	if (st_reader_lost(r))
		st_err(V, "%llu event%s lost in total", (unsigned long long)st_reader_lost(r),
		       st_reader_lost(r) == 1 ? "" : "s");
	if (st_reader_incomplete(r))
		st_err(V, "trace incomplete: %s", st_reader_incomplete(r));
	if (w->events && !w->shown && st_filter_any(&w->filter)) {
		/* (an empty listing would look like an empty trace) */
		st_err(V, "no event of the %llu passes --pid, --tid, -e and --time-range",
		       (unsigned long long)w->events);
		return 1;
	}
	/* (every whole packet was shown: 3 says parts were not) */
	for (uint32_t i = 0; i < st_reader_damaged(r); i++) {
		if (st_reader_damage(r, i))
			st_err(V, "damaged: %s", st_reader_damage(r, i));
		else
			st_err(V, "damaged: %u more parts skipped", st_reader_damaged(r) - i);
		if (!st_reader_damage(r, i))
			break;
	}
	return st_reader_damaged(r) ? 3 : 0;
}

int st_cmd_view(const struct st_verb *v, int argc, char **argv)
{
	struct view w = { 0 };
	const struct st_tsdl *meta;
	struct st_reader *r;
	const char *dir = NULL;
	char err[1024];
	int ret;

	st_filter_init(&w.filter);
	ret = parse_args(v, argc, argv, &dir, &w.filter);
	if (ret >= 0)
		return ret;
	if (st_reader_open(&r, dir, err, sizeof(err)) < 0) {
		st_err(V, "%s", err);
		return 1;
	}
	meta = st_reader_metadata(r);
	w.out.buf = malloc(OUT_SIZE);
	w.cls = calloc(meta->nevents + 1, sizeof(*w.cls));
	ret = w.out.buf && w.cls ? 0 : -ENOMEM;
	for (uint32_t i = 0; ret == 0 && i < meta->nevents; i++)
		ret = make_cls_text(&w.cls[i], &meta->events[i]);
	if (ret < 0) {
		st_err(V, "out of memory");
		ret = 1;
	} else {
		ret = run(&w, r);
	}
	for (uint32_t i = 0; w.cls && i < meta->nevents; i++)
		free_cls_text(&w.cls[i], &meta->events[i]);
	free(w.cls);
	st_reader_close(r);
	free(w.out.buf);
	free(w.procs.v);
	st_filter_fini(&w.filter);
	return ret;
}
