/*
 * One stream file: a sequence of packets, each a packet header, a packet
 * context, records up to content_size, then padding up to packet_size.
 *
 * The file is read through a window (window.h). At open, every packet
 * header is checked (magic, uuid, stream class, sizes against each other
 * and against the file, timestamps and the events_discarded counter never
 * going down). A damaged packet (a file cut short, a bad magic) ends what
 * is read of the file: its size cannot be trusted, so the next one cannot
 * be found; what came before is read, and the damage is said
 * (st__reader_damage). Records are then decoded one at a time as the
 * merge asks for them; one that does not decode ends its packet, said
 * too, and the next packet is read.
 *
 * Lost events: events_discarded counts, per stream, the events the tracer
 * dropped so far. When it grows from one packet to the next (or starts
 * above zero), an ST_ITEM_LOST is given before the packet's records,
 * covering the time from the previous packet's end to this one's end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/reader/decode.h"
#include "ctl/reader/errmsg.h"
#include "ctl/reader/follow.h"
#include "ctl/reader/reader_state.h"
#include "ctl/reader/stream.h"

#define CTF_MAGIC 0xC1FC1FC1u
/* Bytes read first at a packet's start for its header and context (more
 * only if they do not fit): the packet scan at open reads no more of a
 * packet of that size or more. */
#define HEADER_PEEK 4096u
/* What the packet scan reads at a time after a packet smaller than a
 * peek: it reads all of such packets anyway, and a trace of a busy server
 * has packets of a few hundred bytes (a thread switch ends one). */
#define SCAN_AHEAD (256u << 10)

/* Sets r->err to "DIR/FILE: what (at offset N)"; returns -EBADMSG. */
static __attribute__((format(printf, 3, 4))) int
stream_fail(struct st__stream *s, uint64_t off, const char *fmt, ...)
{
	struct st_reader *r = s->r;
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->err, sizeof(r->err), "%s/%s: %s (at offset %llu)", r->dir, s->file, what,
		 (unsigned long long)off);
	st__one_line(r->err);
	r->error = -EBADMSG;
	return -EBADMSG;
}

static int32_t as_i32(const struct st_field_desc *f, const struct st_value *v)
{
	return (int32_t)(f->kind == ST_FIELD_SINT ? v->i : (int64_t)v->u);
}

/* Checks the header and context of the packet at file offset off, whose
 * first `have` bytes (of the `avail` left in the file) are at pkt;
 * -EAGAIN (and no message) when they need more than `have`; in a followed
 * trace, -ENODATA (no message) for a packet the file holds only part of
 * yet. */
