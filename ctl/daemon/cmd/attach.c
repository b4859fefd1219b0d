/*
 * Attach and detach, the daemon's part: a process started without the
 * preload is given the tracer by a probe inspector of its owner
 * (ctl/inspect/attach.c does the ptrace work), and given back its calls
 * at the end. The daemon's loop goes on serving meanwhile: the process
 * registers (HELLO, its providers, SYNC) while the inspector's dlopen of
 * the core runs in it, and waits for the daemon's answers there.
 *
 * Who: the process's owner is read from /proc/PID/status, after its
 * pidfd is taken (a pid recycled meanwhile fails the inspector's checks):
 * every uid and every gid must be one and the same, or it runs a setuid
 * or setgid program, which is refused, as is a process that is not
 * dumpable (/proc/PID is root's then), and another user's process but
 * for root (the user the daemon acts for: a daemon's own user, or the
 * requester of the system daemon). The inspector, with the owner's
 * credentials and no capability (CAP_SYS_PTRACE for root's processes
 * only), is then refused by the kernel wherever the owner could not
 * ptrace the process: credentials changed since (it checks them again),
 * Yama's ptrace_scope, a debugger attached.
 *
 * Requests go one at a time, in order (a detach before a later attach of
 * the same process; never two inspectors ptracing one process).
 *
 * Owns: the queue of attach and detach requests, and the one out.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/monotime.h"
#include "ctl/common/control.h"
#include "ctl/daemon/cmd/attach.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"

/* The inspector's three seconds to find a safe point, then the loads and
 * the process's registration (each wait for the daemon is bounded by the
 * process's SHIMTRACE_TIMEOUT_MS); a JVM agent's load more: the listener
 * started, and Agent_OnAttach (ctl/inspect/jvmattach.c: 10 s and 15 s) */
#define ATTACH_DEADLINE_MS 30000
#define JVM_DEADLINE_MS 30000
#define BUSY_WAIT_MS 15000

/* A request, waiting for its turn or out: what goes to the inspector. */
struct attach_req {
	struct attach_req *next;
	pid_t pid;
	int pidfd;
	st_attach_cb cb;
	void *ctx;
	uint64_t busy_since; /* ms: the owner's inspectors were at their bound */
	struct st_owner owner;
	union {
		struct st_insp_attach a;
		char bytes[ST_INSP_MSG_MAX];
	} m;
};

/* One at a time, in order: a detach is done before a later attach of the
 * same process, two inspectors never ptrace one process at once, and a
 * user's probe inspectors stay within their bound. */
static struct attach_req *queue, **queue_tail = &queue, *out;

static void req_free(struct attach_req *a)
{
	if (a->pidfd >= 0)
		close(a->pidfd);
	free(a);
}

static void send_next(struct st_daemon *d);

static void on_reply(struct st_daemon *d, void *ctx, const struct st_insp_reply *r, int fd)
{
	struct attach_req *a = ctx;

	if (fd >= 0)
		close(fd);
	if (r && r->type != ST_INSP_DONE)
		return;
	if (!r)
		a->cb(d, a->ctx, a->pid, ST_EXIT_FAIL, 0,
		      "no answer from the inspector (it failed, or its calls go on)");
	else
		a->cb(d, a->ctx, a->pid, r->done.status, r->done.count, r->done.text);
	out = NULL;
	req_free(a);
	send_next(d);
}

/*
 * Sends the request at the head of the queue, if none is out. The owner's
 * inspectors may be at their bound (a daemon that just started looks at
 * every process with objects inspectors): their idle ones are stopped to
 * make room, and the request waits for the next tick, BUSY_WAIT_MS at
 * most.
 */
static void send_next(struct st_daemon *d)
{
	while (!out && queue) {
		struct attach_req *a = queue;
		char why[128];
		int ret;

		ret = st_insp_request(d, &a->owner, ST_INSP_ROLE_PROBE, &a->m, a->m.a.t.hdr.len,
				      a->pidfd,
				      ATTACH_DEADLINE_MS + (a->m.a.jvm ? JVM_DEADLINE_MS : 0),
				      on_reply, a);
		if ((ret == -EBUSY || ret == -EAGAIN) &&
		    (!a->busy_since || st_now_ms() - a->busy_since < BUSY_WAIT_MS)) {
			if (!a->busy_since)
				a->busy_since = st_now_ms();
			st_insp_make_room(d, a->owner.uid);
			return; /* (st_attach_tick) */
		}
		queue = a->next;
		if (!queue)
			queue_tail = &queue;
		if (ret == 0) {
			out = a;
			return;
		}
		snprintf(why, sizeof(why), "cannot start an inspector: %s", strerror(-ret));
		a->cb(d, a->ctx, a->pid, ST_EXIT_FAIL, 0, why);
		req_free(a);
	}
}

void st_attach_tick(struct st_daemon *d)
{
	send_next(d);
}

