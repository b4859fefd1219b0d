/*
 * The transport: the one socket between the process and its daemon.
 *
 * A SOCK_SEQPACKET connection, non-blocking: a send either goes at once or
 * fails (EAGAIN when the daemon is slow), nothing here waits except
 * st__transport_wait_ready(), which registration uses and the event path
 * never does.
 *
 * Who uses it (the connection lock, below):
 * - registration (connect, HELLO, providers, MAPS, SYNC) takes the lock and
 *   may wait for it: it runs in constructors, destructors, the dlopen hooks
 *   and the fork child, never while the program is in a traced call;
 * - the event path (POOL, SUBBUF) only tries it, and on failure skips the
 *   message (a pool is offered again later, a sub-buffer notice is not
 *   needed: the daemon also scans) so that it never waits; so does the
 *   first event of a session with per-user buffers, which reads the pool
 *   the daemon sent (st__transport_receive);
 * - a signal handler that interrupts a holder on the same thread fails its
 *   try like any other.
 *
 * The descriptor is checked to still be ours before every use (fdid.c); one
 * that is not is forgotten, never closed or shut down: the number now
 * belongs to the program. The daemon then sees the connection closed while
 * the process lives, and keeps reading its buffers.
 *
 * Whom a process hands its memory to: a daemon running as root or as the
 * process's own effective uid (SO_PEERCRED of the connection), never
 * another user's; a setuid or setgid program only the system daemon, in a
 * directory and behind a socket that belong to root.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "core/monotime.h"
#include "internal.h"
#include "lock.h"
#include "sys.h"

static struct st__fdid sock = { .fd = -1 };
static bool up;
static uint64_t ready_seen;

/* ---- the connection lock: 0 free, 1 held, 2 held with waiters ---- */

static uint32_t lockword;

void st__conn_lock(void)
{
	st__mutex_lock(&lockword);
}

bool st__conn_trylock(void)
{
	return st__mutex_trylock(&lockword);
}

void st__conn_unlock(void)
{
	st__mutex_unlock(&lockword);
}

/* ---- the socket ---- */

/* Whether path is owned by root and writable by no one else. */
static bool root_owned(const char *path, mode_t type)
{
	struct stat st;

	return st__sys4(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (st.st_mode & S_IFMT) == type && st.st_uid == 0 &&
	       (type == S_IFSOCK || !(st.st_mode & (S_IWGRP | S_IWOTH)));
}

static bool system_socket(const char *path)
{
	static const char dir[] = ST_ABI_SYSTEM_RUNDIR;
	static const char want[] = ST_ABI_SYSTEM_RUNDIR "/" ST_ABI_SOCKET_NAME;

	return strcmp(path, want) == 0 && root_owned(dir, S_IFDIR) && root_owned(want, S_IFSOCK);
}

/* The previous connection, if still ours, is closed; never another's. */
static void drop(void)
{
	st__fdid_close(&sock);
	up = false;
	ready_seen = 0;
}

int st__transport_connect(const struct sockaddr_un *a, bool system_only)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	long fd;
	int ret;

	if (system_only && !system_socket(a->sun_path))
		return -EPERM;
	fd = st__sys3(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return (int)fd;
	/* A listening unix socket takes or refuses at once (EAGAIN when its
	 * backlog is full): connect() does not wait. */
	ret = (int)st__sys3(SYS_connect, fd, a, sizeof(*a));
	if (ret == 0 &&
	    (st__sys(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, &cred, &len, 0) < 0 ||
	     (cred.uid != 0 && cred.uid != (uid_t)st__sys0(SYS_geteuid))))
		ret = -EPERM;
	if (ret < 0) {
		st__close((int)fd);
		return ret;
	}
	drop();
	st__fdid_take(&sock, (int)fd);
	up = true;
	return 0;
}

bool st__transport_up(void)
{
	if (up && !st__fdid_ours(&sock)) {
		sock.fd = -1; /* the program's now: forget the number, touch nothing */
		up = false;
	}
	return up;
}

int st__transport_send(const void *msg, uint32_t len, int pass_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int ret;

	if (!st__transport_up())
		return -ENOTCONN;
	if (pass_fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	ret = (int)st__sys3(SYS_sendmsg, sock.fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (ret == -EPIPE || ret == -ECONNRESET || ret == -ENOTCONN || ret == -ECONNREFUSED)
		drop();
	return ret < 0 ? ret : 0;
}

bool st__transport_hung_up(void)
{
	struct pollfd p = { sock.fd, POLLRDHUP, 0 };

	if (!st__transport_up())
		return true;
	if (st__sys3(SYS_poll, &p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
		drop();
		return true;
	}
	return false;
}

/*
 * Reads one message the daemon sent, without waiting: a READY (it answers
 * a SYNC), or a per-user pool with its memfd (st__pool_received). Anything
 * else, and a descriptor that comes with it, is dropped. Under the
 * connection lock. Returns what recvmsg returned (0: the daemon closed).
 */
static long recv_one(void)
{
	union {
		struct st_abi_msg hdr;
		struct st_abi_sync sync;
		struct st_abi_user_pool_msg pool;
	} m;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fd = -1;
	long n;

	n = st__sys3(SYS_recvmsg, sock.fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n;
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (n == (long)sizeof(m.sync) && m.hdr.type == ST_MSG_READY && m.sync.seq > ready_seen)
		ready_seen = m.sync.seq;
	else if (n == (long)sizeof(m.pool) && m.hdr.type == ST_MSG_USER_POOL && fd >= 0) {
		st__pool_received(&m.pool, fd); /* (takes the descriptor) */
		fd = -1;
	}
	if (fd >= 0)
		st__close(fd);
	return n;
}

/*
 * Waits (at most timeout_ms) for the READY that answers SYNC number seq.
 * Registration only, under the connection lock, so one thread reads.
 */
int st__transport_wait_ready(uint64_t seq, int timeout_ms)
{
	uint64_t deadline = st_now_ms() + (uint64_t)timeout_ms;

	while (ready_seen < seq) {
		struct pollfd p = { sock.fd, POLLIN, 0 };
		uint64_t now = st_now_ms();
		long n;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (!st__transport_up())
			return -ENOTCONN;
		st__sys3(SYS_poll, &p, 1, (long)(deadline - now));
		n = recv_one();
		if (n == 0 || n == -ECONNRESET) {
			drop();
			return -ECONNRESET;
		}
	}
	return 0;
}

/* The most messages one look takes: the daemon sends a pool per session,
 * and a READY per SYNC, which registration waits for anyway. */
#define RECV_AT_ONCE 64

void st__transport_receive(void)
{
	for (int k = 0; k < RECV_AT_ONCE && st__transport_up(); k++) {
		long n = recv_one();

		if (n == 0 || n == -ECONNRESET)
			drop();
		if (n <= 0)
			break;
	}
}

/* Fork child (one thread): the connection is the parent's; the lock may
 * have been held by a thread that does not exist here. */
void st__transport_forget(void)
{
	drop();
	lockword = 0;
}

int st__transport_attach(int fd)
{
	drop();
	if (st__fdid_take(&sock, fd) < 0)
		return -EBADF;
	up = true;
	return 0;
}
