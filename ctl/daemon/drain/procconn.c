/*
 * Process connections: the registration socket, each process's
 * connection and pidfd, its messages, and its end.
 *
 * The peer's pid and uid come from SO_PEERCRED, never from the messages, so
 * a process can register only itself. A malformed message ends the
 * connection: the process's trace stops there, nothing else is affected.
 * What a process hands over is checked by the process model (proc.c).
 *
 * A process ends when its connection closes as it exits, or its pidfd
 * reports its exit, whichever comes first; the buffers stay mapped, so
 * everything it committed is drained then (finish.c). A connection that
 * closes while the process runs on (exec, or it closed our descriptor)
 * leaves it read without one (detach). How it ended goes into its traces
 * (procend.c).
 *
 * What a process costs is charged to its owner's quota (quota.h): its
 * connection, its registration, and the event classes it brings. A
 * process refused for a quota has its connection closed: it runs on with
 * tracing off, and nothing it did reaches another user.
 *
 * The processes are a list, scanned to find one (a pid, a resumed
 * connection): not cds_lfht: only the daemon's thread reads and changes
 * it, so an RCU table would add grace periods and a library to the one
 * thread for no reader; cds_lfht is for a table another thread reads while
 * this one changes it.
 *
 * Owns: the registration socket's connections: a process's conn part, and
 *       the daemon's list of processes (added, ended, reaped).
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, drain, loop, model, objects, wire.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/common/fdpass.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/drain/consumer.h"
#include "ctl/daemon/drain/finish.h"
#include "ctl/daemon/drain/procconn.h"
#include "ctl/daemon/drain/procend.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/memory.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/model/userpool.h"
#include "ctl/daemon/objects/callsite.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/wire/msg.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define REFUSED ST_PROC_REFUSED

static int dispatch(struct st_daemon *d, struct st_proc *p, const uint8_t *buf, size_t len,
		    int fd);

/* A pool the process sent: taken, and its statedump written. */
static int pool(struct st_daemon *d, struct st_proc *p, const struct st_abi_pool_msg *m, int fd)
{
	int ret = st_proc_on_pool(d, p, m, fd);

	if (ret > 0)
		st_statedump_session(d, p, m->session);
	return ret < 0 ? -1 : 0;
}

/*
 * The times p stopped waiting for an answer to SYNC (its control page):
 * logged as they grow. What it registered then was enabled only when the
 * answer came, so its events until then are missing, and nothing counted
 * them. (The number is the process's to write: it only makes the daemon
 * say this of it.)
 */
static void say_late(struct st_proc *p)
{
	uint32_t n = p->control ? __atomic_load_n(&p->control->late_answers, __ATOMIC_RELAXED) : 0;
	char what[256];

	if (n <= p->conn.late_said)
		return;
	p->conn.late_said = n;
	snprintf(what, sizeof(what),
		 "stopped waiting for the daemon's answer %" PRIu32 " time%s (SHIMTRACE_TIMEOUT_MS; "
		 "the daemon was busy): events of the providers it registered then may be missing "
		 "until the answer came",
		 n, n == 1 ? "" : "s");
	st_proc_warn(p, what);
}

/*
 * The peer's pidfd: from the socket itself where the kernel gives it (6.5
 * and later: no pid to be recycled between the connect and now), else
 * opened from the pid the socket names.
 */
static int peer_pidfd(int fd, pid_t pid)
{
	socklen_t len = sizeof(int);
	int pidfd;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && len == sizeof(int))
		return pidfd;
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void on_listen(struct st_loop *l, void *arg, uint32_t events)
{
	(void)l;
	(void)events;
	st_proc_accept(arg);
}

int st_proc_listen(struct st_daemon *d, bool all_users, char *err, size_t errlen)
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
	    chmod(a.sun_path, all_users ? 0666 : 0600) < 0 || listen(fd, 512) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", d->sock_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	d->lfd = fd;
	return st_watch_add(&d->loop, &d->listen_watch, fd, EPOLLIN, on_listen, d, false);
}

/* Out of descriptors: the listening socket would stay readable and the
 * loop spin; it is not watched until the next tick. */
