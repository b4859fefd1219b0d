/*
 * Inspectors, seen from the daemon: one per owner and role, started on
 * demand from the daemon's own executable, stopped when idle (see
 * ctl/inspect/proto.h for what they do and why).
 *
 * An inspector serves its requests in order, so the daemon keeps each
 * inspector's requests in a queue: replies belong to the request at its
 * head, and a reply with another id is a protocol error. Only a few
 * requests are in the socket at once (a socket holds few messages with
 * descriptors); the others wait in the queue with copies of their message
 * and descriptor. The request at the head has a deadline from when it got
 * there, or from its last reply (an objects request answers object by
 * object: a process that maps hundreds of them on a busy machine takes
 * longer, not forever), but at most HEAD_MAX_FACTOR deadlines in all; an
 * inspector that misses it is killed (SIGKILL through its pidfd) and every
 * request it held fails.
 * Probe inspectors are never killed: one that is running dlopen in the
 * target cannot be stopped without crashing the target; past its deadline
 * it is only forgotten, and finishes alone.
 *
 * An owner's objects and lines inspectors are started together, as a
 * pair joined by a socket of theirs (proto.h), and go together: one that
 * is taken out of service takes its sibling with it.
 *
 * Started with posix_spawn (no copy of the daemon's memory, not even for
 * an instant: the daemon maps the buffers of every user's processes) and
 * nothing inherited but their sockets, in a session of their own. Dead
 * inspectors are reaped through their pidfds, never with waitpid(-1), and
 * every one is reaped. Limits: 64 inspectors at once (an idle one makes
 * room), 8 per user, of which 2 probe inspectors whose process may still
 * run (one that ran past its deadline too: it is never killed).
 *
 * Capabilities: an inspector is told the few it may keep
 * (inspector_caps(): at most st_insp_caps_max(), and nothing at all for a
 * process of another user namespace, whose capabilities count in that
 * namespace only), and owners that differ in them get inspectors of their
 * own.
 *
 * The inspectors are a list, a few per user: not cds_lfht: only the
 * daemon's thread reads and changes it, so an RCU table would add grace
 * periods and a library to the one thread for no reader; cds_lfht is for a
 * table another thread reads while this one changes it.
 *
 * Owns: the inspectors: their processes, sockets and request queues, and
 *       those being reaped.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, loop, wire.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl/common/fdpass.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/wire/inspect_msg.h"

#define MAX_INSPECTORS 64 /* at once, all owners */
#define MAX_PER_USER 8	  /* of which ... */
#define MAX_PROBES 2	  /* probe inspectors, running or lingering */
#define MAX_QUEUED 65536  /* requests waiting for one inspector */
#define IN_FLIGHT 8	  /* requests in its socket at once */
#define IDLE_MS 10000	  /* an idle inspector is stopped after this */
#define HEAD_MAX_FACTOR 6 /* deadlines a request may take while it progresses */

struct st_insp_limits st_insp_limits = { 1ull << 30, 10000 };
bool (*st_insp_pair_held)(const struct st_owner *o);

struct call {
	struct call *next;
	uint64_t id;
	uint32_t deadline_ms;
	st_insp_handler h;
	void *ctx;
	bool forgotten;
	bool sent;
	void *msg; /* until sent: the message, and a copy of its descriptor */
	size_t len;
	int fd;
};

struct inspector {
	struct inspector *next;
	struct st_daemon *d;
	struct st_owner owner;
	uint32_t role;
	int sock, pidfd;
	struct st_watch watch;
	pid_t pid;
	struct call *head, **tail;
	uint32_t queued, in_flight;
	uint64_t head_since, idle_since; /* ms */
	uint64_t head_progress;		 /* ms: the head's last reply */
	bool retired;
	/* a probe inspector that has served only DYNPROBE requests: kept for
	 * the next ones of its owner, as an objects inspector is (a dlopen
	 * of load-probe may leave a call running: one request each) */
	bool reusable;
	struct inspector *sibling; /* the other of an objects and lines pair */
};

/* In service; retired ones wait for the end of the loop round to be freed
 * (an event of theirs may still be in the round's list). */
static struct inspector *inspectors, *retired;
static uint32_t ninspectors, npending;
static uint64_t next_id = 1;
/* Inspectors out of service that may still run: reaped when they end. */
struct reaping {
	int pidfd;
	uid_t uid;
	bool probe;
};
static struct reaping *reaping;
static uint32_t nreaping, reaping_cap;

