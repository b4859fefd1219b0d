/*
 * The loaded-object statedump, built by the daemon from what the owner's
 * objects inspector reads (ctl/inspect/objects.c): the objects a process
 * maps, with type, load extent, GNU build-id and .gnu_debuglink. The events
 * are shaped like LTTng-UST's statedump so babeltrace2's debug-info filter
 * can symbolise the `ip` of every event:
 *
 *   registration:  lttng_ust_statedump:start, then per object bin_info
 *                  (+ build_id, debug_link), then end
 *   dlopen/close:  lttng_ust_lib:load (+ build_id, debug_link) for new
 *                  objects, lttng_ust_lib:unload for objects gone
 *
 * Objects are read only for a process some session traces (when it says
 * its mappings changed, or when a session takes it), and never by the
 * daemon itself: the request goes to the inspector, and the answer comes
 * back through the event loop. Meanwhile:
 *
 *   - a SYNC of the process is answered only once the objects are in
 *     (the process waits, so its mappings are still there to be read; it
 *     waits a bounded time of its own, and the inspector has a deadline);
 *   - the consumer leaves the process's buffers alone for a bounded time
 *     (st_proc_waiting), so that call sites are refined with line tables
 *     that are on their way (linecache.c).
 *
 * An inspector that refuses (the process changed credentials, or is not
 * dumpable) or fails leaves the process without a statedump: its events
 * are recorded, their callers not symbolised.
 *
 * Owns: a process's objects part (its loaded objects, their version, what
 *       waits for them) and its statedump.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, loop, model, objects, out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/metastream.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/objects/linecache.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/wire/inspect_msg.h"
#include "ctl/daemon/wire/record.h"

/* (a process of a --blocking session waits for its answer with this in mind) */
#define OBJECTS_DEADLINE_MS ST_ABI_OBJECTS_DEADLINE_MS
#define WAIT_MS 3000 /* consumption waits for objects and lines at most this */

void st_objects_forget(struct st_proc *p)
{
	st_objects_free(p->objects.objs, p->objects.nobjs);
	st_objects_free(p->objects.new_objs, p->objects.new_nobjs);
	free(p->objects.owner);
	p->objects.objs = p->objects.new_objs = NULL;
	p->objects.owner = NULL;
}

void st_objects_lines_wait(struct st_proc *p)
{
	if (!p->objects.lines_waiting)
		p->objects.lines_wait_since = st_now_ms();
	p->objects.lines_waiting = true;
}

void st_objects_lines_came(struct st_proc *p)
{
	p->objects.lines_waiting = false;
}

void st_objects_changed(struct st_proc *p, uint64_t ts)
{
	p->objects.maps_changed_ts = ts;
}

void st_objects_want_refresh(struct st_proc *p)
{
	p->objects.refresh = true;
}

void st_objects_free(struct st_object *objs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free(objs[i].path);
		free(objs[i].debug_link);
		st_lines_put(objs[i].lines);
	}
	free(objs);
}

/* ---- building the statedump records ---- */

struct rec_buf {
	uint8_t *p;
	size_t len, cap;
	uint64_t events;
	int32_t pid;
	bool failed;
};