static void pause_accept(struct st_daemon *d)
{
	if (d->accept_paused)
		return;
	st_watch_del(&d->loop, &d->listen_watch);
	d->accept_paused = true;
	st_log(ST_LOG_WARN, "out of descriptors: connections wait");
}

void st_proc_accept_resume(struct st_daemon *d)
{
	if (d->accept_paused &&
	    st_watch_add(&d->loop, &d->listen_watch, d->lfd, EPOLLIN, on_listen, d, false) == 0)
		d->accept_paused = false;
}

static bool admitted(const struct st_daemon *d, uid_t uid)
{
	if (!d->nadmit || uid == d->uid)
		return true;
	for (uint32_t i = 0; i < d->nadmit; i++)
		if (d->admit[i] == uid)
			return true;
	return false;
}

void st_proc_accept(struct st_daemon *d)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct st_user *u;
	struct st_proc *p;
	int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		/* Out of descriptors: the listening socket would stay readable
		 * and the loop spin; stop taking connections for a tick. */
		if (errno == EMFILE || errno == ENFILE)
			pause_accept(d);
		return;
	}
	/* A user's daemon takes its user's processes only: not even root's,
	 * whose memory a user must not get; one that admits a few users
	 * (record --pid) takes theirs only. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (d->uid != 0 && cred.uid != d->uid) || !admitted(d, cred.uid)) {
		close(fd);
		return;
	}
	u = st_user_of(cred.uid);
	if (!st_fd_room(cred.uid)) {
		st_quota_refuse(u, ST_Q_DESCRIPTORS, cred.pid,
				"its user's processes handed over descriptors that are not shared "
				"memory");
		close(fd);
		return;
	}
	if (!st_quota_take(u, ST_Q_CONNECTIONS, 1, cred.pid, "too many connections")) {
		close(fd);
		return;
	}
	p = st_proc_new(d, cred.pid, cred.uid, cred.gid);
	if (!p) {
		st_quota_give(u, ST_Q_CONNECTIONS, 1);
		close(fd);
		return;
	}
	p->conn.fd = fd;
	p->user = u;
	p->conn.counts_connection = true;
	p->pidfd = peer_pidfd(fd, p->pid);
	p->next = d->procs;
	d->procs = p;
	st_watch_add(&d->loop, &p->conn.fd_watch, fd, EPOLLIN, st_proc_on_readable, p, false);
	if (p->pidfd >= 0)
		st_watch_add(&d->loop, &p->pidfd_watch, p->pidfd, EPOLLIN, st_proc_on_exit, p, false);
}

void st_proc_on_readable(struct st_loop *l, void *arg, uint32_t events)
{
	struct st_proc *p = arg;

	(void)l;
	(void)events;
	if (!p->conn.ended)
		st_proc_readable(p->d, p);
}

void st_proc_on_exit(struct st_loop *l, void *arg, uint32_t events)
{
	struct st_proc *p = arg;

	(void)l;
	(void)events;
	if (!p->conn.ended)
		st_proc_end(p->d, p);
}

/* Closes p's connection and gives it back to its user's quota. */
static void close_connection(struct st_daemon *d, struct st_proc *p)
{
	if (p->conn.fd >= 0) {
		st_watch_del(&d->loop, &p->conn.fd_watch);
		close(p->conn.fd);
		p->conn.fd = -1;
	}
	if (p->conn.counts_connection) {
		st_quota_give(p->user, ST_Q_CONNECTIONS, 1);
		p->conn.counts_connection = false;
	}
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * A process the daemon reads without a connection (found running, or its
 * connection closed) connected again, with the same status memory: the
 * connection joins the record it has, whose pools and streams go on. The
 * record p made for the connection is dropped.
 */
static bool resume(struct st_daemon *d, struct st_proc *p, int status_fd,
		   const struct st_msg_hello *h)
{
	struct st_proc *q;

	for (q = d->procs; q; q = q->next)
		if (q != p && q->discovered && !q->conn.ended && q->pid == p->pid &&
		    same_file(q->status_fd, status_fd))
			break;
	if (!q)
		return false;
	st_watch_del(&d->loop, &p->conn.fd_watch);
	q->conn.fd = p->conn.fd;
	q->rseq = h->flags & ST_HELLO_RSEQ;
	p->conn.fd = -1;
	st_watch_add(&d->loop, &q->conn.fd_watch, q->conn.fd, EPOLLIN, st_proc_on_readable, q, false);
	q->conn.counts_connection = p->conn.counts_connection;
	p->conn.counts_connection = false;
	q->discovered = false;
	q->ppid = h->ppid;
	memcpy(q->name, h->name, sizeof(q->name));
	snprintf(q->exe, sizeof(q->exe), "%s", h->exe);
	if (p->pidfd >= 0) {
		st_watch_del(&d->loop, &p->pidfd_watch);
		close(p->pidfd);
		p->pidfd = -1;
	}
	p->conn.ended = true; /* reaped with nothing to finish */
	st_log_user(q->uid, ST_LOG_INFO, "process %d (%s) connected again", q->pid, q->name);
	return true;
}

/*
 * p's connection closed. A process that still runs (it closed our socket
 * among its descriptors, say) is read on without one, like a process found
 * running; true then. Its end comes from its pidfd. One that is exiting
 * is not: its descriptors close before its pidfd says so (procend.c).
 */
static bool detach(struct st_daemon *d, struct st_proc *p)
{
	if (!p->hello || p->discovered || p->pidfd < 0 || st_proc_gone(p))
		return false;
	close_connection(d, p);
	p->discovered = true;
	st_log_user(p->uid, ST_LOG_INFO, "process %d (%s) closed its connection: its buffers are read on",
	       p->pid, p->name);
	return true;
}

static int on_hello(struct st_daemon *d, struct st_proc *p, const void *buf, size_t len, int fd)
{
	struct st_msg_hello h;
	const char *err;

	if (p->hello || fd < 0) {
		st_proc_warn(p, "HELLO repeated or without its status memory");
		return -1;
	}
	if (st_msg_parse_hello(buf, len, &h, &err) < 0) {
		st_proc_warn(p, err);
		return -1;
	}
	if (st_check_memfd(fd, F_SEAL_SHRINK, h.status_size) < 0) {
		st_proc_warn(p, "status memory is not a sealed memfd of the announced size");
		return -1;
	}
	if (resume(d, p, fd, &h))
		return 0;
	if (!st_quota_take(p->user, ST_Q_PROCESSES, 1, p->pid, "too many processes"))
		return REFUSED;
	p->counts_process = true;
	p->control = mmap(NULL, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p->control == MAP_FAILED) {
		p->control = NULL;
		return -1;
	}
	p->status_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	p->status_size = h.status_size;
	p->ppid = h.ppid;
	p->rseq = h.flags & ST_HELLO_RSEQ;
	memcpy(p->name, h.name, sizeof(p->name));
	snprintf(p->exe, sizeof(p->exe), "%s", h.exe);
	p->hello = true;
	/* It was found running before, with another status memory (it ran
	 * exec since): that one is over. */
	for (struct st_proc *q = d->procs; q; q = q->next)
		if (q != p && q->discovered && !q->conn.ended && q->pid == p->pid)
			st_proc_end(d, q);
	st_proc_claim(d, p);
	st_log_user(p->uid, ST_LOG_INFO, "process %d (%s) registered", p->pid, p->name);
	st_session_apply(d, p);
	return 0;
}

int st_proc_message(struct st_daemon *d, struct st_proc *p, const uint8_t *buf, size_t len)
{
	return dispatch(d, p, buf, len, -1);
}

static int dispatch(struct st_daemon *d, struct st_proc *p, const uint8_t *buf, size_t len, int fd)
{
	const char *err;
	uint32_t type;

	if (st_msg_check(buf, len, &type, &err) < 0) {
		st_proc_warn(p, err);
		return -1;
	}
	if (!p->hello && type != ST_MSG_HELLO) {
		st_proc_warn(p, "message before HELLO");
		return -1;
	}
	switch (type) {
	case ST_MSG_HELLO:
		return on_hello(d, p, buf, len, fd);
	case ST_MSG_PROVIDER:
		return st_proc_on_provider(d, p, buf, len);
	case ST_MSG_PROVIDER_GONE:
		st_proc_on_provider_gone(p, (const struct st_abi_provider_gone *)buf);
		return 0;
	case ST_MSG_MAPS: {
		const struct st_abi_maps *m = (const struct st_abi_maps *)buf;
		uint64_t ts = d->clock.kind == ST_CLOCK_TSC ? m->ts_tsc : m->ts_mono;
		uint64_t latest = st_clock_latest(&d->clock, st_clock_now(&d->clock));

		if (m->kind < ST_MAPS_STATEDUMP || m->kind > ST_MAPS_DLCLOSE) {
			st_proc_warn(p, "MAPS of an unknown kind");
			return -1;
		}
		/* (the process's word, as its records' times: never past the
		 * daemon's now, so that the trace stays readable; consumer.c) */
		st_statedump(d, p, m->kind, ts < latest ? ts : latest);
		return 0;
	}
	case ST_MSG_SYNC:
		say_late(p);
		st_proc_sync(d, p, ((const struct st_abi_sync *)buf)->seq);
		return 0;
	case ST_MSG_POOL:
		return pool(d, p, (const struct st_abi_pool_msg *)buf, fd);
	case ST_MSG_SUBBUF: {
		const struct st_abi_subbuf_msg *m = (const struct st_abi_subbuf_msg *)buf;

		struct st_user_pool *up = m->session < ST_ABI_MAX_SESSIONS
						  ? st_user_pool_of(d, p, m->session)
						  : NULL;

		/* (its user's buffers, if it writes them) */
		if (up && !p->pools[m->session].ring.base)
			st_consume_slot(d, up->holder, m->session, m->slot, ST_DRAIN_CLOSED);
		else if (!st_proc_waiting(p))
			st_consume_slot(d, p, m->session, m->slot, ST_DRAIN_CLOSED);
		return 0;
	}
	case ST_MSG_EXIT:
		return 0;
	}
	return -1;
}

enum taken { TAKEN, NONE_WAITING, CLOSED, FAILED };

/* uid reached its quota of descriptors the daemon keeps: its connections
 * are closed (and new ones refused: st_proc_accept), its processes run on
 * untraced. */
static void refuse_user(struct st_daemon *d, uid_t uid)
{
	for (struct st_proc *q = d->procs; q; q = q->next)
		if (q->uid == uid && !q->conn.ended && q->conn.fd >= 0) {
			q->conn.end_now = true;
			st_proc_end(d, q);
		}
}

/* Receives and handles one message of p's connection. */
static enum taken take_message(struct st_daemon *d, struct st_proc *p)
{
	static uint8_t buf[ST_ABI_MSG_MAX];
	int fd, ret, truncated;
	ssize_t n = st_recv_fd(p->conn.fd, buf, sizeof(buf), &fd, MSG_DONTWAIT, &truncated);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return NONE_WAITING;
	if (n <= 0)
		return n == 0 ? CLOSED : FAILED;
	if (truncated) {
		st_proc_warn(p, "oversized control message");
		ret = -1;
	} else {
		ret = dispatch(d, p, buf, (size_t)n, fd);
	}
	/* What the daemon takes from a process is shared memory, with HELLO
	 * and POOL only: any other descriptor is one the daemon must keep
	 * (fdsafe.c), so its sender is refused at once, and its user at its
	 * quota of them. */
	if (st_fd_drop(fd, p->uid) && ret >= 0) {
		st_proc_warn(p, "sent a descriptor that is not shared memory: connection closed");
		ret = REFUSED;
	}
	if (fd >= 0 && !st_fd_room(p->uid))
		refuse_user(d, p->uid);
	if (ret < 0) {
		if (ret != REFUSED)
			st_proc_warn(p, "protocol error: connection closed");
		return FAILED;
	}
	return TAKEN;
}

void st_proc_readable(struct st_daemon *d, struct st_proc *p)
{
	/* A few messages a turn: each may mean draining a sub-buffer, and a
	 * control command (stop) must not wait behind a busy process. */
	for (int budget = 0; budget < 16 && p->conn.fd >= 0; budget++) {
		/* (and none at all while a command waits: the loop takes it
		 * first; the rest of the messages stay queued) */
		if (budget && st_loop_urgent(&d->loop))
			return;
		switch (take_message(d, p)) {
		case TAKEN:
			break;
		case NONE_WAITING:
			return;
		case CLOSED:
			if (detach(d, p))
				return;
			st_proc_end(d, p);
			return;
		case FAILED:
			st_proc_end(d, p);
			return;
		}
	}
}

/* Stops watching p's connection and pidfd, and gives back its connection. */
static void hang_up(struct st_daemon *d, struct st_proc *p)
{
	close_connection(d, p);
	if (p->pidfd >= 0) {
		st_watch_del(&d->loop, &p->pidfd_watch);
		close(p->pidfd);
		p->pidfd = -1;
	}
}

void st_proc_end(struct st_daemon *d, struct st_proc *p)
{
	if (p->conn.ended)
		return;
	if (!p->conn.end_decided) {
		p->conn.end_decided = true;
		p->conn.gone = st_proc_gone(p);
		/* What it sent before it went is still queued when its pidfd
		 * came first: taken in (a pool it offered among it). (Gone,
		 * it sends no more: this ends.) */
		while (p->conn.gone && p->conn.fd >= 0 && take_message(d, p) == TAKEN)
			;
		if (p->conn.ended)
			return; /* (its connection joined another record) */
	}
	say_late(p);
	hang_up(d, p);
	/* What it left is drained first as usual, which asks for the line
	 * tables its callers need; while they (or its objects) are on their
	 * way, the final drain waits (a bounded time), so that its call
	 * sites are refined. */
	if (!p->conn.end_now && !st_proc_waiting(p))
		st_consume_all(d, p, ST_DRAIN_FLUSH);
	if (!p->conn.end_now && st_proc_waiting(p)) {
		p->conn.end_deferred = true;
		return;
	}
	p->conn.end_deferred = false;
	/* what it wrote into its user's buffers, while its classes are here */
	st_statedump_owed(d, p);
	st_consume_user_pools_of(d, p);
	st_user_pools_hold(d, p); /* (overwrite mode: for snapshots) */
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		st_session_finish_proc(d, p, s);
		st_proc_end_event(d, p, s);
		struct st_session *ses = st_session_at(d, s, p);

		if (ses) {
			struct st_session_stats *st = st_session_stats_for(ses, p, false);

			if (st)
				st->ended = true;
		}
		st_proc_pool_close(p, s);
	}
	st_memory_release(d, p);
	p->conn.ended = true;
	if (p->counts_process) {
		st_quota_give(p->user, ST_Q_PROCESSES, 1);
		p->counts_process = false;
	}
	st_log_user(p->uid, ST_LOG_INFO, "process %d (%s) ended", p->pid, p->name);
}

