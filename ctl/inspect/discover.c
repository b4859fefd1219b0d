/*
 * DISCOVER: the status memfd of a process that runs without a daemon
 * (it started first, or its daemon died), so that the daemon can adopt it.
 *
 * The descriptor is taken with pidfd_getfd(): the very open file
 * description the process holds, with the access it has, never a path
 * reopened (a process could swap what a /proc/PID/fd/N path leads to
 * between a look and an open). The kernel lets the owner do that only to a
 * dumpable process of exactly its credentials. What is taken must be what
 * it claims: a memfd named shimtrace-status, open read-write, sealed
 * against shrinking, big enough for its registration log; the daemon
 * checks again (it trusts an inspector no more than the process).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/abi.h"
#include "ctl/inspect/channel.h"
#include "ctl/inspect/discover.h"
#include "ctl/inspect/target.h"

#define STATUS_LINK "/memfd:shimtrace-status (deleted)"
#define POOL_LINK "/memfd:shimtrace-pool (deleted)"

static bool link_is(int dirfd, const char *name, const char *want)
{
	char link[64];
	ssize_t n = readlinkat(dirfd, name, link, sizeof(link) - 1);

	return n == (ssize_t)strlen(want) && memcmp(link, want, (size_t)n) == 0;
}

static bool is_status_link(int dirfd, const char *name)
{
	return link_is(dirfd, name, STATUS_LINK);
}

/*
 * Whether fd is a memfd of ours we may take: named `link`, open
 * read-write, with all of `seals`, and of at least min_size bytes (exactly,
 * with exact).
 */
static bool our_memfd(int fd, const char *link, int seals, uint64_t min_size, bool exact)
{
	char self[64];
	int have = fcntl(fd, F_GET_SEALS), fl = fcntl(fd, F_GETFL);
	struct stat st;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return have >= 0 && (have & seals) == seals && fl >= 0 && (fl & O_ACCMODE) == O_RDWR &&
	       fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= min_size &&
	       (!exact || (uint64_t)st.st_size == min_size) && link_is(AT_FDCWD, self, link);
}

/* A status memfd we may adopt (see the top of the file). */
static bool status_memfd(int fd)
{
	return our_memfd(fd, STATUS_LINK, F_SEAL_SHRINK, ST_ABI_REGLOG_OFF + ST_ABI_REGLOG_MAX, false);
}

/* A buffer pool of `size` bytes, sealed against shrinking and growing. */
static bool pool_memfd(int fd, uint64_t size)
{
	return our_memfd(fd, POOL_LINK, F_SEAL_SHRINK | F_SEAL_GROW, size, true);
}

/* Parent and name from /proc/PID/stat: "pid (comm) state ppid ..." */
static int stat_facts(int dirfd, struct st_insp_found *f)
{
	char buf[512], *open_paren, *close_paren;
	int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	size_t len;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')'); /* comm may hold anything, even ")" */
	if (!open_paren || !close_paren || close_paren < open_paren ||
	    sscanf(close_paren + 1, " %*c %d", &f->ppid) != 1)
		return -1;
	len = (size_t)(close_paren - open_paren - 1);
	if (len > sizeof(f->name) - 1)
		len = sizeof(f->name) - 1;
	memcpy(f->name, open_paren + 1, len);
	return 0;
}

void st_insp_discover(const struct st_insp_target *t, int pidfd)
{
	struct {
		struct st_insp_found f;
		char exe[ST_INSP_PATH_MAX];
	} msg;
	struct st_insp_proc p;
	struct dirent *e;
	char why[512];
	int ret = st_insp_proc_open(t, pidfd, &p, why, sizeof(why)), fdd, got = -1;
	DIR *dir;
	ssize_t n;

	if (ret < 0) {
		st_insp_done(t->hdr.id, ret, 0, "%s", why);
		return;
	}
	fdd = openat(p.dirfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fdd >= 0 ? fdopendir(fdd) : NULL;
	if (!dir) {
		if (fdd >= 0)
			close(fdd);
		st_insp_done(t->hdr.id, -errno, 0, "cannot list the descriptors of process %d",
			     t->pid);
		st_insp_proc_close(&p);
		return;
	}
	while (got < 0 && (e = readdir(dir))) {
		char *end;
		long nr = strtol(e->d_name, &end, 10);
		int fd;

		if (*end || end == e->d_name || nr < 0 || !is_status_link(dirfd(dir), e->d_name))
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)nr, 0);
		if (fd < 0)
			continue;
		/* what the descriptor is now, whatever its link said before */
		if (status_memfd(fd))
			got = fd;
		else
			close(fd);
	}
	closedir(dir);
	if (got < 0) {
		st_insp_done(t->hdr.id, -ENOENT, 0, "process %d has no status memory", t->pid);
		st_insp_proc_close(&p);
		return;
	}
	memset(&msg.f, 0, sizeof(msg.f));
	msg.f.hdr.type = ST_INSP_FOUND;
	msg.f.hdr.id = t->hdr.id;
	if (stat_facts(p.dirfd, &msg.f) < 0) {
		close(got);
		st_insp_done(t->hdr.id, -ESRCH, 0, "process %d is gone", t->pid);
		st_insp_proc_close(&p);
		return;
	}
	n = readlinkat(p.dirfd, "exe", msg.exe, sizeof(msg.exe) - 1);
	msg.exe[n > 0 ? n : 0] = '\0';
	msg.f.hdr.len = (uint32_t)(sizeof(msg.f) + strlen(msg.exe) + 1);
	st_insp_send(&msg, msg.f.hdr.len, got);
	close(got);
	st_insp_proc_close(&p);
	st_insp_done(t->hdr.id, 0, 1, "found");
}

/*
 * TAKE_POOL: the pool a process without a connection offers. Taken like
 * the status memory (pidfd_getfd, as the owner), checked to be what it
 * must be, and sent back with a FOUND message.
 */
void st_insp_take_pool(const struct st_insp_take_pool *r, int pidfd)
{
	struct {
		struct st_insp_found f;
		char exe[1];
	} msg;
	struct st_insp_proc p;
	char why[512];
	int ret = st_insp_proc_open(&r->t, pidfd, &p, why, sizeof(why)), fd;

	if (ret < 0) {
		st_insp_done(r->t.hdr.id, ret, 0, "%s", why);
		return;
	}
	fd = r->fd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, r->fd, 0) : -1;
	st_insp_proc_close(&p);
	if (fd < 0 || !pool_memfd(fd, r->size)) {
		if (fd >= 0)
			close(fd);
		st_insp_done(r->t.hdr.id, -ENOENT, 0, "process %d offers no buffer pool as descriptor %d",
			     r->t.pid, r->fd);
		return;
	}
	memset(&msg, 0, sizeof(msg));
	msg.f.hdr.type = ST_INSP_FOUND;
	msg.f.hdr.id = r->t.hdr.id;
	msg.f.hdr.len = sizeof(msg.f) + 1; /* and an empty executable path */
	st_insp_send(&msg, msg.f.hdr.len, fd);
	close(fd);
	st_insp_done(r->t.hdr.id, 0, 1, "taken");
}
