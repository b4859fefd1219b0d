/*
 * The session daemon: registration of traced processes, sessions, the
 * consumer that drains their buffers, and the CTF trace writer.
 *
 * One code base serves the system or per-user daemon (shimtraced) and the
 * private instance `shimtrace record` runs in its own process. Everything
 * runs on one thread around an epoll loop; nothing here is shared with
 * another thread, so nothing takes a lock.
 *
 * Nothing that comes from a traced process is trusted: messages are parsed
 * by msg.c with every length checked, shared memory is read with every
 * count, offset and sequence number checked, and records are validated in a
 * private copy before they reach a trace file.
 */
#ifndef ST_DAEMON_H
#define ST_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <shimtrace/tracepoint.h>

#include "core/abi.h"
#include "ctl/common/checks.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/wire/ring.h"
#include "ctl/daemon/out/tracedir.h"
#include "ctl/daemon/out/tracefile.h"

#define ST_PATH_MAX 4096

/* Field type only the daemon writes: a byte sequence (u64 length, bytes). */
#define ST_TYPE_BYTES 100

/* ---- event classes (evclass.c) ---- */

struct st_evfield {
	char name[ST_ABI_NAME_MAX];
	uint32_t type;
};

/* A count for one uid: processes of the uid holding a class (st_evclass),
 * classes declared for the uid's processes (st_trace). */
struct st_evclass_user {
	uid_t uid;
	uint32_t n;
};

struct st_evclass {
	uint32_t id; /* in the registry: internal, never written anywhere */
	char provider[ST_ABI_NAME_MAX];
	char name[ST_ABI_NAME_MAX];
	uint32_t nfields;
	struct st_evfield *fields;
	int32_t fixed_size;  /* payload bytes when every field is fixed, else -1 */
	uint32_t decl_bytes; /* of its metadata declaration, at most */
	uint32_t refs;	     /* processes and traces holding it */
	struct st_evclass_user *users;
	uint32_t nusers;
	uint32_t hash;
	struct st_evclass *hnext;
};

struct st_evreg {
	struct st_evclass **v; /* by id; NULL where freed */
	uint32_t n, cap, live;
	uint32_t *free_ids;
	uint32_t nfree, free_cap;
	struct st_evclass **hash; /* by provider:name */
	uint32_t hsize;
};

/* Ids of the classes the daemon writes itself: the same in every trace. */
enum st_builtin_class {
	ST_EV_STATEDUMP_START,
	ST_EV_STATEDUMP_BIN_INFO,
	ST_EV_STATEDUMP_BUILD_ID,
	ST_EV_STATEDUMP_DEBUG_LINK,
	ST_EV_STATEDUMP_END,
	ST_EV_LIB_LOAD,
	ST_EV_LIB_BUILD_ID,
	ST_EV_LIB_DEBUG_LINK,
	ST_EV_LIB_UNLOAD,
	ST_EV_PROCESS,
	ST_EV_PROCESS_END,
	ST_EV_BUILTIN_COUNT
};

int st_evreg_init(struct st_evreg *r);
void st_evreg_free(struct st_evreg *r);
/* The class with this name and these fields, or NULL. */
struct st_evclass *st_evreg_find(const struct st_evreg *r, const char *provider, const char *name,
				 const struct st_evfield *fields, uint32_t nfields);
/* The same, created (with no reference) if new; NULL when out of memory. */
struct st_evclass *st_evreg_intern(struct st_evreg *r, const char *provider, const char *name,
				   const struct st_evfield *fields, uint32_t nfields);
const struct st_evclass *st_evreg_get(const struct st_evreg *r, uint32_t id);
void st_evclass_ref(struct st_evclass *c);
/* Drops a reference; the last one frees the class. */
void st_evclass_unref(struct st_evreg *r, struct st_evclass *c);
/* Counts one more (less) process of uid holding c; true when c is new to
 * (gone from) uid. */
bool st_evclass_user_add(struct st_evclass *c, uid_t uid);
bool st_evclass_user_del(struct st_evclass *c, uid_t uid);
bool st_evclass_used_by(const struct st_evclass *c, uid_t uid);
/* uid's count in the list v of n: found, or appended at 0 (NULL: out of
 * memory). */
struct st_evclass_user *st_uid_count(struct st_evclass_user **v, uint32_t *n, uid_t uid);
/*
 * Copies the fields of a record of class c from src (at most avail bytes,
 * memory the process may change meanwhile) to dst and checks the copy;
 * their size, or -1 if they do not fit or a string is unterminated or too
 * long.
 */
int64_t st_evclass_payload_copy(const struct st_evclass *c, const uint8_t *src, uint64_t avail,
				uint8_t *dst);

/* ---- messages from processes (msg.c): pure parsers, fuzzed ---- */