void st_proc_end_now(struct st_daemon *d, struct st_proc *p)
{
	p->conn.end_now = true;
	st_proc_end(d, p);
}

void st_proc_end_gone(struct st_daemon *d, bool now)
{
	for (struct st_proc *p = d->procs; p; p = p->next) {
		bool due;

		if (p->conn.ended)
			continue;
		/* (a deferred end waits for line tables: not once stopping) */
		due = p->conn.end_deferred ? now : st_proc_exited(p);
		if (!due)
			continue;
		p->conn.end_now |= now;
		st_proc_end(d, p);
	}
}

void st_proc_recheck(struct st_daemon *d)
{
	for (struct st_proc *p = d->procs; p; p = p->next) {
		st_proc_apply_due(d, p);
		if (p->conn.end_deferred && !st_proc_waiting(p))
			st_proc_end(d, p);
	}
}

void st_proc_lines_settled(struct st_daemon *d)
{
	for (struct st_proc *p = d->procs; p; p = p->next)
		st_objects_lines_came(p); /* its next drain sees what came */
	st_proc_recheck(d);
}

/* Frees ended processes; called between two event-loop rounds. */
void st_proc_reap(struct st_daemon *d)
{
	struct st_proc **pp = &d->procs;

	while (*pp) {
		struct st_proc *p = *pp;

		/* (an ended process whose records its user's rings still hold
		 * stays, for snapshots: userpool.c) */
		if (!p->conn.ended || st_user_pools_held(d, p)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		/* what the modules above the process record hold of it, then
		 * the record */
		st_insp_forget(p);
		st_objects_forget(p);
		st_callsites_reset(p);
		st_user_pools_forget(d, p);
		st_proc_free(d, p);
	}
}
