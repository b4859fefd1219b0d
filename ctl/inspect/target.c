/*
 * A traced process, seen from an inspector: its /proc directory, its
 * credentials, its threads, its mappings, and the files it maps.
 *
 * The identity of the process comes from the pidfd the daemon took when it
 * connected (or was found): /proc/PID is opened, then the pidfd must still
 * say the process runs, so the directory is that process's and not a later
 * one's under a recycled pid; everything after is read relative to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ctl/inspect/target.h"

/* Reads the "Uid:" or "Gid:" line of a status text: four ids. */
static int ids_of(const char *status, const char *key, unsigned v[4])
{
	const char *p = strstr(status, key);

	return p && sscanf(p + strlen(key), " %u %u %u %u", &v[0], &v[1], &v[2], &v[3]) == 4 ? 0
											       : -1;
}

ssize_t st_insp_read_text(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n > 0)
		buf[n] = '\0';
	return n > 0 ? n : -1;
}

int st_insp_proc_open(const struct st_insp_target *t, int pidfd, struct st_insp_proc *out,
		      char *why, size_t whylen)
{
	char path[64], status[4096];
	struct pollfd pf = { pidfd, POLLIN, 0 };
	unsigned u[4], g[4];
	struct stat st;

	out->pid = t->pid;
	out->pidfd = pidfd;
	out->dirfd = -1;
	if (pidfd < 0 || t->pid <= 0) {
		snprintf(why, whylen, "no process named");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d", t->pid);
	out->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (out->dirfd < 0 || poll(&pf, 1, 0) != 0) {
		snprintf(why, whylen, "process %d is gone", t->pid);
		st_insp_proc_close(out);
		return -ESRCH;
	}
	if (st_insp_read_text(out->dirfd, "status", status, sizeof(status)) < 0 ||
	    ids_of(status, "\nUid:", u) < 0 || ids_of(status, "\nGid:", g) < 0) {
		snprintf(why, whylen, "process %d is gone", t->pid);
		st_insp_proc_close(out);
		return -ESRCH;
	}
	for (int i = 0; i < 4; i++)
		if (u[i] != t->uid || g[i] != t->gid) {
			snprintf(why, whylen,
				 "process %d no longer has the credentials it registered with "
				 "(uid %u gid %u; now uids %u/%u/%u/%u, gids %u/%u/%u/%u: it ran a "
				 "setuid or setgid program, or changed identity)",
				 t->pid, t->uid, t->gid, u[0], u[1], u[2], u[3], g[0], g[1], g[2], g[3]);
			st_insp_proc_close(out);
			return -EPERM;
		}
	/* /proc/PID belongs to root while the process is not dumpable */
	if (fstat(out->dirfd, &st) < 0 || st.st_uid != t->uid) {
		snprintf(why, whylen,
			 "process %d is not dumpable (a setuid program, or PR_SET_DUMPABLE 0)", t->pid);
		st_insp_proc_close(out);
		return -EACCES;
	}
	return 0;
}

bool st_insp_thread_of(const struct st_insp_proc *p, pid_t tid)
{
	struct pollfd pf = { p->pidfd, POLLIN, 0 };
	char path[64], status[4096];
	const char *tgid;

	if (tid <= 0 || p->dirfd < 0)
		return false;
	/* /proc/PID/task/TID names only threads of PID's thread group (and
	 * PID's, through its descriptor, never a later process's) */
	snprintf(path, sizeof(path), "task/%d/status", (int)tid);
	if (st_insp_read_text(p->dirfd, path, status, sizeof(status)) < 0)
		return false;
	tgid = strstr(status, "\nTgid:");
	return tgid && strtol(tgid + strlen("\nTgid:"), NULL, 10) == p->pid &&
	       poll(&pf, 1, 0) == 0;
}

void st_insp_proc_close(struct st_insp_proc *p)
{
	if (p->dirfd >= 0)
		close(p->dirfd);
	p->dirfd = -1;
}

void st_insp_maps_free(struct st_insp_mapping *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

int st_insp_read_maps(const struct st_insp_proc *p, struct st_insp_mapping **out, size_t *nout)
{
	struct st_insp_mapping *maps = NULL;
	size_t n = 0, cap = 0, lcap = 0;
	char *line = NULL;
	int fd = openat(p->dirfd, "maps", O_RDONLY | O_CLOEXEC);
	FILE *f;

	*out = NULL;
	*nout = 0;
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (getline(&line, &lcap, f) > 0) {
		uint64_t start, end, off, ino;
		unsigned maj, min;
		int pos = 0;
		char *file;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64 " %n", &start,
			   &end, &off, &maj, &min, &ino, &pos) < 6 ||
		    pos == 0)
			continue;
		file = line + pos;
		file[strcspn(file, "\n")] = '\0';
		/* Regular files only: not [vdso], not memfds, not deleted. */
		if (file[0] != '/' || strncmp(file, "/memfd:", 7) == 0 ||
		    strstr(file, " (deleted)") != NULL || strlen(file) >= ST_INSP_PATH_MAX)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct st_insp_mapping *m = realloc(maps, ncap * sizeof(*m));

			if (!m)
				break;
			maps = m;
			cap = ncap;
		}
		maps[n] = (struct st_insp_mapping){ start, end, off, makedev(maj, min), (ino_t)ino,
						    strdup(file) };
		if (maps[n].path)
			n++;
	}
	free(line);
	fclose(f);
	*out = maps;
	*nout = n;
	return 0;
}

