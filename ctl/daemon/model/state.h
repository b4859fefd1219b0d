/*
 * The daemon's state: its processes and sessions, the event classes, the
 * clock, the bound on all buffer memory, and the loop they run on. Every
 * module from the model up works on it; the wiring (daemon.c) makes it.
 */
#ifndef ST_DAEMON_MODEL_STATE_H
#define ST_DAEMON_MODEL_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/limits.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/out/evclass.h"

struct st_session;
struct st_user_pool;
struct st_proc;

/* News the daemon's modules tell the modules above them (st_loop_news),
 * which the wiring (daemon.c) subscribes to. */
enum st_news {
	ST_NEWS_LINES,	 /* a line table came, or will not (linecache.c) */
	ST_NEWS_OBJECTS, /* a process's objects came, or will not (maps.c) */
	ST_NEWS_POOL,	 /* a pool offered was taken, or could not be (pickup.c) */
};

/* The daemon's tick: drains, heartbeats, deadlines (daemon.c); writers
 * waiting for room count on its heartbeat (core/abi.h). */
#define ST_TICK_MS ST_ABI_HEARTBEAT_MS
#define ST_ADMIT_MAX 64

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
	struct st_user_pool *user_pools; /* per-user buffers (userpool.c) */
	uint64_t next_instance;
	uint64_t ticks;
	uid_t uid;
	bool quit;
	bool accept_paused;	/* out of descriptors: lfd unwatched for a tick */
	bool private_instance;
	/* record: the command's pidfd, to pass signals on to it (daemon.c);
	 * the interrupts (SIGINT) record got, the second of which sends the
	 * command SIGTERM and the third SIGKILL, each said first by
	 * escalate(sig) */
	int child_pidfd;
	uint32_t interrupts;
	void (*escalate)(int sig);
	/* record --pid: no command of its own; a signal ends the recording */
	bool end_on_signal;
	/* record --pid as root of other users' processes: the users who may
	 * register, besides the daemon's own (none: any the socket lets in) */
	uid_t admit[ST_ADMIT_MAX];
	uint32_t nadmit;
	/* the libraries an attach loads (st_daemon_config); "": unknown */
	char libdir_core[ST_PATH_MAX], libdir_wrappers[ST_PATH_MAX];
	struct st_membound mem; /* all sessions' buffer memory (memory.c) */
};

#endif
