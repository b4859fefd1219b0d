/*
 * Registration: the process introduces itself and its providers to the
 * session daemon, and keeps it told of what the loader changes.
 *
 * Registration connects to the daemon's socket and sends HELLO with the
 * status memfd, a MAPS message (the daemon reads the loaded objects) and
 * the providers registered so far. Every later provider registration sends
 * PROVIDER and SYNC, and waits a bounded time for READY: by then the daemon
 * has handled all that came before (the statedump included, while the
 * process is still there) and written the session configurations and
 * enable bits into the status memory, so the process traces from its first
 * call. Nothing can be enabled before a provider exists, so the first
 * exchange does not wait: a process pays one round trip, after its wrapper
 * library registered. With no daemon, connect() fails at once and the
 * process runs with everything disabled.
 *
 * Everything here holds the connection lock (transport.c): providers come
 * and go in constructors and destructors, the dlopen hooks report from any
 * thread, and this module alone sends providers, from the one message
 * buffer of the registry. The event path never comes here except for
 * st__reg_offer_pool and st__reg_subbuf_ready, which only try the lock.
 *
 * A process a daemon found running (it started first, or its connection
 * was lost: the daemon died, or the program closed our socket) is traced
 * through its status memory without a connection: the daemon takes the
 * pools it offers in its control page. It connects again at its next
 * registration (a dlopen, a provider), to the socket the daemon wrote.
 *
 * A setuid or setgid program (AT_SECURE) trusts nothing in its environment
 * (secure_getenv: SHIMTRACE_RUNDIR, XDG_RUNTIME_DIR and SHIMTRACE_TIMEOUT_MS
 * are ignored) and talks only to the system daemon; the socket a daemon
 * writes into its control page is taken only if it is that one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "internal.h"
#include "rseq.h"
#include "sys.h"

static bool secure; /* AT_SECURE: a setuid or setgid program */
static bool attached; /* by an inspector: its bound on our waits is the attach's */
static uint64_t sync_seq, acked;
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

/* Written by the inspector of an attach before it loaded us (abi.h);
 * weak: NULL in a process started with the preload. */
extern const struct st_abi_attach st_attach_args __attribute__((weak, visibility("default")));

const struct st_abi_attach *st__reg_attach_args(void)
{
	const struct st_abi_attach *a = &st_attach_args;

	if (!a || st_load_acquire(&a->magic) != ST_ABI_ATTACH_MAGIC ||
	    a->version != ST_ABI_VERSION || !memchr(a->rundir, '\0', sizeof(a->rundir)))
		return NULL;
	return a;
}

const char *st__reg_attach_rundir(void)
{
	const struct st_abi_attach *a = st__reg_attach_args();

	return a ? a->rundir : NULL;
}

/*
 * Where daemons listen, in order: $SHIMTRACE_RUNDIR (set by `shimtrace
 * record` for its private daemon; nothing else is tried then), the user's
 * daemon under $XDG_RUNTIME_DIR/shimtrace, the system daemon. A setuid or
 * setgid program: the system daemon only. A process being attached: the
 * daemon of the attach, whoever it is (what ptrace can do to the process
 * goes beyond anything its environment could say).
 */
void st__reg_setup(void)
{
	const char *rundir, *t;
	char buf[sizeof(paths[0].sun_path)];

	secure = getauxval(AT_SECURE) != 0;
	rundir = st__reg_attach_rundir();
	if (rundir) {
		if (st__control)
			st_store_release(&st__control->attach_state, ST_ABI_DETACHED);
		add_path(rundir);
		attached = true;
		if (st_attach_args.timeout_ms)
			timeout_ms = (int)st_attach_args.timeout_ms;
		return;
	}
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
	add_path(ST_ABI_SYSTEM_RUNDIR);
}

/* The "active" file beside the socket of the daemon we connected to, and
 * that socket. */
static char active_path[sizeof(paths[0].sun_path) + sizeof(ST_ABI_ACTIVE_NAME)];
static char connected_path[sizeof(paths[0].sun_path)];

static void set_active_path(const char *sock)
{
	const char *slash = strrchr(sock, '/');
	size_t n = slash ? (size_t)(slash - sock) : 0;

	memcpy(connected_path, sock, sizeof(connected_path));
	connected_path[sizeof(connected_path) - 1] = '\0';

	memcpy(active_path, sock, n);
	memcpy(active_path + n, "/" ST_ABI_ACTIVE_NAME, sizeof("/" ST_ABI_ACTIVE_NAME));
}

