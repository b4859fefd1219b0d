/*
 * A trace followed as it is written and streamed to an lttng-relayd (see
 * relaylive.h for what it promises).
 *
 * One thread per streamed session follows its trace directory every
 * 100 ms: the live metadata first (trace.h: it only grows, and a packet
 * reaches its file only after the metadata that describes it), then each
 * stream file's whole packets, read where the daemon wrote them (a file's
 * bytes below its size are written: a packet whose end is not there yet
 * waits for the next turn). A stream is added to the relay with its first
 * whole packet: a live viewer waits for a stream that has none.
 *
 * A live viewer learns of a stream added after it attached only from the
 * answer to its next look at a stream it knows, when that one has a new
 * packet (lttng-relayd 2.13, live.c): a stream of a process that started
 * later, or a buffer's first flush, would stay unseen while the streams
 * it knows are idle. So each relay session has a stream of ours first,
 * SYNC_STREAM, which gets a packet of no events (the trace's uuid and
 * stream class, no pid) whenever streams were added, dated as its
 * beacons are (below): never before what a viewer already merged.
 *
 * The metadata's new bytes are sent as they come, each part after the
 * first behind CTF_SIGNATURE.
 *
 * Every live period: DATA_PENDING asks the relay whether each stream's
 * packets are written (what is said written is never sent again), and a
 * stream with no packet since says, with a beacon, that it has nothing
 * before two seconds ago (the daemon flushes buffers every second: a
 * packet may reach the file that long after its events), so that a live
 * viewer merging the streams goes on past an idle one.
 *
 * The thread takes the session owner's file system rights for good
 * (setfsuid is per thread): it opens what is in a directory the owner
 * can write, so it must not read through it what the owner could not.
 * Files are opened without following links and without blocking (a fifo
 * put there), and only regular files are read; a file that does not hold
 * shimtrace's packets is left at its first bad one.
 *
 * Owns: the relay sessions of a streamed trace, its follower thread, and
 *       what it sent and lost.
 * Thread: its own, one per streamed trace; the owner's calls take its lock.
 * Calls: base, wire.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl/daemon/base/creds.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/out/packet.h"
#include "ctl/daemon/out/relaylive.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/wire/relayd.h"

#define TRACE_PATH "trace"	      /* the streams' directory in the relay session */
#define TURN_MS 100		      /* between looks at the directory */
#define RETRY_MS 1000		      /* between tries to reach the relay */
#define TIMEOUT_MS 3000		      /* a relay that does not answer is lost */
#define MAX_STREAMS 4096
#define INDEX_SLOTS (2 * MAX_STREAMS) /* never more than half full */
#define MAX_PACKET (64ull << 20)      /* a larger one is not ours */
#define MAX_META (64u << 20)
#define TURN_BYTES (64ull << 20)      /* sent in one turn at most */
#define BEACON_LAG_S 2
#define SYNC_STREAM "relay-sync"
/* in front of each part of the metadata sent after the first: a live
 * viewer (babeltrace2's lttng-live) takes each as a plain-text metadata
 * stream of its own, which must start so; elsewhere it is a comment */
#define CTF_SIGNATURE "/* CTF 1.8 */\n"

struct rl_stream {
	char name[256];
	uint64_t off;	    /* where the next packet to send starts */
	uint64_t said_off;  /* where the packets the relay said written end */
	uint64_t size;	    /* of its file, last seen */
	bool added;	    /* to the current relay session */
	uint64_t handle;
	uint64_t sent;	    /* packets sent in the current relay session */
	uint64_t said;	    /* of those, said written */
	uint64_t said_bytes;
	uint64_t sent_bytes;
	uint64_t last_ts;   /* timestamp_end of its last packet sent */
	bool fresh;	    /* a packet since the last beacon */
	bool bad;	    /* not shimtrace's from off on: left */
};

