/*
 * The consumer against a pool in ordinary memory (see consume.h): the
 * stand-ins for the rest of the daemon, the checks of what reaches the
 * trace, and the fuzz input's reading.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/resident.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/callsite.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/wire/msg.h"
#include "ctl/daemon/wire/record.h"
#include "ctl/daemon/wire/ring.h"
#include "tests/fuzz/consume.h"
#include "tests/fuzz/consume.h"
#include "tests/fuzz/consume.h"

#define FZ_CHECK(c)                                                              \
	do {                                                                     \
		if (!(c)) {                                                      \
			fprintf(stderr, "%s:%d: broken: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                 \
		}                                                                \
	} while (0)

/* The environment the stand-ins serve (one at a time). */
static struct fz_env *cur;

/* The trace's id of each class of the process (-1: refused, or none). */
static const int32_t trace_ids[FZ_NCLS] = { 3, 300, 5, 7, -1, -1 };

/* ---- stand-ins for the rest of the daemon ---- */

uint64_t st_clock_now(const struct st_clock *c)
{
	(void)c;
	return cur->now;
}

void st_log(int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	(void)level;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
}

void st_log_user(uid_t uid, int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	(void)uid;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
}

/* An exact-size packet buffer: a write past what was asked is caught. */
static uint8_t *packet;

uint8_t *st_packet_buf(uint64_t len)
{
	free(packet);
	packet = malloc(len ? len : 1);
	return packet;
}

void st_packet_prepare(uint64_t len)
{
	(void)len;
}

/* (every packet in a buffer of its own: exact-size, as above) */
uint8_t *st_packet_more(struct st_stream *s, uint64_t *cap)
{
	(void)s;
	(void)cap;
	return NULL;
}

void *st_resident_alloc(uint64_t len)
{
	return malloc(len ? len : 1);
}

void st_resident_free(void *p, uint64_t len)
{
	(void)len;
	free(p);
}

uint64_t st_proc_lost_unbuffered(const struct st_proc *p, uint32_t s)
{
	(void)p;
	(void)s;
	return 0;
}

static struct st_session_stats stats;

struct st_session_stats *st_session_stats_for(struct st_session *s, struct st_proc *p, bool create)
{
	(void)s;
	(void)p;
	return create ? &stats : NULL;
}

const struct st_session_stats *fz_stats(void)
{
	return &stats;
}


static int class_index(const struct st_evclass *c)
{
	for (int k = 0; k < FZ_NCLS; k++)
		if (c && cur->p.classes.cls[k] == c)
			return k;
	return -1;
}

int32_t st_trace_class_id(struct st_trace *t, struct st_evclass *c, uid_t uid)
{
	int k = class_index(c);

	(void)t;
	FZ_CHECK(uid == cur->p.uid);
	return k < 0 ? -1 : trace_ids[k];
}

/* (no per-user pools here: every pool is one process's) */
struct st_user_pool *st_user_pool_of(const struct st_daemon *d, const struct st_proc *p,
				     uint32_t s)
{
	(void)d;
	(void)p;
	(void)s;
	return NULL;
}

void st_objects_lines_wait(struct st_proc *p)
{
	p->objects.lines_waiting = true;
}

uint64_t st_callsite(struct st_daemon *d, struct st_proc *p, uint64_t ip, bool *unsettled)
{
	(void)d;
	(void)p;
	if ((ip & 0xffff) == FZ_IP_UNSETTLED)
		*unsettled = true;
	return ip ^ 1;
}

int st_stream_open(struct st_trace *t, struct st_stream *s, const char *fname, int32_t pid,
		   uint64_t owner)
{
	(void)fname;
	memset(s, 0, sizeof(*s));
	s->trace = t;
	s->pid = pid;
	s->tid = pid;
	s->owner = owner;
	return 0;
}

void st_stream_close(struct st_stream *s)
{
	s->file = NULL;
}

/* ---- what reaches the trace ---- */

