/*
 * CTF 1.8 output: one trace directory per session, holding a plain-text
 * metadata file and one stream file per traced thread buffer, plus one per
 * process for the events the daemon writes (statedump).
 *
 * Layout of every packet (little-endian, byte-packed):
 *   packet.header   magic, trace uuid, stream_id 0, stream_instance_id
 *   packet.context  timestamp_begin/end, content_size, packet_size (bits),
 *                   packet_seq_num, events_discarded, pid, tid
 *   records         a header (u8 id and the low 16 bits of the time, or
 *                   255, u32 id and u64 time: record.h), the event context
 *                   (s32 vpid, u64 ip), then the fields as the process
 *                   wrote them
 *
 * The directory and every file in it are created from descriptors, never
 * through a link or over a file that is there, with the owner's rights and
 * umask (tracedir.c says the rules).
 *
 * Packets are queued to the trace file writer (tracefile.c), which writes them
 * through the page cache (see there for why not O_DIRECT, when they are
 * sent on to the disk, and how the cache is kept from filling).
 *
 * The metadata is rewritten (to a temporary file, then renamed) whenever
 * event classes were added, before any packet using them is written, and
 * at the end with the refined clock: a reader never sees a packet its
 * metadata cannot describe, even if the daemon is killed, nor a metadata
 * file cut short by a full disk (the rename happens only once the new one
 * is whole; appending declarations in place could not replace the clock
 * at the end, and a write cut short would leave half a declaration). A
 * packet whose metadata cannot be written is not written, and its events
 * are counted as lost writing.
 *
 * Until the end, the metadata's env says shimtrace_state = "recording";
 * the final one says "complete", and how many events were lost writing
 * and why, so that readers can tell a trace that is not whole. Space is
 * set aside at the start (tracefile.h) so that the final metadata and the
 * packets that count the losses can be written on a full disk.
 *
 * Owns: each session's trace: its directory, metadata, stream files, and
 *       the ids of the classes it declared.
 * Thread: the daemon's, the reactor's one thread; what it hands the file
 *         writer is then the writer's (tracefile.c).
 * Calls: base, out.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/creds.h"
#include "ctl/daemon/base/limits.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/packet.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/out/tracedir.h"
#include "ctl/daemon/out/tracefile.h"

/* the metadata is written here first, then renamed */
#define META_TMP ".metadata.tmp"
#define LIVE_TMP ".metadata.live.tmp"
#define BUF_ALIGN 4096u

/* Makes s safe inside a TSDL string literal. */
static void tsdl_safe(char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '_';
}

/* Fails now, not after the program ran, if the owner cannot write into
 * the directory. */
static int probe(struct st_trace *t, char *err, size_t errlen)
{
	int fd = st_tracedir_create(t->where.fd, ".shimtrace-probe", 0, t->umask);

	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot write into %s: %s", t->dir, strerror(e));
		return -e;
	}
	close(fd);
	unlinkat(t->where.fd, ".shimtrace-probe", 0);
	return 0;
}

/* The part of opening a trace that is not its directory. */
static int trace_init(struct st_trace *t, const char *name, uid_t owner, gid_t owner_gid,
		      mode_t mask, struct st_evreg *reg, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->where.fd = t->where.parent = -1;
	t->reg = reg;
	t->owner = owner;
	t->owner_gid = owner_gid;
	t->umask = mask & 0777;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "shimtrace");
	tsdl_safe(t->name);
	/* the daemon's own classes, under the ids it writes them with */
	for (uint32_t i = 0; i < ST_EV_BUILTIN_COUNT; i++)
		if (st_trace_class_id(t, reg->v[i], 0) != (int32_t)i) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	if (getrandom(t->uuid, sizeof(t->uuid), 0) != sizeof(t->uuid)) {
		snprintf(err, errlen, "no random bytes for the trace uuid");
		return -EIO;
	}
	t->uuid[6] = (t->uuid[6] & 0x0f) | 0x40;
	t->uuid[8] = (t->uuid[8] & 0x3f) | 0x80;
	snprintf(t->uuid_str, sizeof(t->uuid_str),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", t->uuid[0],
		 t->uuid[1], t->uuid[2], t->uuid[3], t->uuid[4], t->uuid[5], t->uuid[6], t->uuid[7],
		 t->uuid[8], t->uuid[9], t->uuid[10], t->uuid[11], t->uuid[12], t->uuid[13],
		 t->uuid[14], t->uuid[15]);
	return 0;
}

