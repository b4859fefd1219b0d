/*
 * The daemon's wiring: its setup, the modules' watches and timers on the
 * reactor (reactor.h), the tick, and its end.
 *
 * The reactor serves, as each module registered them: the registration
 * socket (here), each process's connection and pidfd (proc.c), the
 * inspectors' sockets (inspect.c), the control socket and its clients
 * (control.c), a signalfd (here), and for `shimtrace record` the
 * command's pidfd (cmd_record.c). The 100 ms tick drains closed
 * sub-buffers whose notification was lost (a full socket) and, every
 * second, flushes what open sub-buffers hold, so the trace on disk is
 * never far behind the running program; it also raises each process's
 * heartbeat, which tells writers waiting for room (--blocking) that the
 * daemon still serves them.
 *
 * Owns: struct st_daemon: its sockets, signals, tick and end; every module
 *       is started and stopped here.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, cmd, drain, loop, model, objects, out.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/checks.h"
#include "ctl/common/control.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/limits.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/cmd/commands.h"
#include "ctl/daemon/cmd/attach.h"
#include "ctl/daemon/cmd/sessattach.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/daemon.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/drain/discover.h"
#include "ctl/daemon/drain/lifecycle.h"
#include "ctl/daemon/drain/pickup.h"
#include "ctl/daemon/drain/procconn.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/objects/linecache.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/out/evclass.h"
#include "ctl/daemon/out/tracefile.h"

/*
 * The system daemon (root, not a private instance) takes processes of every
 * user: its directory is searchable and its registration socket writable
 * by all (SO_PEERCRED says who connects). A user's daemon keeps both to its
 * user.
 */
static bool system_daemon(const struct st_daemon *d)
{
	return d->uid == 0 && !d->private_instance;
}

static int make_rundir(const struct st_daemon *d, const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, system_daemon(d) ? 0755 : 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != d->uid) {
		snprintf(err, errlen, "%s belongs to uid %u, not to us", dir, (unsigned)st.st_uid);
		return -EPERM;
	}
	chmod(dir, system_daemon(d) ? 0755 : 0700);
	return 0;
}

static void on_signal(struct st_loop *l, void *arg, uint32_t events);
static void tick(struct st_loop *l, void *arg, uint64_t n);
static void collect(struct st_loop *l, void *arg);

/* ---- news from below, for the modules above ---- */

/* A line table came, or will not: drains waiting for it retry, and a
 * stop waiting for its session goes on. */
static void on_lines(struct st_loop *l, void *arg)
{
	(void)l;
	st_commands_progress();
	st_proc_lines_settled(arg);
	st_commands_poll(arg, false);
}

/* A process's objects came (or will not). */
static void on_objects(struct st_loop *l, void *arg)
{
	(void)l;
	st_commands_progress();
	st_proc_recheck(arg);
	st_commands_poll(arg, false);
}

/* A pool a process offered was taken (or could not be). */
static void on_pool(struct st_loop *l, void *arg)
{
	(void)l;
	st_proc_recheck(arg);
	st_commands_poll(arg, false);
}

/* The events of p are drained before one of its objects goes (maps.c). */
static void drain_before_unload(struct st_daemon *d, struct st_proc *p, bool wait)
{
	st_consume_all(d, p, wait ? ST_DRAIN_FLUSH : ST_DRAIN_FLUSH_NOW);
	/* (its records in its user's buffers too, with the rest of them) */
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++)
		if (p->user_gen[s]) {
			st_consume_user_pools(d, wait ? ST_DRAIN_FLUSH : ST_DRAIN_FLUSH_NOW);
			break;
		}
}