/* The class of a trace id, as the metadata would say. */
static int class_of_trace_id(uint32_t id)
{
	for (int k = 0; k < FZ_NCLS; k++)
		if (trace_ids[k] >= 0 && (uint32_t)trace_ids[k] == id)
			return k;
	return -1;
}

/* The bytes of a string at p (n bytes there), its NUL included. */
static uint64_t string_at(const uint8_t *p, uint64_t n)
{
	const uint8_t *nul = memchr(p, 0, n);

	FZ_CHECK(nul != NULL);
	return (uint64_t)(nul - p) + 1;
}

static void note(const struct fz_event *ev)
{
	if (cur->nev == cur->cap) {
		size_t cap = cur->cap ? cur->cap * 2 : 256;
		struct fz_event *v = realloc(cur->ev, cap * sizeof(*v));

		FZ_CHECK(v != NULL);
		cur->ev = v;
		cur->cap = cap;
	}
	cur->ev[cur->nev++] = *ev;
}

/* Reads the records of a packet as babeltrace2 does: its clock starts at
 * timestamp_begin; a compact header sets the clock's low 16 bits, adding
 * 2^16 when they are lower than the clock's; an extended one sets it. */
static void check_records(const uint8_t *r, uint64_t len, uint64_t events, uint64_t begin,
			  uint64_t end)
{
	uint64_t clock = begin, off = 0, n = 0;

	while (off < len) {
		struct fz_event ev = { 0 };
		uint64_t ts, ip, left;
		uint32_t id;
		int32_t vpid;
		int k;

		FZ_CHECK(len - off >= ST_TRACE_HDR_COMPACT + ST_TRACE_CTX_BYTES);
		if (r[off] != ST_ABI_ID_EXTENDED) {
			uint16_t low;

			id = r[off];
			memcpy(&low, r + off + 1, 2);
			ts = (clock & ~0xffffull) | low;
			if (ts < clock) {
				FZ_CHECK(ts <= UINT64_MAX - 0x10000); /* no wrap of 64 bits */
				ts += 0x10000;
			}
			off += ST_TRACE_HDR_COMPACT;
		} else {
			FZ_CHECK(len - off >= ST_ABI_HDR_EXTENDED + ST_TRACE_CTX_BYTES);
			memcpy(&id, r + off + 1, 4);
			memcpy(&ts, r + off + 5, 8);
			off += ST_ABI_HDR_EXTENDED;
		}
		memcpy(&vpid, r + off, 4);
		memcpy(&ip, r + off + 4, 8);
		off += ST_TRACE_CTX_BYTES;
		FZ_CHECK(vpid == cur->p.pid);
		FZ_CHECK(ts >= clock);		  /* never back */
		FZ_CHECK(n > 0 || ts == begin);	  /* the packet begins with its first */
		FZ_CHECK(ts <= end);
		clock = ts;
		k = class_of_trace_id(id);
		FZ_CHECK(k >= 0);
		left = len - off;
		ev.ts = ts;
		ev.cls = (uint32_t)k;
		switch (k) {
		case FZ_U64:
			FZ_CHECK(left >= 8);
			memcpy(&ev.u, r + off, 8);
			off += 8;
			break;
		case FZ_WIDE: {
			uint32_t u;

			FZ_CHECK(left >= 12);
			memcpy(&u, r + off, 4);
			ev.u = u;
			off += 12;
			break;
		}
		case FZ_STR:
			ev.u = string_at(r + off, left) - 1;
			off += ev.u + 1;
			break;
		case FZ_MIXED: {
			uint32_t u;

			FZ_CHECK(left >= 4);
			memcpy(&u, r + off, 4);
			ev.u = u;
			off += 4;
			off += string_at(r + off, len - off);
			FZ_CHECK(len - off >= 1);
			off += 1;
			break;
		}
		default:
			FZ_CHECK(!"a class the trace does not hold");
		}
		note(&ev);
		n++;
	}
	FZ_CHECK(n == events);
	FZ_CHECK(clock == end); /* and ends with its last */
}

