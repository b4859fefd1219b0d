/*
 * Trace directories: made new, or checked, and written into only through
 * descriptors, so that whoever else may write along the way cannot redirect
 * what the daemon (root, for root's sessions) creates.
 *
 * The rules (doc/control.md, "Trace output"):
 * - The path is walked one component at a time with openat(O_PATH |
 *   O_NOFOLLOW) from the descriptor of the directory before it; a missing
 *   directory is made with mkdirat there. Nothing is resolved by path again
 *   after a check. A symbolic link on the way (the last component too) is
 *   followed only if it belongs to the owner or to root: another user's
 *   link could point anywhere, and be changed at any time.
 * - The trace directory itself is opened O_DIRECTORY | O_NOFOLLOW and
 *   checked with fstat on that descriptor: it must belong to the owner and
 *   be empty; one that was there before must also be writable by nobody
 *   else (group-writable only when its group is the owner's gid). A rename
 *   in a parent another user controls can then move it, not redirect it.
 * - Every file in it is created with openat from its descriptor, O_CREAT |
 *   O_EXCL | O_NOFOLLOW: never an existing file, never through a link.
 * - Modes follow the owner's umask exactly (0777 & ~umask for directories,
 *   0666 & ~umask for files), whatever the daemon's own: created with the
 *   process umask 0 for the call. The umask is the process's: only the
 *   daemon's main thread creates files (the writer threads write to files
 *   already open).
 *
 * The caller runs these with the owner's file system credentials
 * (st_creds_become), so the kernel's checks are the owner's as well.
 *
 * Owns: nothing kept: the descriptors it opens are its caller's.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: none.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/daemon/out/tracedir.h"

/* As the kernel: at most this many links in one walk. */
#define MAX_LINKS 40
#define PATH_BUF 4096
/* a path in a message: a directory's, then a name */
#define SHOWN_BUF (2 * PATH_BUF)

struct walk {
	const struct st_tracedir_owner *o;
	int links;
	char *err;
	size_t errlen;
};

void st_tracedir_path(int fd, char *buf, size_t n, const char *fallback)
{
	char proc[64];
	ssize_t len;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	len = readlink(proc, buf, n - 1);
	if (len <= 0 || buf[0] != '/') {
		snprintf(buf, n, "%s", fallback);
		return;
	}
	buf[len] = '\0';
}

/* The path of name in directory fd, for messages. */
static void path_in(int fd, const char *name, char *buf, size_t n)
{
	char dir[PATH_BUF];

	st_tracedir_path(fd, dir, sizeof(dir), ".");
	snprintf(buf, n, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
}

/* Says why, in err; returns -e. */
static int refuse(struct walk *w, int e, int fd, const char *name, const char *fmt)
{
	char path[SHOWN_BUF];

	path_in(fd, name, path, sizeof(path));
	snprintf(w->err, w->errlen, fmt, path, strerror(e));
	return -e;
}

static int mkdir_exact(int at, const char *name, mode_t mask)
{
	mode_t old = umask(0);
	int ret = mkdirat(at, name, 0777 & ~mask), e = errno;

	umask(old);
	errno = e;
	return ret;
}

int st_tracedir_create(int dirfd, const char *name, int extra, mode_t mask)
{
	mode_t old = umask(0);
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra,
			0666 & ~mask),
	    e = errno;

	umask(old);
	errno = e;
	return fd;
}

/* The target of the symbolic link lfd (O_PATH, name in at) into buf, if
 * the walk may follow it; -errno otherwise, said in w->err. */
static int link_target(struct walk *w, int at, const char *name, int lfd, const struct stat *st,
		       char *buf, size_t n)
{
	char path[SHOWN_BUF];
	ssize_t len;

	if (st->st_uid != 0 && st->st_uid != w->o->uid) {
		path_in(at, name, path, sizeof(path));
		snprintf(w->err, w->errlen,
			 "%s is a symbolic link of uid %u: not followed (only your links and "
			 "root's are)",
			 path, (unsigned)st->st_uid);
		return -ELOOP;
	}
	if (++w->links > MAX_LINKS)
		return refuse(w, ELOOP, at, name, "cannot reach %s: %s");
	len = readlinkat(lfd, "", buf, n);
	if (len < 0 || (size_t)len >= n || len == 0)
		return refuse(w, len < 0 ? errno : len == 0 ? ENOENT : ENAMETOOLONG, at, name,
			      "cannot read %s: %s");
	buf[len] = '\0';
	return 0;
}

