/*
 * pfdump: reads a Perfetto trace that `shimtrace export --format perfetto`
 * wrote, with a protobuf reader of its own (not the export's writer, nor
 * its table of field numbers: a second reading of Perfetto's .proto
 * files), and prints what it holds, one tab-separated line a thing, for
 * perfetto.test. It checks as it goes what Perfetto's trace processor
 * relies on, and exits 1 with a message at the first thing wrong:
 *   - the file is a Trace: packets (field 1) only, every varint, length
 *     and nested message within the one around it;
 *   - every packet on sequence 1, the first clearing its incremental
 *     state; each interned entry given once, before it is referred to;
 *   - every track described before its first event, and once (but a
 *     thread's, described again to rename it), a thread's under its
 *     process's, a hold track under a thread's; counter values on counter
 *     tracks only;
 *   - each slice's end the next event of its track (the export writes a
 *     slice whole), not before its begin; and on each track the slices
 *     nest: one that begins inside another ends inside it.
 * Output:
 *   process PID NAME
 *   thread PID TID NAME
 *   rename PID TID NAME        (a thread's track described again)
 *   holdtrack PID TID NAME
 *   countertrack PID NAME UNIT
 *   slice thread|hold PID TID CAT NAME TS DUR AT STACK
 *   instant PID TID CAT NAME TS AT
 *   counter PID TS VALUE
 *   double NAME BITS          (an annotation: before the event it is of)
 *   packets N
 *   interned names N categories N annotation-names N strings N functions N frames N callstacks N mappings N
 * AT is the "at" annotation ("-": none); BITS a double's, as 0x and 16
 * hex digits; STACK the slice's callstack,
 * innermost frame first, " <- " between, each frame's function name
 * ("-": none).
 *
 *   pfdump FILE
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("pfdump: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void *grow(void *v, size_t n, size_t sz)
{
	v = realloc(v, n * sz);
	if (!v)
		die("out of memory");
	return v;
}

/* ---- the wire format ---- */

struct msg {
	const uint8_t *p, *end;
};

struct field {
	uint32_t no;
	uint64_t v;	  /* a varint's value */
	struct msg sub;	  /* a length-delimited field's bytes */
	bool len;	  /* length-delimited */
};

static uint64_t varint(struct msg *m)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (m->p >= m->end)
			die("a varint runs past its message");
		v |= (uint64_t)(*m->p & 0x7f) << shift;
		if (!(*m->p++ & 0x80))
			return v;
	}
	die("a varint of more than ten bytes");
	return 0;
}

/* The next field of m into f: false at m's end. */
static bool next(struct msg *m, struct field *f)
{
	uint64_t key, n;

	if (m->p == m->end)
		return false;
	key = varint(m);
	f->no = (uint32_t)(key >> 3);
	f->len = false;
	if (!f->no)
		die("field number 0");
	switch (key & 7) {
	case 0:
		f->v = varint(m);
		return true;
	case 1:
	case 5:
		n = (key & 7) == 1 ? 8 : 4;
		break;
	case 2:
		n = varint(m);
		f->len = true;
		break;
	default:
		die("wire type %u (field %u)", (unsigned)(key & 7), f->no);
	}
	if (n > (uint64_t)(m->end - m->p))
		die("field %u runs past its message", f->no);
	f->sub = (struct msg){ m->p, m->p + n };
	m->p += n;
	return true;
}

static char *text(const struct field *f)
{
	size_t n = (size_t)(f->sub.end - f->sub.p);
	char *s = malloc(n + 1);

	if (!s)
		die("out of memory");
	memcpy(s, f->sub.p, n);
	s[n] = 0;
	return s;
}

/* ---- interned data: a table per kind, by iid ---- */

enum { T_NAME, T_CATEGORY, T_ANNOTATION, T_STRING, T_FUNCTION, T_PATH, T_SOURCE, T_KINDS };
static const char *const table_names[T_KINDS] = { "names", "categories", "annotation-names",
						   "strings", "functions", "paths", "sources" };

static struct {
	char **v;
	uint64_t n, count;
} strings[T_KINDS];

struct frame {
	uint64_t function, mapping;
	bool set;
};
static struct frame *frames;
static uint64_t nframes, frame_count;
static struct {
	uint64_t *ids, n;
} *callstacks;
static uint64_t ncallstacks, callstack_count;
static uint64_t *mappings, nmappings, mapping_count;