int st_trace_open(struct st_trace *t, const char *dir, const char *name, uid_t owner,
		  gid_t owner_gid, mode_t mask, struct st_evreg *reg, char *err, size_t errlen)
{
	struct st_tracedir_owner o = { .umask = mask & 0777 };
	struct st_creds creds;
	int ret = trace_init(t, name, owner, owner_gid, mask, reg, err, errlen);

	st_creds_owner(owner, owner_gid, &o.uid, &o.gid);
	if (ret == 0)
		ret = st_creds_become(owner, owner_gid, &creds);
	if (ret == 0) {
		ret = st_tracedir_open(&t->where, dir, &o, err, errlen);
		if (ret == 0) {
			st_tracedir_path(t->where.fd, t->dir, sizeof(t->dir), dir);
			ret = probe(t, err, errlen);
		}
		st_creds_restore(&creds);
	}
	if (ret < 0)
		st_trace_close(t);
	return ret;
}

int st_trace_open_snapshot(struct st_trace *t, const struct st_trace *of, uint32_t *n,
			   char *err, size_t errlen)
{
	struct st_tracedir_owner o = { .umask = of->umask };
	char name[NAME_MAX + 32]; /* (one too long is refused) */
	struct st_creds creds;
	uint32_t k = *n;
	int ret = trace_init(t, of->name, of->owner, of->owner_gid, of->umask, of->reg, err, errlen);

	memcpy(t->rules, of->rules, sizeof(t->rules));
	st_creds_owner(of->owner, of->owner_gid, &o.uid, &o.gid);
	if (ret == 0 && of->where.parent < 0) {
		snprintf(err, errlen, "the session has no trace directory");
		ret = -EINVAL;
	}
	if (ret == 0)
		ret = st_creds_become(of->owner, of->owner_gid, &creds);
	if (ret == 0) {
		/* a name someone else took (anything there: a link too) is passed by */
		ret = -EEXIST;
		while (ret == -EEXIST && k < *n + 1000) {
			snprintf(name, sizeof(name), "%s-snapshot-%u", of->where.name, ++k);
			ret = st_tracedir_make(&t->where, of->where.parent, name, &o, err, errlen);
		}
		if (ret == -EEXIST)
			snprintf(err, errlen, "no free name for a snapshot beside %s (up to %s)",
				 of->dir, name);
		if (ret == 0) {
			st_tracedir_path(t->where.fd, t->dir, sizeof(t->dir), name);
			ret = probe(t, err, errlen);
		}
		st_creds_restore(&creds);
	}
	if (ret < 0) {
		st_trace_close(t);
		return ret;
	}
	*n = k;
	return 0;
}

bool st_trace_remove_unused(struct st_trace *t)
{
	struct st_creds creds;
	bool removed = false;

	if (!t->where.made)
		return false;
	/* as the owner, who could have removed it: rmdir, so only if empty */
	if (st_creds_become(t->owner, t->owner_gid, &creds) == 0)
		removed = st_tracedir_remove(&t->where);
	st_creds_restore(&creds);
	return removed;
}

/* Counts one more class declared for uid's processes, within its quota:
 * the classes a trace holds stay until it is closed, so a user whose
 * processes come and go must not fill another's trace. */
static bool charge(struct st_trace *t, uid_t uid)
{
	struct st_evclass_user *u = st_uid_count(&t->declared, &t->ndeclared, uid);

	if (!u || u->n >= st_quota_limit(ST_Q_CLASSES))
		return false;
	u->n++;
	return true;
}

int32_t st_trace_class_id(struct st_trace *t, struct st_evclass *c, uid_t uid)
{
	uint32_t id;

	if (c->id < t->id_of_cap && t->id_of[c->id])
		return (int32_t)t->id_of[c->id] - 1;
	if (t->nclasses >= INT32_MAX)
		return -1;
	if (c->id >= ST_EV_BUILTIN_COUNT && !charge(t, uid))
		return -1;
	if (c->id >= t->id_of_cap) {
		uint32_t cap = t->id_of_cap ? t->id_of_cap : 64;
		uint32_t *v;

		while (cap <= c->id)
			cap *= 2;
		v = realloc(t->id_of, cap * sizeof(*v));
		if (!v)
			return -1;
		memset(v + t->id_of_cap, 0, (cap - t->id_of_cap) * sizeof(*v));
		t->id_of = v;
		t->id_of_cap = cap;
	}
	if (t->nclasses == t->classes_cap) {
		uint32_t cap = t->classes_cap ? t->classes_cap * 2 : 64;
		struct st_evclass **v = realloc(t->classes, cap * sizeof(*v));

		if (!v)
			return -1;
		t->classes = v;
		t->classes_cap = cap;
	}
	id = t->nclasses++;
	t->classes[id] = c;
	t->id_of[c->id] = id + 1;
	st_evclass_ref(c);
	return (int32_t)id;
}