/* The four ids of a "Uid:" or "Gid:" line, if all the same. */
static int one_id(const char *status, const char *key, unsigned *id, char *all, size_t n)
{
	const char *p = strstr(status, key);
	unsigned v[4];

	if (!p || sscanf(p + strlen(key), " %u %u %u %u", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	snprintf(all, n, "%u/%u/%u/%u", v[0], v[1], v[2], v[3]);
	*id = v[0];
	return v[1] == v[0] && v[2] == v[0] && v[3] == v[0] ? 0 : 1;
}

/* The owner of pid (dir: its /proc directory), if as_uid may attach it:
 * 0, or -errno and why. */
static int owner(uid_t as_uid, pid_t pid, int dir, unsigned *uid, unsigned *gid, char *why,
		 size_t n)
{
	char buf[4096], ids[64];
	struct stat st;
	ssize_t len = -1;
	int fd = openat(dir, "status", O_RDONLY | O_CLOEXEC), u, g;

	if (fd >= 0) {
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (len <= 0) {
		snprintf(why, n, "process %d is gone", pid);
		return -ESRCH;
	}
	buf[len] = '\0';
	u = one_id(buf, "\nUid:", uid, ids, sizeof(ids));
	g = u == 0 ? one_id(buf, "\nGid:", gid, ids, sizeof(ids)) : u;
	if (u < 0 || g < 0) {
		snprintf(why, n, "process %d is gone", pid);
		return -ESRCH;
	}
	if (u || g) {
		snprintf(why, n, "process %d runs a setuid or setgid program (%s %s): shimtrace does "
				 "not attach to it",
			 pid, u ? "uids" : "gids", ids);
		return -EPERM;
	}
	if (as_uid != 0 && *uid != as_uid) {
		snprintf(why, n, "process %d belongs to another user (uid %u): only root may attach to "
				 "it",
			 pid, *uid);
		return -EPERM;
	}
	/* (/proc/PID is root's while the process is not dumpable) */
	if (fstat(dir, &st) < 0 || st.st_uid != *uid) {
		snprintf(why, n, "process %d is not dumpable (PR_SET_DUMPABLE 0): it refuses ptrace",
			 pid);
		return -EACCES;
	}
	return 0;
}

/* Appends the string s to a's request, of *len bytes: 0 or -ENAMETOOLONG. */
static int put(struct attach_req *a, size_t *len, const char *s)
{
	size_t k = strlen(s) + 1;

	if (*len + k > sizeof(a->m))
		return -ENAMETOOLONG;
	memcpy(a->m.bytes + *len, s, k);
	*len += k;
	return 0;
}

int st_attach_start(struct st_daemon *d, uid_t as_uid, pid_t pid, bool detach, const char *rundir,
		    const struct st_attach_what *w, st_attach_cb cb, void *ctx, char *why,
		    size_t whylen)
{
	struct attach_req *a = calloc(1, sizeof(*a));
	size_t len = sizeof(a->m.a);
	char path[64];
	unsigned uid, gid;
	int dir, ret = 0;

	if (!a) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	a->pidfd = -1;
	for (uint32_t i = 0; i < w->nlibs && ret == 0; i++)
		ret = put(a, &len, w->libs[i]);
	if (w->jvm_agent && !detach && ret == 0) {
		ret = put(a, &len, w->jvm_agent) ?: put(a, &len, w->jvm_options ? w->jvm_options : "");
		a->m.a.jvm = 1;
	}
	if (ret < 0) {
		snprintf(why, whylen, "library paths too long");
		req_free(a);
		return ret;
	}
	if (strlen(rundir) >= sizeof(a->m.a.rundir)) {
		snprintf(why, whylen, "the daemon's directory %s is too long (%zu bytes at most)",
			 rundir, sizeof(a->m.a.rundir) - 1);
		req_free(a);
		return -ENAMETOOLONG;
	}
	a->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	snprintf(path, sizeof(path), "/proc/%d", pid);
	dir = a->pidfd >= 0 ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dir < 0) {
		snprintf(why, whylen, "no process %d", pid);
		req_free(a);
		return -ESRCH;
	}
	ret = owner(d->uid ? d->uid : as_uid, pid, dir, &uid, &gid, why, whylen);
	close(dir);
	if (ret < 0) {
		req_free(a);
		return ret;
	}
	a->pid = pid;
	a->cb = cb;
	a->ctx = ctx;
	a->m.a.t.hdr.type = ST_INSP_ATTACH;
	a->m.a.t.hdr.len = (uint32_t)len;
	a->m.a.t.pid = pid;
	a->m.a.t.uid = uid;
	a->m.a.t.gid = gid;
	a->m.a.detach = detach;
	a->m.a.nlibs = w->nlibs;
	a->m.a.stack_depth = w->stack_depth;
	a->m.a.stack_sample = w->stack_sample;
	memcpy(a->m.a.rundir, rundir, strlen(rundir) + 1);
	st_owner_of(&a->m.a.t, a->pidfd, &a->owner);
	*queue_tail = a;
	queue_tail = &a->next;
	send_next(d);
	return 0;
}