/* Slot iid of an array of *n (grown), which must be empty. */
#define SLOT(arr, n, iid, what)                                                     \
	do {                                                                        \
		if (!(iid))                                                         \
			die("%s with iid 0", what);                                 \
		if ((iid) >= (n)) {                                                 \
			(arr) = grow((arr), (iid) + 1, sizeof(*(arr)));             \
			memset((arr) + (n), 0, ((iid) + 1 - (n)) * sizeof(*(arr))); \
			(n) = (iid) + 1;                                            \
		}                                                                   \
	} while (0)

static void string_entry(int t, struct msg m)
{
	struct field f;
	uint64_t iid = 0;
	char *s = NULL;

	while (next(&m, &f))
		if (f.no == 1 && !f.len)
			iid = f.v;
		else if (f.no == 2 && f.len)
			s = text(&f);
	if (!s)
		die("an interned %s without its string", table_names[t]);
	SLOT(strings[t].v, strings[t].n, iid, table_names[t]);
	if (strings[t].v[iid])
		die("%s iid %" PRIu64 " given twice", table_names[t], iid);
	strings[t].v[iid] = s;
	strings[t].count++;
}

static const char *string_of(int t, uint64_t iid)
{
	if (!iid || iid >= strings[t].n || !strings[t].v[iid])
		die("%s iid %" PRIu64 " used before it was given", table_names[t], iid);
	return strings[t].v[iid];
}

static void frame_entry(struct msg m)
{
	struct field f;
	struct frame fr = { .set = true };
	uint64_t iid = 0;

	while (next(&m, &f))
		if (f.no == 1)
			iid = f.v;
		else if (f.no == 2)
			fr.function = f.v;
		else if (f.no == 3)
			fr.mapping = f.v;
	SLOT(frames, nframes, iid, "a frame");
	if (frames[iid].set)
		die("frame iid %" PRIu64 " given twice", iid);
	string_of(T_FUNCTION, fr.function);
	if (!fr.mapping || fr.mapping >= nmappings || !mappings[fr.mapping])
		die("frame %" PRIu64 " without a mapping given before it", iid);
	frames[iid] = fr;
	frame_count++;
}

static void callstack_entry(struct msg m)
{
	struct field f;
	uint64_t iid = 0, *ids = NULL, n = 0;

	while (next(&m, &f))
		if (f.no == 1) {
			iid = f.v;
		} else if (f.no == 2 && !f.len) {
			if (!f.v || f.v >= nframes || !frames[f.v].set)
				die("a callstack's frame %" PRIu64 " used before it was given", f.v);
			ids = grow(ids, n + 1, sizeof(*ids));
			ids[n++] = f.v;
		}
	SLOT(callstacks, ncallstacks, iid, "a callstack");
	if (callstacks[iid].n || !n)
		die("callstack iid %" PRIu64 " given twice, or empty", iid);
	callstacks[iid].ids = ids;
	callstacks[iid].n = n;
	callstack_count++;
}

static void mapping_entry(struct msg m)
{
	struct field f;
	uint64_t iid = 0, path = 0;

	while (next(&m, &f))
		if (f.no == 1)
			iid = f.v;
		else if (f.no == 7 && !f.len)
			path = f.v;
	string_of(T_PATH, path);
	SLOT(mappings, nmappings, iid, "a mapping");
	if (mappings[iid])
		die("mapping iid %" PRIu64 " given twice", iid);
	mappings[iid] = path;
	mapping_count++;
}

/* A packet's InternedData, as the trace processor takes it: every entry
 * before the packet's event, strings before the mappings that name them,
 * before the frames in them, before the callstacks of those. */
