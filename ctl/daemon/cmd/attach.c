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
 * dumpable (/proc/PID is root's then), and, by a daemon that is not
 * root's, another user's process. The inspector, with the owner's
 * credentials and no capability (CAP_SYS_PTRACE for root's processes
 * only), is then refused by the kernel wherever the owner could not
 * ptrace the process: credentials changed since (it checks them again),
 * Yama's ptrace_scope, a debugger attached.
 *
 * Owns: nothing kept: a request is its inspector's and its caller's.
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

#include "ctl/common/control.h"
#include "ctl/daemon/cmd/attach.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/objects/inspect.h"

/* The inspector's three seconds to find a safe point, then the loads and
 * the process's registration (each wait for the daemon is bounded by the
 * process's SHIMTRACE_TIMEOUT_MS) */
#define ATTACH_DEADLINE_MS 30000

struct attach_req {
	pid_t pid;
	st_attach_cb cb;
	void *ctx;
};

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
	free(a);
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

/* The owner of pid (dir: its /proc directory): 0, or -errno and why. */
static int owner(const struct st_daemon *d, pid_t pid, int dir, unsigned *uid, unsigned *gid,
		 char *why, size_t n)
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
	if (d->uid != 0 && *uid != d->uid) {
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

int st_attach_start(struct st_daemon *d, pid_t pid, bool detach, const char *rundir,
		    const char *const *libs, uint32_t nlibs, st_attach_cb cb, void *ctx, char *why,
		    size_t whylen)
{
	struct {
		struct st_insp_attach a;
		char libs[ST_INSP_MSG_MAX];
	} m;
	struct attach_req *a;
	struct st_owner o;
	size_t len = 0;
	char path[64];
	unsigned uid, gid;
	int pidfd, dir, ret;

	memset(&m.a, 0, sizeof(m.a));
	for (uint32_t i = 0; i < nlibs; i++) {
		size_t k = strlen(libs[i]) + 1;

		if (sizeof(m.a) + len + k > ST_INSP_MSG_MAX) {
			snprintf(why, whylen, "library paths too long");
			return -ENAMETOOLONG;
		}
		memcpy(m.libs + len, libs[i], k);
		len += k;
	}
	if (strlen(rundir) >= sizeof(m.a.rundir)) {
		snprintf(why, whylen, "the daemon's directory %s is too long (%zu bytes at most)",
			 rundir, sizeof(m.a.rundir) - 1);
		return -ENAMETOOLONG;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	snprintf(path, sizeof(path), "/proc/%d", pid);
	dir = pidfd >= 0 ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dir < 0) {
		snprintf(why, whylen, "no process %d", pid);
		if (pidfd >= 0)
			close(pidfd);
		return -ESRCH;
	}
	ret = owner(d, pid, dir, &uid, &gid, why, whylen);
	close(dir);
	a = ret == 0 ? malloc(sizeof(*a)) : NULL;
	if (ret == 0 && !a) {
		snprintf(why, whylen, "out of memory");
		ret = -ENOMEM;
	}
	if (ret < 0) {
		close(pidfd);
		return ret;
	}
	*a = (struct attach_req){ pid, cb, ctx };
	m.a.t.hdr.type = ST_INSP_ATTACH;
	m.a.t.hdr.len = (uint32_t)(sizeof(m.a) + len);
	m.a.t.pid = pid;
	m.a.t.uid = uid;
	m.a.t.gid = gid;
	m.a.detach = detach;
	m.a.nlibs = nlibs;
	memcpy(m.a.rundir, rundir, strlen(rundir) + 1);
	st_owner_of(&m.a.t, pidfd, &o);
	ret = st_insp_request(d, &o, ST_INSP_ROLE_PROBE, &m, m.a.t.hdr.len, pidfd,
			      ATTACH_DEADLINE_MS, on_reply, a);
	close(pidfd);
	if (ret < 0) {
		free(a);
		snprintf(why, whylen, "cannot start an inspector: %s", strerror(-ret));
	}
	return ret;
}