int st_stream_packet(struct st_trace *t, struct st_stream *s, uint8_t *records, uint64_t len,
		     uint64_t events, uint64_t ts_begin, uint64_t ts_end, uint64_t discarded)
{
	/* (the latest a time may be: now plus the margin, or what an earlier
	 * now allowed, if the clock went back since) */
	uint64_t latest = st_clock_latest(&cur->d.clock, cur->now);

	(void)t;
	if (latest < cur->horizon)
		latest = cur->horizon;
	cur->horizon = latest;
	cur->packets++;
	cur->events += events;
	if (events == 0) {
		FZ_CHECK(len == 0);
	} else {
		/* The consumer's own doing: trace.c's clamps below are not
		 * needed by a packet of records (they would move its
		 * timestamp_begin away from its first record). */
		FZ_CHECK(ts_begin >= s->last_ts);
		FZ_CHECK(ts_begin <= ts_end);
		check_records(records, len, events, ts_begin, ts_end);
	}
	/* what trace.c does */
	st_stream_packet_bounds(s, &ts_begin, &ts_end, &discarded);
	FZ_CHECK(ts_begin >= cur->since);
	FZ_CHECK(ts_end <= latest);
	s->last_ts = ts_end;
	s->discarded = discarded;
	s->seq_num++;
	return 0;
}

/* ---- the process ---- */

int fz_env_init(struct fz_env *e, uint32_t mode, uint32_t sb_count, uint32_t nslots, uint64_t now,
		uint64_t since)
{
	static const struct st_evfield fields[FZ_NCLS][3] = {
		{ { "n", ST_TYPE_U64 } },
		{ { "a", ST_TYPE_U32 }, { "b", ST_TYPE_U64 } },
		{ { "s", ST_TYPE_STRING } },
		{ { "a", ST_TYPE_U32 }, { "s", ST_TYPE_STRING }, { "c", ST_TYPE_U8 } },
		{ { "n", ST_TYPE_U64 } },
	};
	static const uint32_t nfields[FZ_NCLS] = { 1, 2, 1, 3, 1, 0 };
	struct st_abi_geometry g;

	memset(e, 0, sizeof(*e));
	e->p.pools[0].ring.fd = -1;
	cur = e;
	if (st_abi_geometry(mode, ST_ABI_SB_SIZE_MIN, sb_count, nslots, &g) < 0)
		return -1;
	e->now = now;
	e->since = since;
	e->size = g.size;
	e->pool = calloc(1, g.size);
	e->d.clock.kind = ST_CLOCK_MONOTONIC;
	e->d.clock.freq = 1000000000u;
	e->d.sessions = &e->ses;
	e->ses.all_users = true;
	e->ses.generation = 1;
	e->ses.runs = 1;
	e->p.pid = 4242;
	e->p.uid = 4003;
	e->p.traced_since[0] = since;
	e->p.pools[0].generation = 1;
	e->p.pools[0].slots = calloc(nslots, sizeof(*e->p.pools[0].slots));
	e->p.classes.cls = calloc(FZ_NCLS, sizeof(*e->p.classes.cls));
	e->p.classes.ncls = FZ_NCLS;
	if (!e->pool || !e->p.pools[0].slots || !e->p.classes.cls || st_evreg_init(&e->d.reg) < 0 ||
	    st_ring_init(&e->p.pools[0].ring, e->pool, -1, g.size, mode, ST_ABI_SB_SIZE_MIN, sb_count,
			 nslots) < 0)
		return -1;
	for (int k = 0; k < FZ_NONE; k++) {
		char name[8];

		snprintf(name, sizeof(name), "c%d", k);
		e->p.classes.cls[k] = st_evreg_intern(&e->d.reg, "fz", name, fields[k], nfields[k]);
		if (!e->p.classes.cls[k])
			return -1;
	}
	((struct st_abi_pool *)e->pool)->slots_used = nslots;
	return 0;
}

/* The pool moved into a memfd, read by the consumer with pread (as a
 * daemon does) and mapped: a read past its end faults. */