static void interned(struct msg data)
{
	/* InternedData's fields of strings, and the table each fills */
	static const struct {
		uint32_t no;
		int table;
	} strs[] = { { 1, T_CATEGORY }, { 2, T_NAME }, { 3, T_ANNOTATION }, { 29, T_STRING },
		     { 5, T_FUNCTION }, { 17, T_PATH }, { 18, T_SOURCE } };
	struct field f;

	for (int stage = 0; stage < 4; stage++) {
		struct msg m = data;

		while (next(&m, &f)) {
			if (!f.len)
				die("InternedData field %u not a message", f.no);
			if (stage == 1 && f.no == 19)
				mapping_entry(f.sub);
			else if (stage == 2 && f.no == 6)
				frame_entry(f.sub);
			else if (stage == 3 && f.no == 7)
				callstack_entry(f.sub);
			for (size_t i = 0; stage == 0 && i < sizeof(strs) / sizeof(strs[0]); i++)
				if (strs[i].no == f.no)
					string_entry(strs[i].table, f.sub);
		}
	}
}

/* ---- tracks ---- */

enum kind { K_PROCESS, K_THREAD, K_HOLD, K_COUNTER };

struct slice {
	int64_t begin, end;
};

struct track {
	uint64_t uuid;
	enum kind kind;
	int64_t pid, tid;
	char *name;
	/* a slice begun, waiting for its end (the export writes them together) */
	bool open;
	int64_t open_ts;
	char *head, *tail; /* its line, before and after its duration */
	struct slice *slices;
	size_t nslices;
};

static struct track *tracks;
static size_t ntracks;

static struct track *track_of(uint64_t uuid)
{
	for (size_t i = ntracks; i-- > 0;)
		if (tracks[i].uuid == uuid)
			return &tracks[i];
	return NULL;
}

static void descriptor(struct msg m)
{
	struct field f, g;
	struct track t = { .pid = -1, .tid = -1, .kind = K_HOLD };
	struct track *parent = NULL;
	uint64_t parent_uuid = 0;
	char *unit = "-";

	while (next(&m, &f)) {
		if (f.no == 1) {
			t.uuid = f.v;
		} else if (f.no == 5) {
			parent_uuid = f.v;
		} else if (f.no == 2 && f.len) {
			t.name = text(&f);
		} else if ((f.no == 3 || f.no == 4) && f.len) {
			/* ProcessDescriptor {pid 1, process_name 6}, ThreadDescriptor
			 * {pid 1, tid 2, thread_name 5} */
			t.kind = f.no == 3 ? K_PROCESS : K_THREAD;
			while (next(&f.sub, &g))
				if (g.no == 1)
					t.pid = (int32_t)g.v;
				else if (g.no == 2 && f.no == 4)
					t.tid = (int32_t)g.v;
				else if (g.no == (f.no == 3 ? 6u : 5u) && g.len)
					t.name = text(&g);
		} else if (f.no == 8 && f.len) {
			/* CounterDescriptor {unit 3} */
			t.kind = K_COUNTER;
			while (next(&f.sub, &g))
				if (g.no == 3)
					unit = g.v == 3 ? "bytes" : "other";
		}
	}
	/* (a thread's track described again, the same thread: its new name,
	 * as Perfetto takes it; a Java thread's) */
	if (t.uuid && t.kind == K_THREAD && (parent = track_of(t.uuid)) && parent->kind == K_THREAD &&
	    parent->pid == t.pid && parent->tid == t.tid && t.name) {
		printf("rename\t%" PRId64 "\t%" PRId64 "\t%s\n", t.pid, t.tid, t.name);
		free(parent->name);
		parent->name = t.name;
		return;
	}
	parent = NULL;
	if (!t.uuid || track_of(t.uuid))
		die("a track uuid 0, or described twice (%" PRIu64 ")", t.uuid);
	if (parent_uuid && !(parent = track_of(parent_uuid)))
		die("track %" PRIu64 " under track %" PRIu64 ", not described before", t.uuid, parent_uuid);
	if (!t.name)
		die("track %" PRIu64 " without a name", t.uuid);
	switch (t.kind) {
	case K_PROCESS:
		if (parent || t.pid < 0)
			die("a process track under another, or without its pid");
		printf("process\t%" PRId64 "\t%s\n", t.pid, t.name);
		break;
	case K_THREAD:
		if (!parent || parent->kind != K_PROCESS || parent->pid != t.pid || t.tid < 0)
			die("thread %" PRId64 " not under its process's track", t.tid);
		printf("thread\t%" PRId64 "\t%" PRId64 "\t%s\n", t.pid, t.tid, t.name);
		break;
	case K_HOLD:
		if (!parent || parent->kind != K_THREAD)
			die("track %s not under a thread's", t.name);
		t.pid = parent->pid;
		t.tid = parent->tid;
		printf("holdtrack\t%" PRId64 "\t%" PRId64 "\t%s\n", t.pid, t.tid, t.name);
		break;
	case K_COUNTER:
		if (!parent || parent->kind != K_PROCESS)
			die("counter %s not under a process's track", t.name);
		t.pid = parent->pid;
		printf("countertrack\t%" PRId64 "\t%s\t%s\n", t.pid, t.name, unit);
		break;
	}
	tracks = grow(tracks, ntracks + 1, sizeof(*tracks));
	tracks[ntracks++] = t;
}