int st_daemon_init(struct st_daemon *d, const struct st_daemon_config *cfg, char *err,
		   size_t errlen)
{
	struct rlimit rl;
	sigset_t set;
	int ret;

	memset(d, 0, sizeof(*d));
	d->lfd = d->sfd = d->cfd = -1;
	d->loop.epfd = -1;
	d->uid = geteuid();
	d->private_instance = cfg->private_instance;
	d->group = cfg->group ? cfg->group : ST_GROUP;
	d->mem.bound = cfg->max_memory ? cfg->max_memory : st_default_max_memory();
	st_quota_default(ST_Q_MEMORY, d->mem.bound / 4);
	/* One stream file per traced thread: allow as many as we may. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* A connection holds three descriptors (its socket, pidfd and status
	 * memory), a process found running two: one user's may take at most
	 * about a third of the table, whoever else needs it. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		for (int k = ST_Q_CONNECTIONS; k <= ST_Q_PROCESSES; k++)
			if (rl.rlim_cur / 8 < st_quota_defs[k].def)
				st_quota_default(k, rl.rlim_cur / 8 ? rl.rlim_cur / 8 : 1);
	snprintf(d->rundir, sizeof(d->rundir), "%s", cfg->rundir);
	snprintf(d->libdir_core, sizeof(d->libdir_core), "%s",
		 cfg->libdir_core ? cfg->libdir_core : "");
	snprintf(d->libdir_wrappers, sizeof(d->libdir_wrappers), "%s",
		 cfg->libdir_wrappers ? cfg->libdir_wrappers : "");
	snprintf(d->sock_path, sizeof(d->sock_path), "%s/%s", cfg->rundir, ST_PROC_SOCKET);
	ret = st_clock_init(&d->clock, cfg->clock, err, errlen);
	if (ret < 0)
		return ret;
	if (st_evreg_init(&d->reg) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = make_rundir(d, d->rundir, err, errlen);
	if (ret < 0)
		return ret;
	st_objects_drain = drain_before_unload;
	st_insp_pair_held = st_lines_held;
	ret = st_loop_init(&d->loop);
	if (ret < 0) {
		snprintf(err, errlen, "event loop setup: %s", strerror(-ret));
		return ret;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	d->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sfd < 0 || st_watch_add(&d->loop, &d->sig_watch, d->sfd, EPOLLIN, on_signal, d, false) < 0 ||
	    st_loop_every(&d->loop, ST_TICK_MS, tick, d) < 0 ||
	    st_loop_collector(&d->loop, collect, d) < 0 ||
	    st_loop_subscribe(&d->loop, ST_NEWS_LINES, on_lines, d) < 0 ||
	    st_loop_subscribe(&d->loop, ST_NEWS_OBJECTS, on_objects, d) < 0 ||
	    st_loop_subscribe(&d->loop, ST_NEWS_POOL, on_pool, d) < 0) {
		snprintf(err, errlen, "event loop setup: %s", strerror(errno));
		return -errno;
	}
	/* A client that goes away must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	ret = st_proc_listen(d, system_daemon(d), err, errlen);
	if (ret < 0)
		return ret;
	/* `record` talks to its private instance directly, not by socket. */
	if (!d->private_instance) {
		ret = st_control_listen(d, st_command, err, errlen);
		if (ret < 0)
			return ret;
		/* After listening: a process started since connects by itself. */
		st_discover(d);
	}
	return 0;
}

static void tick(struct st_loop *l, void *arg, uint64_t n)
{
	struct st_daemon *d = arg;
	uint64_t before = d->ticks;
	enum st_drain how;

	(void)l;
	d->ticks += n;
	how = d->ticks / 10 != before / 10 ? ST_DRAIN_FLUSH : ST_DRAIN_CLOSED;
	for (struct st_proc *p = d->procs; p; p = p->next) {
		if (p->conn.ended)
			continue;
		if (p->memory.over) {
			/* (its pools hold more than the bounds let it: memory.c) */
			st_proc_end_now(d, p);
			continue;
		}
		/* we still serve it: its blocked writers wait on (core/block.c) */
		if (p->control)
			__atomic_store_n(&p->control->heartbeat, d->ticks, __ATOMIC_RELAXED);
		st_objects_refresh(d, p);
		st_proc_apply_due(d, p);
		st_statedump_owed(d, p);
		if (p->conn.end_deferred && !st_proc_waiting(p))
			st_proc_end(d, p);
		else {
			if (p->discovered) {
				/* (no connection: its log and control page tell) */
				st_reglog_catch_up(d, p);
				st_pickup(d, p);
			}
			if (!st_proc_waiting(p))
				st_consume_all(d, p, how);
		}
	}
	st_consume_user_pools(d, how);
	st_memory_tick(d);
	st_insp_tick(d);
	st_attach_tick(d);
	st_lines_tick();
	st_commands_poll(d, false);
	st_control_tick(d);
	st_proc_accept_resume(d);
}

