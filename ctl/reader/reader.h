/*
 * The CTF trace reader: opens a trace directory written by `shimtrace
 * record` (CTF 1.8, see ctl/daemon/out/trace.c) and yields its events, all
 * streams merged in time order, plus a notice wherever the tracer recorded
 * lost events. Used by `shimtrace view` and the report verbs.
 *
 *	struct st_reader *r;
 *	struct st_item it;
 *	char err[512];
 *	int ret;
 *
 *	if (st_reader_open(&r, dir, err, sizeof(err)) < 0)
 *		die(err);
 *	while ((ret = st_reader_next(r, &it)) > 0)
 *		if (it.kind == ST_ITEM_EVENT)
 *			use(it.event);
 *		else
 *			warn_lost(it.lost);
 *	if (ret < 0)
 *		die(st_reader_error(r));
 *	st_reader_close(r);
 *
 * Every byte of the trace is untrusted: metadata, packet headers and event
 * records are bounds-checked, and anything inconsistent stops the reader
 * with a one-line message "DIR/FILE: what (at offset N)". Stream files are
 * read sequentially, a few packets at a time (window.h); memory use does
 * not grow with the trace.
 *
 * Order: by time in nanoseconds (as babeltrace2 converts the clock, so the
 * two tools agree), ties broken by stream (stream_instance_id, then file
 * name), then by position in the stream. The same trace always gives the
 * same sequence.
 *
 * Not thread-safe: one reader per thread.
 */
#ifndef ST_READER_H
#define ST_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/reader/desc.h"

struct st_reader;

/* One stream file of the trace. */
struct st_stream_info {
	const char *file;     /* name in the trace directory */
	uint32_t index;	      /* position in time-tie order, 0 .. nstreams-1 */
	uint32_t serial;      /* the same over the opens of a followed trace
			       * (st_reader_follow); else index */
	bool has_instance_id;
	uint64_t instance_id; /* packet.header stream_instance_id */
	const struct st_stream_class *cls;
};

struct st_event {
	const struct st_event_class *cls; /* name, id, field descriptions */
	uint64_t cycles;		  /* timestamp, clock cycles */
	int64_t ns;			  /* wall clock: ns since the Unix epoch */
	/* pid: packet context `pid`, else event context `vpid`; tid: event
	 * context `vtid`, else packet context `tid`; -1 when absent */
	int32_t pid, tid;
	int32_t vpid, vtid;		  /* event context; -1 when absent */
	uint64_t ip;			  /* event context; 0 when absent */
	const struct st_value *fields;	  /* cls->fields.n payload values */
	const struct st_value *context;	  /* cls->stream->event_context.n values */
	const struct st_stream_info *stream;
	uint64_t offset;		  /* of the record in the stream file */
};

/* Events the tracer could not record (its buffer was full, or, in
 * overwrite mode, overwritten), somewhere in [begin, end]. */
struct st_lost {
	uint64_t count;
	uint64_t begin_cycles, end_cycles;
	int64_t begin_ns, end_ns;
	/* pid: packet context (else -1); tid: packet context, else the
	 * thread of the packet's first event (the one using the buffer when
	 * recording resumed), else -1 */
	int32_t pid, tid;
	const struct st_stream_info *stream;
};

enum st_item_kind { ST_ITEM_EVENT = 1, ST_ITEM_LOST = 2 };

struct st_item {
	enum st_item_kind kind;
	const struct st_event *event; /* ST_ITEM_EVENT */
	const struct st_lost *lost;   /* ST_ITEM_LOST */
};

/*
 * Opens the trace in dir: opens every stream file (every regular file but
 * `metadata` and dotfiles), takes its size, then parses the metadata (so
 * that a trace still being written holds no packet of a class the
 * metadata does not declare yet) and checks every packet header. Returns
 * 0, or a negative errno with a one-line message in err.
 */
int st_reader_open(struct st_reader **out, const char *dir, char *err, size_t errlen);

/*
 * The next item in time order: returns 1 with *item filled, 0 at the end,
 * or a negative errno (the trace is corrupt: st_reader_error says where).
 * The item and everything it points to stay valid until the next call;
 * field names and classes until st_reader_close.
 */
int st_reader_next(struct st_reader *r, struct st_item *item);

/* The message of the last error, "" when none. */
const char *st_reader_error(const struct st_reader *r);

/* What the metadata declares: clocks, stream and event classes, env. */
const struct st_tsdl *st_reader_metadata(const struct st_reader *r);

uint32_t st_reader_nstreams(const struct st_reader *r);
const struct st_stream_info *st_reader_stream(const struct st_reader *r, uint32_t i);

/* The bytes of the trace's stream files. */
uint64_t st_reader_stream_bytes(const struct st_reader *r);