static const char *role_name(uint32_t role)
{
	return role == ST_INSP_ROLE_OBJECTS ? "objects" : role == ST_INSP_ROLE_LINES ? "lines" : "probe";
}

/* The four ids of the "Uid:" or "Gid:" line of a status text. */
static bool ids_are(const char *status, const char *key, unsigned want)
{
	const char *p = strstr(status, key);
	unsigned v[4];

	return p && sscanf(p + strlen(key), " %u %u %u %u", &v[0], &v[1], &v[2], &v[3]) == 4 &&
	       v[0] == want && v[1] == want && v[2] == want && v[3] == want;
}

/* Whether ns (a stat of /proc/PID/ns/user) is the daemon's user namespace. */
static bool is_own_userns(const struct stat *ns)
{
	static struct stat own;
	static int known; /* 0: not yet read, 1: read, -1: unreadable */

	if (!known)
		known = stat("/proc/self/ns/user", &own) == 0 ? 1 : -1;
	return known > 0 && ns->st_dev == own.st_dev && ns->st_ino == own.st_ino;
}

void st_owner_of(const struct st_insp_target *t, int pidfd, struct st_owner *o)
{
	char path[64], buf[4096], *g, *end;
	struct pollfd pf = { pidfd, POLLIN, 0 };
	struct stat ns;
	bool own_ns;
	ssize_t n = -1;
	int dir, fd;

	memset(o, 0, sizeof(*o));
	o->uid = t->uid;
	o->gid = t->gid;
	/* Plain reads of the kernel's text and links (they take no lock of
	 * the process's memory), through the /proc/PID entry. What they say
	 * counts only if it is the process that registered, as it
	 * registered: still running after the reads (its pidfd says so: the
	 * pid was not recycled), with every uid and gid those it registered
	 * with. Else: no group, no capability (and the inspector refuses the
	 * process anyway).
	 * The user namespace is read after the status: a process may move
	 * into a new namespace (unshare), never back into ours, so status
	 * capabilities that count here were the process's own here. */
	snprintf(path, sizeof(path), "/proc/%d", t->pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = dir >= 0 ? openat(dir, "status", O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	own_ns = dir >= 0 && fstatat(dir, "ns/user", &ns, 0) == 0 && is_own_userns(&ns);
	if (dir >= 0)
		close(dir);
	if (n <= 0 || pidfd < 0 || poll(&pf, 1, 0) != 0)
		return;
	buf[n] = '\0';
	if (!ids_are(buf, "\nUid:", t->uid) || !ids_are(buf, "\nGid:", t->gid))
		return;
	/* A process of another user namespace (unshare -U, a rootless
	 * container) holds its capabilities over that namespace only: root
	 * there shows them all, and holds none here. Its inspector gets none
	 * (inspector_caps); the kernel lets the owner's inspector in where
	 * the owner owns that namespace, and refuses it elsewhere. */
	o->own_userns = own_ns;
	g = strstr(buf, "\nCapPrm:");
	if (g && own_ns)
		o->caps = strtoull(g + strlen("\nCapPrm:"), NULL, 16);
	g = strstr(buf, "\nGroups:");
	if (!g)
		return;
	g += strlen("\nGroups:");
	while (o->ngroups < ST_OWNER_GROUPS) {
		unsigned long v = strtoul(g, &end, 10);

		if (end == g || (*end != ' ' && *end != '\t' && *end != '\n'))
			break;
		o->groups[o->ngroups++] = (gid_t)v;
		g = end;
		while (*g == ' ' || *g == '\t')
			g++;
		if (*g == '\n')
			break;
	}
}

/*
 * The capabilities an inspector of o and role is told to keep: the most
 * st_insp_caps_max() allows, for a process of the daemon's user namespace
 * only, and CAP_SYS_PTRACE only for one that holds capabilities (a root
 * process that holds none is read by an inspector of uid 0 with none, as
 * the kernel allows). The inspector keeps no more of it than it holds.
 */
static uint64_t inspector_caps(const struct st_owner *o, uint32_t role)
{
	uint64_t caps = o->own_userns ? st_insp_caps_max(role, o->uid) : 0;

	if (!o->caps)
		caps &= ~(1ull << CAP_SYS_PTRACE);
	return caps;
}

static bool same_owner(const struct st_owner *a, const struct st_owner *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->own_userns == b->own_userns &&
	       a->caps == b->caps && a->ngroups == b->ngroups &&
	       memcmp(a->groups, b->groups, a->ngroups * sizeof(gid_t)) == 0;
}

static void readable(struct st_loop *l, void *arg, uint32_t events);

static void reap_later(int pidfd, uid_t uid, bool probe)
{
	if (pidfd < 0)
		return;
	if (nreaping == reaping_cap) {
		uint32_t cap = reaping_cap ? reaping_cap * 2 : 32;
		struct reaping *v = realloc(reaping, cap * sizeof(*v));

		if (!v) {
			close(pidfd); /* (init reaps it once we are gone) */
			return;
		}
		reaping = v;
		reaping_cap = cap;
	}
	reaping[nreaping++] = (struct reaping){ pidfd, uid, probe };
}

static void reap(void)
{
	for (uint32_t i = 0; i < nreaping;) {
		siginfo_t si;

		si.si_pid = 0;
		if (waitid(P_PIDFD, (id_t)reaping[i].pidfd, &si, WEXITED | WNOHANG) == 0 &&
		    si.si_pid == 0) {
			i++; /* still runs */
			continue;
		}
		close(reaping[i].pidfd);
		reaping[i] = reaping[--nreaping];
	}
}

/* Inspectors of uid: all, or probe ones, in service or still running. */
static uint32_t count_of(uid_t uid, bool probes_only)
{
	uint32_t n = 0;

	for (struct inspector *i = inspectors; i; i = i->next)
		n += i->owner.uid == uid && (!probes_only || i->role == ST_INSP_ROLE_PROBE);
	for (uint32_t k = 0; k < nreaping; k++)
		n += reaping[k].uid == uid && (!probes_only || reaping[k].probe);
	return n;
}

static void call_free(struct call *c)
{
	free(c->msg);
	if (c->fd >= 0)
		close(c->fd); /* (a copy of a descriptor of the daemon's own) */
	free(c);
}

/* Takes ins out of service: killed (but a probe inspector), every request
 * it held failed. */
static void retire(struct st_daemon *d, struct inspector *ins, bool kill_it)
{
	struct call *c = ins->head;

	if (ins->retired)
		return;
	ins->retired = true;
	for (struct inspector **pp = &inspectors; *pp; pp = &(*pp)->next)
		if (*pp == ins) {
			*pp = ins->next;
			break;
		}
	ninspectors--;
	if (kill_it && ins->role != ST_INSP_ROLE_PROBE && ins->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, ins->pidfd, SIGKILL, NULL, 0);
	st_watch_del(&d->loop, &ins->watch);
	close(ins->sock);
	reap_later(ins->pidfd, ins->owner.uid, ins->role == ST_INSP_ROLE_PROBE);
	while (c) {
		struct call *next = c->next;

		npending--;
		if (!c->forgotten)
			c->h(d, c->ctx, NULL, -1);
		call_free(c);
		c = next;
	}
	ins->head = NULL;
	ins->next = retired;
	retired = ins;
	if (ins->sibling) {
		ins->sibling->sibling = NULL;
		retire(d, ins->sibling, kill_it);
		ins->sibling = NULL;
	}
}

void st_insp_collect(void)
{
	while (retired) {
		struct inspector *ins = retired;

		retired = ins->next;
		free(ins);
	}
}

/* Starts one inspector of owner o and role, with its end of pair (or -1)
 * on descriptor 4. */
static int spawn_one(struct st_daemon *d, const struct st_owner *o, uint32_t role, int pair,
		     struct inspector **out)
{
	char a_role[16], a_uid[16], a_gid[16], a_groups[ST_OWNER_GROUPS * 11 + 2], a_mem[24],
		a_cpu[16], a_caps[24];
	char *argv[] = { "shimtrace-inspector", ST_INSPECTOR_ARG, a_role, a_uid, a_gid, a_groups,
			 a_caps, a_mem, a_cpu, NULL };
	char *envp[] = { "SHIMTRACE_DISABLE=1", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	struct inspector *ins;
	sigset_t none, all;
	size_t k = 0;
	int sv[2], ret;
	pid_t pid;

	snprintf(a_role, sizeof(a_role), "%u", role);
	snprintf(a_uid, sizeof(a_uid), "%u", (unsigned)o->uid);
	snprintf(a_gid, sizeof(a_gid), "%u", (unsigned)o->gid);
	for (uint32_t i = 0; i < o->ngroups; i++)
		k += (size_t)snprintf(a_groups + k, sizeof(a_groups) - k, "%s%u", i ? "," : "",
				      (unsigned)o->groups[i]);
	if (!o->ngroups)
		strcpy(a_groups, "-");
	snprintf(a_caps, sizeof(a_caps), "%" PRIx64, inspector_caps(o, role));
	snprintf(a_mem, sizeof(a_mem), "%" PRIu64, st_insp_limits.memory >> 20);
	/* CPU time over the inspector's life: it is stopped when idle */
	snprintf(a_cpu, sizeof(a_cpu), "%u", 600u);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], ST_INSPECTOR_FD);
	if (pair >= 0)
		posix_spawn_file_actions_adddup2(&fa, pair, ST_INSPECTOR_PAIR_FD);
	/* Nothing of the daemon's: not its standard error (a journal, or
	 * root's terminal), not its session and controlling terminal. */
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, ST_INSPECTOR_PAIR_FD + 1);
	if (pair < 0)
		posix_spawn_file_actions_addclose(&fa, ST_INSPECTOR_PAIR_FD);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					       POSIX_SPAWN_SETSID);
	/* our own executable, even if replaced on disk since we started */
	ret = posix_spawn(&pid, "/proc/self/exe", &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(sv[1]);
	if (ret != 0) {
		close(sv[0]);
		return -ret;
	}
	ins = calloc(1, sizeof(*ins));
	if (!ins) {
		kill(pid, SIGKILL);
		close(sv[0]);
		reap_later((int)syscall(SYS_pidfd_open, pid, 0), o->uid, false);
		return -ENOMEM;
	}
	ins->owner = *o;
	ins->role = role;
	ins->sock = sv[0];
	ins->pid = pid;
	ins->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	ins->tail = &ins->head;
	ins->idle_since = st_now_ms();
	ins->d = d;
	if (st_watch_add(&d->loop, &ins->watch, ins->sock, EPOLLIN, readable, ins, false) < 0) {
		kill(pid, SIGKILL);
		close(ins->sock);
		reap_later(ins->pidfd, o->uid, false);
		free(ins);
		return -errno;
	}
	ins->next = inspectors;
	inspectors = ins;
	ninspectors++;
	st_log(ST_LOG_DEBUG, "inspector %d (%s) started for uid %u", pid, role_name(role),
	       (unsigned)o->uid);
	*out = ins;
	return 0;
}