struct st_msg_tracepoint {
	uint32_t slot;
	char name[ST_ABI_NAME_MAX];
	uint32_t nfields;
	struct st_evfield fields[255];
};

struct st_msg_provider {
	uint32_t page;
	char name[ST_ABI_NAME_MAX];
	uint32_t count;
	struct st_msg_tracepoint *tps; /* count entries, caller frees */
};

struct st_msg_hello {
	int32_t ppid;
	uint32_t status_size;
	char name[17];
	char exe[ST_PATH_MAX];
};

/* Each returns 0, or -1 and sets err (a short reason). */
int st_msg_check(const void *buf, size_t len, uint32_t *type, const char **err);
int st_msg_parse_hello(const void *buf, size_t len, struct st_msg_hello *out, const char **err);
int st_msg_parse_provider(const void *buf, size_t len, struct st_msg_provider *out,
			  const char **err);
bool st_name_valid(const char *s);

/* ---- clock (clock.c) ---- */

struct st_clock {
	uint32_t kind; /* enum st_abi_clock */
	/* calibration samples: (cycles, CLOCK_MONOTONIC ns) */
	uint64_t cal0_tsc, cal0_ns, cal1_tsc, cal1_ns;
	uint64_t freq; /* Hz */
	uint64_t ns_mult;
	uint32_t ns_shift;
};

enum st_clock_choice { ST_CLOCK_AUTO = 0 };

/* Chooses (choice: 0 auto, or an enum st_abi_clock) and calibrates. */
int st_clock_init(struct st_clock *c, uint32_t choice, char *err, size_t errlen);
/* Improves the TSC frequency estimate with the time elapsed since init. */
void st_clock_refine(struct st_clock *c);
/* CTF clock description: freq, and the offset putting cycle 0 at its
 * wall-clock time (offset_s seconds + offset cycles). */
void st_clock_ctf(const struct st_clock *c, uint64_t *freq, int64_t *offset_s, uint64_t *offset);
/* CLOCK_MONOTONIC in ms: the clock the daemon's deadlines and waits count in. */
uint64_t st_now_ms(void);
uint64_t st_clock_now(const struct st_clock *c);
/*
 * The latest time a process's record, read at now, may say: what it wrote
 * is in the past, give or take the clocks of two CPUs, so a tenth of a
 * second later is beyond any honest record (see doc/internals.md, Trace
 * format: times are clamped, the bound of every time in a trace).
 */
static inline uint64_t st_clock_latest(const struct st_clock *c, uint64_t now)
{
	return now + c->freq / 10;
}
bool st_clock_tsc_usable(void);

/* ---- trace output (trace.c) ---- */

struct st_trace;