static int parse_packet(struct st__stream *s, uint64_t off, const uint8_t *pkt, uint64_t have,
			uint64_t avail, struct st__packet *p)
{
	const struct st_tsdl *t = &s->r->meta;
	uint64_t pos = 0, v;
	const struct st_stream_class *sc;
	char why[256];

	memset(p, 0, sizeof(*p));
	p->off = off;
	if (st__decode(&t->packet_header, pkt, have, &pos, s->ph, why, sizeof(why)) < 0)
		return have < avail ? -EAGAIN
		       : s->r->follow ? -ENODATA
				      : stream_fail(s, off + pos,
						    "packet header: %s (truncated file?)", why);
	if (t->ph_magic >= 0 && s->ph[t->ph_magic].u != CTF_MAGIC)
		return stream_fail(s, off, "bad packet magic 0x%08llx (expected 0xc1fc1fc1)",
				   (unsigned long long)s->ph[t->ph_magic].u);
	if (t->ph_uuid >= 0 && t->has_uuid && memcmp(s->ph[t->ph_uuid].ptr, t->uuid, 16) != 0)
		return stream_fail(s, off, "packet uuid is not the trace uuid (a file from "
					   "another trace?)");
	if (t->ph_stream_id >= 0) {
		v = s->ph[t->ph_stream_id].u;
		sc = st_tsdl_stream(t, v);
		if (!sc)
			return stream_fail(s, off, "unknown stream id %llu", (unsigned long long)v);
	} else {
		sc = &t->streams[0];
	}
	if (s->info.cls && sc != s->info.cls)
		return stream_fail(s, off, "packet of stream %llu in a file of stream %llu",
				   (unsigned long long)sc->id,
				   (unsigned long long)s->info.cls->id);
	p->cls = sc;
	if (t->ph_instance_id >= 0) {
		p->has_instance = true;
		p->instance_id = s->ph[t->ph_instance_id].u;
	}
	if (st__decode(&sc->packet_context, pkt, have, &pos, s->pc, why, sizeof(why)) < 0)
		return have < avail ? -EAGAIN
		       : s->r->follow ? -ENODATA
				      : stream_fail(s, off + pos,
						    "packet context: %s (truncated file?)", why);

	p->size = avail;
	if (sc->pc_packet_size >= 0) {
		v = s->pc[sc->pc_packet_size].u;
		if (v % 8)
			return stream_fail(s, off, "packet_size %llu bits is not whole bytes",
					   (unsigned long long)v);
		p->size = v / 8;
	}
	p->content = p->size;
	if (sc->pc_content_size >= 0) {
		v = s->pc[sc->pc_content_size].u;
		if (v % 8)
			return stream_fail(s, off, "content_size %llu bits is not whole bytes",
					   (unsigned long long)v);
		p->content = v / 8;
	}
	if (p->content > p->size)
		return stream_fail(s, off, "content_size (%llu bits) exceeds packet_size (%llu bits)",
				   (unsigned long long)p->content * 8,
				   (unsigned long long)p->size * 8);
	if (p->size > avail && s->r->follow)
		return -ENODATA;
	if (p->size > avail)
		return stream_fail(s, off,
				   "packet of %llu bytes runs past the end of the file (%llu bytes "
				   "left): truncated trace",
				   (unsigned long long)p->size, (unsigned long long)avail);
	if (pos > p->content)
		return stream_fail(s, off,
				   "packet header and context (%llu bytes) exceed content_size "
				   "(%llu bytes)",
				   (unsigned long long)pos, (unsigned long long)p->content);
	if (p->size == 0)
		return stream_fail(s, off, "packet_size is 0");
	p->data = pos;
	if (sc->pc_ts_begin >= 0) {
		p->has_begin = true;
		p->ts_begin = s->pc[sc->pc_ts_begin].u;
	}
	if (sc->pc_ts_end >= 0) {
		p->has_end = true;
		p->ts_end = s->pc[sc->pc_ts_end].u;
	}
	if (p->has_begin && p->has_end && p->ts_end < p->ts_begin)
		return stream_fail(s, off, "timestamp_end %llu is before timestamp_begin %llu",
				   (unsigned long long)p->ts_end,
				   (unsigned long long)p->ts_begin);
	if (sc->pc_discarded >= 0) {
		const struct st_field_desc *f = &sc->packet_context.v[sc->pc_discarded];

		p->has_discarded = true;
		p->discarded = s->pc[sc->pc_discarded].u;
		p->discarded_mask = f->size == 8 ? UINT64_MAX : (1ull << (8 * f->size)) - 1;
	}
	p->pid = sc->pc_pid >= 0 ? as_i32(&sc->packet_context.v[sc->pc_pid], &s->pc[sc->pc_pid]) : -1;
	p->tid = sc->pc_tid >= 0 ? as_i32(&sc->packet_context.v[sc->pc_tid], &s->pc[sc->pc_tid]) : -1;
	return 0;
}

static int read_fail(struct st__stream *s, uint64_t off)
{
	return stream_fail(s, off, "cannot read: %s",
			   errno == ENODATA ? "the file shrank while it was read" : strerror(errno));
}

/* Reads and checks the header and context of the packet at file offset
 * off, reading no more of it than they need. */
static int read_packet(struct st__stream *s, uint64_t off, struct st__packet *p)
{
	uint64_t avail = s->size - off;

	for (uint64_t want = HEADER_PEEK;; want *= 16) {
		uint64_t have = want < avail ? want : avail;
		const uint8_t *pkt = st__window_get(&s->win, off, have);
		int ret;

		if (!pkt)
			return read_fail(s, off);
		ret = parse_packet(s, off, pkt, have, avail, p);
		if (ret != -EAGAIN)
			return ret;
	}
}