/* What the daemon has answered, for reusing status pages: everything when
 * no daemon knows the process. */
static uint64_t answered(void)
{
	if (!st__transport_up() && (!st__control || st__control->daemon_pid == 0))
		return UINT64_MAX;
	return acked;
}

/* The first n bytes at most of file path, into buf: how many, or the
 * negative errno of the open or the read. */
static long read_small(const char *path, int flags, void *buf, size_t n)
{
	long fd = st__sys3(SYS_open, path, O_RDONLY | O_CLOEXEC | flags, 0), got;

	if (fd < 0)
		return fd;
	got = st__sys3(SYS_read, fd, buf, n);
	st__close((int)fd);
	return got;
}

/*
 * How long to wait for the daemon's answer, from its "active" file
 * (core/abi.h): 0 when no session is started (no need to), the process's
 * own bound, or while a --blocking session is started as long as a live
 * daemon may take (a process that stopped waiting would miss events that
 * nothing counts, in a session that promised to lose none). An attach
 * keeps the bound its inspector set: the inspector waits for us.
 */
static int answer_wait_ms(void)
{
	char buf[sizeof(ST_ABI_ACTIVE_BLOCKING) - 1];
	long n;

	if (!active_path[0])
		return timeout_ms;
	/* (O_NONBLOCK: whatever is there, opening it never waits) */
	n = read_small(active_path, O_NONBLOCK, buf, sizeof(buf));
	if (n == -ENOENT)
		return 0;
	if (attached || n != (long)sizeof(buf) || memcmp(buf, ST_ABI_ACTIVE_BLOCKING, sizeof(buf)) != 0)
		return timeout_ms;
	return timeout_ms > ST_ABI_ANSWER_WAIT_MS ? timeout_ms : ST_ABI_ANSWER_WAIT_MS;
}

static int sync_now(int wait_ms)
{
	struct st_abi_sync m = { { ST_MSG_SYNC, sizeof(m) }, ++sync_seq };
	int ret = st__transport_send(&m, sizeof(m), -1);

	if (ret == 0)
		ret = st__transport_wait_ready(m.seq, wait_ms);
	if (ret == 0)
		acked = m.seq;
	/* (the daemon says so: what it enables for this comes late) */
	if (ret == -ETIMEDOUT && st__control)
		st_store_relaxed(&st__control->late_answers, st__control->late_answers + 1);
	return ret;
}

static void send_emit(const void *msg, uint32_t len, void *arg)
{
	(void)arg;
	st__transport_send(msg, len, -1);
}

static void log_emit(const void *msg, uint32_t len, void *arg)
{
	st__status_log(msg, len);
	if (arg)
		st__transport_send(msg, len, -1);
}

static void maps_changed(uint32_t kind, uint64_t ts_tsc, uint64_t ts_mono)
{
	struct st_abi_maps m = { { ST_MSG_MAPS, sizeof(m) }, kind, 0, ts_tsc, ts_mono };

	st__transport_send(&m, sizeof(m), -1);
}

static void now_both(uint64_t *tsc, uint64_t *mono)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	*tsc = ((uint64_t)hi << 32) | lo;
	*mono = st__clock_monotonic();
}

/*
 * The process's name: its main thread's (/proc/self/comm is the thread
 * group leader's), which the registering thread need not be -- an attach
 * registers from whichever thread was stopped at a safe point, in a JVM
 * its Attach Listener. Without /proc, the calling thread's.
 */
static void process_name(char name[16])
{
	char buf[17]; /* the name (15 bytes at most), the newline /proc adds */
	long n = read_small("/proc/self/comm", 0, buf, 16);

	if (n <= 0 || buf[n - 1] != '\n') {
		st__sys2(SYS_prctl, PR_GET_NAME, name);
		return;
	}
	/* (only the last newline is /proc's: the name may end with one) */
	memcpy(name, buf, (size_t)n - 1);
	name[n - 1] = '\0';
}

static int hello(void)
{
	struct {
		struct st_abi_hello h;
		char exe[4096];
	} m;
	int fd = st__status_fd();
	long n;

	if (fd < 0)
		return -EBADF; /* the program closed it: no daemon can have it now */
	memset(&m.h, 0, sizeof(m.h));
	m.h.hdr.type = ST_MSG_HELLO;
	m.h.version = ST_ABI_VERSION;
	m.h.ppid = (int32_t)st__sys0(SYS_getppid);
	m.h.status_size = st__status_size();
	m.h.flags = st__rseq_usable() ? ST_HELLO_RSEQ : 0;
	process_name(m.h.name);
	n = st__sys3(SYS_readlink, "/proc/self/exe", m.exe, sizeof(m.exe) - 1);
	m.exe[n > 0 ? n : 0] = '\0';
	m.h.hdr.len = (uint32_t)(sizeof(m.h) + (n > 0 ? n : 0) + 1);
	return st__transport_send(&m, m.h.hdr.len, fd);
}

