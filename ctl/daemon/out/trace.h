/*
 * CTF output (trace.c): a trace directory, its metadata and its stream
 * files, each packet queued to the file writer (tracefile.h).
 */
#ifndef ST_DAEMON_OUT_TRACE_H
#define ST_DAEMON_OUT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/limits.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/tracedir.h"
#include "ctl/daemon/out/tracefile.h"

struct st_trace;
struct meta_head;

/*
 * A trace streamed live (to a relay daemon: relaylive.h) has, beside its
 * metadata, this one, which only ever grows: a live reader appends what
 * it receives, and cannot be told to start over with a better clock. Its
 * head (clock, date, env) is the one of the first metadata written, and
 * its state says ST_TRACE_STREAMED; new classes are appended to it. A
 * dotfile: readers of the directory see only `metadata`.
 */
#define ST_TRACE_LIVE_META ".metadata.live"
#define ST_TRACE_STREAMED "streamed"

struct st_stream {
	struct st_file *file;	/* NULL once closed (see tracefile.h) */
	struct st_trace *trace;
	uint64_t instance_id;
	uint64_t seq_num;	/* packet_seq_num of the next packet */
	uint64_t last_ts;	/* timestamps never go back in a stream */
	uint64_t discarded;	/* events_discarded (the buffer's losses) last */
	/* events of packets that could not even be queued (their metadata
	 * could not be written), and whether a packet queued since says so */
	uint64_t wlost;
	bool wlost_unsaid;
	uint64_t owner;		/* the process instance whose events it holds */
	int32_t pid;
	int32_t tid;		/* of the records of its next packet */
};

#define ST_TRACE_RULES_SIZE 2048

struct st_trace {
	char dir[ST_PATH_MAX];	/* for messages: files are reached from where.fd */
	uint8_t uuid[16];
	char uuid_str[37];
	/* The classes this trace declares, by CTF event id (the builtins
	 * first); it holds a reference on each. */
	struct st_evreg *reg;
	struct st_evclass **classes;
	uint32_t nclasses, classes_cap;
	uint32_t *id_of;	  /* by registry id: CTF event id + 1, 0 if none */
	uint32_t id_of_cap;
	/* classes declared for each uid's processes: at most their quota */
	struct st_evclass_user *declared;
	uint32_t ndeclared;
	uint32_t classes_written; /* event classes in the metadata on disk */
	uint64_t next_instance;
	char name[64];
	/* its directory (the descriptor of the one holding it too, for
	 * snapshots beside it); where.fd is -1 without a directory */
	struct st_tracedir where;
	uid_t owner;		/* files are given to the session's owner */
	gid_t owner_gid;
	mode_t umask;		/* the owner's, for the modes of its files */
	/* Writing it: what was lost (tracefile.h); the metadata says so once
	 * final (st_trace_finish), and until then that it is not. */
	struct st_wloss wloss;
	const struct st_clock *clk; /* of its last metadata */
	struct {
		uint64_t freq, offset;
		int64_t offset_s;
	} ctf_clock;		/* what its last metadata declared (freq 0: none yet) */
	bool live;		/* writes ST_TRACE_LIVE_META too (set before the first) */
	struct meta_head *live_head; /* its head, once written */
	bool finished;
	uint64_t write_lost;	/* as of the final metadata */
	int write_err;
	uint64_t meta_retry_ms; /* a failed metadata write is tried again then */
	bool meta_logged;
	/* What the session asked, for the metadata's env (shimtrace_rules):
	 * its rules' patterns in order, a disabling one after a '!',
	 * space-separated; "" when unknown (too long, or a pattern with a
	 * character the env cannot hold). Its owner sets it. */
	char rules[ST_TRACE_RULES_SIZE];
};

/* Creates the trace directory dir, or takes an empty one of the owner's,
 * with the owner's filesystem rights (tracedir.h says the rules); its
 * files get mode 0666 & ~mask, its directories 0777 & ~mask. */
