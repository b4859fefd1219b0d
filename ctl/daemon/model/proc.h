/*
 * The process model (proc.c): what the daemon knows of a registered
 * process -- its providers and event classes, its pools -- and what it
 * hands over, checked.
 */
#ifndef ST_DAEMON_MODEL_PROC_H
#define ST_DAEMON_MODEL_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/abi.h"
#include "ctl/daemon/base/limits.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/wire/msg.h"
#include "ctl/daemon/wire/ring.h"

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
	uint32_t writer; /* a per-user pool's: the process's writer number */
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
	/* per-CPU overwrite mode: the events emitted from the slot, and those
	 * the CPU wrote that the ring no longer held when drained (consumer.c) */
	uint64_t emitted, overwritten;
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
	/* per-CPU: the sub-buffers whose pages the daemon allocated so far,
	 * counted first sub-buffers of every slot first (memory.c) */
	uint64_t filled;
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
struct st_user_pool;

/* Warnings logged once per process (st_proc.warned). */
enum st_proc_warning {
	ST_WARN_CORRUPT,      /* invalid records dropped (consumer.c) */
	ST_WARN_COMMIT,	      /* an impossible commit count (consumer.c) */
	ST_WARN_NO_STATEDUMP, /* its objects could not be read (maps.c) */
	ST_WARN_REGLOG,	      /* its registration log is bad (discover.c) */
	ST_WARN_NO_RSEQ,      /* per-thread buffers, asked for per-CPU ones (proc.c) */
	ST_PROC_WARNINGS
};

/* Its providers and event classes: proc.c's. */
struct st_proc_classes {
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
};

/* Its connection and its end: procconn.c's. */
struct st_proc_conn {
	int fd;
	struct st_watch fd_watch;
	bool counts_connection; /* in its user's connections quota */
	bool ended;
	bool end_deferred; /* it ended while waiting: finished when it stops */
	bool end_now;	   /* the daemon stops: no waiting any more */
	/* How it ended (procend.c): its end is known to be its death (decided
	 * once, when st_proc_end is first called). */
	bool end_decided, gone;
	uint32_t late_said; /* its control page's late_answers, as last logged */
};

/* Its loaded objects, and what waits for them: maps.c's. */
struct st_proc_objects {
	struct st_object *objs;
	uint32_t nobjs;
	uint64_t version;	/* of objs: call sites cached for another are stale */
	uint64_t statedump_ts;
	uint64_t maps_ts;	/* when objs became what it is */
	uint64_t maps_changed_ts; /* when the process last said its mappings changed */
	bool statedump_done;
	/* Reading its objects: through the owner's inspector. */
	bool pending;		/* a request is out */
	bool again;		/* the mappings changed again meanwhile */
	uint64_t again_ts;	/* first of those changes */
	bool apply_pending;	/* new_objs waits for line tables */
	bool refresh;		/* to be read again (a line table's file was lost) */
	uint32_t kind;		/* what the request is for (enum st_abi_maps_kind) */
	uint64_t ts;
	struct st_object *new_objs; /* as they arrive */
	struct st_owner *owner;	/* whose inspector the request went to */
	uint32_t new_nobjs;
	uint64_t ready_owed;	/* READY owed once the objects are in (a SYNC's seq) */
	uint64_t wait_until;	/* ms: consumption waits for objects till then */
	bool lines_waiting;	/* its events wait for line tables (the consumer said) */
	uint64_t lines_wait_since; /* ms */
};

/* Taking the pools it offers without a connection: pickup.c's. */
struct st_proc_pickup {
	bool pending;
	uint32_t session, gen;
	uint32_t tried[ST_ABI_MAX_SESSIONS]; /* generation asked for */
};

/* Its buffer memory: memory.c's. */
struct st_proc_memory {
	struct st_grant grants[ST_ABI_MAX_SESSIONS];
	bool over; /* its pools hold more than its grants: refused */
};

/*
 * A registered process. The record (up to `control`) is set when it
 * registers (procconn.c) or is found running (discover.c); each part after
 * it is written by the one module it names, which the others read, or ask
 * through that module's functions.
 */
struct st_proc {
	struct st_proc *next;
	struct st_daemon *d;
	uint64_t instance;
	pid_t pid, ppid;
	uid_t uid;
	gid_t gid;
	struct st_user *user;	/* its owner's quota account */
	char name[ST_PROC_NAME_SIZE];
	char exe[ST_PATH_MAX];
	bool hello;
	bool rseq;	      /* it can write per-CPU buffers (its HELLO says) */
	bool discovered;      /* not connected: found running (discover.c), or its
			       * connection closed while it runs */
	bool counts_process;  /* in its user's processes quota */
	int pidfd;
	struct st_watch pidfd_watch;
	int status_fd;
	uint64_t status_size;
	struct st_abi_control *control;

	struct st_proc_classes classes;		      /* proc.c */
	struct st_proc_pool pools[ST_ABI_MAX_SESSIONS];	      /* proc.c maps them; consumer.c,
							       * metastream.c own their streams */
	/* When each session was last switched on for it: none of its events
	 * in that session is older (session.c) */
	uint64_t traced_since[ST_ABI_MAX_SESSIONS];
	struct st_proc_conn conn;		      /* procconn.c */
	struct st_proc_objects objects;		      /* maps.c */
	struct st_proc_pickup pickup;		      /* pickup.c */
	uint64_t reglog_pos; /* bytes of its registration log taken in (discover.c) */
	struct st_callsites *callsites;		      /* callsite.c's cache */
	struct st_proc_memory memory;		      /* memory.c */
	/* one-time warnings already logged (each module its own) */
	bool warned[ST_PROC_WARNINGS];
	/* Per-user buffers (userpool.c): its writer number in its user's
	 * pool of session s, and that session's generation when it was given
	 * the pool (0: none) */
	uint32_t user_writer[ST_ABI_MAX_SESSIONS];
	uint32_t user_gen[ST_ABI_MAX_SESSIONS];
	/* A per-user pool's stand-in holder (never in d->procs): the pool */
	struct st_user_pool *user_pool;
	/* Sessions (bits) that gave it its user's pool and owe it the
	 * statedump a pool of its own would have had (maps.c) */
	uint32_t statedump_owed;
	/* Ended, while its user's overwrite-mode pool of session s may still
	 * hold its records: each CPU's open sub-buffer then (userpool.c) */
	uint64_t *held_cur[ST_ABI_MAX_SESSIONS];
};

/* What a handler returns for a process refused for a quota: its
 * connection is closed without a protocol error's warning. */
#define ST_PROC_REFUSED (-2)
/* Checks a memfd a process handed over (proc.c): sealed with seals, at
 * least size bytes, plain shared memory; 0 or -1. */
int st_check_memfd(int fd, int seals, uint64_t size);
/* Names this daemon in p's control page: p is ours, connect here. */
void st_proc_claim(struct st_daemon *d, struct st_proc *p);

/* Closes pool's streams and unmaps it, its state cleared (procpool.c). */
void st_proc_pool_unmap(struct st_proc_pool *pool);
/* Session s is over for process p: its streams closed, its pool unmapped
 * (proc.c). */
void st_proc_pool_close(struct st_proc *p, uint32_t s);
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
/* A new record of process pid (not in d->procs yet); NULL if out of
 * memory. Its descriptors are -1. */
struct st_proc *st_proc_new(struct st_daemon *d, pid_t pid, uid_t uid, gid_t gid);
/* Frees p's record, what the process model holds of it (the modules above
 * let go of theirs first). */
void st_proc_free(struct st_daemon *d, struct st_proc *p);

#endif