/* Hands p to the daemon (the connection lock held), or finds that the
 * daemon took it from the control page; never waits. */
static void offer_pool(struct st__pool *p)
{
	struct st_abi_pool_msg msg = {
		.hdr = { ST_MSG_POOL, sizeof(msg) },
		.session = p->session,
		.generation = p->generation,
		.size = p->geo.size,
	};

	if (st_load_acquire(&p->handed))
		return;
	/* Taken by the daemon from the control page, or sent now. */
	if (st_load_acquire(&st__control->pool_taken[p->session]) != p->generation &&
	    (!st__fdid_ours(&p->fd) || st__transport_send(&msg, sizeof(msg), p->fd.fd) < 0))
		return;
	st__fdid_close(&p->fd);
	st_store_release(&p->handed, true);
}

/* Hands the pools of the sessions active now (or offers them). */
static void pools_offer_active(void)
{
	for (uint32_t s = 0; s < ST_ABI_MAX_SESSIONS; s++) {
		struct st__pool *p = st__control && st__control->session[s].generation
					     ? st__pool_get(s, true)
					     : NULL;

		if (p)
			offer_pool(p);
	}
}

/*
 * The daemon keeps a file "active" beside its socket while a session is
 * started. Without one nothing can be enabled: no need to wait for the
 * daemon (a round trip at every process start, for every process of a
 * system that preloads us). A session started meanwhile reaches this
 * process when the daemon has read its registration.
 */
static void synced(void)
{
	int wait_ms = answer_wait_ms();

	if (wait_ms == 0 || sync_now(wait_ms) < 0)
		return;
	st__clock_configure();
	pools_offer_active();
}

/* Introduces the process on a fresh connection; false if it failed. */
static bool introduce(void)
{
	uint64_t tsc, mono;

	if (hello() < 0)
		return false;
	now_both(&tsc, &mono);
	maps_changed(ST_MAPS_STATEDUMP, tsc, mono);
	st__registry_each(send_emit, NULL);
	return st__transport_up();
}

/* Names in the control page the daemon this process chose, if it chose
 * one: only that daemon may adopt it (ctl/daemon/drain/discover.c). */
static void mark_wanted(void)
{
	if (!st__control || npaths != 1 || secure)
		return;
	memcpy(st__control->wanted_path, paths[0].sun_path, sizeof(st__control->wanted_path));
	st__control->wanted_path[sizeof(st__control->wanted_path) - 1] = '\0';
}

/* Connects to the first daemon that answers; 0 or -errno. */
static int dial(void)
{
	int ret = -ENOENT;

	for (int i = 0; i < npaths; i++) {
		ret = st__transport_connect(&paths[i], secure);
		if (ret == 0) {
			set_active_path(paths[i].sun_path);
			return 0;
		}
	}
	return ret;
}

/*
 * Not connected, but a daemon found the process and wrote its socket into
 * the control page (or ours hung up and the daemon is another): connect
 * there. Registration time only; it waits for nothing but the answer.
 */
static void reattach(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *path;
	size_t n;

	if (st__transport_up() && !st__transport_hung_up())
		return;
	if (!st__control)
		return;
	path = st__control->attach_path;
	for (n = 0; n < sizeof(a.sun_path) - 1 && st_load_shared(&path[n]); n++)
		a.sun_path[n] = st_load_shared(&path[n]);
	if (n == 0 || n == sizeof(a.sun_path) - 1 || a.sun_path[0] != '/')
		return;
	if (st__transport_connect(&a, secure) < 0)
		return;
	set_active_path(a.sun_path);
	if (introduce())
		synced();
}

/* Connects and introduces the process (the connection lock held). */
static void register_locked(void)
{
	if (dial() == 0 && introduce() && st__control && st__status_size() > ST_ABI_PAGE)
		synced();
}

void st__reg_register(void)
{
	mark_wanted();
	if (st__status_fd() < 0 || npaths == 0)
		return;
	st__conn_lock();
	register_locked();
	st__conn_unlock();
}