/* Starts the inspector of owner o for role: a probe inspector, or an
 * objects and lines pair (*out: the one of role). */
static int spawn(struct st_daemon *d, const struct st_owner *o, uint32_t role,
		 struct inspector **out)
{
	uint32_t need = role == ST_INSP_ROLE_PROBE ? 1 : 2;
	struct inspector *objects, *lines;
	int pair[2], bufsize = 8 << 20, ret;

	if (count_of(o->uid, false) + need > MAX_PER_USER ||
	    (role == ST_INSP_ROLE_PROBE && count_of(o->uid, true) >= MAX_PROBES))
		return -EBUSY;
	while (ninspectors + need > MAX_INSPECTORS) {
		/* make room: an idle one goes (it is started again if needed) */
		struct inspector *idle = NULL;

		for (struct inspector *i = inspectors; i; i = i->next)
			if (!i->head && (!i->sibling || !i->sibling->head) &&
			    (!idle || i->idle_since < idle->idle_since))
				idle = i;
		if (!idle)
			return -EAGAIN;
		retire(d, idle, false);
	}
	if (role == ST_INSP_ROLE_PROBE)
		return spawn_one(d, o, role, -1, out);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		return -errno;
	/* room for many handed files while the lines inspector is busy
	 * (root may exceed the default socket buffer sizes) */
	setsockopt(pair[0], SOL_SOCKET, SO_SNDBUFFORCE, &bufsize, sizeof(bufsize));
	setsockopt(pair[1], SOL_SOCKET, SO_RCVBUFFORCE, &bufsize, sizeof(bufsize));
	ret = spawn_one(d, o, ST_INSP_ROLE_OBJECTS, pair[0], &objects);
	if (ret == 0) {
		ret = spawn_one(d, o, ST_INSP_ROLE_LINES, pair[1], &lines);
		if (ret < 0)
			retire(d, objects, true);
	}
	close(pair[0]);
	close(pair[1]);
	if (ret < 0)
		return ret;
	objects->sibling = lines;
	lines->sibling = objects;
	*out = role == ST_INSP_ROLE_OBJECTS ? objects : lines;
	return 0;
}