/* What a metadata file says of the trace besides its classes. */
struct meta_head {
	uint64_t freq, offset;
	int64_t offset_s;
	char host[256], date[32];
	const char *state;	/* shimtrace_state */
	bool lost;		/* says what was lost writing */
	char rules[ST_TRACE_RULES_SIZE]; /* shimtrace_rules, when not "" */
};

/* The head of t's metadata now. Its clock is the one its last metadata
 * declared, but in the final metadata (once the session stops: the clock
 * as clk has it then, refined): a reader following the trace as it is
 * written (shimtrace top) would otherwise see its times move by the
 * sampling's jitter at every rewrite. */
static void head_now(struct st_trace *t, const struct st_clock *clk, struct meta_head *h)
{
	time_t now = time(NULL);
	struct tm tm;

	memset(h, 0, sizeof(*h));
	snprintf(h->host, sizeof(h->host), "unknown");
	gethostname(h->host, sizeof(h->host) - 1);
	tsdl_safe(h->host);
	if (localtime_r(&now, &tm))
		strftime(h->date, sizeof(h->date), "%Y%m%dT%H%M%S%z", &tm);
	if (t->finished || !t->ctf_clock.freq)
		st_clock_ctf(clk, &t->ctf_clock.freq, &t->ctf_clock.offset_s, &t->ctf_clock.offset);
	h->freq = t->ctf_clock.freq;
	h->offset_s = t->ctf_clock.offset_s;
	h->offset = t->ctf_clock.offset;
	h->state = t->finished ? "complete" : "recording";
	snprintf(h->rules, sizeof(h->rules), "%s", t->rules);
	h->lost = t->finished && t->write_lost;
}

static void write_metadata(FILE *f, const struct st_trace *t, const struct meta_head *h,
			   const struct st_clock *clk)
{
	fprintf(f, "/* CTF 1.8 */\n\n");
	fprintf(f, "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		   "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		   "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		   "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
		   "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
		   "typealias integer { size = 64; align = 8; signed = false; } := size_t;\n"
		   "typealias floating_point { exp_dig = 11; mant_dig = 53; byte_order = le; "
		   "align = 8; } := double;\n\n");
	fprintf(f,
		"trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
		"\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t};\n};\n\n",
		t->uuid_str);
	fprintf(f,
		"env {\n\thostname = \"%s\";\n\tdomain = \"ust\";\n\ttracer_name = \"shimtrace\";\n"
		"\ttracer_major = %d;\n\ttracer_minor = %d;\n\ttrace_name = \"%s\";\n"
		"\ttrace_creation_datetime = \"%s\";\n\tclock_source = \"%s\";\n",
		h->host, 0, 1, t->name, h->date, clk->kind == ST_CLOCK_TSC ? "tsc" : "monotonic");
	fprintf(f, "\tshimtrace_state = \"%s\";\n", h->state);
	if (h->rules[0])
		fprintf(f, "\tshimtrace_rules = \"%s\";\n", h->rules);
	if (h->lost)
		fprintf(f, "\tshimtrace_events_lost_writing = %llu;\n\tshimtrace_write_error = \"%s\";\n",
			(unsigned long long)t->write_lost, strerror(t->write_err));
	fprintf(f, "};\n\n");
	fprintf(f,
		"clock {\n\tname = \"shimtrace\";\n\tdescription = \"%s\";\n\tfreq = %llu;\n"
		"\toffset_s = %lld;\n\toffset = %llu;\n\tprecision = 0;\n\tabsolute = true;\n};\n\n",
		clk->kind == ST_CLOCK_TSC ? "TSC (constant, non-stop), calibrated" : "CLOCK_MONOTONIC",
		(unsigned long long)h->freq, (long long)h->offset_s, (unsigned long long)h->offset);
	fprintf(f, "typealias integer { size = 64; align = 8; signed = false; "
		   "map = clock.shimtrace.value; } := uint64_clock_t;\n"
		   "typealias integer { size = 16; align = 8; signed = false; "
		   "map = clock.shimtrace.value; } := uint16_clock_t;\n\n");
	/* The compact header: see ctl/daemon/wire/record.h, doc/internals.md. */
	fprintf(f, "stream {\n\tid = 0;\n"
		   "\tpacket.context := struct {\n\t\tuint64_clock_t timestamp_begin;\n"
		   "\t\tuint64_clock_t timestamp_end;\n\t\tuint64_t content_size;\n"
		   "\t\tuint64_t packet_size;\n\t\tuint64_t packet_seq_num;\n"
		   "\t\tuint64_t events_discarded;\n\t\tint32_t pid;\n\t\tint32_t tid;\n\t};\n"
		   "\tevent.header := struct {\n"
		   "\t\tenum : uint8_t { compact = 0 ... 254, extended = 255 } id;\n"
		   "\t\tvariant <id> {\n"
		   "\t\t\tstruct { uint16_clock_t timestamp; } compact;\n"
		   "\t\t\tstruct { uint32_t id; uint64_clock_t timestamp; } extended;\n"
		   "\t\t} v;\n\t};\n"
		   "\tevent.context := struct {\n"
		   "\t\tint32_t _vpid;\n"
		   "\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _ip;\n"
		   "\t};\n};\n\n");
	for (uint32_t i = 0; i < t->nclasses; i++) {
		char decl[4096], *big = NULL;
		size_t n = st_class_decl(decl, sizeof(decl), t->classes[i], i);

		if (n >= sizeof(decl) && (big = malloc(n + 1)))
			st_class_decl(big, n + 1, t->classes[i], i);
		fputs(big ? big : decl, f);
		free(big);
	}
}