static int walk_dir(struct walk *w, int at, const char *path);

/* Opens directory name in fd (O_PATH), made if missing, through a link the
 * walk may follow. */
static int step(struct walk *w, int fd, const char *name)
{
	char target[PATH_BUF];
	struct stat st;
	int nfd, ret;

	for (int tries = 0;; tries++) {
		nfd = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd >= 0 || errno != ENOENT || tries == 3)
			break;
		if (mkdir_exact(fd, name, w->o->umask) < 0 && errno != EEXIST)
			return refuse(w, errno, fd, name, "cannot create %s: %s");
	}
	if (nfd < 0)
		return refuse(w, errno, fd, name, "cannot reach %s: %s");
	if (fstat(nfd, &st) < 0) {
		ret = refuse(w, errno, fd, name, "cannot reach %s: %s");
		close(nfd);
		return ret;
	}
	if (S_ISDIR(st.st_mode))
		return nfd;
	ret = S_ISLNK(st.st_mode) ? link_target(w, fd, name, nfd, &st, target, sizeof(target))
				  : refuse(w, ENOTDIR, fd, name, "cannot use %s: %s");
	close(nfd);
	return ret < 0 ? ret : walk_dir(w, fd, target);
}

/* The directory path from at (absolute, or relative to at), every
 * component walked with step: an O_PATH descriptor, or -errno. */
static int walk_dir(struct walk *w, int at, const char *path)
{
	char buf[PATH_BUF], *save = NULL;
	int fd;

	if (strlen(path) >= sizeof(buf))
		return refuse(w, ENAMETOOLONG, at, path, "cannot use %s: %s");
	memcpy(buf, path, strlen(path) + 1);
	fd = openat(path[0] == '/' ? AT_FDCWD : at, path[0] == '/' ? "/" : ".",
		    O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return refuse(w, errno, at, path, "cannot reach %s: %s");
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next = step(w, fd, c);

		close(fd);
		if (next < 0)
			return next;
		fd = next;
	}
	return fd;
}

/* Where path's last component is: *parent (O_PATH) and its name there. A
 * last component that is a link the walk may follow is followed. */