int st__reg_home(const char *rundir)
{
	char sock[sizeof(paths[0].sun_path)];
	int ret = 0;

	if (!st__live->pid || st__status_fd() < 0)
		return -ENOTCONN; /* (never set up: SHIMTRACE_DISABLE) */
	if ((size_t)snprintf(sock, sizeof(sock), "%s/" ST_ABI_SOCKET_NAME, rundir) >= sizeof(sock))
		return -ENAMETOOLONG;
	st__conn_lock();
	if (st__transport_up() && !st__transport_hung_up()) {
		/* (a daemon of its own environment, or of an earlier attach) */
		if (strcmp(connected_path, sock) != 0)
			ret = -EBUSY;
	} else {
		/* not connected, or to a daemon gone since (an attach that
		 * ended): this one, from now on */
		npaths = 0;
		add_path(rundir);
		mark_wanted();
		register_locked();
		if (!st__transport_up())
			ret = -ECONNREFUSED;
	}
	st__conn_unlock();
	return ret;
}

void st__reg_objects_changed(uint32_t kind, uint64_t ts_tsc, uint64_t ts_mono)
{
	st__conn_lock();
	reattach();
	if (st__transport_up()) {
		int wait_ms = answer_wait_ms();

		maps_changed(kind, ts_tsc, ts_mono);
		sync_now(wait_ms ? wait_ms : timeout_ms);
	}
	st__conn_unlock();
}

void st__reg_tracepoints(const struct st_tracepoint *const *begin,
			 const struct st_tracepoint *const *end)
{
	struct st__provider *touched[16];
	uint32_t n, busy;
	void *send; /* for log_emit: to the daemon too */
	bool all;

	busy = st__tls.busy;
	st__tls.busy = 2;
	st__conn_lock();
	n = st__registry_take(begin, end, touched, 16, &all, answered());
	send = (void *)(uintptr_t)st__transport_up();
	/* Announce what this object brought (the daemon takes repeats). The
	 * log gets whole providers: its reader starts from nothing. */
	if (all)
		st__registry_each(log_emit, send);
	else
		for (uint32_t k = 0; k < n; k++)
			st__registry_encode(touched[k], log_emit, send);
	if (n && st__transport_up())
		synced();
	else if (n)
		reattach();
	st__conn_unlock();
	st__tls.busy = busy;
}

static void gone(uint32_t page)
{
	struct st_abi_provider_gone m = { { ST_MSG_PROVIDER_GONE, sizeof(m) }, page, 0 };

	st__status_log(&m, sizeof(m));
	st__transport_send(&m, sizeof(m), -1);
}

void st__reg_untracepoints(const struct st_tracepoint *const *begin,
			   const struct st_tracepoint *const *end)
{
	uint32_t busy = st__tls.busy;

	st__tls.busy = 2;
	st__conn_lock();
	/* Its pages come back once the daemon answered a SYNC sent after the
	 * PROVIDER_GONE: the dlclose hook sends one. */
	st__registry_drop(begin, end, gone, sync_seq + 1);
	st__conn_unlock();
	st__tls.busy = busy;
}

void st__reg_offer_pool(struct st__pool *p)
{
	if (st_load_acquire(&p->handed) || !st__conn_trylock())
		return;
	offer_pool(p);
	st__conn_unlock();
}

bool st__reg_receive(void)
{
	if (!st__conn_trylock())
		return false; /* (registration is reading it) */
	st__transport_receive();
	st__conn_unlock();
	return true;
}

void st__reg_subbuf_ready(uint32_t session, uint32_t slot)
{
	struct st_abi_subbuf_msg m = {
		.hdr = { ST_MSG_SUBBUF, sizeof(m) },
		.session = session,
		.slot = slot,
	};

	if (!st__conn_trylock())
		return; /* the daemon's scan finds the sub-buffer */
	st__transport_send(&m, sizeof(m), -1);
	st__conn_unlock();
}

void st__reg_exit(void)
{
	struct st_abi_msg m = { ST_MSG_EXIT, sizeof(m) };

	st__conn_lock();
	st__transport_send(&m, sizeof(m), -1);
	st__conn_unlock();
}

int st__reg_restore_child(void)
{
	if (st__registry_reattach() < 0)
		return -1;
	st__registry_each(log_emit, NULL); /* the child's log starts empty */
	return 0;
}

void st__reg_forget(void)
{
	st__transport_forget();
	sync_seq = 0;
	acked = 0;
	active_path[0] = '\0';
}

/* The dlopen hooks' clock reading (dl.c). */
void st__reg_now(uint64_t *ts_tsc, uint64_t *ts_mono)
{
	now_both(ts_tsc, ts_mono);
}