static bool same_file(const struct stat *st, dev_t dev, ino_t ino)
{
	return S_ISREG(st->st_mode) && st->st_dev == dev && st->st_ino == ino;
}

int st_insp_open_mapped(const struct st_insp_proc *p, uint64_t start, uint64_t end, dev_t dev,
			ino_t ino, const char *path)
{
	const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	char link[96];
	struct stat st;
	int fd = -1;

	/* The magic link is the mapped file itself, not a path to look up
	 * (so it is opened without O_NOFOLLOW, which would refuse any link);
	 * stat first: nothing that is not the regular file mapped is opened. */
	snprintf(link, sizeof(link), "map_files/%" PRIx64 "-%" PRIx64, start, end);
	if (fstatat(p->dirfd, link, &st, 0) == 0) {
		if (!same_file(&st, dev, ino))
			return -EINVAL;
		fd = openat(p->dirfd, link, flags);
	} else if (errno == EPERM) {
		/* No CAP_CHECKPOINT_RESTORE here: the path, as the owner, which
		 * must lead to that very file and is never followed at its end. */
		if (stat(path, &st) < 0 || !same_file(&st, dev, ino))
			return -EINVAL;
		fd = open(path, flags | O_NOFOLLOW);
	} else {
		return -errno;
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !same_file(&st, dev, ino)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int st_insp_key_of(int fd, struct st_insp_key *key)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	key->dev = st.st_dev;
	key->ino = st.st_ino;
	key->size = (uint64_t)st.st_size;
	key->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	key->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	return 0;
}

size_t st_insp_user_fs(const struct st_insp_proc *p, dev_t **out)
{
	int fd = openat(p->dirfd, "mountinfo", O_RDONLY | O_CLOEXEC);
	char *line = NULL, *dash;
	size_t cap = 0, n = 0, ncap = 0;
	dev_t *devs = NULL;
	FILE *f;

	*out = NULL;
	if (fd < 0 || !(f = fdopen(fd, "re"))) {
		if (fd >= 0)
			close(fd);
		return SIZE_MAX;
	}
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE ..." */
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		char type[64];

		dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 ||
		    sscanf(dash + 3, "%63s", type) != 1 || strncmp(type, "fuse", 4) != 0)
			continue;
		if (n == ncap) {
			size_t c = ncap ? ncap * 2 : 8;
			dev_t *v = realloc(devs, c * sizeof(*v));

			if (!v)
				break;
			devs = v;
			ncap = c;
		}
		devs[n++] = makedev(maj, min);
	}
	free(line);
	fclose(f);
	*out = devs;
	return n;
}

bool st_insp_dev_in(dev_t dev, const dev_t *devs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (devs[i] == dev)
			return true;
	return false;
}