/* Logs a failed metadata write, once per trace (one the caller asked for
 * with force, the caller reports). */
static int meta_failed(struct st_trace *t, bool force, const char *path, int e)
{
	if (!t->meta_logged && !force)
		st_log(ST_LOG_ERR, "cannot write %s: %s (events it would describe are counted as "
				   "lost)", path, strerror(e));
	t->meta_logged |= !force;
	/* (not tried again for every packet of a full disk) */
	t->meta_retry_ms = st_now_ms() + 100;
	return -e;
}

/* A new temporary file tmp for a metadata file (one a failed write left
 * is replaced: nobody else may write in the directory); a stream on it. */
static FILE *meta_tmp(struct st_trace *t, const char *tmp)
{
	int fd = st_tracedir_create(t->where.fd, tmp, 0, t->umask);
	FILE *f;

	if (fd < 0 && errno == EEXIST && unlinkat(t->where.fd, tmp, 0) == 0)
		fd = st_tracedir_create(t->where.fd, tmp, 0, t->umask);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		int e = errno;

		close(fd);
		unlinkat(t->where.fd, tmp, 0);
		errno = e;
	}
	return f;
}

/* Writes the metadata file name, whole, through tmp (as the owner): 0,
 * or an errno; the path of what failed in path. */
static int meta_write(struct st_trace *t, const char *name, const char *tmp,
		      const struct meta_head *h, const struct st_clock *clk, char *path, size_t n)
{
	FILE *f = meta_tmp(t, tmp);
	int e = 0;

	snprintf(path, n, "%s/%s", t->dir, tmp);
	if (!f)
		return errno;
	write_metadata(f, t, h, clk);
	if (fflush(f) != 0 || ferror(f))
		e = errno ? errno : EIO;
	if (fclose(f) != 0 && !e)
		e = errno;
	snprintf(path, n, "%s/%s", t->dir, name);
	if (!e && renameat(t->where.fd, tmp, t->where.fd, name) < 0)
		e = errno;
	if (e)
		unlinkat(t->where.fd, tmp, 0);
	return e;
}

int st_trace_metadata(struct st_trace *t, const struct st_clock *clk, bool force)
{
	char path[ST_PATH_MAX + 32];
	struct meta_head h;
	struct st_creds creds;
	int e;

	t->clk = clk;
	if (t->where.fd < 0 || (!force && t->classes_written == t->nclasses))
		return 0;
	if (!force && st_now_ms() < t->meta_retry_ms)
		return -EAGAIN;
	if (st_creds_become(t->owner, t->owner_gid, &creds) < 0)
		return -EPERM;
	head_now(t, clk, &h);
	e = meta_write(t, "metadata", META_TMP, &h, clk, path, sizeof(path));
	if (!e && t->live) {
		/* the first head stays: this file only grows (see trace.h) */
		if (!t->live_head) {
			t->live_head = malloc(sizeof(*t->live_head));
			if (!t->live_head)
				e = ENOMEM;
			else {
				*t->live_head = h;
				t->live_head->state = ST_TRACE_STREAMED;
				t->live_head->lost = false;
			}
		}
		if (!e)
			e = meta_write(t, ST_TRACE_LIVE_META, LIVE_TMP, t->live_head, clk, path,
				       sizeof(path));
	}
	st_creds_restore(&creds);
	if (e)
		return meta_failed(t, force, path, e);
	t->classes_written = t->nclasses;
	t->meta_retry_ms = 0;
	return 0;
}