struct st_stream {
	struct st_file *file;	/* NULL once closed (see writer.h) */
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
	/* Writing it: what was lost (writer.h); the metadata says so once
	 * final (st_trace_finish), and until then that it is not. */
	struct st_wloss wloss;
	const struct st_clock *clk; /* of its last metadata */
	bool finished;
	uint64_t write_lost;	/* as of the final metadata */
	int write_err;
	uint64_t meta_retry_ms; /* a failed metadata write is tried again then */
	bool meta_logged;
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
/* The metadata declaration of class c under event id; like snprintf. */
size_t st_class_decl(char *buf, size_t cap, const struct st_evclass *c, uint32_t id);
/* Opens a stream file for the events of process instance owner. */
int st_stream_open(struct st_trace *t, struct st_stream *s, const char *fname, int32_t pid,
		   uint64_t owner);
/*
 * A buffer for the records of one packet, len bytes: the packet header goes
 * in front of it, so a packet is written with a single write. Valid until
 * the next call.
 */
uint8_t *st_packet_buf(uint64_t len);
/* len bytes of private memory, resident, and not inherited by children
 * (resident.c); NULL if out of memory. */
void *st_resident_alloc(uint64_t len);
void st_resident_free(void *p, uint64_t len);
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
/* Closes the stream, after a last packet of no events if the ones written
 * do not say all it lost writing. */
void st_stream_close(struct st_stream *s);
void st_trace_close(struct st_trace *t);
/* Removes t's directory if st_trace_open created it and it is empty (the
 * caller knows nothing was written: a session never started); true if
 * removed. */
bool st_trace_remove_unused(struct st_trace *t);

/* ---- sessions (session.c) ---- */

/*
 * An enable or disable rule of a session. It applies to the tracepoints
 * whose provider:name its glob matches, in the processes its filters
 * select (every filter given must hold; none given: every process,
 * including those started later). The last rule that applies decides.
 */
struct st_rule {
	bool enable;
	char pattern[2 * ST_ABI_NAME_MAX + 2];
	pid_t pids[ST_RULE_MAX_PIDS];
	uint32_t npids;	 /* 0: any process */
	char procname[17]; /* "": any name; else the comm or the exe's basename */
	bool has_uid;
	uid_t uid;
	bool matched; /* an enabling rule that selected a tracepoint of some process */
};

/*
 * Why events were lost: the counters of core/abi.h, which call for
 * different remedies (st_loss_kinds has their names and hints).
 */
enum st_loss {
	ST_LOSS_FULL,	     /* discard mode: the thread's buffer was full */
	ST_LOSS_OVERWRITTEN, /* overwrite mode: older events written over */
	ST_LOSS_NO_BUFFER,   /* the thread found no free buffer (process-memory) */
	ST_LOSS_NO_MEMORY,   /* its buffer was beyond the grant (max-memory) */
	ST_LOSS_NESTED,	     /* a signal handler interrupted an event's write */
	ST_LOSS_WRITING,     /* the trace could not be written (disk full...) */
	ST_LOSS_KINDS,
};

struct st_loss_kind {
	const char *name; /* "buffer full" */
	const char *key;  /* JSON: "full" */
	const char *hint; /* what keeps them, or why nothing does */
};
extern const struct st_loss_kind st_loss_kinds[ST_LOSS_KINDS];

struct st_session_stats {
	uint64_t instance;
	pid_t pid, ppid;
	char name[17];
	uint64_t events;	/* taken from its buffers, not lost writing */
	uint64_t lost;		/* by its buffers: the sum of lost_by */
	uint64_t lost_by[ST_LOSS_KINDS]; /* (ST_LOSS_WRITING stays 0: write_lost) */
	uint64_t write_lost;	/* taken, then not written */
	uint64_t corrupt_bytes;
	bool ended;
};

enum st_session_state {
	ST_SESSION_CREATED, /* never started */
	ST_SESSION_STARTED,
	ST_SESSION_STOPPED,
};

struct st_session {
	struct st_session *next; /* the daemon's sessions, oldest first */
	/* Its bit in the enable masks, and the slot of its state in a
	 * process's control page: unique among the sessions that may trace
	 * one uid's processes (root's, which trace every user, and that
	 * uid's own), so that every user may have sessions of their own
	 * (st_session_at). */
	uint32_t index;
	uint32_t generation; /* unique across sessions and daemons */
	char name[64];
	uid_t owner;	    /* who created it: only they (and root) see it */
	gid_t owner_gid;
	bool all_users;	    /* traces every user's processes (root's sessions) */
	enum st_session_state state;
	uint32_t mode, sb_size, sb_count;
	uint32_t nslots;	 /* thread buffers of a process's share (its pool) */
	uint32_t block_ms;	 /* --blocking: 0 not, else abi.h's st_abi_session */
	uint64_t buffer_size;
	uint64_t max_memory;	 /* the bound of all its processes (= mem.bound) */
	uint64_t process_memory; /* a process's share */
	uint64_t slot_bytes;	 /* of one thread buffer, its header included */
	struct st_rule *rules;
	uint32_t nrules;
	bool active;	    /* started: enable bits are set */
	struct st_trace trace;
	uint32_t snapshots; /* the number of the last one taken */
	uint32_t runs;	    /* starts so far: names the stream files of each */
	uint64_t created;   /* creation order: the latest is a user's default */
	struct st_session_stats *stats;
	uint32_t nstats, stats_cap;
	struct st_membound mem;		/* memory.c */
	struct st_memory_counts memc;
	uint64_t committed_now;		/* memory.c's scratch, while it samples */
};

struct st_session_config {
	const char *name;
	const char *outdir;
	uint32_t mode;
	uint64_t buffer_size; /* per thread; 0: chosen (st_geometry, ctl/common/checks.h) */
	uint64_t subbuf_size; /* 0: chosen */
	uint64_t max_memory;	 /* all its processes; 0: chosen (st_memory_bounds) */
	uint64_t process_memory; /* one process; 0: chosen */
	uint32_t block_ms;	 /* --blocking: 0 not, 1 to ST_BLOCK_MAX_MS, or
				  * ST_ABI_BLOCK_FOREVER (ctl/common/checks.h) */
	uid_t owner;
	gid_t owner_gid;
	mode_t umask;	 /* the owner's: the modes of its trace (tracedir.h) */
	bool all_users;
};

/* ---- processes (proc.c) ---- */

/* A tracepoint of a provider: its slot in the provider's state page and
 * the process's event id of its class. */
struct st_proc_tp {
	uint32_t slot;
	uint32_t local;
};

struct st_proc_provider {
	uint32_t page;
	char name[ST_ABI_NAME_MAX];
	struct st_provider_state *map;
	struct st_proc_tp *tps;
	uint32_t count;
};

/* Overwrite mode: a sub-buffer a drain emitted (events of it, of sequence
 * seq), while the ring may still hold it. */
struct st_taken {
	uint64_t seq, events;
};

/* Where a run of ring records is read: the time of the record before it
 * (a compact timestamp's base) and the thread whose records follow. */
struct st_ring_pos {
	uint64_t ts;
	int32_t tid;
};

struct st_slot_state {
	/* What to emit next; overwrite mode: the last sub-buffer emitted and
	 * the bytes of it emitted (the producer may add to it in a next run). */
	struct st_ring_cursor cur;
	/* and what is known there (see st_ring_pos) */
	struct st_ring_pos pos;
	struct st_stream stream;
	bool has_stream;
	/* A slot lives through the runs of its session (stop, start): */
	uint64_t lost_said;	/* losses the streams of earlier runs declared */
	struct st_taken *taken; /* overwrite mode: by index, sb_count */
	uint64_t retaken;	/* emitted, then counted overwritten by the producer */
	uint64_t *in_place;	/* discard mode: by index, a bit set when the
				 * sub-buffer is read in place (consumer.c) */
};

struct st_proc_pool {
	struct st_ring ring; /* base NULL: none mapped */
	uint32_t generation;
	struct st_slot_state *slots;
	struct st_stream meta; /* the daemon's own events for this process */
	bool has_meta;
	uint32_t late_streams;	/* more, for events dated before meta's (consumer.c) */
	uint64_t lost_reported;	/* lost_no_buffer as meta last said */
	uint64_t meta_lost_said; /* of it, what the meta streams of earlier runs said */
};

struct st_lines;

struct st_object {
	uint64_t base, memsz;
	char *path;
	uint8_t build_id[64];
	uint32_t build_id_len;
	char *debug_link;
	uint32_t crc;
	bool is_pic;
	struct st_lines *lines; /* its line table (linecache.c), or NULL */
};

struct st_callsites;
struct st_user;

struct st_proc {
	struct st_proc *next;
	struct st_daemon *d;
	uint64_t instance;
	int fd, pidfd;
	struct st_watch fd_watch, pidfd_watch; /* its connection, its pidfd */
	pid_t pid, ppid;
	uid_t uid;
	gid_t gid;
	char name[17];
	char exe[ST_PATH_MAX];
	bool hello, ended;
	bool discovered;      /* not connected: found running (discover.c), or its
			       * connection closed while it runs */
	/* Taking an offered pool (pickup.c) */
	bool pickup_pending;
	uint32_t pickup_session, pickup_gen;
	uint32_t pickup_tried[ST_ABI_MAX_SESSIONS]; /* generation asked for */
	uint64_t reglog_pos;  /* bytes of its registration log taken in */
	int status_fd;
	uint64_t status_size;
	struct st_abi_control *control;
	struct st_proc_provider **provs;
	uint32_t nprovs;
	/* Its event ids: the id a record of this process carries is an index
	 * in cls; ids_by_class maps a class's registry id back (open
	 * addressing, id + 1, 0 empty), so a class keeps one id. */
	struct st_evclass **cls;
	uint32_t ncls, cls_cap;
	uint32_t *ids_by_class;
	uint32_t ids_size;
	uint32_t registrations; /* tracepoints its providers hold now */
	struct st_user *user;	/* its owner's quota account */
	bool counts_connection, counts_process;
	struct st_proc_pool pools[ST_ABI_MAX_SESSIONS];
	/* When each session was last switched on for it: none of its events
	 * in that session is older */
	uint64_t traced_since[ST_ABI_MAX_SESSIONS];
	struct st_object *objs;
	uint32_t nobjs;
	uint64_t statedump_ts;
	uint64_t maps_ts;	/* when objs became what it is */
	uint64_t maps_changed_ts; /* when the process last said its mappings changed */
	bool statedump_done;
	/* Reading its objects (maps.c): through the owner's inspector. */
	bool objs_pending;	/* a request is out */
	bool objs_again;	/* the mappings changed again meanwhile */
	uint64_t objs_again_ts;	/* first of those changes */
	bool apply_pending;	/* new_objs waits for line tables (maps.c) */
	bool refresh_objects;	/* to be read again (a line table's file was lost) */
	uint32_t objs_kind;	/* what the request is for (enum st_abi_maps_kind) */
	uint64_t objs_ts;
	struct st_object *new_objs; /* as they arrive */
	struct st_owner *objs_owner; /* whose inspector the request went to */
	uint32_t new_nobjs;
	uint64_t ready_owed;	/* READY owed once the objects are in (a SYNC's seq) */
	uint64_t wait_until;	/* ms: consumption waits for objects till then */
	bool lines_waiting;	/* its events wait for line tables (consumer.c) */
	uint64_t lines_wait_since; /* ms */
	bool end_deferred;	/* it ended while waiting: finished when it stops */
	bool end_now;		/* the daemon stops: no waiting any more */
	/* How it ended (procend.c): its end is known to be its death (decided
	 * once, when st_proc_end is first called). */
	bool end_decided, gone;
	uint32_t late_said; /* its control page's late_answers, as last logged */
	struct st_callsites *callsites; /* callsite.c's cache */
	char warned[8]; /* one-time warnings already logged */
	struct st_grant grants[ST_ABI_MAX_SESSIONS]; /* its buffer memory (memory.c) */
	bool over_memory; /* its pools hold more than its grants: refused (memory.c) */
};

/* ---- the daemon (loop.c) ---- */

struct st_daemon_config {
	const char *rundir;	/* where the socket lives */
	uint32_t clock;		/* 0: auto */
	bool foreground;
	bool private_instance;	/* started by `shimtrace record` */
	int log_level;
	const char *group;	/* who may send commands (default ST_GROUP) */
	uint64_t max_memory;	/* all sessions' buffers; 0: st_default_max_memory() */
};

/* News the daemon's modules tell the modules above them (st_loop_news),
 * which the wiring (loop.c) subscribes to. */
enum st_news {
	ST_NEWS_LINES,	 /* a line table came, or will not (linecache.c) */
	ST_NEWS_OBJECTS, /* a process's objects came, or will not (maps.c) */
	ST_NEWS_POOL,	 /* a pool offered was taken, or could not be (pickup.c) */
};

/* The daemon's tick: drains, heartbeats, deadlines (loop.c); writers
 * waiting for room count on its heartbeat (core/abi.h). */
#define ST_TICK_MS ST_ABI_HEARTBEAT_MS

struct st_daemon {
	struct st_loop loop;
	int lfd, sfd;		/* registration socket, signalfd */
	struct st_watch listen_watch, sig_watch;
	int cfd;		/* control socket (not for a private instance) */
	struct st_watch control_watch;
	const char *group;	/* the control group's name or number */
	gid_t control_gid;	/* members may send control requests */
	char rundir[ST_PATH_MAX];
	char sock_path[ST_PATH_MAX];
	struct st_clock clock;
	struct st_evreg reg;
	struct st_session *sessions; /* oldest first */
	struct st_proc *procs;
	uint64_t next_instance;
	uint64_t ticks;
	uid_t uid;
	bool quit;
	bool accept_paused;	/* out of descriptors: lfd unwatched for a tick */
	bool private_instance;
	/* record: the command's pidfd, to pass signals on to it (loop.c) */
	int child_pidfd;
	struct st_membound mem; /* all sessions' buffer memory (memory.c) */
};

int st_daemon_init(struct st_daemon *d, const struct st_daemon_config *cfg, char *err,
		   size_t errlen);
int st_daemon_run(struct st_daemon *d);
/* Ends st_daemon_run (a signal; record's command ended). */
void st_daemon_quit(struct st_daemon *d);
/* RUNDIR/active exists while a session is started (session.c). */
void st_session_mark_active(struct st_daemon *d);
void st_daemon_fini(struct st_daemon *d);

/* Sessions. */
/* Creates a session (*out); 0, or a negative errno with the reason in err:
 * -EEXIST (the owner has one of that name), -ENOSPC (no session left for
 * the owner: their quota, or no free bit), else the configuration. */
int st_session_create(struct st_daemon *d, const struct st_session_config *cfg,
		      struct st_session **out, char *err, size_t errlen);
int st_session_add_rule(struct st_daemon *d, struct st_session *ses, const struct st_rule *rule);
/* Whether session ses records tracepoint provider:name in process p. */
bool st_session_records(const struct st_session *ses, const struct st_proc *p, const char *provider,
			const char *name);
/* owner's session named name, or NULL. */
struct st_session *st_session_find(struct st_daemon *d, uid_t owner, const char *name);
/* The session of bit s that may trace p (root's, or p's owner's), or NULL:
 * what p's state in slot s (its control page, pools, grants) belongs to. */
struct st_session *st_session_at(const struct st_daemon *d, uint32_t s, const struct st_proc *p);
/* Whether ses traces p: it may (st_session_covers), it is started, and an
 * enable rule selects p. */
bool st_session_traces(const struct st_session *ses, const struct st_proc *p);
/* Whether ses may trace p's processes at all (it is root's, or p's owner's). */
bool st_session_covers(const struct st_session *ses, const struct st_proc *p);
/* Bits kept for root's sessions (the daemon's own user's) whatever users do. */
#define ST_SESSION_ROOT_BITS 8
/* A bit for a new session of owner (all_users: root's, tracing every
 * user), -1 if none is free (sessbits.c). */
int st_session_bit(const struct st_daemon *d, uid_t owner, bool all_users);
struct st_geometry;
/* The session's losses, if any, as lines that start with prefix: "lost:
 * 12 buffer full, 3 no thread buffer", then what would keep each cause's
 * events; "" without losses. */
void st_session_loss_report(const struct st_session *ses, const char *prefix, char *buf, size_t n);
/* The session's buffer memory, for status (live: now and at most) and
 * record's summary (at most): committed, granted, the bound, and what was
 * shrunk, refused, raised or taken back to stay within it. */
void st_session_memory_text(const struct st_daemon *d, const struct st_session *ses, bool live,
			    char *buf, size_t n);
/* What process p lost in session s for want of a buffer, all causes
 * (its control page's counters): the events_discarded of its meta stream. */
uint64_t st_proc_lost_unbuffered(const struct st_proc *p, uint32_t s);
/* The session's losses by cause, over its processes. */
void st_session_losses(const struct st_session *ses, uint64_t by[ST_LOSS_KINDS]);
/* The session's buffer geometry, as st_geometry_text shows it. */
void st_session_geometry(const struct st_session *ses, struct st_geometry *g);
int st_session_start(struct st_daemon *d, struct st_session *ses, char *err, size_t errlen);
/* Drains everything, writes the final metadata, closes the trace. */
int st_session_stop(struct st_daemon *d, struct st_session *ses);
/* Moves the events lost writing so far, per process, from the recorded to
 * the lost in the session's statistics. */
void st_session_take_lost(struct st_session *ses);
/* What a session recorded and lost so far, all its processes. */
struct st_session_totals {
	uint64_t events;
	uint64_t lost;	     /* all causes */
	uint64_t write_lost; /* of which lost writing the trace */
	int write_err;	     /* why (the first error) */
	uint32_t processes;  /* an exec'd image is not one more */
};
void st_session_totals(struct st_session *ses, struct st_session_totals *t);
/* Whether stats entry i is an image that an earlier entry's process
 * exec'd (same pid, same parent), not a process of its own. */
bool st_session_stats_exec(const struct st_session *ses, uint32_t i);
/* True when the session had never started and its directory, which it
 * had made and which is empty, is removed with it. */
bool st_session_destroy(struct st_daemon *d, struct st_session *ses);
/* Recomputes the enable bits of every tracepoint of p. */
void st_session_apply(struct st_daemon *d, struct st_proc *p);
/* The statistics of process p in session s, created when `create`. */
struct st_session_stats *st_session_stats_for(struct st_session *s, struct st_proc *p, bool create);
void st_session_finish_proc(struct st_daemon *d, struct st_proc *p, uint32_t s);

/* Processes. */
/* What a handler returns for a process refused for a quota: its
 * connection is closed without a protocol error's warning. */
#define ST_PROC_REFUSED (-2)
/* Checks a memfd a process handed over (proc.c): sealed with seals, at
 * least size bytes, plain shared memory; 0 or -1. */
int st_check_memfd(int fd, int seals, uint64_t size);
/* Listens on the registration socket (d->sock_path; all_users: mode
 * 0666, for the system daemon, else 0600) and watches it. */
int st_proc_listen(struct st_daemon *d, bool all_users, char *err, size_t errlen);
/* Takes the connections waiting on it. */
void st_proc_accept(struct st_daemon *d);
/* Watches it again after a tick, if it was paused (out of descriptors). */
void st_proc_accept_resume(struct st_daemon *d);
void st_proc_readable(struct st_daemon *d, struct st_proc *p);
/* The loop's callbacks: p's connection is readable; p's pidfd says it
 * exited. */
void st_proc_on_readable(struct st_loop *l, void *arg, uint32_t events);
void st_proc_on_exit(struct st_loop *l, void *arg, uint32_t events);
void st_proc_end(struct st_daemon *d, struct st_proc *p);
void st_proc_reap(struct st_daemon *d);
/* Handles one message of process p (from its connection or its log). */
int st_proc_message(struct st_daemon *d, struct st_proc *p, const uint8_t *buf, size_t len);
/* Names this daemon in p's control page: p is ours, connect here. */
void st_proc_claim(struct st_daemon *d, struct st_proc *p);

/* How processes end (procend.c). */
/* The state letter and flags of process pid's main thread, from
 * /proc/PID/stat; 0, or -1 when it cannot be read. */
int st_proc_stat(pid_t pid, char *state, unsigned int *flags);
/* The same of the stat file at path (/proc/PID/task/TID/stat). */
int st_proc_stat_at(const char *path, char *state, unsigned int *flags);
/* Whether p has exited or is exiting (its pidfd, else its /proc stat):
 * not a process that merely closed its connection (exec, or it closed the
 * descriptor). False when it cannot tell (no pidfd). */
bool st_proc_gone(const struct st_proc *p);
/* Whether p's pidfd says it has exited (the pidfd alone). */
bool st_proc_exited(const struct st_proc *p);
/* After p's final drain in session s: shimtrace:process_end into the
 * session's trace, if p was recorded there and how it ended is known. */
void st_proc_end_event(struct st_daemon *d, struct st_proc *p, uint32_t s);
/* Ends the processes whose pidfd says they have exited but whose end the
 * loop has not handled yet (before a stop, or after `record`'s command
 * ended); with now, without waiting for line tables. */
void st_proc_end_gone(struct st_daemon *d, bool now);

/* Processes found running (discover.c): asked of their owners' inspectors;
 * they register as their answers come. */
void st_discover(struct st_daemon *d);
void st_reglog_catch_up(struct st_daemon *d, struct st_proc *p);
/* Runs the loop until no inspector request is out, or for at most ms. */
void st_daemon_settle(struct st_daemon *d, uint32_t ms);

/* The consumer (consumer.c). A drain that is not final leaves in place
 * what needs a line table on its way, and sets p->lines_waiting. */
enum st_drain {
	ST_DRAIN_CLOSED, /* closed sub-buffers (discard mode) */
	ST_DRAIN_FLUSH,	 /* and what the open one holds (discard mode) */
	ST_DRAIN_FLUSH_NOW, /* the same, not waiting for line tables */
	ST_DRAIN_FINAL,	 /* everything; overwrite mode: the ring, oldest first */
};
void st_consume_slot(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t slot,
		     enum st_drain how);
void st_consume_all(struct st_daemon *d, struct st_proc *p, enum st_drain how);
/* At a session's start: the consumer's buffers for sub-buffers of sb_size
 * bytes are made resident, so that the first drains do not pay for it. */
void st_consume_prepare(uint32_t sb_size);
/* Emits overwrite-mode sub-buffer (seq, idx) of slot i of ring r from
 * byte *off (at *pos) into stream, if it still holds seq after the copy;
 * the events written (*off, *pos: the end of what was emitted). */
uint64_t st_emit_subbuf(struct st_daemon *d, struct st_proc *p, struct st_trace *t,
			struct st_stream *stream, const struct st_ring *r, uint32_t i, uint32_t idx,
			uint64_t seq, uint64_t *off, struct st_ring_pos *pos, uint64_t discarded);
/* The events slot i of p's pool lost, in all runs of its session, each
 * counted once. */
uint64_t st_slot_lost(struct st_proc_pool *pool, uint32_t i);
extern uint64_t st_emit_corrupt;
/* Session s is over for process p: its streams closed, its pool unmapped
 * (proc.c). */
void st_proc_pool_close(struct st_proc *p, uint32_t s);
/* The name of a stream file of process p, written in the run-th run of
 * its session: pid, instance, the run when not the first, then the rest
 * (fmt), e.g. pid42-0-buf3, pid42-0-run2-meta. */
void st_stream_name(char *buf, size_t len, const struct st_proc *p, uint32_t run, const char *fmt,
		    ...) __attribute__((format(printf, 5, 6)));
/* Writes records the daemon built for process p into its meta stream. */
int st_meta_write(struct st_daemon *d, struct st_proc *p, uint32_t s, const uint8_t *records,
		  uint64_t len, uint64_t events, uint64_t ts_begin, uint64_t ts_end);

/* Statedump (maps.c). */
void st_objects_free(struct st_object *objs, uint32_t n);
/* The mappings of p changed (a MAPS message of this kind, at ts): its
 * objects are read again if a session traces it, else when one does. */
void st_statedump(struct st_daemon *d, struct st_proc *p, uint32_t kind, uint64_t ts);
/* Session s just got p's pool: the objects loaded now, as its statedump. */
void st_statedump_session(struct st_daemon *d, struct st_proc *p, uint32_t s);
/* Writes p's full statedump (the objects known now), at ts, into stream. */
int st_statedump_into(struct st_proc *p, struct st_trace *t,
		      struct st_stream *stream, uint64_t ts);
/* Reads p's objects again if p->refresh_objects (their files are handed
 * to the lines inspector again); between two drains. */
void st_objects_refresh(struct st_daemon *d, struct st_proc *p);
/* Answers p's SYNC with sequence seq: now, or once its objects are in. */
void st_proc_sync(struct st_daemon *d, struct st_proc *p, uint64_t seq);
/* Whether the consumer should wait before draining p (its objects or line
 * tables are on their way, for a bounded time). */
bool st_proc_waiting(struct st_proc *p);
/* Something a process waited for came: what waited for it goes on
 * (new objects applied, ends finished). */
void st_proc_recheck(struct st_daemon *d);
/* A line table came (or will not): the same, and waiting drains retry. */
void st_proc_lines_settled(struct st_daemon *d);
/* How maps.c drains a process's events before one of its objects goes
 * (the consumer, above it: set by the wiring). */
extern void (*st_objects_drain)(struct st_daemon *d, struct st_proc *p, bool wait);
/* Applies p's new object list if it waited and may wait no more. */
void st_proc_apply_due(struct st_daemon *d, struct st_proc *p);

/* Line tables (linecache.c). */
struct st_owner;
enum st_lines_state { ST_LINES_IDLE, ST_LINES_PENDING, ST_LINES_READY, ST_LINES_NONE };
struct st_insp_key;
/* The table of the object file of identity key for owner o, with a
 * reference: known, or to be asked of o's lines inspector (which holds
 * the file) when an event needs it. NULL: none to be had. */
struct st_lines *st_lines_get(const struct st_owner *o, const struct st_insp_key *key,
			      const uint8_t *build_id, uint32_t build_id_len);
/* An event needs the table: asked for now if it was not. True: the file
 * must first be handed to the lines inspector again (read the objects of
 * the process again: p->refresh_objects). */
bool st_lines_need(struct st_daemon *d, struct st_lines *l);
/* Whether waiting for the table is over: it is here, there is none, or it
 * did not come within the time the consumer waits. */
bool st_lines_settled(const struct st_lines *l);
void st_lines_put(struct st_lines *l);
/* Whether owner o's lines inspector holds files of tables that may still
 * be asked for: its pair is not stopped for being idle. */
bool st_lines_held(const struct st_owner *o);
enum st_lines_state st_lines_state(const struct st_lines *l);
/* The start of the row holding file address at, or UINT64_MAX. */
uint64_t st_lines_find(const struct st_lines *l, uint64_t at);
void st_lines_tick(void);
void st_lines_fini(void);

/* Call sites (callsite.c): the start of the source line that made a call,
 * from its return address; *unsettled set when the object's line table is
 * on its way (the answer is then the return address, and not kept). */
uint64_t st_callsite(struct st_daemon *d, struct st_proc *p, uint64_t ip, bool *unsettled);
void st_callsites_reset(struct st_proc *p);

/* Acting as a session owner when creating files (creds.c). */
#define ST_CREDS_MAX_GROUPS 256
struct st_creds {
	bool changed;
	int ngroups;
	gid_t groups[ST_CREDS_MAX_GROUPS];
};
int st_creds_become(uid_t uid, gid_t gid, struct st_creds *saved);
/* Whose the files created after st_creds_become(uid, gid) are: uid and
 * gid, or the daemon's own ids where it cannot change them (a user's
 * daemon) or need not (root). */
void st_creds_owner(uid_t uid, gid_t gid, uid_t *fsuid, gid_t *fsgid);
void st_creds_restore(struct st_creds *saved);

/* Received descriptors (fdsafe.c): closed if shared memory, else kept
 * open for good, counted against the sender's descriptors quota (closing
 * one may wait on a file system a user serves); true if kept. */
bool st_fd_drop(int fd, uid_t sender);
/* Whether uid may still hand over descriptors: below its quota of those
 * the daemon keeps. A user at it is refused: connections, pickups. */
bool st_fd_room(uid_t uid);

/* quiesce.c: waits (bounded) for the records under way in session ses,
 * whose enable bits were just cleared. */
void st_writers_quiesce(struct st_daemon *d, const struct st_session *ses);

/* pickup.c: takes the pools a process without a connection offers. */
void st_pickup(struct st_daemon *d, struct st_proc *p);
/* Whether p offers a pool of session s the daemon has yet to take (a
 * stop waits for it). */
bool st_pickup_due(const struct st_daemon *d, const struct st_proc *p, uint32_t s);
/* proc.c: maps fd as p's pool of session s, generation gen (offered, not
 * sent): as st_proc_on_pool. */
int st_proc_pool_adopt(struct st_daemon *d, struct st_proc *p, uint32_t s, uint32_t gen, int fd);
/* p's POOL message (with its memfd): 1 if the pool is taken now (a
 * statedump is owed to its session), 0 if there is nothing to take (a
 * session gone, a pool taken already), -1 if unusable (proc.c). */
int st_proc_on_pool(struct st_daemon *d, struct st_proc *p, const struct st_abi_pool_msg *m, int fd);
/* p's PROVIDER and PROVIDER_GONE messages: 0, -1 (malformed) or
 * ST_PROC_REFUSED (a quota). */
int st_proc_on_provider(struct st_daemon *d, struct st_proc *p, const void *buf, size_t len);
void st_proc_on_provider_gone(struct st_proc *p, const struct st_abi_provider_gone *m);
/* A line naming p in the log (its user's rate). */
void st_proc_warn(struct st_proc *p, const char *what);
/* Frees p's record, what the process model holds of it (the modules above
 * let go of theirs first). */
void st_proc_free(struct st_daemon *d, struct st_proc *p);
/* What maps.c and callsite.c hold of p, freed (p is being freed). */
void st_objects_forget(struct st_proc *p);

/* Logging. */
void st_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line a user's process (connection, inspector) made the daemon write:
 * rate-limited per uid (log.c). */
void st_log_user(uid_t uid, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void st_log_setup(const char *ident, int level, bool use_syslog);
enum { ST_LOG_ERR = 0, ST_LOG_WARN = 1, ST_LOG_INFO = 2, ST_LOG_DEBUG = 3 };

#endif /* ST_DAEMON_H */