/* Checks p follows what came before in the stream; returns the events
 * lost since the previous packet in *lost. */
static int check_order(struct st__stream *s, struct st__order *o, const struct st__packet *p,
		       uint64_t *lost)
{
	*lost = 0;
	if (p->has_begin) {
		if (p->ts_begin < o->last_ts)
			return stream_fail(s, p->off,
					   "timestamp_begin %llu goes back in time (the stream "
					   "was at %llu)",
					   (unsigned long long)p->ts_begin,
					   (unsigned long long)o->last_ts);
		o->last_ts = p->ts_begin;
	}
	if (p->has_discarded) {
		uint64_t d = (p->discarded - o->discarded) & p->discarded_mask;

		if (p->discarded_mask == UINT64_MAX && p->discarded < o->discarded)
			return stream_fail(s, p->off,
					   "events_discarded goes down (%llu after %llu)",
					   (unsigned long long)p->discarded,
					   (unsigned long long)o->discarded);
		*lost = d;
		o->discarded = p->discarded;
	}
	return 0;
}

/* The end of a packet: its timestamp_end must not precede its records. */
static int close_packet(struct st__stream *s, struct st__order *o, const struct st__packet *p)
{
	if (p->has_end) {
		if (p->ts_end < o->last_ts)
			return stream_fail(s, p->off,
					   "timestamp_end %llu is before the packet's last "
					   "event (%llu)",
					   (unsigned long long)p->ts_end,
					   (unsigned long long)o->last_ts);
		o->last_ts = p->ts_end;
		o->prev_end = p->ts_end;
	} else {
		o->prev_end = o->last_ts;
	}
	o->seen = true;
	return 0;
}

/* The reading window, for packets of at most largest bytes. */
static int window_plan(struct st__stream *s, uint64_t largest)
{
	int ret = st__window_plan(&s->win, largest);

	return ret < 0 ? stream_fail(s, 0, "cannot read: %s", strerror(-ret)) : 0;
}

/* The damage r->err says ends what is read of s at file offset off (a
 * packet's start). */
static void skip_from(struct st__stream *s, uint64_t off)
{
	char skipped[96];

	snprintf(skipped, sizeof(skipped), "skipped the rest of the file: %llu bytes from offset %llu",
		 (unsigned long long)(s->size - off), (unsigned long long)off);
	st__reader_damage(s->r, skipped);
	s->end = off;
	s->dead = true;
}

/* Checks the packets from file offset off on, with the order o had
 * before them. */
static int scan_packets(struct st__stream *s, uint64_t off, struct st__order o)
{
	struct st__packet p;
	uint64_t lost, largest = 0;
	int ret;

	while (off < s->size) {
		ret = read_packet(s, off, &p);
		if (ret == 0)
			ret = check_order(s, &o, &p, &lost);
		if (ret == 0)
			ret = close_packet(s, &o, &p);
		if (ret == -ENODATA)
			break; /* (followed: the rest is still being written) */
		if (ret == -EBADMSG) {
			skip_from(s, off);
			s->tail = o.last_ts;
			return largest ? window_plan(s, largest) : 0;
		}
		if (ret < 0)
			return ret;
		if (!s->info.cls) {
			s->info.cls = p.cls;
			s->info.has_instance_id = p.has_instance;
			s->info.instance_id = p.instance_id;
		}
		off += p.size;
		if (p.size > largest)
			largest = p.size;
		st__window_ahead(&s->win, p.size < HEADER_PEEK ? SCAN_AHEAD : 0);
	}
	s->end = off;
	s->tail = o.last_ts;
	return window_plan(s, largest);
}

int st__stream_file(struct st_reader *r, struct st__stream *s, int dirfd, const char *file)
{
	struct stat st;
	int fd, ret;

	s->r = r;
	s->win.fd = -1; /* nothing to close yet */
	s->file = strdup(file);
	if (!s->file) {
		snprintf(r->err, sizeof(r->err), "%s/%s: out of memory", r->dir, file);
		return -ENOMEM;
	}
	s->info.file = s->file;
	fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		snprintf(r->err, sizeof(r->err), "%s/%s: cannot read: %s", r->dir, file, strerror(e));
		return -e;
	}
	s->size = (uint64_t)st.st_size;
	ret = st__window_open(&s->win, fd, s->size);
	if (ret < 0) {
		snprintf(r->err, sizeof(r->err), "%s/%s: cannot read: %s", r->dir, file,
			 strerror(-ret));
		return ret;
	}
	s->end = 0;
	return 0;
}