/* What the turn may still have had events of is freed once it is over. */
static void collect(struct st_loop *l, void *arg)
{
	(void)l;
	st_proc_reap(arg);
	st_insp_collect();
	st_control_collect();
	st_tracefile_flush(); /* (the turn's packets, written together) */
}

static void on_signal(struct st_loop *l, void *arg, uint32_t events)
{
	struct st_daemon *d = arg;
	struct signalfd_siginfo si;

	(void)events;
	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (d->private_instance && !d->end_on_signal) {
			/* `record`: a signal from the terminal (sent by the kernel)
			 * reached the command too, as it is in our process group;
			 * one sent to us with kill() is passed on to it. A command
			 * that ignores SIGINT (a server) still ends: the second
			 * interrupt sends it SIGTERM, the third SIGKILL. */
			uint32_t n = si.ssi_signo == SIGINT ? ++d->interrupts : 0;
			int sig = n == 2 ? SIGTERM : n >= 3 ? SIGKILL : (int)si.ssi_signo;

			if (d->child_pidfd < 0 || (n < 2 && si.ssi_code == SI_KERNEL))
				continue;
			if (n >= 2 && d->escalate)
				d->escalate(sig);
			syscall(SYS_pidfd_send_signal, d->child_pidfd, sig, NULL, 0);
			continue;
		}
		st_log(ST_LOG_INFO, "signal %u: stopping", si.ssi_signo);
		st_daemon_quit(d);
	}
	(void)l;
}

void st_daemon_quit(struct st_daemon *d)
{
	d->quit = true;
	st_loop_stop(&d->loop);
}

int st_daemon_run(struct st_daemon *d)
{
	return st_loop_run(&d->loop);
}

void st_daemon_settle(struct st_daemon *d, uint32_t ms)
{
	uint64_t end = st_now_ms() + ms;
	bool quit = d->quit;

	/* (the loop stopped at a quit: processes gone meanwhile, `record`'s
	 * command among them, are ended, so that their traces say how) */
	st_proc_end_gone(d, false);
	/* what the buffers hold asks for the line tables it needs */
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (!p->conn.ended && !st_proc_waiting(p))
			st_consume_all(d, p, ST_DRAIN_FLUSH);
	st_consume_user_pools(d, ST_DRAIN_FLUSH);
	/* (a stop request ends it, but one made before it began) */
	while (st_now_ms() < end && (quit || !d->quit)) {
		bool deferred = false;

		for (struct st_proc *p = d->procs; p && !deferred; p = p->next)
			deferred = p->conn.end_deferred;
		if (!st_insp_pending() && !deferred)
			return;
		if (st_loop_turn(&d->loop, 100, false) < 0)
			return;
	}
}

void st_daemon_fini(struct st_daemon *d)
{
	/* The processes sessions attached go back to what they were: the
	 * loop turns for their inspectors' answers, a few seconds at most */
	st_sessattach_fini(d);
	/* Inspectors then: nothing waits for them (a probe inspector goes
	 * on alone), and what they would still answer is not needed. */
	st_insp_fini(d);
	st_commands_poll(d, true);
	st_control_fini(d);
	while (d->sessions)
		st_session_destroy(d, d->sessions);
	for (struct st_proc *p = d->procs; p; p = p->next) {
		st_proc_end_now(d, p);
	}
	st_proc_reap(d);
	st_lines_fini();
	st_tracefile_stop();
	if (d->lfd >= 0) {
		close(d->lfd);
		unlink(d->sock_path);
	}
	if (d->rundir[0]) {
		char path[ST_PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/" ST_ABI_ACTIVE_NAME, d->rundir);
		unlink(path);
	}
	if (d->cfd >= 0) {
		char path[ST_PATH_MAX + 32];

		close(d->cfd);
		snprintf(path, sizeof(path), "%s/%s", d->rundir, ST_CTL_SOCKET);
		unlink(path);
	}
	if (d->sfd >= 0)
		close(d->sfd);
	st_loop_fini(&d->loop);
	st_evreg_free(&d->reg);
}