/* Sends what waits, up to IN_FLIGHT requests in the socket. Forgotten
 * ones are dropped unsent; a socket that fails retires the inspector. */
static void pump(struct st_daemon *d, struct inspector *ins)
{
	struct call **pp = &ins->head;

	while (!ins->retired && *pp && ins->in_flight < IN_FLIGHT) {
		struct call *c = *pp;
		int ret;

		if (c->sent) {
			pp = &c->next;
			continue;
		}
		if (c->forgotten) {
			*pp = c->next;
			if (ins->tail == &c->next)
				ins->tail = pp;
			ins->queued--;
			npending--;
			call_free(c);
			continue;
		}
		ret = st_send_fd(ins->sock, c->msg, c->len, c->fd, MSG_DONTWAIT);
		if (ret == 0) {
			c->sent = true;
			ins->in_flight++;
			free(c->msg);
			c->msg = NULL;
			if (c->fd >= 0)
				close(c->fd);
			c->fd = -1;
			if (c == ins->head)
				ins->head_since = ins->head_progress = st_now_ms();
			pp = &c->next;
			continue;
		}
		if (ret != -EAGAIN)
			retire(d, ins, true);
		return; /* (full: the next answer makes room) */
	}
}

int st_insp_request(struct st_daemon *d, const struct st_owner *o, uint32_t role, void *msg,
		    size_t len, int fd, uint32_t deadline_ms, st_insp_handler h, void *ctx)
{
	struct st_insp_hdr *hdr = msg;
	struct inspector *ins = NULL;
	struct call *c;
	int ret;

	bool reusable = role == ST_INSP_ROLE_PROBE && hdr->type == ST_INSP_DYNPROBE;

	if (role != ST_INSP_ROLE_PROBE || reusable)
		for (ins = inspectors; ins; ins = ins->next)
			if (ins->role == role && same_owner(&ins->owner, o) &&
			    (role != ST_INSP_ROLE_PROBE || ins->reusable))
				break;
	if (!ins) {
		ret = spawn(d, o, role, &ins);
		if (ret < 0) {
			st_log_user(o->uid, ST_LOG_WARN, "cannot start an inspector for uid %u: %s",
			       (unsigned)o->uid, strerror(-ret));
			return ret;
		}
		ins->reusable = reusable;
	}
	if (ins->queued >= MAX_QUEUED)
		return -EBUSY;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	hdr->id = c->id = next_id++;
	c->msg = malloc(len);
	c->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (!c->msg || (fd >= 0 && c->fd < 0)) {
		call_free(c);
		return -ENOMEM;
	}
	memcpy(c->msg, msg, len);
	c->len = len;
	c->deadline_ms = deadline_ms;
	c->h = h;
	c->ctx = ctx;
	if (!ins->head)
		ins->head_since = ins->head_progress = st_now_ms();
	*ins->tail = c;
	ins->tail = &c->next;
	ins->queued++;
	npending++;
	pump(d, ins);
	return 0;
}

