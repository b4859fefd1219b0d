/*
 * Processes that were running before the daemon: found through their
 * status memory.
 *
 * A process carrying the preload keeps, whatever happens, a memfd named
 * "shimtrace-status": its enable state and, from ST_ABI_REGLOG_OFF, the log
 * of its registrations (abi.h). At start the daemon asks, for every process
 * it may trace (its user's, or all for root), the objects inspector of the
 * process's owner to look for that memfd (ctl/inspect/discover.c): the
 * inspector, with the owner's credentials, takes the descriptor with
 * pidfd_getfd (never by reopening a /proc path, which the process could
 * swap between a look and an open), and the kernel lets it only into a
 * dumpable process of exactly its owner's credentials. The daemon checks
 * again what it gets (a read-write, sealed memfd of the right size and
 * magic), reads the process's tracepoints from the log and registers the
 * process as if it had connected; it writes its socket path into the
 * control page. The process's enable bits then switch on like those of any
 * other; the pools its first enabled events create it offers in its
 * control page, and the daemon takes them (pickup.c): the event path never
 * connects. It connects at its next registration (a dlopen, a provider);
 * until then the daemon reads the log again every tick, for the providers
 * a dlopen() adds.
 *
 * A process another live daemon controls (the control page names it) is
 * left to it, and so is a process that chose its daemon ($SHIMTRACE_RUNDIR:
 * the control page names its socket) if it is not this one. Everything
 * read is validated as a message from the process would be: a process can
 * spoil only its own registration.
 *
 * Owns: the search, at start, for processes already running, and their
 *       registration logs.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base, drain, loop, model, objects.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/base/limits.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"
#include "ctl/daemon/drain/discover.h"
#include "ctl/daemon/drain/procconn.h"
#include "ctl/daemon/drain/procend.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"
#include "ctl/daemon/objects/maps.h"
#include "ctl/daemon/wire/inspect_msg.h"

#define DISCOVER_DEADLINE_MS 5000
#define STATUS_LINK "/memfd:shimtrace-status (deleted)"

/* Whether pid runs (a zombie does not: a killed daemon may stay one). */
static bool alive(pid_t pid)
{
	unsigned int flags;
	char state;

	return st_proc_stat(pid, &state, &flags) == 0 && state != 'Z' && state != 'X';
}

/* Takes in the log records the process appended since the last call. */
void st_reglog_catch_up(struct st_daemon *d, struct st_proc *p)
{
	static uint8_t buf[ST_ABI_MSG_MAX];
	uint64_t end;
	int ret = 0;

	if (!p->control || p->conn.ended)
		return;
	end = __atomic_load_n(&p->control->reglog_len, __ATOMIC_ACQUIRE);
	if (end > ST_ABI_REGLOG_MAX || end < p->reglog_pos) {
		if (!p->warned[ST_WARN_REGLOG]) {
			st_log_user(p->uid, ST_LOG_WARN, "process %d (%s): bad registration log length", p->pid,
			       p->name);
			p->warned[ST_WARN_REGLOG] = true;
		}
		return;
	}
	while (p->reglog_pos + sizeof(struct st_abi_msg) <= end) {
		struct st_abi_msg h;
		uint64_t at = ST_ABI_REGLOG_OFF + p->reglog_pos;

		if (pread(p->status_fd, &h, sizeof(h), (off_t)at) != (ssize_t)sizeof(h) ||
		    h.len < sizeof(h) || h.len > sizeof(buf) || p->reglog_pos + h.len > end ||
		    (h.type != ST_MSG_PROVIDER && h.type != ST_MSG_PROVIDER_GONE) ||
		    pread(p->status_fd, buf, h.len, (off_t)at) != (ssize_t)h.len ||
		    (ret = st_proc_message(d, p, buf, h.len)) < 0) {
			if (ret == ST_PROC_REFUSED) {
				st_proc_end(d, p); /* over its owner's quota */
				return;
			}
			st_log_user(p->uid, ST_LOG_WARN, "process %d (%s): bad registration log: ignored from byte %llu",
			       p->pid, p->name, (unsigned long long)p->reglog_pos);
			p->reglog_pos = ST_ABI_REGLOG_MAX; /* read no more of it */
			return;
		}
		p->reglog_pos += (h.len + 7) & ~7u;
	}
}

static bool registered(const struct st_daemon *d, pid_t pid)
{
	for (const struct st_proc *p = d->procs; p; p = p->next)
		if (!p->conn.ended && p->pid == pid)
			return true;
	return false;
}

/* A process asked about: what the daemon knows of it until the answer. */
struct candidate {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int pidfd;
	int status_fd; /* what the inspector found */
	char name[ST_PROC_NAME_SIZE];
	int32_t ppid;
	char exe[ST_PATH_MAX];
};

