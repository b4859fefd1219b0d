/*
 * The daemon: setup and its single-threaded event loop.
 *
 * Watched: the listening socket, each process's connection and pidfd, a
 * 100 ms timer, a signalfd, and (for `shimtrace record`) the command's
 * pidfd. The timer drains closed sub-buffers whose notification was lost
 * (a full socket) and, every second, flushes what open sub-buffers hold,
 * so the trace on disk is never far behind the running program; it also
 * raises each process's heartbeat, which tells writers waiting for room
 * (--blocking) that the daemon still serves them.
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

#include "ctl/control.h"
#include "ctl/daemon/commands.h"
#include "ctl/daemon/daemon.h"
#include "ctl/daemon/inspect.h"
#include "ctl/daemon/loop.h"
#include "ctl/daemon/quota.h"
#include "ctl/daemon/writer.h"

struct tag {
	enum st_tag_kind kind;
	void *ptr;
};

/* Tags of the fixed descriptors; process tags point at the process. */
static struct tag fixed[ST_TAG_FIXED_LAST + 1];

static struct epoll_event event_of(enum st_tag_kind kind, void *ptr, uint32_t events)
{
	struct epoll_event ev = { .events = events };
	uint64_t v;

	if (kind <= ST_TAG_FIXED_LAST) {
		fixed[kind].kind = kind;
		fixed[kind].ptr = ptr;
		ev.data.ptr = &fixed[kind];
	} else {
		/* A pointer (8-byte aligned) and in its low bits which kind. */
		v = (uint64_t)(uintptr_t)ptr | (uint64_t)(kind - ST_TAG_PROC);
		ev.data.u64 = v | (1ull << 63);
	}
	return ev;
}

int st_loop_watch(struct st_daemon *d, int fd, enum st_tag_kind kind, void *ptr)
{
	struct epoll_event ev = event_of(kind, ptr, EPOLLIN);

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
}