struct st_relaylive {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* the owner's, under lock */
	bool ending, released;
	uint64_t end_by_ms;
	/* under lock: what st_relaylive_stats copies */
	struct st_relaylive_stats st;
	/* the thread's */
	struct st_relay_url url;
	char session[64], host[256];
	int dirfd;
	uid_t owner;
	gid_t gid;
	struct st_clock clk;
	uint32_t live_us;
	struct st_relayd r;
	bool connected;
	uint64_t retry_ms, period_ms;
	struct rl_stream *streams;
	uint32_t nstreams;
	uint32_t index[INDEX_SLOTS]; /* of streams by name: their number + 1 */
	struct timespec dir_mtime;   /* of the directory when last looked at */
	uint64_t scan_ms;	     /* looked at again then, changed or not */
	bool too_many;
	uint8_t *meta;	    /* the metadata sent to this relay session */
	size_t meta_len;
	uint64_t meta_handle;
	uint8_t uuid[16];   /* the trace's, from its metadata */
	bool have_uuid;
	struct rl_stream sync; /* SYNC_STREAM (sent and last_ts are used) */
};

/* -------------------------------------------------------------- stats */

static void stats_update(struct st_relaylive *rl, void (*fn)(struct st_relaylive *, void *),
			 void *arg)
{
	pthread_mutex_lock(&rl->lock);
	fn(rl, arg);
	pthread_mutex_unlock(&rl->lock);
}

static void set_connected(struct st_relaylive *rl, void *arg)
{
	rl->st.connected = arg != NULL;
	if (arg) {
		rl->st.sessions++;
		snprintf(rl->st.path, sizeof(rl->st.path), "%s/%s", rl->r.path, TRACE_PATH);
	} else
		snprintf(rl->st.err, sizeof(rl->st.err), "%s", rl->r.err);
}

static void set_pending(struct st_relaylive *rl, void *arg)
{
	(void)arg;
	rl->st.pending = 0;
	for (uint32_t i = 0; i < rl->nstreams; i++)
		if (!rl->streams[i].bad)
			rl->st.pending += rl->streams[i].size - rl->streams[i].said_off;
}

/* ------------------------------------------------------------ reading */

/* Stream file name, opened to read (a regular file: not followed, not
 * waited on), its size in *size: the descriptor, or -1. */