/*
 * Of those, the bytes read so far: where each stream's reading is (the
 * record read ahead for the merge counts as read), a stream read to its
 * end counting whole, what was skipped as damaged too. It never goes
 * down, and it equals st_reader_stream_bytes once st_reader_next has
 * returned 0. Costs a look at each stream: for a progress line, not for
 * every event.
 */
uint64_t st_reader_bytes_read(const struct st_reader *r);

/* Lost events reported so far by st_reader_next. */
uint64_t st_reader_lost(const struct st_reader *r);

/*
 * Why the trace is not whole, as its writer says in the metadata's env
 * (shimtrace_state, shimtrace_events_lost_writing, shimtrace_write_error:
 * ctl/daemon/out/trace.c), in one line: "N events lost writing to disk (why)",
 * that it is still being recorded (its recorder holds a lock on its
 * directory), or that the recording did not finish. NULL when nothing
 * says so (a trace of another writer says nothing).
 */
const char *st_reader_incomplete(const struct st_reader *r);

/*
 * Parts of the trace skipped as damaged, each said in one line: "DIR/FILE:
 * what (at offset N): skipped the rest of the file: M bytes from offset
 * P" (a packet, at P, whose header cannot be trusted ends what is read of
 * its file) or "... skipped the rest of its packet: M bytes from offset
 * P" (a record that does not decode). Every whole packet before is read. st_reader_damaged counts
 * them; st_reader_damage gives the i-th (the first 64 are kept; NULL
 * beyond).
 */
uint32_t st_reader_damaged(const struct st_reader *r);
const char *st_reader_damage(const struct st_reader *r, uint32_t i);

void st_reader_close(struct st_reader *r);

/*
 * Following a trace while it is written (`shimtrace top`): each open
 * reads what was added since the previous one, in time order.
 *
 *	struct st_follow *f = st_follow_new();
 *
 *	every second:
 *		if (st_reader_follow(&r, dir, f, err, sizeof(err)) < 0)
 *			... (-ENOENT: no metadata yet)
 *		st_reader_follow_limit(r, 2 s, 3 s);
 *		while (st_reader_next(r, &it) > 0)
 *			use(&it);
 *		done = st_reader_finished(r);
 *		st_reader_close(r); (saves where each stream stopped into f)
 *
 * An open resumes each stream file where the previous one's close left
 * it, inside a packet if need be: each item is given once over all the
 * opens. A packet cut short at the end of its file is not there yet (it
 * is read by a later open), not damage; damage is said once. The stream
 * files are looked at before the metadata is read, so every packet seen
 * is one the metadata describes. A stream's events come in time order,
 * but the writer writes each stream's packets when it drains its buffer:
 * an open gives no item after its limit, so that what a later open finds
 * (another stream's older events) does not come before what was given.
 * What comes anyway (a new stream's old events, a writer behind) is given
 * and counted as late.
 */
struct st_follow;

struct st_follow *st_follow_new(void);
void st_follow_free(struct st_follow *f);

/* st_reader_open for the next part of a followed trace (above); a trace
 * whose metadata is not there yet is -ENOENT, with the message. When the
 * trace is finished (st_reader_finished) it reads all it holds. */
int st_reader_follow(struct st_reader **out, const char *dir, struct st_follow *f, char *err,
		     size_t errlen);

/* Whether the trace will not grow: its writer completed it, or is gone
 * (st_reader_incomplete says which), or nothing says it is written. */
bool st_reader_finished(const struct st_reader *r);

/* st_reader_next gives no item of a time after ns (it returns 0, as at
 * the end); call before the first st_reader_next. */
void st_reader_limit(struct st_reader *r, int64_t ns);

/*
 * The limit of a followed reader, unless the trace is finished: lag_ns
 * before now (the trace's times are wall-clock times), and before the
 * last time of each stream that grew in the last quiet_ns (a stream that
 * did not has nothing the writer holds back); never before the previous
 * open's. lag_ns should be more than the writer takes to write
 * what was recorded (the daemon writes every buffer once a second), and
 * quiet_ns more than that again.
 */
void st_reader_follow_limit(struct st_reader *r, int64_t lag_ns, int64_t quiet_ns);

/* As of the last close: the bytes of the stream files not read yet (held
 * back by the limit, or packets not written whole yet); the items given
 * out of time order (late) so far; the last limit (INT64_MIN: none). */
uint64_t st_follow_behind(const struct st_follow *f);
uint64_t st_follow_late(const struct st_follow *f);
int64_t st_follow_limit(const struct st_follow *f);

/* Index of the payload field shown as `name` (no leading '_'), or -1:
 * resolve once per class, then read ev->fields[index]. */
int st_event_class_field(const struct st_event_class *c, const char *name);

#endif