/* ---- events ---- */

/* "f1 <- f2 <- ...": callstack iid's frames, innermost first. */
static char *stack_text(uint64_t iid)
{
	size_t n = 2, len = 0;
	char *s;

	if (!iid)
		return strdup("-");
	if (iid >= ncallstacks || !callstacks[iid].n)
		die("callstack iid %" PRIu64 " used before it was given", iid);
	for (uint64_t i = 0; i < callstacks[iid].n; i++)
		n += strlen(string_of(T_FUNCTION, frames[callstacks[iid].ids[i]].function)) + 4;
	s = grow(NULL, n, 1);
	for (uint64_t i = callstacks[iid].n; i-- > 0;)
		len += (size_t)snprintf(s + len, n - len, "%s%s", len ? " <- " : "",
					string_of(T_FUNCTION, frames[callstacks[iid].ids[i]].function));
	return s;
}

/* A debug annotation: its value when it is the call site ("at"). A
 * double's is printed ("double" line) as its bits. */
static const char *annotation(struct msg m)
{
	struct field f;
	const char *name = NULL, *value = NULL;
	bool is_double = false;
	uint64_t bits = 0;

	while (next(&m, &f))
		if (f.no == 1) {
			name = string_of(T_ANNOTATION, f.v);
		} else if (f.no == 17) {
			value = string_of(T_STRING, f.v);
		} else if (f.no == 6 && f.len) {
			value = text(&f);
		} else if (f.no == 5) {
			/* double_value: wire type I64, little-endian */
			if (f.len || f.sub.end - f.sub.p != 8)
				die("a debug annotation's double_value is not 8 bytes");
			for (int i = 7; i >= 0; i--)
				bits = bits << 8 | f.sub.p[i];
			is_double = true;
		} else if (f.no != 3 && f.no != 4 && f.no != 7) {
			die("a debug annotation's field %u", f.no);
		}
	if (!name)
		die("a debug annotation without its name");
	if (is_double)
		printf("double\t%s\t0x%016" PRIx64 "\n", name, bits);
	return strcmp(name, "at") == 0 ? value : NULL;
}

static void track_event(struct msg m, int64_t ts)
{
	struct field f;
	uint64_t type = 0, uuid = 0, stack = 0;
	const char *cat = "-", *name = "-", *at = "-", *v;
	bool has_value = false;
	int64_t value = 0;
	struct track *t;
	char *line;

	while (next(&m, &f)) {
		if (f.no == 9)
			type = f.v;
		else if (f.no == 11)
			uuid = f.v;
		else if (f.no == 3)
			cat = string_of(T_CATEGORY, f.v);
		else if (f.no == 10)
			name = string_of(T_NAME, f.v);
		else if (f.no == 30)
			has_value = true, value = (int64_t)f.v;
		else if (f.no == 56)
			stack = f.v;
		else if (f.no == 4 && f.len && (v = annotation(f.sub)))
			at = v;
	}
	t = track_of(uuid);
	if (!t)
		die("an event on track %" PRIu64 ", not described before it", uuid);
	if ((type == 4) != (t->kind == K_COUNTER) || (type == 4) != has_value || t->kind == K_PROCESS ||
	    (type == 3 && t->kind != K_THREAD))
		die("an event of type %" PRIu64 " on a %d track", type, (int)t->kind);
	switch (type) {
	case 1:
		if (t->open)
			die("a slice begins on track %s before the last one's end", t->name);
		line = stack_text(stack);
		t->head = grow(NULL, strlen(cat) + strlen(name) + 100, 1);
		sprintf(t->head, "slice\t%s\t%" PRId64 "\t%" PRId64 "\t%s\t%s\t%" PRId64,
			t->kind == K_HOLD ? "hold" : "thread", t->pid, t->tid, cat, name, ts);
		t->tail = grow(NULL, strlen(at) + strlen(line) + 2, 1);
		sprintf(t->tail, "%s\t%s", at, line);
		free(line);
		t->open = true;
		t->open_ts = ts;
		break;
	case 2:
		if (!t->open || ts < t->open_ts)
			die("a slice's end on track %s without its begin, or before it", t->name);
		printf("%s\t%" PRId64 "\t%s\n", t->head, ts - t->open_ts, t->tail);
		free(t->head);
		free(t->tail);
		t->slices = grow(t->slices, t->nslices + 1, sizeof(*t->slices));
		t->slices[t->nslices++] = (struct slice){ t->open_ts, ts };
		t->open = false;
		break;
	case 3:
		printf("instant\t%" PRId64 "\t%" PRId64 "\t%s\t%s\t%" PRId64 "\t%s\n", t->pid, t->tid, cat, name,
		       ts, at);
		break;
	case 4:
		printf("counter\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n", t->pid, ts, value);
		break;
	default:
		die("a track event of type %" PRIu64, type);
	}
}

