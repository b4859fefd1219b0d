/*
 * The process side of the control socket: registration with the session
 * daemon (the status query) and the messages the process sends.
 *
 * Registration connects to the daemon's SOCK_SEQPACKET socket and sends
 * HELLO with the status memfd, the providers registered so far and a MAPS
 * message. Every provider registration then sends PROVIDER and SYNC, and
 * waits a bounded time for READY: by then the daemon has handled all that
 * came before (the statedump included, while the process is still there)
 * and written the session configurations and enable bits into the status
 * memory, so the process traces from its first call. Nothing can be enabled
 * before a provider exists, so the first exchange does not wait: a process
 * pays one round trip, after its wrapper library registered. With no
 * daemon, connect() fails at once and the process runs with everything
 * disabled.
 *
 * The socket's descriptor number is kept for the life of the process (a
 * new connection is dup3()'d onto it), and every use first checks that the
 * number still refers to our socket: a program that closes descriptors it
 * does not own must not make us write into a file it opens next.
 *
 * Whom a process hands its memory to: a daemon running as root or as the
 * process's own effective uid (SO_PEERCRED of the connection), never
 * another user's. A setuid or setgid program (AT_SECURE) trusts nothing in
 * its environment (secure_getenv: SHIMTRACE_RUNDIR, XDG_RUNTIME_DIR and
 * SHIMTRACE_TIMEOUT_MS are ignored) and talks only to the system daemon:
 * /run/shimtrace/shimtrace.sock, in a directory and a socket that belong to
 * root, with root at the other end; the socket a daemon writes into its
 * control page is taken only if it is that one.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "internal.h"
#include "sys.h"

int st__ctl_fd = -1;

static bool connected;
static bool secure; /* AT_SECURE: a setuid or setgid program */
static dev_t ctl_dev;
static ino_t ctl_ino;
static uint64_t sync_seq, ready_seen;
static int timeout_ms = 500;

#define MAX_PATHS 3
static struct sockaddr_un paths[MAX_PATHS];
static int npaths;

static void add_path(const char *dir)
{
	struct sockaddr_un *a = &paths[npaths];

	if (!dir || !*dir || npaths >= MAX_PATHS ||
	    strlen(dir) + sizeof("/" ST_ABI_SOCKET_NAME) > sizeof(a->sun_path))
		return;
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, dir);
	strcat(a->sun_path, "/" ST_ABI_SOCKET_NAME);
	npaths++;
}

/*
 * Where daemons listen, in order: $SHIMTRACE_RUNDIR (set by `shimtrace
 * record` for its private daemon; nothing else is tried then), the user's
 * daemon under $XDG_RUNTIME_DIR/shimtrace, the system daemon. A setuid or
 * setgid program: the system daemon only.
 */