static int open_stream(struct st_relaylive *rl, const char *name, uint64_t *size)
{
	int fd = openat(rl->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* The slot of name in the streams' index: where it is, or the empty
 * slot where it goes. */
static uint32_t *slot_of(struct st_relaylive *rl, const char *name)
{
	uint32_t h = 2166136261u;

	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	for (;; h++) {
		uint32_t *slot = &rl->index[h % INDEX_SLOTS];

		if (!*slot || strcmp(rl->streams[*slot - 1].name, name) == 0)
			return slot;
	}
}

/* New stream files of the directory join the list: a look when the
 * directory changed (the files of a trace are many, its changes few), and
 * every second (a file made within the time's grain of the last look
 * leaves it as it was). */
static void scan(struct st_relaylive *rl)
{
	struct stat st;
	int fd;
	DIR *d;
	struct dirent *e;

	if (fstat(rl->dirfd, &st) < 0)
		return;
	if (st.st_mtim.tv_sec == rl->dir_mtime.tv_sec && st.st_mtim.tv_nsec == rl->dir_mtime.tv_nsec &&
	    st_now_ms() < rl->scan_ms)
		return;
	rl->scan_ms = st_now_ms() + 1000;
	fd = dup(rl->dirfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rl->dir_mtime = st.st_mtim;
	rewinddir(d);
	while ((e = readdir(d))) {
		uint32_t *slot;

		if (e->d_name[0] == '.' || strcmp(e->d_name, "metadata") == 0 ||
		    (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) ||
		    strlen(e->d_name) >= sizeof(rl->streams[0].name))
			continue;
		if (rl->nstreams == MAX_STREAMS) {
			if (!rl->too_many)
				st_log(ST_LOG_WARN, "relay session %s: more than %d streams: the others "
						    "are not sent", rl->session, MAX_STREAMS);
			rl->too_many = true;
			break;
		}
		slot = slot_of(rl, e->d_name);
		if (*slot)
			continue;
		memset(&rl->streams[rl->nstreams], 0, sizeof(rl->streams[0]));
		snprintf(rl->streams[rl->nstreams].name, sizeof(rl->streams[0].name), "%s", e->d_name);
		*slot = ++rl->nstreams;
	}
	closedir(d);
}

/* The packet at s->off of its file fd, checked, its length in *len: 1, 0
 * (not whole yet), -1 (not a packet of ours: the stream is left). */
static int next_packet(struct st_relaylive *rl, struct rl_stream *s, int fd,
		       struct packet_prefix *p, uint64_t *len)
{
	if (s->bad || s->off + sizeof(*p) > s->size ||
	    pread(fd, p, sizeof(*p), (off_t)s->off) != (ssize_t)sizeof(*p))
		return 0;
	*len = p->packet_size / 8;
	if (p->magic != CTF_MAGIC || p->packet_size % 8 || *len < sizeof(*p) || *len > MAX_PACKET ||
	    p->content_size > p->packet_size) {
		st_log(ST_LOG_WARN, "relay session %s: %s holds no packet of shimtrace's at offset "
				    "%llu: the rest of it is not sent", rl->session, s->name,
		       (unsigned long long)s->off);
		s->bad = true;
		return -1;
	}
	return s->off + *len <= s->size ? 1 : 0;
}

/* ------------------------------------------------------------ sending */

/* The relay failed: what it did not say written is sent again to the
 * next one. */
static void lose(struct st_relaylive *rl)
{
	st_log(ST_LOG_WARN, "relay session %s: the relay daemon at %s is lost (%s): trying again "
			    "every second",
	       rl->session, rl->url.host, rl->r.err);
	st_relayd_close(&rl->r);
	rl->connected = false;
	rl->retry_ms = st_now_ms() + RETRY_MS;
	for (uint32_t i = 0; i < rl->nstreams; i++) {
		struct rl_stream *s = &rl->streams[i];

		s->off = s->said_off;
		s->added = false;
		s->sent = s->said = s->sent_bytes = s->said_bytes = 0;
	}
	rl->meta_len = 0;
	rl->sync.added = false;
	rl->sync.sent = 0;
	stats_update(rl, set_connected, NULL);
}

static void relay_connect(struct st_relaylive *rl)
{
	uint32_t sessions;

	rl->retry_ms = st_now_ms() + RETRY_MS;
	if (st_relayd_connect(&rl->r, &rl->url, TIMEOUT_MS) < 0 ||
	    st_relayd_create_session(&rl->r, rl->session, rl->host, rl->live_us) < 0 ||
	    st_relayd_add_stream(&rl->r, "metadata", TRACE_PATH, &rl->meta_handle) < 0 ||
	    st_relayd_streams_sent(&rl->r) < 0) {
		st_relayd_close(&rl->r);
		pthread_mutex_lock(&rl->lock);
		snprintf(rl->st.err, sizeof(rl->st.err), "%s", rl->r.err);
		pthread_mutex_unlock(&rl->lock);
		return;
	}
	rl->connected = true;
	pthread_mutex_lock(&rl->lock);
	sessions = rl->st.sessions;
	pthread_mutex_unlock(&rl->lock);
	if (sessions)
		st_log(ST_LOG_WARN, "relay session %s: the relay daemon at %s is back: streaming "
				    "again, to %s",
		       rl->session, rl->url.host, rl->r.path);
	stats_update(rl, set_connected, rl);
}

/* The trace uuid its metadata declares (uuid = "..."), into u: whether
 * found. */
static bool uuid_of(const uint8_t *meta, size_t len, uint8_t u[16])
{
	static const char key[] = "uuid = \"";
	const uint8_t *p = memmem(meta, len, key, sizeof(key) - 1);
	size_t at, k = 0;

	if (!p)
		return false;
	at = (size_t)(p - meta) + sizeof(key) - 1;
	for (size_t i = at; i < len && meta[i] != '"' && k < 32; i++) {
		int v = meta[i] >= '0' && meta[i] <= '9'   ? meta[i] - '0'
			: meta[i] >= 'a' && meta[i] <= 'f' ? meta[i] - 'a' + 10
			: meta[i] == '-'		   ? -2
							   : -1;

		if (v == -1)
			return false;
		if (v == -2)
			continue;
		u[k / 2] = (uint8_t)(k % 2 ? u[k / 2] | v : v << 4);
		k++;
	}
	return k == 32;
}

/* The beacons' time: nothing older can come any more. */
static uint64_t settled(const struct st_relaylive *rl)
{
	uint64_t now = st_clock_now(&rl->clk), lag = BEACON_LAG_S * rl->clk.freq;

	return now > lag ? now - lag : 0;
}

/* A packet of no events on SYNC_STREAM (added with its first): 0, or -1. */
static int sync_packet(struct st_relaylive *rl)
{
	struct rl_stream *s = &rl->sync;
	/* (a stream instance id no stream of the trace has, and positive as
	 * a signed one, which is how a viewer takes it) */
	struct packet_prefix p = { .magic = CTF_MAGIC, .stream_instance_id = INT64_MAX };
	struct st_relayd_index ix;
	uint64_t ts = settled(rl);

	if (!rl->have_uuid)
		return 0;
	if (ts < s->last_ts)
		ts = s->last_ts;
	if (!s->added) {
		if (st_relayd_add_stream(&rl->r, SYNC_STREAM, TRACE_PATH, &s->handle) < 0 ||
		    st_relayd_streams_sent(&rl->r) < 0)
			return -1;
		s->added = true;
	}
	memcpy(p.uuid, rl->uuid, sizeof(p.uuid));
	p.timestamp_begin = p.timestamp_end = ts;
	p.content_size = p.packet_size = 8 * sizeof(p);
	p.packet_seq_num = s->off++; /* (its packets, over every relay session) */
	ix = (struct st_relayd_index){ .packet_size = sizeof(p), .content_size = sizeof(p),
				       .timestamp_begin = ts, .timestamp_end = ts,
				       .stream_instance_id = p.stream_instance_id,
				       .packet_seq_num = p.packet_seq_num };
	if (st_relayd_send_packet(&rl->r, s->handle, s->sent, &p, sizeof(p), &ix) < 0)
		return -1;
	s->sent++;
	s->last_ts = ts;
	s->fresh = true;
	return 0;
}

/* The live metadata's new bytes: 0, or -1 (the relay failed). */
static int send_meta(struct st_relaylive *rl)
{
	uint64_t size;
	int fd = open_stream(rl, ST_TRACE_LIVE_META, &size);
	uint8_t *b = NULL;
	bool whole;

	if (fd < 0)
		return 0;
	whole = size > rl->meta_len && size <= MAX_META && (b = malloc(size)) &&
		pread(fd, b, size, 0) == (ssize_t)size &&
		(!rl->meta_len || memcmp(b, rl->meta, rl->meta_len) == 0);
	close(fd);
	if (!whole) {
		/* (nothing new, or not only grown: a rename in between) */
		free(b);
		return 0;
	}
	if ((rl->meta_len && st_relayd_send_metadata(&rl->r, rl->meta_handle, CTF_SIGNATURE,
						     sizeof(CTF_SIGNATURE) - 1) < 0) ||
	    st_relayd_send_metadata(&rl->r, rl->meta_handle, b + rl->meta_len,
				    (uint64_t)size - rl->meta_len) < 0) {
		free(b);
		return -1;
	}
	free(rl->meta);
	rl->meta = b;
	rl->meta_len = (size_t)size;
	if (!rl->have_uuid)
		rl->have_uuid = uuid_of(b, rl->meta_len, rl->uuid);
	return 0;
}

/* Sends s's whole packets, *budget bytes at most: 0, or -1 (the relay
 * failed). */
static int send_stream(struct st_relaylive *rl, struct rl_stream *s, uint64_t *budget)
{
	struct packet_prefix p;
	uint64_t len;
	int fd = s->bad ? -1 : open_stream(rl, s->name, &s->size), ret = 0;

	if (fd < 0)
		return 0;
	while (*budget && next_packet(rl, s, fd, &p, &len) == 1) {
		struct st_relayd_index ix = {
			.packet_size = len,
			.content_size = p.content_size / 8,
			.timestamp_begin = p.timestamp_begin,
			.timestamp_end = p.timestamp_end,
			.events_discarded = p.events_discarded,
			.stream_id = p.stream_id,
			.stream_instance_id = p.stream_instance_id,
			.packet_seq_num = p.packet_seq_num,
		};

		if (!s->added) {
			if (st_relayd_add_stream(&rl->r, s->name, TRACE_PATH, &s->handle) < 0 ||
			    st_relayd_streams_sent(&rl->r) < 0) {
				ret = -1;
				break;
			}
			s->added = true;
		}
		if (st_relayd_send_packet_file(&rl->r, s->handle, s->sent, fd, s->off, len, &ix) < 0) {
			ret = -1;
			break;
		}
		s->sent++;
		s->sent_bytes += len;
		s->off += len;
		s->last_ts = p.timestamp_end;
		s->fresh = true;
		*budget = *budget > len ? *budget - len : 0;
	}
	close(fd);
	return ret;
}

struct said {
	uint64_t packets, bytes;
};

static void add_said(struct st_relaylive *rl, void *arg)
{
	struct said *n = arg;

	rl->st.packets += n->packets;
	rl->st.bytes += n->bytes;
}

/* Asks whether each stream's packets sent are written: 0, or -1. */
static int confirm(struct st_relaylive *rl)
{
	struct said n = { 0, 0 };

	for (uint32_t i = 0; i < rl->nstreams; i++) {
		struct rl_stream *s = &rl->streams[i];
		int w;

		if (s->said == s->sent)
			continue;
		w = st_relayd_written(&rl->r, s->handle, s->sent - 1);
		if (w < 0)
			return -1;
		if (w) {
			n.packets += s->sent - s->said;
			n.bytes += s->sent_bytes - s->said_bytes;
			s->said = s->sent;
			s->said_bytes = s->sent_bytes;
			s->said_off = s->off;
		}
	}
	stats_update(rl, add_said, &n);
	return 0;
}

/* An idle stream says it has nothing older than BEACON_LAG_S: 0, or -1. */
static int beacon(struct st_relaylive *rl, struct rl_stream *s, uint64_t ts)
{
	if (s->fresh || !s->sent || ts <= s->last_ts) {
		s->fresh = false;
		return 0;
	}
	s->last_ts = ts;
	return st_relayd_beacon(&rl->r, s->handle, s->sent - 1, 0, ts);
}

/* (each stream's a clock tick apart: a viewer cannot order the same
 * inactivity of two streams, and says so) */
static int beacons(struct st_relaylive *rl)
{
	uint64_t ts = settled(rl);

	for (uint32_t i = 0; i < rl->nstreams && ts > i + 1; i++)
		if (beacon(rl, &rl->streams[i], ts - i - 1) < 0)
			return -1;
	return beacon(rl, &rl->sync, ts);
}

/* One turn, connected: 0, or -1 (the relay failed). Whether every whole
 * packet is sent in *caught_up. */
static int pump(struct st_relaylive *rl, bool *caught_up)
{
	uint64_t budget = TURN_BYTES;

	uint32_t added = 0;

	scan(rl);
	if (send_meta(rl) < 0)
		return -1;
	/* (before any other: a viewer attached since sees it) */
	if (!rl->sync.added && sync_packet(rl) < 0)
		return -1;
	for (uint32_t i = 0; i < rl->nstreams; i++) {
		bool was = rl->streams[i].added;

		if (send_stream(rl, &rl->streams[i], &budget) < 0)
			return -1;
		added += !was && rl->streams[i].added;
	}
	if (added && sync_packet(rl) < 0)
		return -1;
	*caught_up = budget > 0;
	if (st_now_ms() >= rl->period_ms) {
		rl->period_ms = st_now_ms() + rl->live_us / 1000;
		if (confirm(rl) < 0 || beacons(rl) < 0)
			return -1;
	}
	stats_update(rl, set_pending, NULL);
	return 0;
}

/* -------------------------------------------------------------- ending */

/* Every packet sent is said written (up to the deadline): 0, or -1. */
static int drain(struct st_relaylive *rl, uint64_t by_ms)
{
	bool all;

	do {
		if (confirm(rl) < 0)
			return -1;
		all = true;
		for (uint32_t i = 0; i < rl->nstreams; i++)
			all &= rl->streams[i].said == rl->streams[i].sent;
		if (!all)
			usleep(10000);
	} while (!all && st_now_ms() < by_ms);
	if (!all)
		snprintf(rl->r.err, sizeof(rl->r.err), "the relay daemon did not write the last "
						       "packets in time");
	return all ? 0 : -1;
}

static int close_all(struct st_relaylive *rl)
{
	for (uint32_t i = 0; i < rl->nstreams; i++)
		if (rl->streams[i].added &&
		    st_relayd_close_stream(&rl->r, rl->streams[i].handle, rl->streams[i].sent - 1) < 0)
			return -1;
	if (rl->sync.added && st_relayd_close_stream(&rl->r, rl->sync.handle, rl->sync.sent - 1) < 0)
		return -1;
	return st_relayd_close_stream(&rl->r, rl->meta_handle, UINT64_MAX);
}

/* The end: what no relay said written is lost; their number. */
static uint64_t count_lost(struct st_relaylive *rl)
{
	uint64_t lost = 0;

	for (uint32_t i = 0; i < rl->nstreams; i++) {
		struct rl_stream *s = &rl->streams[i];
		struct packet_prefix p;
		uint64_t len;
		int fd = open_stream(rl, s->name, &s->size);

		s->off = s->said_off;
		while (fd >= 0 && next_packet(rl, s, fd, &p, &len) == 1) {
			s->off += len;
			lost++;
		}
		if (fd >= 0)
			close(fd);
		s->said_off = s->size; /* (nothing pending: it is counted) */
	}
	if (lost)
		st_log(ST_LOG_WARN, "relay session %s: %llu packet%s lost sending to the relay daemon "
				    "(the local copy has %s)",
		       rl->session, (unsigned long long)lost, lost == 1 ? "" : "s",
		       lost == 1 ? "it" : "them");
	return lost;
}

static void free_rl(struct st_relaylive *rl)
{
	close(rl->dirfd);
	free(rl->streams);
	free(rl->meta);
	pthread_mutex_destroy(&rl->lock);
	pthread_cond_destroy(&rl->cond);
	free(rl);
}

/* When a turn from now ends, for pthread_cond_timedwait. */
static void next_turn(struct timespec *until)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_nsec += TURN_MS * 1000000L;
	if (until->tv_nsec >= 1000000000L) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000L;
	}
}

static void *run(void *arg)
{
	struct st_relaylive *rl = arg;
	struct st_creds creds;
	uint64_t lost;
	bool free_it;

	sigset_t pipe;

	/* for good: this thread reads only the owner's trace */
	st_creds_become(rl->owner, rl->gid, &creds);
	/* a relay gone is an error of sendfile here, not a signal to the
	 * process (which may be `record`, which takes SIGPIPE) */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	for (;;) {
		struct timespec until;
		bool ending, caught_up = false;
		uint64_t end_by;

		pthread_mutex_lock(&rl->lock);
		ending = rl->ending;
		end_by = rl->end_by_ms;
		pthread_mutex_unlock(&rl->lock);
		if (!rl->connected && st_now_ms() >= rl->retry_ms)
			relay_connect(rl);
		if (rl->connected && pump(rl, &caught_up) < 0)
			lose(rl);
		if (ending && rl->connected && caught_up) {
			if (drain(rl, st_now_ms() + TIMEOUT_MS) == 0 && close_all(rl) == 0)
				break;
			lose(rl);
		}
		if (ending && !rl->connected && st_now_ms() >= end_by)
			break;
		if (caught_up || !rl->connected) {
			next_turn(&until);
			pthread_mutex_lock(&rl->lock);
			if (rl->ending == ending)
				pthread_cond_timedwait(&rl->cond, &rl->lock, &until);
			pthread_mutex_unlock(&rl->lock);
		}
	}
	st_relayd_close(&rl->r);
	lost = count_lost(rl);
	/* (done and released in one look: whoever sees the other frees it) */
	pthread_mutex_lock(&rl->lock);
	rl->st.lost += lost;
	set_pending(rl, NULL);
	rl->st.connected = false;
	rl->st.done = true;
	free_it = rl->released;
	pthread_cond_broadcast(&rl->cond);
	pthread_mutex_unlock(&rl->lock);
	if (free_it)
		free_rl(rl);
	return NULL;
}

/* ---------------------------------------------------------- the owner */

struct st_relaylive *st_relaylive_start(const struct st_relay_url *u, const char *session,
					int dirfd, uid_t owner, gid_t gid, const struct st_clock *clk,
					uint32_t live_us)
{
	struct st_relaylive *rl = calloc(1, sizeof(*rl));
	pthread_attr_t attr;
	int ret;

	if (!rl)
		return NULL;
	rl->streams = calloc(MAX_STREAMS, sizeof(*rl->streams));
	rl->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (!rl->streams || rl->dirfd < 0) {
		if (rl->dirfd >= 0)
			close(rl->dirfd);
		free(rl->streams);
		free(rl);
		return NULL;
	}
	rl->url = *u;
	snprintf(rl->session, sizeof(rl->session), "%s", session);
	if (gethostname(rl->host, sizeof(rl->host) - 1) < 0 || !rl->host[0])
		snprintf(rl->host, sizeof(rl->host), "localhost");
	rl->owner = owner;
	rl->gid = gid;
	rl->clk = *clk;
	rl->live_us = live_us ? live_us : 1000000;
	rl->r.ctrl = rl->r.data = -1;
	pthread_mutex_init(&rl->lock, NULL);
	pthread_cond_init(&rl->cond, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&rl->thread, &attr, run, rl);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		close(rl->dirfd);
		free(rl->streams);
		free(rl);
		return NULL;
	}
	return rl;
}