/* Registers the process whose status memory c found, if it checks out. */
static void adopt(struct st_daemon *d, struct candidate *c)
{
	struct st_abi_control *ctl;
	struct st_proc *p;
	int fl = fcntl(c->status_fd, F_GETFL);

	/* the inspector is no more trusted than the process: check it all */
	if (registered(d, c->pid) || fl < 0 || (fl & O_ACCMODE) != O_RDWR ||
	    st_check_memfd(c->status_fd, F_SEAL_SHRINK, ST_ABI_REGLOG_OFF + ST_ABI_REGLOG_MAX) < 0)
		return;
	ctl = mmap(NULL, ST_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, c->status_fd, 0);
	if (ctl == MAP_FAILED)
		return;
	/* (a process that chose another daemon is not ours to take) */
	if (ctl->magic != ST_ABI_CONTROL_MAGIC || ctl->version != ST_ABI_VERSION ||
	    (ctl->wanted_path[0] &&
	     strncmp(ctl->wanted_path, d->sock_path, sizeof(ctl->wanted_path)) != 0) ||
	    (ctl->daemon_pid != getpid() && alive(ctl->daemon_pid)) ||
	    !(p = st_proc_new(d, c->pid, c->uid, c->gid))) {
		munmap(ctl, ST_ABI_PAGE);
		return;
	}
	p->user = st_user_of(c->uid);
	if (!st_quota_take(p->user, ST_Q_PROCESSES, 1, c->pid, "too many processes")) {
		munmap(ctl, ST_ABI_PAGE);
		free(p);
		return;
	}
	p->counts_process = true;
	p->ppid = c->ppid;
	memcpy(p->name, c->name, sizeof(p->name));
	snprintf(p->exe, sizeof(p->exe), "%s", c->exe);
	p->status_fd = c->status_fd;
	c->status_fd = -1;
	p->status_size = ST_ABI_REGLOG_OFF;
	p->control = ctl;
	p->hello = true;
	p->discovered = true;
	/* its objects, when read, are dated from here: before any event a
	 * session it is enabled in from now can hold */
	st_objects_changed(p, st_clock_now(&d->clock));
	p->pidfd = c->pidfd;
	c->pidfd = -1;
	p->next = d->procs;
	d->procs = p;
	st_watch_add(&d->loop, &p->pidfd_watch, p->pidfd, EPOLLIN, st_proc_on_exit, p, false);
	st_proc_claim(d, p);
	st_reglog_catch_up(d, p);
	st_session_apply(d, p);
	st_log_user(p->uid, ST_LOG_INFO, "process %d (%s) found running: registered", p->pid, p->name);
}

static void candidate_free(struct candidate *c)
{
	if (c->pidfd >= 0)
		close(c->pidfd);
	st_fd_drop(c->status_fd, c->uid);
	free(c);
}

static void on_found(struct st_daemon *d, void *ctx, const struct st_insp_reply *r, int fd)
{
	struct candidate *c = ctx;

	if (r && r->type == ST_INSP_FOUND && fd >= 0 && c->status_fd < 0) {
		c->status_fd = fd;
		c->ppid = r->found.ppid;
		snprintf(c->name, sizeof(c->name), "%s", r->found.name);
		snprintf(c->exe, sizeof(c->exe), "%s", r->found.exe);
		return;
	}
	st_fd_drop(fd, c->uid);
	if (r && r->type != ST_INSP_DONE)
		return;
	if (r && r->done.status == 0 && c->status_fd >= 0)
		adopt(d, c);
	candidate_free(c);
}

/*
 * Whether pid has a descriptor whose link names our status memfd: only
 * such processes are worth asking their owner's inspector about. A look
 * at link names, which opens nothing; what counts is what the inspector
 * then takes and the daemon checks.
 */
static bool may_carry(pid_t pid)
{
	char path[64], link[sizeof(STATUS_LINK) + 1];
	struct dirent *e;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (e = readdir(dir))) {
		ssize_t n = readlinkat(dirfd(dir), e->d_name, link, sizeof(link) - 1);

		found = n == (ssize_t)sizeof(STATUS_LINK) - 1 && memcmp(link, STATUS_LINK, (size_t)n) == 0;
	}
	closedir(dir);
	return found;
}

/* Asks the owner of pid whether it carries our status memory. */
static void ask(struct st_daemon *d, pid_t pid, const struct stat *st)
{
	struct candidate *c = calloc(1, sizeof(*c));
	struct st_insp_target t;
	struct st_owner owner;

	if (!c)
		return;
	c->pid = pid;
	c->uid = st->st_uid;
	c->gid = st->st_gid;
	c->status_fd = -1;
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (c->pidfd < 0) {
		candidate_free(c);
		return;
	}
	memset(&t, 0, sizeof(t));
	t.hdr.type = ST_INSP_DISCOVER;
	t.hdr.len = sizeof(t);
	t.pid = pid;
	t.uid = c->uid;
	t.gid = c->gid;
	st_owner_of(&t, c->pidfd, &owner);
	if (st_insp_request(d, &owner, ST_INSP_ROLE_OBJECTS, &t, sizeof(t), c->pidfd,
			    DISCOVER_DEADLINE_MS, on_found, c) < 0)
		candidate_free(c);
}

void st_discover(struct st_daemon *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char path[64];
		struct stat st;
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self || registered(d, (pid_t)pid))
			continue;
		/* /proc/PID belongs to the process's owner (root's if it is not
		 * dumpable); a user's daemon looks at its user's only */
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (stat(path, &st) < 0 || (d->uid != 0 && st.st_uid != d->uid) ||
		    !st_fd_room(st.st_uid) ||
		    !may_carry((pid_t)pid))
			continue;
		ask(d, (pid_t)pid, &st);
	}
	closedir(dir);
}