int st_loop_watch_events(struct st_daemon *d, int fd, enum st_tag_kind kind, void *ptr,
			 uint32_t events)
{
	struct epoll_event ev = event_of(kind, ptr, events);

	return epoll_ctl(d->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void st_loop_unwatch(struct st_daemon *d, int fd)
{
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, NULL);
}

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

static int listen_on(struct st_daemon *d, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(d->sock_path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", d->sock_path);
		return -ENAMETOOLONG;
	}
	strcpy(a.sun_path, d->sock_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	/* A socket file left by a dead daemon is replaced; a live one is not. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		snprintf(err, errlen, "a daemon already listens on %s", d->sock_path);
		close(fd);
		return -EADDRINUSE;
	}
	close(fd);
	unlink(d->sock_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    chmod(a.sun_path, system_daemon(d) ? 0666 : 0600) < 0 || listen(fd, 512) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", d->sock_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	d->lfd = fd;
	return 0;
}

int st_daemon_init(struct st_daemon *d, const struct st_daemon_config *cfg, char *err,
		   size_t errlen)
{
	struct itimerspec it = { { 0, ST_ABI_HEARTBEAT_MS * 1000000L },
				 { 0, ST_ABI_HEARTBEAT_MS * 1000000L } };
	struct rlimit rl;
	sigset_t set;
	int ret;

	memset(d, 0, sizeof(*d));
	d->epfd = d->lfd = d->tfd = d->sfd = d->cfd = d->child_pidfd = -1;
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
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	d->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->epfd < 0 || d->tfd < 0 || d->sfd < 0 || timerfd_settime(d->tfd, 0, &it, NULL) < 0) {
		snprintf(err, errlen, "event loop setup: %s", strerror(errno));
		return -errno;
	}
	/* A client that goes away must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	ret = listen_on(d, err, errlen);
	if (ret < 0)
		return ret;
	st_loop_watch(d, d->lfd, ST_TAG_LISTEN, NULL);
	st_loop_watch(d, d->tfd, ST_TAG_TIMER, NULL);
	st_loop_watch(d, d->sfd, ST_TAG_SIGNAL, NULL);
	/* `record` talks to its private instance directly, not by socket. */
	if (!d->private_instance) {
		ret = st_control_listen(d, err, errlen);
		if (ret < 0)
			return ret;
		/* After listening: a process started since connects by itself. */
		st_discover(d);
	}
	return 0;
}

static void tick(struct st_daemon *d)
{
	uint64_t n, before = d->ticks;
	enum st_drain how;

	while (read(d->tfd, &n, sizeof(n)) > 0)
		d->ticks += n;
	how = d->ticks / 10 != before / 10 ? ST_DRAIN_FLUSH : ST_DRAIN_CLOSED;
	for (struct st_proc *p = d->procs; p; p = p->next) {
		if (p->ended)
			continue;
		if (p->over_memory) {
			/* (its pools hold more than the bounds let it: memory.c) */
			p->end_now = true;
			st_proc_end(d, p);
			continue;
		}
		/* we still serve it: its blocked writers wait on (core/block.c) */
		if (p->control)
			__atomic_store_n(&p->control->heartbeat, d->ticks, __ATOMIC_RELAXED);
		st_objects_refresh(d, p);
		st_proc_apply_due(d, p);
		if (p->end_deferred && !st_proc_waiting(p))
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
	st_memory_tick(d);
	st_insp_tick(d);
	st_lines_tick();
	st_commands_poll(d, false);
	st_control_tick(d);
	if (d->accept_paused && st_loop_watch(d, d->lfd, ST_TAG_LISTEN, NULL) == 0)
		d->accept_paused = false;
}

void st_loop_pause_accept(struct st_daemon *d)
{
	if (d->accept_paused)
		return;
	st_loop_unwatch(d, d->lfd);
	d->accept_paused = true;
	st_log(ST_LOG_WARN, "out of descriptors: connections wait");
}

static void on_signal(struct st_daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (d->private_instance) {
			/* `record`: a signal from the terminal (sent by the kernel)
			 * reached the command too, as it is in our process group;
			 * one sent to us with kill() is passed on to it. */
			if (si.ssi_code != SI_KERNEL && d->child_pidfd >= 0)
				syscall(SYS_pidfd_send_signal, d->child_pidfd, si.ssi_signo, NULL, 0);
			continue;
		}
		st_log(ST_LOG_INFO, "signal %u: stopping", si.ssi_signo);
		d->quit = true;
	}
}

/*
 * RUNDIR/active exists while a session is started: a registering process
 * waits for the daemon's answer (its enable bits) only then.
 */
void st_daemon_mark_active(struct st_daemon *d)
{
	char path[ST_PATH_MAX + 16];
	bool any = false;

	for (const struct st_session *ses = d->sessions; ses; ses = ses->next)
		any |= ses->active;
	snprintf(path, sizeof(path), "%s/active", d->rundir);
	if (any) {
		int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd >= 0)
			close(fd);
	} else {
		unlink(path);
	}
}

bool st_control_pending(struct st_daemon *d)
{
	struct pollfd p = { d->cfd, POLLIN, 0 };

	return d->cfd >= 0 && poll(&p, 1, 0) == 1;
}

/*
 * One turn of the loop: waits up to timeout ms (-1: for ever) and handles
 * what is ready, control commands first (a busy process must not delay
 * `stop`). With until_quit, what comes after a quit request is left.
 */
static int turn(struct st_daemon *d, int timeout, bool until_quit)
{
	struct epoll_event ev[64];
	int n = epoll_wait(d->epfd, ev, 64, timeout);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		uint64_t v = ev[i].data.u64;

		if (v >> 63 && ST_TAG_PROC + (v & 7) == ST_TAG_CLIENT) {
			st_control_event(d, (void *)(uintptr_t)(v & ~(1ull << 63) & ~7ull),
					 ev[i].events);
			ev[i].events = 0;
		} else if (!(v >> 63) && ((struct tag *)ev[i].data.ptr)->kind == ST_TAG_CONTROL) {
			st_control_accept(d);
			ev[i].events = 0;
		}
	}
	for (int i = 0; i < n && !(until_quit && d->quit); i++) {
		uint64_t v = ev[i].data.u64;

		if (!ev[i].events)
			continue;

		if (v >> 63) {
			void *ptr = (void *)(uintptr_t)(v & ~(1ull << 63) & ~7ull);
			struct st_proc *p = ptr;

			switch (ST_TAG_PROC + (v & 7)) {
			case ST_TAG_INSPECTOR:
				st_insp_readable(d, ptr);
				break;
			case ST_TAG_PROC_EXIT:
				if (!p->ended)
					st_proc_end(d, p);
				break;
			default:
				if (!p->ended)
					st_proc_readable(d, p);
				break;
			}
			continue;
		}
		switch (((struct tag *)ev[i].data.ptr)->kind) {
		case ST_TAG_LISTEN:
			st_proc_accept(d);
			break;
		case ST_TAG_TIMER:
			tick(d);
			break;
		case ST_TAG_SIGNAL:
			on_signal(d);
			break;
		case ST_TAG_CHILD:
			if (d->on_child)
				d->on_child(d, d->on_child_arg);
			break;
		default:
			break;
		}
	}
	st_proc_reap(d);
	st_insp_collect();
	st_control_collect();
	return 0;
}

int st_daemon_run(struct st_daemon *d)
{
	while (!d->quit) {
		int ret = turn(d, -1, true);

		if (ret < 0)
			return ret;
	}
	return 0;
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
		if (!p->ended && !st_proc_waiting(p))
			st_consume_all(d, p, ST_DRAIN_FLUSH);
	/* (a stop request ends it, but one made before it began) */
	while (st_now_ms() < end && (quit || !d->quit)) {
		bool deferred = false;

		for (struct st_proc *p = d->procs; p && !deferred; p = p->next)
			deferred = p->end_deferred;
		if (!st_insp_pending() && !deferred)
			return;
		if (turn(d, 100, false) < 0)
			return;
	}
}

void st_daemon_fini(struct st_daemon *d)
{
	/* Inspectors first: nothing waits for them (a probe inspector goes
	 * on alone), and what they would still answer is not needed. */
	st_insp_fini(d);
	st_commands_poll(d, true);
	st_control_fini(d);
	while (d->sessions)
		st_session_destroy(d, d->sessions);
	for (struct st_proc *p = d->procs; p; p = p->next) {
		p->end_now = true;
		st_proc_end(d, p);
	}
	st_proc_reap(d);
	st_lines_fini();
	st_writer_stop();
	if (d->lfd >= 0) {
		close(d->lfd);
		unlink(d->sock_path);
	}
	if (d->rundir[0]) {
		char path[ST_PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/active", d->rundir);
		unlink(path);
	}
	if (d->cfd >= 0) {
		char path[ST_PATH_MAX + 32];

		close(d->cfd);
		snprintf(path, sizeof(path), "%s/%s", d->rundir, ST_CTL_SOCKET);
		unlink(path);
	}
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sfd >= 0)
		close(d->sfd);
	st_evreg_free(&d->reg);
}