void st_trace_reserve(struct st_trace *t)
{
	struct st_creds creds;

	/* room for the final metadata (about as large as the one written
	 * first, plus the classes still to come) and for stream trailers */
	if (t->where.fd < 0 || t->wloss.reserved ||
	    st_creds_become(t->owner, t->owner_gid, &creds) < 0)
		return;
	st_tracefile_reserve(&t->wloss, t->where.fd, 256u << 10);
	st_creds_restore(&creds);
}

int st_trace_finish(struct st_trace *t, const struct st_clock *clk)
{
	int ret;

	st_tracefile_sync();
	t->write_lost = st_tracefile_lost_total(&t->wloss, &t->write_err);
	if (t->write_lost)
		st_tracefile_release(&t->wloss);
	t->finished = true;
	ret = st_trace_metadata(t, clk, true);
	if (ret < 0)
		st_log(ST_LOG_ERR, "cannot write the final metadata of %s: %s (it says the trace is "
				   "not complete)", t->dir, strerror(-ret));
	return ret;
}

int st_stream_open(struct st_trace *t, struct st_stream *s, const char *fname, int32_t pid,
		   uint64_t owner)
{
	struct st_file *f = calloc(1, sizeof(*f));
	struct st_creds creds;

	memset(s, 0, sizeof(*s));
	if (!f)
		return -ENOMEM;
	f->loss = &t->wloss;
	f->owner = owner;
	st_creds_become(t->owner, t->owner_gid, &creds);
	f->fd = st_tracedir_create(t->where.fd, fname, O_APPEND, t->umask);
	st_creds_restore(&creds);
	if (f->fd < 0) {
		int e = errno;

		st_log(ST_LOG_ERR, "cannot create %s/%s: %s", t->dir, fname, strerror(e));
		free(f);
		return -e;
	}
	s->file = f;
	s->trace = t;
	s->instance_id = t->next_instance++;
	s->pid = pid;
	s->tid = pid; /* until the consumer says whose records follow */
	s->owner = owner;
	return 0;
}

/* Room in front of a packet's records: its header, and the header of an
 * empty packet that may open the stream (seal_packet). */
#define PACKET_ROOM (2 * sizeof(struct packet_prefix))

uint8_t *st_packet_buf(uint64_t len)
{
	uint8_t *p = st_tracefile_buf(PACKET_ROOM + len);

	return p ? p + PACKET_ROOM : NULL;
}

uint8_t *st_packet_more(struct st_stream *s, uint64_t *cap)
{
	uint64_t room;
	uint8_t *p = s->file && s->seq_num ? st_tracefile_more(s->file, &room) : NULL;

	if (!p || room <= sizeof(struct packet_prefix))
		return NULL;
	*cap = room - sizeof(struct packet_prefix);
	return p + sizeof(struct packet_prefix);
}

void st_packet_prepare(uint64_t len)
{
	st_tracefile_prepare(PACKET_ROOM + len);
}

/* Writes the header of a packet of len bytes of records at `at`, number
 * seq in the stream. */
static void put_header(struct st_trace *t, const struct st_stream *s, uint8_t *at, uint64_t len,
		       uint64_t ts_begin, uint64_t ts_end, uint64_t discarded, uint64_t seq)
{
	struct packet_prefix h;
	uint64_t content = sizeof(h) + len;

	memset(&h, 0, sizeof(h));
	h.magic = CTF_MAGIC;
	memcpy(h.uuid, t->uuid, sizeof(h.uuid));
	h.stream_id = 0;
	h.stream_instance_id = s->instance_id;
	h.timestamp_begin = ts_begin;
	h.timestamp_end = ts_end;
	h.content_size = content * 8;
	h.packet_size = content * 8;
	h.packet_seq_num = seq;
	h.events_discarded = discarded;
	h.pid = s->pid;
	h.tid = s->tid;
	memcpy(at, &h, sizeof(h));
}

/* Where a sealed packet's bytes start in its buffer, how many, and its
 * events_discarded's offset from the start; the lead, bytes before start
 * (st_tracefile_queue). */