void st_relaylive_stats(struct st_relaylive *rl, struct st_relaylive_stats *out)
{
	pthread_mutex_lock(&rl->lock);
	*out = rl->st;
	pthread_mutex_unlock(&rl->lock);
}

void st_relaylive_end(struct st_relaylive *rl, uint32_t wait_ms)
{
	pthread_mutex_lock(&rl->lock);
	if (!rl->ending) {
		rl->ending = true;
		rl->end_by_ms = st_now_ms() + wait_ms;
	}
	pthread_cond_broadcast(&rl->cond);
	pthread_mutex_unlock(&rl->lock);
}

bool st_relaylive_wait(struct st_relaylive *rl, uint32_t ms)
{
	uint64_t by = st_now_ms() + ms;
	bool done;

	pthread_mutex_lock(&rl->lock);
	while (!rl->st.done && st_now_ms() < by) {
		struct timespec until;

		next_turn(&until);
		pthread_cond_timedwait(&rl->cond, &rl->lock, &until);
	}
	done = rl->st.done;
	pthread_mutex_unlock(&rl->lock);
	return done;
}

void st_relaylive_release(struct st_relaylive *rl)
{
	bool done;

	if (!rl)
		return;
	pthread_mutex_lock(&rl->lock);
	rl->released = true;
	done = rl->st.done;
	pthread_mutex_unlock(&rl->lock);
	if (done)
		free_rl(rl); /* (else its thread does) */
}