static void to_memfd(struct fz_env *e)
{
	int fd = memfd_create("fz-pool", MFD_CLOEXEC);
	uint8_t *m;

	if (fd < 0 || pwrite(fd, e->pool, e->size, 0) != (ssize_t)e->size)
		abort();
	m = mmap(NULL, e->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		abort();
	free(e->pool);
	e->pool = m;
	e->p.pools[0].ring.base = m;
	e->p.pools[0].ring.fd = fd;
}

void fz_env_fini(struct fz_env *e)
{
	struct st_proc_pool *pool = &e->p.pools[0];

	for (uint32_t i = 0; pool->slots && i < pool->ring.nslots; i++) {
		free(pool->slots[i].taken);
		free(pool->slots[i].in_place);
	}
	free(pool->slots);
	free(e->p.classes.cls);
	st_evreg_free(&e->d.reg);
	if (pool->ring.fd >= 0) {
		munmap(e->pool, e->size);
		close(pool->ring.fd);
	} else {
		free(e->pool);
	}
	free(e->ev);
	free(packet);
	packet = NULL;
	memset(e, 0, sizeof(*e));
	cur = NULL;
}

struct st_abi_slot *fz_slot(struct fz_env *e, uint32_t i)
{
	return st_ring_slot(&e->p.pools[0].ring, i);
}

uint8_t *fz_data(struct fz_env *e, uint32_t i, uint32_t idx)
{
	return (uint8_t *)st_ring_data(&e->p.pools[0].ring, i, idx);
}

void fz_drain(struct fz_env *e, enum st_drain how)
{
	cur = e;
	st_consume_all(&e->d, &e->p, how);
}

/* ---- the fuzz input ----
 *
 *   byte 0       bit 0: overwrite mode; bits 1-2: sub-buffers - 2 (2 to
 *                4); bit 3: two slots, else one; bit 4: the pool in a
 *                memfd, copied out with pread, else in the heap, read in
 *                place (discard mode) or copied with memcpy; bit 5: the
 *                clock reads since (below now) in the second round: two
 *                CPUs' clocks a little apart; bit 6: the consumer took
 *                laps before (its cursor starts at each slot's rseq, below
 *                2^16), so that later laps are read in place; bit 7
 *                (discard mode): per-CPU buffers (ring.percpu)
 *   bytes 1-8    the clock's now (its low 62 bits)
 *   bytes 9-16   when the session began tracing the process (modulo
 *                now + 1: never after now, as in the daemon)
 *   bytes 17-20  the pool header's slots_used
 *   then         each slot's header: struct st_abi_slot and its
 *                sub-buffers' struct st_abi_subbuf (seq, commit, closed...)
 *   then         a byte N, then N patches of 12 bytes (u32 offset in the
 *                pool, u64 value), written between the two rounds of drains
 *                (a producer going on, or changing what it wrote)
 *   the rest     the sub-buffers' bytes, shared out evenly between them
 *
 * Discard mode: a drain of closed sub-buffers, a flush (which may wait
 * for line tables), the patches, a flush that does not wait, the final
 * drain. Overwrite mode: the final drain, the patches, another.
 */
static uint64_t take(const uint8_t **p, const uint8_t *end, void *dst, size_t n)
{
	size_t k = (size_t)(end - *p) < n ? (size_t)(end - *p) : n;

	memset(dst, 0, n);
	memcpy(dst, *p, k);
	*p += k;
	return k;
}

void fz_run(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size, *patches;
	uint8_t cfg = 0, npatch = 0;
	uint32_t sb_count, nslots, used, mode, nsb;
	uint64_t now, since, hdr, rest, chunk;
	struct fz_env e;

	take(&p, end, &cfg, 1);
	take(&p, end, &now, 8);
	take(&p, end, &since, 8);
	take(&p, end, &used, 4);
	mode = cfg & 1 ? ST_MODE_OVERWRITE : ST_MODE_DISCARD;
	sb_count = 2 + (((cfg >> 1) & 3) % 3);
	nslots = 1 + ((cfg >> 3) & 1);
	now &= (1ull << 62) - 1; /* (a clock's: far from wrapping) */
	since %= now + 1;
	if (fz_env_init(&e, mode, sb_count, nslots, now, since) < 0)
		abort();
	((struct st_abi_pool *)e.pool)->slots_used = used;
	/* (per-CPU buffers: sub-buffers there once slot.cur reached them,
	 * closed once it is past; discard mode only) */
	e.p.pools[0].ring.percpu = (cfg & 128) && mode == ST_MODE_DISCARD;
	hdr = sizeof(struct st_abi_slot) + sb_count * sizeof(struct st_abi_subbuf);
	for (uint32_t i = 0; i < nslots; i++)
		take(&p, end, fz_slot(&e, i), hdr);
	take(&p, end, &npatch, 1);
	patches = p;
	p += (size_t)(end - p) < npatch * 12u ? (size_t)(end - p) : npatch * 12u;
	nsb = nslots * sb_count;
	rest = (uint64_t)(end - p);
	chunk = rest / nsb < ST_ABI_SB_SIZE_MIN ? rest / nsb : ST_ABI_SB_SIZE_MIN;
	for (uint32_t k = 0; k < nsb; k++)
		memcpy(fz_data(&e, k / sb_count, k % sb_count), p + k * chunk, chunk);
	if (cfg & 16)
		to_memfd(&e);
	for (uint32_t i = 0; (cfg & 64) && i < nslots; i++)
		e.p.pools[0].slots[i].cur.rseq = fz_slot(&e, i)->rseq & 0xffff;

	if (mode == ST_MODE_DISCARD) {
		fz_drain(&e, ST_DRAIN_CLOSED);
		fz_drain(&e, ST_DRAIN_FLUSH);
	} else {
		fz_drain(&e, ST_DRAIN_FINAL);
	}
	for (const uint8_t *q = patches; q + 12 <= p && q < patches + npatch * 12u; q += 12) {
		uint32_t off;
		uint64_t v;

		memcpy(&off, q, 4);
		memcpy(&v, q + 4, 8);
		memcpy(e.pool + off % (e.size - 7), &v, 8);
	}
	if (cfg & 32)
		e.now = since;
	if (mode == ST_MODE_DISCARD)
		fz_drain(&e, ST_DRAIN_FLUSH_NOW);
	fz_drain(&e, ST_DRAIN_FINAL);
	fz_env_fini(&e);
}

size_t fz_input(const struct fz_env *e, uint8_t *out, size_t cap)
{
	const struct st_ring *r = &e->p.pools[0].ring;
	uint64_t hdr = sizeof(struct st_abi_slot) + r->sb_count * sizeof(struct st_abi_subbuf);
	uint64_t chunk = 0, n;
	uint32_t used = ((const struct st_abi_pool *)e->pool)->slots_used;
	uint8_t cfg = (uint8_t)((r->mode == ST_MODE_OVERWRITE) | (r->sb_count - 2) << 1 |
				(r->nslots == 2) << 3 | r->percpu << 7 | e->input_flags);

	/* each sub-buffer's bytes: as many as the fullest holds */
	for (uint32_t i = 0; i < r->nslots; i++)
		for (uint32_t k = 0; k < r->sb_count; k++) {
			uint64_t c = st_ring_slot(r, i)->sb[k].commit;

			chunk = c > chunk ? (c < r->sb_size ? c : r->sb_size) : chunk;
		}
	n = 1 + 8 + 8 + 4 + r->nslots * hdr + 1 + chunk * r->nslots * r->sb_count;
	if (n > cap)
		return 0;
	out[0] = cfg;
	memcpy(out + 1, &e->now, 8);
	memcpy(out + 9, &e->since, 8);
	memcpy(out + 17, &used, 4);
	n = 21;
	for (uint32_t i = 0; i < r->nslots; i++, n += hdr)
		memcpy(out + n, st_ring_slot(r, i), hdr);
	out[n++] = 0; /* no patches */
	for (uint32_t i = 0; i < r->nslots; i++)
		for (uint32_t k = 0; k < r->sb_count; k++, n += chunk)
			memcpy(out + n, st_ring_data(r, i, k), chunk);
	return n;
}

/* ---- example pools ---- */

/* Writing records into one sub-buffer. */
struct sbw {
	struct st_abi_subbuf *sb;
	uint8_t *p;
	uint64_t off, events;
};

static struct sbw sb_open(struct fz_env *e, uint32_t i, uint32_t idx, uint64_t seq)
{
	struct sbw w = { &fz_slot(e, i)->sb[idx], fz_data(e, i, idx), 0, 0 };

	w.sb->seq = seq;
	return w;
}

static void sb_thread(struct sbw *w, uint64_t ts, int32_t tid)
{
	w->off += fz_rec_thread(w->p + w->off, ts, tid);
}

static void sb_rec(struct sbw *w, uint32_t id, uint64_t ts, bool compact, uint64_t ip,
		   const void *fields, size_t n)
{
	w->off += fz_rec(w->p + w->off, id, ts, compact, ip, fields, n);
	w->events++;
}

static void sb_u64(struct sbw *w, uint64_t ts, bool compact, uint64_t v)
{
	sb_rec(w, FZ_U64, ts, compact, 0x401000, &v, 8);
}

/* Commits what w holds, and closes the sub-buffer if asked. */
static void sb_commit(struct sbw *w, bool close)
{
	w->sb->commit = w->off;
	if (close) {
		w->sb->events = w->events;
		w->sb->closed = 1;
	}
}

int fz_example(struct fz_env *e, enum fz_example which)
{
	static const uint8_t wide[12] = { 2, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t mixed[8] = { 4, 0, 0, 0, 'x', 'y', 0, 9 };
	const uint64_t t = FZ_SINCE + 1000, far = 1ull << 50;
	uint64_t ts;
	struct sbw w;

	switch (which) {
	case FZ_EX_DISCARD:
		if (fz_env_init(e, ST_MODE_DISCARD, 3, 1, FZ_NOW, FZ_SINCE) < 0)
			return -1;
		w = sb_open(e, 0, 0, 1);
		sb_thread(&w, t, 101);
		sb_u64(&w, t + 10, true, 1);
		sb_rec(&w, FZ_WIDE, t + 20, false, 0x401010, wide, sizeof(wide));
		sb_rec(&w, FZ_STR, t + 30, true, 0x401020, "hello", 6);
		sb_rec(&w, FZ_MIXED, t + 40, true, 0x401030, mixed, sizeof(mixed));
		sb_u64(&w, t + 40 + (1u << 20), true, 5); /* (extended in the trace) */
		sb_commit(&w, true);
		w = sb_open(e, 0, 1, 2);
		sb_thread(&w, t + (1u << 21), 101);
		for (uint64_t k = 1; k <= 3; k++)
			sb_u64(&w, t + (1u << 21) + k, true, 5 + k);
		sb_commit(&w, true);
		w = sb_open(e, 0, 2, 3);
		sb_thread(&w, t + (1u << 22), 102);
		sb_rec(&w, FZ_STR, t + (1u << 22) + 5, false, 0x401040, "open", 5);
		sb_commit(&w, false);
		return 0;
	case FZ_EX_OVERWRITE:
		if (fz_env_init(e, ST_MODE_OVERWRITE, 2, 1, FZ_NOW, FZ_SINCE) < 0)
			return -1;
		w = sb_open(e, 0, 1, 2); /* lap 2 of sub-buffer 1 */
		sb_thread(&w, t, 5);
		sb_u64(&w, t + 1, true, 1);
		sb_u64(&w, t + 2, true, 2);
		sb_commit(&w, true);
		w = sb_open(e, 0, 0, 3); /* lap 3, in sub-buffer 0 */
		sb_thread(&w, t + 100, 5);
		sb_u64(&w, t + 101, true, 3);
		sb_u64(&w, t + 102, true, 4);
		sb_commit(&w, false);
		return 0;
	case FZ_EX_FORGED:
		/* events n = 0 to 160; see test_consume.c for what each becomes */
		if (fz_env_init(e, ST_MODE_DISCARD, 2, 1, FZ_NOW, FZ_SINCE) < 0)
			return -1;
		w = sb_open(e, 0, 0, 1);
		sb_thread(&w, t, 9);
		sb_u64(&w, t + 10, true, 0);
		sb_u64(&w, 0, false, 1);
		sb_u64(&w, 1, false, 2);
		sb_u64(&w, UINT64_MAX - 5, false, 3);
		sb_u64(&w, UINT64_MAX, false, 4);
		ts = UINT64_MAX;
		for (uint64_t k = 5; k < 55; k++) /* past 2^64 */
			sb_u64(&w, ts += (1u << 24) - 1, true, k);
		sb_u64(&w, FZ_NOW + far, false, 55);
		sb_u64(&w, FZ_NOW - 10000000000ull, false, 56);
		sb_thread(&w, UINT64_MAX - 5, 9);
		ts = UINT64_MAX - 5;
		for (uint64_t k = 57; k < 157; k++)
			sb_u64(&w, ts += (1u << 24) - 1, true, k);
		sb_u64(&w, FZ_NOW, false, 157);
		for (uint64_t k = 158; k < 161; k++)
			sb_u64(&w, FZ_NOW + (k - 157) * 1000, true, k);
		sb_commit(&w, false);
		return 0;
	case FZ_EX_CORRUPT:
		if (fz_env_init(e, ST_MODE_DISCARD, 2, 1, FZ_NOW, FZ_SINCE) < 0)
			return -1;
		w = sb_open(e, 0, 0, 1);
		sb_thread(&w, t, 3);
		sb_u64(&w, t + 1, true, 1);
		sb_rec(&w, FZ_NONE, t + 2, true, 0x401000, "\0\0\0\0\0\0\0\0", 8);
		sb_u64(&w, t + 3, true, 2);
		sb_commit(&w, true);
		w = sb_open(e, 0, 1, 2);
		sb_thread(&w, t + 10, 3);
		sb_u64(&w, t + 11, true, 3);
		sb_rec(&w, FZ_STR, t + 12, true, 0x401000, "no end", 6); /* (no NUL) */
		sb_commit(&w, true);
		return 0;
	case FZ_EX_TWO_SLOTS:
		if (fz_env_init(e, ST_MODE_DISCARD, 2, 2, FZ_NOW, FZ_SINCE) < 0)
			return -1;
		w = sb_open(e, 0, 0, 1);
		sb_thread(&w, t, 1);
		sb_rec(&w, FZ_U64, t + 1, true, FZ_IP_UNSETTLED, "\1\0\0\0\0\0\0\0", 8);
		sb_commit(&w, true);
		w = sb_open(e, 1, 0, 1);
		sb_thread(&w, t + 5, 2);
		sb_rec(&w, FZ_MIXED, t + 6, true, 0x401030, mixed, sizeof(mixed));
		sb_rec(&w, FZ_MIXED, t + 7, false, 0x401030, mixed, sizeof(mixed));
		sb_commit(&w, false);
		return 0;
	case FZ_EX_LAPS:
		/* (as fuzz input: read with pread, and the 9th read in place) */
		if (fz_env_init(e, ST_MODE_DISCARD, 2, 1, FZ_NOW, FZ_SINCE) < 0)
			return -1;
		e->input_flags = 16 | 64;
		fz_slot(e, 0)->rseq = 8;
		e->p.pools[0].slots[0].cur.rseq = 8;
		w = sb_open(e, 0, 0, 9);
		sb_thread(&w, t, 4);
		sb_u64(&w, t + 1, true, 1);
		sb_commit(&w, true);
		w = sb_open(e, 0, 1, 10);
		sb_thread(&w, t + 2, 4);
		sb_rec(&w, FZ_STR, t + 3, true, 0x401020, "lap", 4);
		sb_commit(&w, false);
		return 0;
	default:
		return -1;
	}
}