void st__control_setup(void)
{
	const char *rundir, *t;
	char buf[sizeof(paths[0].sun_path)];

	secure = getauxval(AT_SECURE) != 0;
	if (secure) {
		add_path(ST_ABI_SYSTEM_RUNDIR);
		return;
	}
	rundir = secure_getenv("SHIMTRACE_RUNDIR");
	t = secure_getenv("SHIMTRACE_TIMEOUT_MS");

	if (t && atoi(t) > 0)
		timeout_ms = atoi(t);
	if (rundir && *rundir) {
		add_path(rundir);
		return;
	}
	t = secure_getenv("XDG_RUNTIME_DIR");
	if (t && *t && strlen(t) + sizeof("/shimtrace") < sizeof(buf)) {
		strcpy(buf, t);
		strcat(buf, "/shimtrace");
		add_path(buf);
	}
	add_path("/run/shimtrace");
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* True when fd still is the descriptor we opened (dev and inode match). */
static bool fd_is(int fd, dev_t dev, ino_t ino)
{
	struct stat st;

	return fd >= 0 && st__sys2(SYS_fstat, fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

static int raw_send(int fd, const void *msg, uint32_t len, int pass_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

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
	return (int)st__sys3(SYS_sendmsg, fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* The daemon went away (or our descriptor was taken): stop tracing. */
static void lost(void)
{
	int fd = st__status_fd();

	connected = false;
	if (st__ctl_fd >= 0)
		st__sys2(SYS_shutdown, st__ctl_fd, SHUT_RDWR);
	/* Switch every tracepoint off: nobody would read the events. */
	if (fd >= 0) {
		static const uint8_t zero[ST_ABI_PAGE];

		for (uint32_t p = 1; p < st__status_size() / ST_ABI_PAGE; p++)
			st__sys4(SYS_pwrite64, fd, zero, ST_ABI_PAGE, (long)p * ST_ABI_PAGE);
	}
}

int st__control_send(const void *msg, uint32_t len, int pass_fd)
{
	const struct st_abi_msg *m = msg;
	int fd = st__ctl_fd, ret;

	if (!connected || !fd_is(fd, ctl_dev, ctl_ino)) {
		if (connected)
			lost();
		return -ENOTCONN;
	}
	ret = raw_send(fd, msg, len, pass_fd);
	if (ret == -EAGAIN && m->type != ST_MSG_SUBBUF) {
		/* The daemon is slow: wait a bounded time for room. Sub-buffer
		 * notices may be dropped: the daemon also scans periodically. */
		struct pollfd p = { fd, POLLOUT, 0 };

		st__sys3(SYS_poll, &p, 1, timeout_ms);
		ret = raw_send(fd, msg, len, pass_fd);
	}
	if (ret == -EPIPE || ret == -ECONNRESET || ret == -ENOTCONN || ret == -ECONNREFUSED)
		lost();
	return ret < 0 ? ret : 0;
}

int st__control_sync(void)
{
	struct st_abi_sync m = { { ST_MSG_SYNC, sizeof(m) }, 0 };
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int ret;

	m.seq = __atomic_add_fetch(&sync_seq, 1, __ATOMIC_RELAXED);
	ret = st__control_send(&m, sizeof(m), -1);
	if (ret < 0)
		return ret;
	/* Several threads may wait at once (dlopen in two threads): whoever
	 * reads a READY records it for all. */
	while (__atomic_load_n(&ready_seen, __ATOMIC_ACQUIRE) < m.seq) {
		struct st_abi_sync r;
		struct pollfd p = { st__ctl_fd, POLLIN, 0 };
		uint64_t now = now_ms();
		long n;

		if (now >= deadline)
			return -ETIMEDOUT;
		st__sys3(SYS_poll, &p, 1, (long)(deadline - now));
		n = st__sys(SYS_recvfrom, st__ctl_fd, &r, sizeof(r), MSG_DONTWAIT, NULL, NULL);
		if (n == 0 || n == -ECONNRESET) {
			lost();
			return -ECONNRESET;
		}
		if (n == (long)sizeof(r) && r.hdr.type == ST_MSG_READY) {
			uint64_t seen = __atomic_load_n(&ready_seen, __ATOMIC_RELAXED);

			while (r.seq > seen && r.seq <= m.seq &&
			       !__atomic_compare_exchange_n(&ready_seen, &seen, r.seq, false,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				;
		}
	}
	return 0;
}

void st__control_maps_changed(uint32_t kind)
{
	struct st_abi_maps m = { { ST_MSG_MAPS, sizeof(m) }, kind, 0, 0, 0 };
	struct timespec ts;
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	m.ts_tsc = ((uint64_t)hi << 32) | lo;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	m.ts_mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	st__control_send(&m, sizeof(m), -1);
}

static int hello(int fd)
{
	struct {
		struct st_abi_hello h;
		char exe[4096];
	} m;
	long n;

	memset(&m.h, 0, sizeof(m.h));
	m.h.hdr.type = ST_MSG_HELLO;
	m.h.version = ST_ABI_VERSION;
	m.h.ppid = (int32_t)st__sys0(SYS_getppid);
	m.h.status_size = st__status_size();
	st__sys2(SYS_prctl, PR_GET_NAME, m.h.name);
	n = st__sys3(SYS_readlink, "/proc/self/exe", m.exe, sizeof(m.exe) - 1);
	m.exe[n > 0 ? n : 0] = '\0';
	m.h.hdr.len = (uint32_t)(sizeof(m.h) + (n > 0 ? n : 0) + 1);
	return raw_send(fd, &m, m.h.hdr.len, st__status_fd());
}

/* The "active" file beside the socket of the daemon we connected to. */
static char active_path[sizeof(paths[0].sun_path) + 8];

static void set_active_path(const char *sock)
{
	const char *slash = strrchr(sock, '/');
	size_t n = slash ? (size_t)(slash - sock) : 0;

	memcpy(active_path, sock, n);
	memcpy(active_path + n, "/active", sizeof("/active"));
}

/* Whether path is owned by root and writable by no one else. */
static bool root_owned(const char *path, mode_t type)
{
	struct stat st;

	return st__sys4(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (st.st_mode & S_IFMT) == type && st.st_uid == 0 &&
	       (type == S_IFSOCK || !(st.st_mode & (S_IWGRP | S_IWOTH)));
}

/* The system daemon's socket, checked for a setuid program: its directory
 * and itself root's (so no user put them there). */
static bool system_socket(const char *sock)
{
	static const char dir[] = ST_ABI_SYSTEM_RUNDIR;
	static const char want[] = ST_ABI_SYSTEM_RUNDIR "/" ST_ABI_SOCKET_NAME;

	return strcmp(sock, want) == 0 && root_owned(dir, S_IFDIR) && root_owned(want, S_IFSOCK);
}

/*
 * Connects fd to the socket at a, if it is a daemon we may hand our memory
 * to: run by root or by our effective uid (and for a setuid program, the
 * system daemon only). 0 or -errno.
 */
static int connect_to(long fd, const struct sockaddr_un *a)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int ret;

	if (secure && !system_socket(a->sun_path))
		return -EPERM;
	ret = (int)st__sys3(SYS_connect, fd, a, sizeof(*a));
	if (ret < 0)
		return ret;
	if (st__sys(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, &cred, &len, 0) < 0 ||
	    (cred.uid != 0 && cred.uid != (uid_t)st__sys0(SYS_geteuid)))
		return -EPERM;
	return 0;
}

/* Opens a connection to the first daemon that answers; -errno if none. */
static int dial(void)
{
	int ret = -ENOENT;

	for (int i = 0; i < npaths; i++) {
		long fd = st__sys3(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0)
			return (int)fd;
		ret = connect_to(fd, &paths[i]);
		if (ret == 0) {
			set_active_path(paths[i].sun_path);
			return (int)fd;
		}
		st__close((int)fd);
	}
	return ret;
}

/*
 * Registers on the connection fd: HELLO, the statedump request and every
 * provider. Returns the number of providers announced, or -errno.
 */
static int register_on(int fd)
{
	struct stat st;
	int ret;

	/* Keep one descriptor number for good: replace the old socket. */
	if (st__ctl_fd >= 0 && fd != st__ctl_fd) {
		if (st__sys3(SYS_dup3, fd, st__ctl_fd, O_CLOEXEC) < 0) {
			st__close(fd);
			return -EBADF;
		}
		st__close(fd);
		fd = st__ctl_fd;
	}
	if (st__sys2(SYS_fstat, fd, &st) < 0)
		return -EBADF;
	ctl_dev = st.st_dev;
	ctl_ino = st.st_ino;
	st__ctl_fd = fd;
	ret = hello(fd);
	if (ret < 0) {
		lost();
		return ret;
	}
	connected = true;
	st__control_maps_changed(ST_MAPS_STATEDUMP);
	return (int)st__registry_send_all();
}

/* Names in the control page the daemon this process chose, if it chose
 * one: only that daemon may adopt it (ctl/daemon/discover.c). */
static void mark_wanted(void)
{
	if (!st__control || npaths != 1 || secure)
		return;
	memcpy(st__control->wanted_path, paths[0].sun_path, sizeof(st__control->wanted_path));
	st__control->wanted_path[sizeof(st__control->wanted_path) - 1] = '\0';
}

int st__control_register(void)
{
	int fd, ret;

	mark_wanted();
	if (st__status_fd() < 0 || npaths == 0)
		return -ENOENT;
	fd = dial();
	if (fd < 0)
		return fd;
	ret = register_on(fd);
	if (ret > 0)
		return st__control_synced();
	return ret;
}

/*
 * A daemon that found this process running (it started before the daemon,
 * or its daemon died and another came) wrote the enable bits and its socket
 * into the status memory; the first enabled event comes here to connect,
 * from the writer's slow path, so only with raw system calls and no
 * waiting: the daemon already knows the process, the enable state is in
 * place, the connection only carries buffers and notifications from now.
 * One thread connects; the others drop their event (counted) meanwhile.
 * Failure switches everything off, so that events do not come back here.
 */
int st__control_ensure(void)
{
	static uint32_t connecting;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const volatile char *path;
	uint32_t idle = 0;
	size_t n;
	long fd;
	int ret;

	if (connected && fd_is(st__ctl_fd, ctl_dev, ctl_ino)) {
		struct pollfd p = { st__ctl_fd, POLLRDHUP, 0 };

		/* Still there? A daemon that died closed its end; the enable
		 * bits may be a new daemon's already: reconnect, keep them. */
		if (st__sys3(SYS_poll, &p, 1, 0) <= 0 ||
		    !(p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			return 0;
		connected = false;
	}
	if (!st__control)
		return -ENOTCONN;
	path = st__control->attach_path;
	for (n = 0; n < sizeof(a.sun_path) - 1 && path[n]; n++)
		a.sun_path[n] = path[n];
	if (n == 0 || n == sizeof(a.sun_path) - 1 || a.sun_path[0] != '/')
		return -ENOTCONN;
	if (!__atomic_compare_exchange_n(&connecting, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return -EBUSY;
	fd = st__sys3(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ret = (int)fd;
	if (fd >= 0) {
		ret = connect_to(fd, &a);
		if (ret == 0) {
			set_active_path(a.sun_path);
			ret = register_on((int)fd);
		}
		else
			st__close((int)fd);
	}
	if (ret < 0) {
		connected = false;
		lost();
		st__control->attach_path[0] = '\0'; /* that daemon is gone */
	}
	__atomic_store_n(&connecting, 0, __ATOMIC_RELEASE);
	return ret < 0 ? ret : 0;
}

int st__control_synced(void)
{
	int ret;

	/* The daemon keeps a file "active" beside its socket while a session
	 * is started. Without one nothing can be enabled: no need to wait for
	 * the daemon (a round trip at every process start, for every process
	 * of a system that preloads us). A session started meanwhile reaches
	 * this process when the daemon has read its registration. */
	if (active_path[0] && st__sys2(SYS_access, active_path, F_OK) == -ENOENT)
		return 0;
	ret = st__control_sync();

	if (ret < 0) {
		if (ret != -ETIMEDOUT)
			lost();
		return ret;
	}
	st__clock_configure();
	st__pools_create_active();
	return 0;
}

/*
 * Uses fd as the daemon connection without the registration exchange: for
 * unit tests, which play the daemon's part themselves.
 */
int st__control_attach(int fd)
{
	struct stat st;

	if (st__sys2(SYS_fstat, fd, &st) < 0)
		return -EBADF;
	ctl_dev = st.st_dev;
	ctl_ino = st.st_ino;
	st__ctl_fd = fd;
	connected = true;
	return 0;
}

/* Fork child (single-threaded): the inherited socket is the parent's. */
void st__control_disconnect(void)
{
	connected = false;
	ready_seen = 0;
	sync_seq = 0;
	if (st__ctl_fd >= 0 && fd_is(st__ctl_fd, ctl_dev, ctl_ino))
		st__close(st__ctl_fd);
	st__ctl_fd = -1;
}