int st__stream_scan(struct st__stream *s, const struct st__resume *from)
{
	const struct st_tsdl *t = &s->r->meta;

	if (!from)
		return s->size ? scan_packets(s, 0, (struct st__order){ 0 }) : 0;
	if (from->has_cls && from->cls < t->nstreams) {
		s->info.cls = &t->streams[from->cls];
		s->info.has_instance_id = from->has_instance_id;
		s->info.instance_id = from->instance_id;
	}
	s->next_pkt = s->end = from->next;
	s->order = from->order;
	s->tail = from->order.last_ts;
	s->resume_inside = from->inside;
	s->resume_pos = from->pos;
	s->resume_clock = from->clock;
	s->resume_last_ts = from->last_ts;
	if (from->next > s->size) {
		/* (a file that shrank: nothing more of it) */
		s->dead = true;
		s->resume_inside = false;
		return 0;
	}
	if (from->dead) {
		/* (what was read of it ends at its damage, said once) */
		s->dead = true;
		if (s->size > from->dead_at)
			s->size = from->dead_at;
	}
	return scan_packets(s, from->next, from->order);
}

void st__stream_pause(const struct st__stream *s, struct st__resume *to)
{
	const struct st_tsdl *t = &s->r->meta;

	to->size = s->size;
	if (s->info.cls) {
		to->has_cls = true;
		to->cls = (uint32_t)(s->info.cls - t->streams);
		to->has_instance_id = s->info.has_instance_id;
		to->instance_id = s->info.instance_id;
	}
	to->inside = false;
	to->dead = s->dead;
	to->dead_at = s->dead ? s->end : 0;
	if (s->head == ST_ITEM_EVENT) {
		/* (the head record, decoded but not given: from its start) */
		to->next = s->pkt.off;
		to->order = s->pkt_order;
		to->inside = true;
		to->pos = s->mark.pos;
		to->clock = s->mark.clock;
		to->last_ts = s->mark.last_ts;
	} else if (s->head == ST_ITEM_LOST) {
		/* (the packet's lost notice, not given: the packet again) */
		to->next = s->pkt.off;
		to->order = s->pkt_order;
	} else {
		to->next = s->next_pkt;
		to->order = s->order;
	}
}

void st__stream_close(struct st__stream *s)
{
	st__window_close(&s->win);
	free(s->file);
	s->file = NULL;
}

/* A clock-mapped field of fewer than 64 bits holds the low bits of the
 * clock; a smaller value than the clock's low bits means they wrapped. */
static uint64_t clock_update(uint64_t clock, uint64_t v, unsigned bytes)
{
	uint64_t mask, next;

	if (bytes == 8)
		return v;
	mask = (1ull << (8 * bytes)) - 1;
	next = (clock & ~mask) | v;
	if (next < clock)
		next += mask + 1;
	return next;
}

/* The event just decoded, of class ec, whose record began at start. */
static int event_done(struct st__stream *s, const struct st_event_class *ec, uint64_t start)
{
	const struct st__packet *p = &s->pkt;
	const struct st_stream_class *sc = p->cls;

	s->ev.cls = ec;
	s->ev.cycles = s->clock;
	s->ev.ns = st_clock_ns(sc->clock, s->clock);
	s->ev.vpid = sc->ec_vpid >= 0 ? as_i32(&sc->event_context.v[sc->ec_vpid], &s->ec[sc->ec_vpid])
				      : -1;
	s->ev.vtid = sc->ec_vtid >= 0 ? as_i32(&sc->event_context.v[sc->ec_vtid], &s->ec[sc->ec_vtid])
				      : -1;
	s->ev.pid = p->pid >= 0 ? p->pid : s->ev.vpid;
	s->ev.tid = s->ev.vtid >= 0 ? s->ev.vtid : p->tid;
	s->ev.ip = sc->ec_ip >= 0 ? s->ec[sc->ec_ip].u : 0;
	s->ev.offset = p->off + start;
	s->head = ST_ITEM_EVENT;
	s->key = s->ev.ns;
	return 1;
}