static void packet(struct msg m, uint64_t index)
{
	struct msg all = m;
	struct field f;
	uint64_t sequence = 0, flags = 0;
	int64_t ts = -1;

	/* (its interned data first: its event may use it) */
	while (next(&m, &f))
		if (f.no == 12 && f.len)
			interned(f.sub);
		else if (f.no == 10)
			sequence = f.v;
		else if (f.no == 13)
			flags = f.v;
		else if (f.no == 8)
			ts = (int64_t)f.v;
	if (sequence != 1)
		die("packet %" PRIu64 " on sequence %" PRIu64, index, sequence);
	if (!index && !(flags & 1))
		die("the first packet does not clear the incremental state");
	while (next(&all, &f))
		if (f.no == 60 && f.len) {
			descriptor(f.sub);
		} else if (f.no == 11 && f.len) {
			if (ts < 0)
				die("a track event without a timestamp");
			track_event(f.sub, ts);
		}
}

static int by_begin(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* On each track, a slice that begins inside another ends inside it. */
static void nesting(void)
{
	for (size_t i = 0; i < ntracks; i++) {
		struct track *t = &tracks[i];
		int64_t *ends = grow(NULL, t->nslices + 1, sizeof(*ends));
		size_t depth = 0;

		if (t->open)
			die("a slice on track %s never ends", t->name);
		qsort(t->slices, t->nslices, sizeof(*t->slices), by_begin);
		for (size_t k = 0; k < t->nslices; k++) {
			while (depth && ends[depth - 1] <= t->slices[k].begin)
				depth--;
			if (depth && t->slices[k].end > ends[depth - 1])
				die("on track %s, the slice at %" PRId64 " ends after the one around it", t->name,
				    t->slices[k].begin);
			ends[depth++] = t->slices[k].end;
		}
		free(ends);
	}
}

int main(int argc, char **argv)
{
	FILE *in = argc == 2 ? fopen(argv[1], "rb") : NULL;
	uint8_t *buf = NULL;
	size_t n = 0, got;
	uint64_t packets = 0;
	struct msg trace;
	struct field f;

	if (!in)
		die(argc == 2 ? "cannot open %s" : "usage: pfdump FILE", argv[1]);
	do {
		buf = grow(buf, n + 65536, 1);
		got = fread(buf + n, 1, 65536, in);
		n += got;
	} while (got);
	fclose(in);
	trace = (struct msg){ buf, buf + n };
	while (next(&trace, &f)) {
		if (f.no != 1 || !f.len)
			die("a Trace's field %u: not a packet", f.no);
		packet(f.sub, packets++);
	}
	nesting();
	printf("packets\t%" PRIu64 "\n", packets);
	printf("interned");
	for (int t = 0; t < T_KINDS; t++)
		printf("\t%s\t%" PRIu64, table_names[t], strings[t].count);
	printf("\tframes\t%" PRIu64 "\tcallstacks\t%" PRIu64 "\tmappings\t%" PRIu64 "\n", frame_count,
	       callstack_count, mapping_count);
	return 0;
}