void st_insp_forget(void *ctx)
{
	for (struct inspector *ins = inspectors; ins; ins = ins->next)
		for (struct call *c = ins->head; c; c = c->next)
			if (c->ctx == ctx)
				c->forgotten = true;
}

uint32_t st_insp_pending(void)
{
	return npending;
}

/* Hands one reply to the request at the head; false: protocol error. */
static bool deliver(struct st_daemon *d, struct inspector *ins, void *buf, size_t len, int fd)
{
	struct st_insp_reply r;
	struct call *c = ins->head;
	const char *err;

	if (st_insp_parse(buf, len, &r, &err) < 0 || !c || !c->sent || r.id != c->id) {
		st_log_user(ins->owner.uid, ST_LOG_WARN, "inspector %d (%s, uid %u): %s", ins->pid, role_name(ins->role),
		       (unsigned)ins->owner.uid, !c || r.type == 0 ? "unasked message" :
		       r.id != c->id ? "reply to another request" : err);
		st_fd_drop(fd, ins->owner.uid);
		return false;
	}
	if (r.type == ST_INSP_DONE) {
		ins->head = c->next;
		if (!ins->head)
			ins->tail = &ins->head;
		ins->queued--;
		ins->in_flight--;
		npending--;
		ins->head_since = ins->head_progress = ins->idle_since = st_now_ms();
	} else {
		ins->head_progress = st_now_ms();
	}
	if (!c->forgotten)
		c->h(d, c->ctx, &r, fd);
	else
		st_fd_drop(fd, ins->owner.uid);
	if (r.type == ST_INSP_DONE) {
		call_free(c);
		pump(d, ins);
	}
	return true;
}