struct sealed {
	uint64_t start, len, disc_off, lead;
};

/*
 * Puts the header in front of the records of a packet. A reader counts
 * the events a packet says were discarded from the count of the packet
 * before it in the stream, so the first packet's count would not be said
 * (babeltrace2: "may have discarded events"): a stream whose first packet
 * declares losses opens with an empty packet that declares none, at the
 * first packet's start. A later packet in a buffer of its own has such a
 * packet in front too, numbered just before it, as its lead: written only
 * if its file is still empty then (every packet before it could not be
 * written: a full disk).
 */
static struct sealed seal_packet(struct st_trace *t, struct st_stream *s, uint8_t *records,
				 uint64_t len, uint64_t ts_begin, uint64_t ts_end, uint64_t discarded)
{
	const uint64_t hdr = sizeof(struct packet_prefix);
	/* (from the start of the buffer: after the packets it holds, for a
	 * packet from st_packet_more) */
	struct sealed out = { .start = (uint64_t)(records - hdr - st_tracefile_base()),
			      .len = hdr + len,
			      .disc_off = offsetof(struct packet_prefix, events_discarded) };

	discarded += s->wlost;
	/* (never one from st_packet_more: the stream has a packet) */
	if (s->seq_num == 0 && discarded) {
		put_header(t, s, records - PACKET_ROOM, 0, ts_begin, ts_begin, 0, s->seq_num++);
		out.start -= hdr;
		out.len += hdr;
		out.disc_off += hdr;
	} else if (s->seq_num > 0 && out.start == PACKET_ROOM - hdr) {
		/* (a buffer of its own: st_packet_buf's room in front) */
		put_header(t, s, records - PACKET_ROOM, 0, ts_begin, ts_begin, 0, s->seq_num - 1);
		out.lead = hdr;
	}
	put_header(t, s, records - hdr, len, ts_begin, ts_end, discarded, s->seq_num++);
	s->wlost_unsaid = false;
	return out;
}

int st_stream_packet(struct st_trace *t, struct st_stream *s, uint8_t *records, uint64_t len,
		     uint64_t events, uint64_t ts_begin, uint64_t ts_end, uint64_t discarded)
{
	struct sealed sealed;
	int ret = -EIO;

	st_stream_packet_bounds(s, &ts_begin, &ts_end, &discarded);
	if (s->file && !__atomic_load_n(&s->file->failed, __ATOMIC_RELAXED) && t->clk)
		ret = st_trace_metadata(t, t->clk, false);
	if (ret < 0) {
		/* not queued: said by the stream's next packet, or its trailer */
		s->wlost += events;
		s->wlost_unsaid = true;
		st_tracefile_lost(&t->wloss, s->owner, events, ret == -EAGAIN ? ENOSPC : -ret);
		return -EIO;
	}
	sealed = seal_packet(t, s, records, len, ts_begin, ts_end, discarded);
	st_tracefile_queue(s->file, sealed.lead, sealed.start, sealed.len, events, sealed.disc_off);
	s->last_ts = ts_end;
	s->discarded = discarded;
	return 0;
}

void st_stream_close(struct st_stream *s)
{
	uint8_t *buf;

	if (!s->file)
		return;
	/* the trailer: written if what was lost writing is not said yet */
	buf = st_packet_buf(0);
	if (buf) {
		bool force = s->wlost_unsaid;
		struct sealed sealed = seal_packet(s->trace, s, buf, 0, s->last_ts, s->last_ts,
						   s->discarded);

		st_tracefile_queue_trailer(s->file, sealed.lead, sealed.start, sealed.len,
					   sealed.disc_off, force);
	}
	st_tracefile_close(s->file);
	s->file = NULL;
}

void st_trace_close(struct st_trace *t)
{
	/* (queued writes may count their losses in t->wloss) */
	st_tracefile_sync();
	st_tracefile_release(&t->wloss);
	free(t->wloss.owners);
	t->wloss.owners = NULL;
	t->wloss.nowners = t->wloss.cap = 0;
	st_tracedir_close(&t->where);
	for (uint32_t i = 0; i < t->nclasses; i++)
		st_evclass_unref(t->reg, t->classes[i]);
	free(t->classes);
	free(t->id_of);
	free(t->declared);
	free(t->live_head);
	t->live_head = NULL;
	t->classes = NULL;
	t->id_of = NULL;
	t->declared = NULL;
	t->nclasses = t->classes_cap = t->id_of_cap = t->ndeclared = 0;
}