static void put(struct rec_buf *b, const void *v, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put_u8(struct rec_buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(struct rec_buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put_u64(struct rec_buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put_str(struct rec_buf *b, const char *s)
{
	size_t n = strlen(s);

	put(b, s, n < 4095 ? n : 4095);
	put_u8(b, 0);
}

static void begin(struct rec_buf *b, uint32_t class_id, uint64_t ts)
{
	uint8_t h[ST_TRACE_REC_MAX_HDR];

	/* (extended: the packet's time may be moved up to its stream's) */
	put(b, h, st_trace_rec_header(h, class_id, ts, NULL, b->pid, 0));
	b->events++;
}

static void object_events(struct rec_buf *b, const struct st_object *o, bool load, uint64_t ts)
{
	begin(b, load ? ST_EV_LIB_LOAD : ST_EV_STATEDUMP_BIN_INFO, ts);
	put_u64(b, o->base);
	put_u64(b, o->memsz);
	put_str(b, o->path);
	if (!load)
		put_u8(b, o->is_pic);
	put_u8(b, o->build_id_len > 0);
	put_u8(b, o->debug_link != NULL);
	if (o->build_id_len) {
		begin(b, load ? ST_EV_LIB_BUILD_ID : ST_EV_STATEDUMP_BUILD_ID, ts);
		put_u64(b, o->base);
		put_u64(b, o->build_id_len);
		put(b, o->build_id, o->build_id_len);
	}
	if (o->debug_link) {
		begin(b, load ? ST_EV_LIB_DEBUG_LINK : ST_EV_STATEDUMP_DEBUG_LINK, ts);
		put_u64(b, o->base);
		put_u32(b, o->crc);
		put_str(b, o->debug_link);
	}
}

static bool has(const struct st_object *objs, uint32_t n, const struct st_object *o)
{
	for (uint32_t i = 0; i < n; i++)
		if (objs[i].base == o->base && strcmp(objs[i].path, o->path) == 0)
			return true;
	return false;
}

/* The records for process p: a full statedump, or the difference. */
static void build(struct rec_buf *b, struct st_proc *p, const struct st_object *objs, uint32_t n,
		  uint32_t kind, uint64_t ts)
{
	if (kind == ST_MAPS_STATEDUMP) {
		begin(b, ST_EV_PROCESS, ts);
		put_u32(b, (uint32_t)p->ppid);
		put_u32(b, p->uid);
		put_str(b, p->name);
		put_str(b, p->exe);
		begin(b, ST_EV_STATEDUMP_START, ts);
		for (uint32_t i = 0; i < n; i++)
			object_events(b, &objs[i], false, ts);
		begin(b, ST_EV_STATEDUMP_END, ts);
		return;
	}
	for (uint32_t i = 0; i < p->objects.nobjs; i++)
		if (!has(objs, n, &p->objects.objs[i])) {
			begin(b, ST_EV_LIB_UNLOAD, ts);
			put_u64(b, p->objects.objs[i].base);
		}
	for (uint32_t i = 0; i < n; i++)
		if (!has(p->objects.objs, p->objects.nobjs, &objs[i]))
			object_events(b, &objs[i], true, ts);
}

int st_statedump_into(struct st_proc *p, struct st_trace *t,
		      struct st_stream *stream, uint64_t ts)
{
	struct rec_buf b = { .pid = p->pid };
	uint8_t *buf;
	int ret = -ENOMEM;

	build(&b, p, p->objects.objs, p->objects.nobjs, ST_MAPS_STATEDUMP, ts);
	buf = b.failed ? NULL : st_packet_buf(b.len);
	if (buf) {
		memcpy(buf, b.p, b.len);
		ret = st_stream_packet(t, stream, buf, b.len, b.events, ts, ts, 0);
	}
	free(b.p);
	return ret;
}

/* Whether session s is started and traces p. */
static bool traced_by(const struct st_daemon *d, const struct st_proc *p, uint32_t s)
{
	const struct st_session *ses = st_session_at(d, s, p);

	return ses && ses->active && p->control &&
	       p->control->session[s].generation == ses->generation;
}

/* Whether a started session traces p. */
static bool traced(const struct st_daemon *d, const struct st_proc *p)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++)
		if (traced_by(d, p, s))
			return true;
	return false;
}

static void send_ready(struct st_proc *p, uint64_t seq)
{
	struct st_abi_sync r = { { ST_MSG_READY, sizeof(r) }, seq };

	if (p->conn.fd >= 0)
		send(p->conn.fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void st_proc_sync(struct st_daemon *d, struct st_proc *p, uint64_t seq)
{
	(void)d;
	if (p->objects.pending) {
		/* READY answers every SYNC up to its seq */
		if (seq > p->objects.ready_owed)
			p->objects.ready_owed = seq;
		return;
	}
	send_ready(p, seq);
}

/* Whether p's events wait for line tables, and may wait on. */
static bool lines_pending(struct st_proc *p)
{
	if (p->objects.lines_waiting && st_now_ms() - p->objects.lines_wait_since >= WAIT_MS)
		p->objects.lines_waiting = false; /* long enough */
	return p->objects.lines_waiting;
}

void (*st_objects_drain)(struct st_daemon *d, struct st_proc *p, bool wait);

bool st_proc_waiting(struct st_proc *p)
{
	if (lines_pending(p))
		return true;
	if (!p->objects.wait_until)
		return false;
	if (st_now_ms() < p->objects.wait_until && (p->objects.pending || p->objects.apply_pending))
		return true;
	p->objects.wait_until = 0; /* nothing more on its way: stop looking */
	return false;
}

/*
 * Writes the statedump records of the new object list into every session
 * that traces p, then makes the list p's. Events written before an object
 * went away may be its: they are taken out first, with the old list (an
 * object loaded only adds); with wait, if they need line tables on their
 * way, nothing is done (false) and the new list waits for them.
 */
static bool apply(struct st_daemon *d, struct st_proc *p, struct st_object *objs, uint32_t n,
		  uint32_t kind, uint64_t ts, bool wait)
{
	bool unloaded = false;

	for (uint32_t i = 0; i < p->objects.nobjs && !unloaded; i++)
		unloaded = !has(objs, n, &p->objects.objs[i]);
	if (unloaded) {
		st_objects_drain(d, p, wait);
		if (wait && lines_pending(p))
			return false;
	}
	if (kind == ST_MAPS_STATEDUMP)
		p->objects.statedump_ts = ts;
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct rec_buf b = { .pid = p->pid };

		if (!traced_by(d, p, s))
			continue;
		/* A session that saw no statedump yet gets a full one. Dated
		 * exactly as the process said (st_meta_write keeps the date
		 * even if the stream is past it): a library's load comes
		 * before its constructors' events. */
		build(&b, p, objs, n, p->pools[s].has_meta ? kind : ST_MAPS_STATEDUMP, ts);
		if (!b.failed && b.len)
			st_meta_write(d, p, s, b.p, b.len, b.events, ts, ts);
		free(b.p);
	}
	st_objects_free(p->objects.objs, p->objects.nobjs);
	p->objects.objs = objs;
	p->objects.nobjs = n;
	p->objects.maps_ts = ts;
	p->objects.statedump_done = true;
	p->objects.version++; /* (call sites cached for the old list are stale) */
	return true;
}

static void request(struct st_daemon *d, struct st_proc *p, uint32_t kind, uint64_t ts);

/* Makes the new object list p's, if it need wait no more (or not wait). */
static void apply_waiting(struct st_daemon *d, struct st_proc *p, bool wait)
{
	if (!p->objects.apply_pending ||
	    !apply(d, p, p->objects.new_objs, p->objects.new_nobjs, p->objects.kind, p->objects.ts, wait))
		return;
	p->objects.apply_pending = false;
	p->objects.new_objs = NULL;
	p->objects.new_nobjs = 0;
}

void st_proc_apply_due(struct st_daemon *d, struct st_proc *p)
{
	if (!lines_pending(p))
		apply_waiting(d, p, true);
}

/* One object (with its file), or the end, of the answer for p. */
static void on_objects(struct st_daemon *d, void *ctx, const struct st_insp_reply *r, int fd)
{
	struct st_proc *p = ctx;

	if (r && r->type == ST_INSP_OBJECT) {
		struct st_object *v = realloc(p->objects.new_objs, (p->objects.new_nobjs + 1) * sizeof(*v));
		struct st_object *o;

		st_fd_drop(fd, p->uid); /* (none is expected) */
		if (v) {
			p->objects.new_objs = v;
			o = &v[p->objects.new_nobjs];
			memset(o, 0, sizeof(*o));
			o->base = r->object.base;
			o->memsz = r->object.memsz;
			o->is_pic = r->object.is_pic;
			o->crc = r->object.crc;
			o->build_id_len = r->object.build_id_len;
			memcpy(o->build_id, r->object.build_id, sizeof(o->build_id));
			o->path = strdup(r->object.path);
			o->debug_link = r->object.link ? strdup(r->object.link) : NULL;
			if (o->path && (!r->object.link || o->debug_link)) {
				/* (the lines inspector of that pair holds the file) */
				o->lines = st_lines_get(p->objects.owner, &r->object.key,
							o->build_id, o->build_id_len);
				p->objects.new_nobjs++;
			} else {
				free(o->path);
				free(o->debug_link);
			}
		}
		return;
	}
	st_fd_drop(fd, p->uid);
	/* the end of the answer, or none will come */
	p->objects.pending = false;
	if (p->conn.ended) {
		/* (too late: its streams are closed) */
		st_objects_free(p->objects.new_objs, p->objects.new_nobjs);
		p->objects.new_objs = NULL;
		p->objects.new_nobjs = 0;
		return;
	}
	if (r && r->type == ST_INSP_DONE && r->done.status == 0) {
		p->objects.apply_pending = true;
		apply_waiting(d, p, true);
	} else {
		if (!p->warned[ST_WARN_NO_STATEDUMP]) {
			p->warned[ST_WARN_NO_STATEDUMP] = true;
			st_log_user(p->uid, ST_LOG_WARN, "process %d (%s): no statedump, its callers will not be "
					    "symbolised: %s",
			       p->pid, p->name, r ? r->done.text : "its inspector failed");
		}
		st_objects_free(p->objects.new_objs, p->objects.new_nobjs);
		p->objects.new_objs = NULL;
		p->objects.new_nobjs = 0;
	}
	if (p->objects.ready_owed) {
		send_ready(p, p->objects.ready_owed);
		p->objects.ready_owed = 0;
	}
	if (p->objects.again) {
		p->objects.again = false;
		request(d, p, ST_MAPS_DLOPEN, p->objects.again_ts);
	}
	st_loop_news(&d->loop, ST_NEWS_OBJECTS);
}

/* Asks p's owner's inspector for p's objects. */
static void request(struct st_daemon *d, struct st_proc *p, uint32_t kind, uint64_t ts)
{
	struct st_insp_target t;
	int ret;

	if (p->objects.pending) {
		/* its objects changed since the request: read again once it is
		 * answered, dated at the first change (the earliest object it
		 * may bring must not come after its constructors' events) */
		if (!p->objects.again || ts < p->objects.again_ts)
			p->objects.again_ts = ts;
		p->objects.again = true;
		return;
	}
	apply_waiting(d, p, false); /* what changed before comes first */
	if (p->pidfd < 0)
		return;
	memset(&t, 0, sizeof(t));
	t.hdr.type = ST_INSP_OBJECTS;
	t.hdr.len = sizeof(t);
	t.pid = p->pid;
	t.uid = p->uid;
	t.gid = p->gid;
	if (!p->objects.owner && !(p->objects.owner = malloc(sizeof(*p->objects.owner))))
		return;
	st_owner_of(&t, p->pidfd, p->objects.owner);
	/* (set first: the handler may run before the request returns) */
	p->objects.kind = p->objects.statedump_done ? kind : ST_MAPS_STATEDUMP;
	p->objects.ts = ts;
	p->objects.pending = true;
	p->objects.wait_until = st_now_ms() + OBJECTS_DEADLINE_MS + WAIT_MS;
	ret = st_insp_request(d, p->objects.owner, ST_INSP_ROLE_OBJECTS, &t, sizeof(t), p->pidfd,
			      OBJECTS_DEADLINE_MS, on_objects, p);
	if (ret < 0) {
		p->objects.pending = false;
		st_log_user(p->uid, ST_LOG_WARN, "process %d (%s): cannot read its objects: %s", p->pid, p->name,
		       strerror(-ret));
	}
}

void st_objects_refresh(struct st_daemon *d, struct st_proc *p)
{
	if (!p->objects.refresh || p->conn.ended || p->objects.pending)
		return;
	p->objects.refresh = false;
	request(d, p, ST_MAPS_DLOPEN, st_clock_now(&d->clock));
}

void st_statedump(struct st_daemon *d, struct st_proc *p, uint32_t kind, uint64_t ts)
{
	if (kind == ST_MAPS_STATEDUMP)
		p->objects.statedump_ts = ts;
	p->objects.maps_changed_ts = ts;
	/* Nothing traces it: its objects are read when something does. */
	if (!traced(d, p)) {
		p->objects.statedump_done = false;
		return;
	}
	request(d, p, kind, ts);
}

/*
 * A session started after the process registered: its trace needs the
 * objects too, dated when they became what they are (before any event the
 * new pool can hold).
 */
void st_statedump_owed(struct st_daemon *d, struct st_proc *p)
{
	uint32_t owed = p->statedump_owed;

	p->statedump_owed = 0;
	for (uint32_t s = 0; owed; s++, owed >>= 1)
		if (owed & 1)
			st_statedump_session(d, p, s);
}

void st_statedump_session(struct st_daemon *d, struct st_proc *p, uint32_t s)
{
	struct rec_buf b = { .pid = p->pid };

	if (p->pools[s].has_meta)
		return;
	if (!p->objects.statedump_done) {
		/* not read yet (or stale): now, and the statedump follows,
		 * dated when the mappings became what they are (before any
		 * event of the session, which started after) */
		request(d, p, ST_MAPS_STATEDUMP,
			p->objects.maps_changed_ts ? p->objects.maps_changed_ts : st_clock_now(&d->clock));
		return;
	}
	build(&b, p, p->objects.objs, p->objects.nobjs, ST_MAPS_STATEDUMP, p->objects.maps_ts);
	if (!b.failed && b.len)
		st_meta_write(d, p, s, b.p, b.len, b.events, p->objects.maps_ts, p->objects.maps_ts);
	free(b.p);
}