/* The inspector's socket has replies (or it hung up). */
static void readable(struct st_loop *l, void *arg, uint32_t events)
{
	static uint8_t buf[ST_INSP_MSG_MAX];
	struct inspector *ins = arg;
	struct st_daemon *d = ins->d;

	(void)l;
	(void)events;
	for (int budget = 0; budget < 64 && !ins->retired; budget++) {
		int fd, truncated;
		ssize_t n = st_recv_fd(ins->sock, buf, sizeof(buf), &fd, MSG_DONTWAIT, &truncated);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			/* it exited (or was killed by its own limits) */
			if (ins->head)
				st_log_user(ins->owner.uid, ST_LOG_WARN, "inspector %d (%s, uid %u) ended during a request",
				       ins->pid, role_name(ins->role), (unsigned)ins->owner.uid);
			retire(d, ins, true);
			return;
		}
		if (truncated || !deliver(d, ins, buf, (size_t)n, fd)) {
			if (truncated)
				st_fd_drop(fd, ins->owner.uid);
			retire(d, ins, true);
			return;
		}
		if (ins->role == ST_INSP_ROLE_PROBE && !ins->head && !ins->reusable) {
			retire(d, ins, false); /* one request each */
			return;
		}
	}
}

void st_insp_tick(struct st_daemon *d)
{
	uint64_t now = st_now_ms();

	/* (a pair goes together: after a retirement, the list anew) */
	for (struct inspector *ins = inspectors, *next; ins; ins = next) {
		next = ins->next;
		if (ins->head && (now - ins->head_progress > ins->head->deadline_ms ||
				  now - ins->head_since >
					  (uint64_t)HEAD_MAX_FACTOR * ins->head->deadline_ms)) {
			st_log_user(ins->owner.uid, ST_LOG_WARN, "inspector %d (%s, uid %u) answered nothing for %u ms (or ran too long): %s",
			       ins->pid, role_name(ins->role), (unsigned)ins->owner.uid,
			       ins->head->deadline_ms,
			       ins->role == ST_INSP_ROLE_PROBE ? "left to finish alone" : "killed");
			retire(d, ins, true);
			next = inspectors;
		} else if (!ins->head && now - ins->idle_since > IDLE_MS &&
			   (!ins->sibling ||
			    (!ins->sibling->head && !(st_insp_pair_held && st_insp_pair_held(&ins->owner))))) {
			/* (a pair that holds files of tables still to be asked
			 * for stays) */
			retire(d, ins, false); /* it ends when its socket closes */
			next = inspectors;
		}
	}
	reap();
}

void st_insp_make_room(struct st_daemon *d, uid_t uid)
{
	for (struct inspector *ins = inspectors, *next; ins; ins = next) {
		next = ins->next;
		if (ins->owner.uid == uid && ins->role != ST_INSP_ROLE_PROBE && !ins->head &&
		    ins->sibling && !ins->sibling->head &&
		    !(st_insp_pair_held && st_insp_pair_held(&ins->owner))) {
			retire(d, ins, false); /* (its sibling with it) */
			next = inspectors;
		}
	}
	reap();
}

void st_insp_fini(struct st_daemon *d)
{
	while (inspectors)
		retire(d, inspectors, true);
	st_insp_collect();
	reap();
	for (uint32_t i = 0; i < nreaping; i++)
		close(reaping[i].pidfd);
	nreaping = 0;
}