int st_trace_open(struct st_trace *t, const char *dir, const char *name, uid_t owner,
		  gid_t owner_gid, mode_t mask, struct st_evreg *reg, char *err, size_t errlen);
/* A trace of of's owner in a new directory beside of's, named after it
 * "-snapshot-N": N is *n + 1, or the next free number (at most 1000
 * tried), and becomes *n. */
int st_trace_open_snapshot(struct st_trace *t, const struct st_trace *of, uint32_t *n,
			   char *err, size_t errlen);
/* The CTF event id of class c in t, declared now if new for a process of
 * uid; -1 when the trace has no id left (65,535), no memory, or uid has
 * had as many classes declared in it as its classes quota. */
int32_t st_trace_class_id(struct st_trace *t, struct st_evclass *c, uid_t uid);
/* Writes the metadata if classes were declared since (or force): to a
 * temporary file, renamed over the old one, so that it is always whole. */
int st_trace_metadata(struct st_trace *t, const struct st_clock *clk, bool force);
/* Sets space aside for writing what is lost when the disk is full. */
void st_trace_reserve(struct st_trace *t);
/* Once every packet is queued and its stream closed: waits for the
 * writes, and writes the final metadata, which says what was lost
 * writing (the space set aside is given for it). */
int st_trace_finish(struct st_trace *t, const struct st_clock *clk);
/* Opens a stream file for the events of process instance owner. */
int st_stream_open(struct st_trace *t, struct st_stream *s, const char *fname, int32_t pid,
		   uint64_t owner);
/*
 * A buffer for the records of one packet, len bytes: the packet header goes
 * in front of it, so a packet is written with a single write. Valid until
 * the next call.
 */
uint8_t *st_packet_buf(uint64_t len);
/*
 * Room for the records of stream s's next packet right after its packet
 * just appended, in the same buffer: *cap bytes; NULL if there is none (a
 * packet of many threads' buffers per CPU holds a few events of each, and
 * its packets are written together).
 */
uint8_t *st_packet_more(struct st_stream *s, uint64_t *cap);
/* Makes the packet buffers hold len bytes of records, resident, now. */
void st_packet_prepare(uint64_t len);
/*
 * Appends one packet holding `len` bytes of validated records at `records`
 * (from st_packet_buf), `events` of them, ts_begin..ts_end, once the
 * metadata describes them; `discarded` is the stream's cumulative count of
 * events its buffer lost (events lost writing are added to it). A packet
 * that cannot be queued is counted as lost writing (-EIO).
 */
int st_stream_packet(struct st_trace *t, struct st_stream *s, uint8_t *records, uint64_t len,
		     uint64_t events, uint64_t ts_begin, uint64_t ts_end, uint64_t discarded);
/* What st_stream_packet makes of a packet's times and count, so that
 * neither goes back in the stream (a packet of records comes with times
 * that need nothing: the consumer clamps them). */
static inline void st_stream_packet_bounds(const struct st_stream *s, uint64_t *ts_begin,
					   uint64_t *ts_end, uint64_t *discarded)
{
	if (*ts_begin < s->last_ts)
		*ts_begin = s->last_ts;
	if (*ts_end < *ts_begin)
		*ts_end = *ts_begin;
	if (*discarded < s->discarded)
		*discarded = s->discarded;
}
/* Counts n events of the stream lost (the test mode's: testlose.c): its
 * next packet, or its trailer, says so. */
static inline void st_stream_lost(struct st_stream *s, uint64_t n)
{
	s->wlost += n;
	s->wlost_unsaid = true;
}
/* Closes the stream, after a last packet of no events if the ones written
 * do not say all it lost writing. */
void st_stream_close(struct st_stream *s);
void st_trace_close(struct st_trace *t);
/* Removes t's directory if st_trace_open created it and it is empty (the
 * caller knows nothing was written: a session never started); true if
 * removed. */
bool st_trace_remove_unused(struct st_trace *t);

#endif