/* The record at s->pos by the tables of fast.h: 1, or 0 (nothing changed)
 * when they do not describe it or it breaks a rule read_event names. */
static int read_event_fast(struct st__stream *s)
{
	const struct st__fast_stream *fs = s->fast;
	const struct st_stream_class *sc = s->pkt.cls;
	uint64_t room = s->pkt.content - s->pos, clock = s->clock, id = 0, start;
	const uint8_t *q = s->bytes + s->pos, *b;
	const struct st__fast_head *h;
	const struct st__fast_event *fe;
	const struct st_event_class *ec;

	if (room < fs->maxlen + 8)
		return 0;
	h = &fs->head[q[0]];
	if (!h->ok)
		return 0;
	if (h->id_from == 1)
		id = q[0];
	else if (h->id_from == 2)
		id = st__fast_int(q + h->id_off, h->id_shift, false);
	if (h->ts_bytes)
		clock = clock_update(clock, st__fast_int(q + h->ts_off, 64 - 8 * h->ts_bytes, false),
				     h->ts_bytes);
	ec = id < sc->nids ? sc->by_id[id] : NULL;
	if (clock < s->order.last_ts || !ec)
		return 0;
	fe = &s->r->fast.events[ec->index];
	if (!fe->ok || room - h->len < fe->size + 8)
		return 0;
	b = q + h->len;
	for (uint32_t i = 0; i < fe->n; i++) {
		const struct st__fast_value *v = &fe->v[i];
		struct st_value *out = (v->in_payload ? s->fields : s->ec) + v->index;

		if (v->is_bytes) {
			out->ptr = b + v->off;
			out->len = v->count;
		} else {
			out->u = st__fast_int(b + v->off, v->shift, v->is_signed);
		}
	}
	s->clock = clock;
	s->order.last_ts = clock;
	start = s->pos;
	s->pos += h->len + fe->size;
	st__fast_decoded++;
	return event_done(s, ec, start);
}

static int read_event(struct st__stream *s)
{
	const struct st__packet *p = &s->pkt;
	const struct st_stream_class *sc = p->cls;
	const uint8_t *pkt = s->bytes;
	const struct st_event_class *ec;
	uint64_t start = s->pos, id = 0;
	char why[256];

	if (s->fast && read_event_fast(s))
		return 1;
	if (st__decode(&sc->event_header, pkt, p->content, &s->pos, s->eh, why, sizeof(why)) < 0)
		return stream_fail(s, p->off + s->pos, "event header: %s", why);
	/* A compact header holds an id and the clock's low bits, an extended
	 * one (the other option of a variant) a wider id and the whole clock:
	 * each field the record holds counts, in order. */
	for (uint32_t i = 0; i < sc->neh_use; i++) {
		const struct st_header_use *u = &sc->eh_use[i];

		if (u->variant >= 0 &&
		    (s->eh[u->variant].u != u->option ||
		     !st_field_present(&sc->event_header, s->eh, (uint32_t)u->variant)))
			continue;
		if (u->is_id)
			id = s->eh[u->field].u;
		else
			s->clock = clock_update(s->clock, s->eh[u->field].u, u->size);
	}
	if (s->clock < s->order.last_ts)
		return stream_fail(s, p->off + start,
				   "event timestamp %llu goes back in time (the stream was at "
				   "%llu)",
				   (unsigned long long)s->clock,
				   (unsigned long long)s->order.last_ts);
	s->order.last_ts = s->clock;
	ec = id < sc->nids ? sc->by_id[id] : NULL;
	if (!ec)
		return stream_fail(s, p->off + start, "unknown event id %llu",
				   (unsigned long long)id);
	if (st__decode(&sc->event_context, pkt, p->content, &s->pos, s->ec, why, sizeof(why)) < 0 ||
	    st__decode(&ec->fields, pkt, p->content, &s->pos, s->fields, why, sizeof(why)) < 0)
		return stream_fail(s, p->off + s->pos, "event %s: %s", ec->name, why);
	if (s->pos == start)
		return stream_fail(s, p->off + start, "empty event record");
	return event_done(s, ec, start);
}