static int walk_leaf(struct walk *w, int at, const char *path, int *parent, char *name)
{
	char buf[PATH_BUF], target[PATH_BUF], *slash, *leaf;
	struct stat st;
	size_t n = strlen(path);
	int pfd, lfd, ret;

	if (n >= sizeof(buf))
		return refuse(w, ENAMETOOLONG, at, path, "cannot use %s: %s");
	memcpy(buf, path, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	slash = strrchr(buf, '/');
	leaf = slash ? slash + 1 : buf;
	if (!*leaf || strcmp(leaf, ".") == 0 || strcmp(leaf, "..") == 0) {
		snprintf(w->err, w->errlen, "%s names no new directory for a trace", path);
		return -EINVAL;
	}
	if (strlen(leaf) > NAME_MAX)
		return refuse(w, ENAMETOOLONG, at, path, "cannot use %s: %s");
	if (slash && slash != buf)
		*slash = '\0';
	pfd = walk_dir(w, at, !slash ? "." : slash == buf ? "/" : buf);
	if (pfd < 0)
		return pfd;
	lfd = openat(pfd, leaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (lfd >= 0 && fstat(lfd, &st) == 0 && S_ISLNK(st.st_mode)) {
		ret = link_target(w, pfd, leaf, lfd, &st, target, sizeof(target));
		close(lfd);
		if (ret == 0)
			ret = walk_leaf(w, pfd, target, parent, name);
		close(pfd);
		return ret;
	}
	if (lfd >= 0)
		close(lfd);
	*parent = pfd;
	memcpy(name, leaf, strlen(leaf) + 1);
	return 0;
}

/* Whether directory fd holds anything; "metadata" says a trace. */
static int dir_entries(int fd, bool *trace)
{
	int rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rfd < 0 ? NULL : fdopendir(rfd);
	struct dirent *e;
	int n = 0;

	*trace = false;
	if (!d) {
		if (rfd >= 0)
			close(rfd);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		*trace |= strcmp(e->d_name, "metadata") == 0;
	}
	closedir(d);
	return n;
}

/* Makes (or with exclusive, only makes) directory name in parent and opens
 * it, checked: see the rules at the top. */
static int open_leaf(struct walk *w, struct st_tracedir *td, int parent, const char *name,
		     bool exclusive)
{
	char path[SHOWN_BUF];
	struct stat st;
	const char *why = NULL;
	bool trace;
	int n;

	td->fd = -1;
	td->made = mkdir_exact(parent, name, w->o->umask) == 0;
	if (!td->made && (errno != EEXIST || exclusive))
		return errno == EEXIST ? -EEXIST : refuse(w, errno, parent, name, "cannot create %s: %s");
	td->fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (td->fd < 0) {
		int e = errno;
		struct stat lst;

		if (fstatat(parent, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
			why = "%s is a symbolic link";
		else if (e == ENOTDIR)
			why = "%s exists and is not a directory";
		return refuse(w, e, parent, name, why ? why : "cannot open %s: %s");
	}
	path_in(parent, name, path, sizeof(path));
	if (fstat(td->fd, &st) < 0)
		return refuse(w, errno, parent, name, "cannot open %s: %s");
	if (st.st_uid != w->o->uid) {
		snprintf(w->err, w->errlen,
			 "%s belongs to uid %u, not to uid %u who asked for the trace (a trace goes "
			 "into a new directory, or an empty one of your own)",
			 path, (unsigned)st.st_uid, (unsigned)w->o->uid);
		return -EPERM;
	}
	if (!td->made && (st.st_mode & S_IWOTH))
		why = "every user";
	else if (!td->made && (st.st_mode & S_IWGRP) && st.st_gid != w->o->gid)
		why = "its group";
	if (why) {
		snprintf(w->err, w->errlen,
			 "%s may be written by %s (mode %04o, group %u): a trace goes into a new "
			 "directory, or an empty one only you may write",
			 path, why, (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid);
		return -EPERM;
	}
	n = dir_entries(td->fd, &trace);
	if (n < 0)
		return refuse(w, errno, parent, name, "cannot read %s: %s");
	if (n > 0) {
		snprintf(w->err, w->errlen,
			 trace ? "%s already holds a trace"
			       : "%s is not empty (a trace goes into a new directory, or an empty one)",
			 path);
		return -EEXIST;
	}
	/* (held while the trace is written, so that a reader meanwhile can
	 * tell one being recorded from one whose recorder died: reader.c;
	 * never waited for, and nothing depends on getting it) */
	(void)flock(td->fd, LOCK_EX | LOCK_NB);
	return 0;
}

int st_tracedir_open(struct st_tracedir *td, const char *dir, const struct st_tracedir_owner *o,
		     char *err, size_t errlen)
{
	struct walk w = { .o = o, .err = err, .errlen = errlen };
	int ret;

	td->fd = td->parent = -1;
	td->made = false;
	if (!*dir) {
		snprintf(err, errlen, "no directory named for the trace");
		return -EINVAL;
	}
	ret = walk_leaf(&w, AT_FDCWD, dir, &td->parent, td->name);
	if (ret == 0)
		ret = open_leaf(&w, td, td->parent, td->name, false);
	if (ret < 0) {
		/* (one it made stays: empty, the owner's) */
		st_tracedir_close(td);
		td->made = false;
	}
	return ret;
}

int st_tracedir_make(struct st_tracedir *td, int parent, const char *name,
		     const struct st_tracedir_owner *o, char *err, size_t errlen)
{
	struct walk w = { .o = o, .err = err, .errlen = errlen };
	int ret;

	td->parent = -1;
	if (strlen(name) > NAME_MAX) {
		snprintf(err, errlen, "cannot create %s: %s", name, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	memcpy(td->name, name, strlen(name) + 1);
	ret = open_leaf(&w, td, parent, name, true);
	if (ret < 0)
		st_tracedir_close(td);
	return ret;
}

bool st_tracedir_remove(const struct st_tracedir *td)
{
	struct stat held, now;

	if (td->fd < 0 || td->parent < 0 || fstat(td->fd, &held) < 0 ||
	    fstatat(td->parent, td->name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	    held.st_dev != now.st_dev || held.st_ino != now.st_ino)
		return false;
	return unlinkat(td->parent, td->name, AT_REMOVEDIR) == 0;
}

void st_tracedir_close(struct st_tracedir *td)
{
	if (td->fd >= 0)
		close(td->fd);
	if (td->parent >= 0)
		close(td->parent);
	td->fd = td->parent = -1;
}
