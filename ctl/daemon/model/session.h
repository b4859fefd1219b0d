/*
 * Sessions (session.c): rules, geometry, mode, statistics, the trace, and
 * the enable bits they write into processes.
 */
#ifndef ST_DAEMON_MODEL_SESSION_H
#define ST_DAEMON_MODEL_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/abi.h"
#include "ctl/common/checks.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/out/relaylive.h"
#include "ctl/daemon/out/trace.h"
#include "ctl/daemon/wire/msg.h"

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
	char procname[ST_PROC_NAME_SIZE]; /* "": any name; else the comm or the exe's basename */
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
	char name[ST_PROC_NAME_SIZE];
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
	uint32_t nslots;	 /* thread buffers of a process's share (its pool);
				  * per-CPU: the possible CPUs */
	uint32_t buffers;	 /* enum st_abi_buffers */
	uint32_t block_ms;	 /* --blocking: 0 not, else abi.h's st_abi_session */
	uint64_t buffer_size;
	uint64_t max_memory;	 /* the bound of all its processes (= mem.bound) */
	uint64_t process_memory; /* a process's share */
	uint64_t slot_bytes;	 /* of one thread buffer, its header included */
	struct st_rule *rules;
	uint32_t nrules;
	bool active;	    /* started: enable bits are set */
	/* create or start --attach: the processes its --pid rules name that
	 * run without the preload are attached (cmd/sessattach.c) */
	bool attach;
	struct st_trace trace;
	struct st_relaylive *relay; /* --set-url: the trace streamed there too */
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
	uint32_t buffers;	 /* enum st_abi_buffers: --buffers */
	uid_t owner;
	gid_t owner_gid;
	mode_t umask;	 /* the owner's: the modes of its trace (tracedir.h) */
	bool all_users;
	bool attach; /* --attach */
	/* --set-url: the relay daemon the trace is streamed to, live, and the
	 * name of its session there (NULL: the session's) */
	const struct st_relay_url *relay;
	const char *relay_session;
};

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
/* The session's buffers, as record, create and status show them
 * (st_buffers_text). */
void st_session_buffers_text(const struct st_session *ses, char *buf, size_t n);
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
/* Recomputes the enable bits of every tracepoint of p. */
void st_session_apply(struct st_daemon *d, struct st_proc *p);
/* The statistics of process p in session s, created when `create`. */
struct st_session_stats *st_session_stats_for(struct st_session *s, struct st_proc *p, bool create);

/* Whether ses traces p: it may (st_session_covers), it is started, and an
 * enable rule selects p. */
bool st_session_traces(const struct st_session *ses, const struct st_proc *p);
/* RUNDIR/active exists while a session is started, and says whether one
 * of them is --blocking (core/abi.h). */
void st_session_mark_active(struct st_daemon *d);

#endif