/* The vtid of the current packet's first record, -1 if none; a record
 * that does not decode is left for read_event to report. */
static int32_t first_tid(struct st__stream *s)
{
	const struct st__packet *p = &s->pkt;
	const struct st_stream_class *sc = p->cls;
	uint64_t pos = p->data;
	char why[256];

	if (sc->ec_vtid < 0 || pos >= p->content ||
	    st__decode(&sc->event_header, s->bytes, p->content, &pos, s->eh, why,
		       sizeof(why)) < 0 ||
	    st__decode(&sc->event_context, s->bytes, p->content, &pos, s->ec, why,
		       sizeof(why)) < 0)
		return -1;
	return as_i32(&sc->event_context.v[sc->ec_vtid], &s->ec[sc->ec_vtid]);
}

int st__stream_advance(struct st__stream *s)
{
	struct st__packet *p = &s->pkt;
	uint64_t lost;
	int ret;

	for (;;) {
		if (s->in_packet) {
			if (s->pos < p->content) {
				char skipped[96];

				s->mark.pos = s->pos;
				s->mark.clock = s->clock;
				s->mark.last_ts = s->order.last_ts;
				ret = read_event(s);
				if (ret != -EBADMSG)
					return ret;
				/* (a record that does not decode: the rest of its
				 * packet cannot be found, the next packet can) */
				snprintf(skipped, sizeof(skipped),
					 "skipped the rest of its packet: %llu bytes from offset %llu",
					 (unsigned long long)(p->content - s->pos),
					 (unsigned long long)(p->off + s->pos));
				st__reader_damage(s->r, skipped);
				s->pos = p->content;
				continue;
			}
			ret = close_packet(s, &s->order, p);
			s->in_packet = false;
			s->next_pkt = p->off + p->size;
			st__window_done(&s->win, s->next_pkt);
			if (ret == -EBADMSG) {
				/* (a packet whose end is before its records: the
				 * times of what follows cannot be trusted) */
				skip_from(s, s->next_pkt);
				continue;
			}
			if (ret < 0)
				return ret;
		}
		if (s->next_pkt >= s->end) {
			s->head = 0;
			return 0;
		}
		{
			bool first = !s->order.seen, inside = s->resume_inside;
			uint64_t prev_end = s->order.prev_end;

			s->pkt_order = s->order;
			s->resume_inside = false;
			lost = 0;
			ret = read_packet(s, s->next_pkt, p);
			if (ret == 0)
				ret = check_order(s, &s->order, p, &lost);
			/* (a followed stream resumed inside the packet: its lost
			 * notice was given) */
			if (inside)
				lost = 0;
			if (ret == -EBADMSG) {
				/* (a packet that goes back in time after records the
				 * scan of the headers could not see) */
				skip_from(s, s->next_pkt);
				continue;
			}
			if (ret < 0)
				return ret;
			s->bytes = st__window_get(&s->win, p->off, p->size);
			if (!s->bytes)
				return read_fail(s, p->off);
			s->fast = &s->r->fast.streams[p->cls - s->r->meta.streams];
			if (!s->fast->ok || !st__fast_enabled)
				s->fast = NULL;
			if (p->has_begin)
				s->clock = p->ts_begin;
			s->in_packet = true;
			s->pos = p->data;
			if (inside) {
				s->pos = s->resume_pos;
				s->clock = s->resume_clock;
				s->order.last_ts = s->resume_last_ts;
			}
			if (lost == 0)
				continue;
			s->lost.count = lost;
			s->lost.begin_cycles = first ? p->ts_begin : prev_end;
			s->lost.end_cycles = p->has_end ? p->ts_end : p->ts_begin;
		}
		s->lost.begin_ns = st_clock_ns(p->cls->clock, s->lost.begin_cycles);
		s->lost.end_ns = st_clock_ns(p->cls->clock, s->lost.end_cycles);
		s->lost.pid = p->pid;
		s->lost.tid = p->tid >= 0 ? p->tid : first_tid(s);
		s->head = ST_ITEM_LOST;
		s->key = s->lost.begin_ns;
		return 1;
	}
}
