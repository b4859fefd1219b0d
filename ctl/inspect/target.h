/*
 * A traced process as an inspector sees it (target.c): its /proc
 * directory, its credentials, its threads, its mappings, and the files it
 * maps.
 */
#ifndef ST_INSPECT_TARGET_H
#define ST_INSPECT_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/inspect/proto.h"

/*
 * A traced process: its /proc directory, opened while its pidfd says it
 * still runs (so the directory is that process's, not a later one's with
 * the same pid).
 */
struct st_insp_proc {
	pid_t pid;
	int dirfd;
	int pidfd;
};

/*
 * Opens the target of a request and checks that its credentials are still
 * those it registered with (every uid and gid of /proc/PID/status) and
 * that it is dumpable. Returns 0, or -errno with the reason in why.
 */
int st_insp_proc_open(const struct st_insp_target *t, int pidfd, struct st_insp_proc *out,
		      char *why, size_t whylen);
void st_insp_proc_close(struct st_insp_proc *p);

/*
 * Whether tid is a thread of p's process (in its task directory, with its
 * pid as thread group), which still runs (its pidfd says so). An answer
 * that lasts only for a tid that cannot end meanwhile: one stopped under
 * the caller's ptrace (a tracee's tid is not freed before its tracer has
 * waited for it, or let it go).
 */
bool st_insp_thread_of(const struct st_insp_proc *p, pid_t tid);

/*
 * Opens the file mapped at [start, end) with the given device and inode
 * (from /proc/PID/maps) through /proc/PID/map_files, or, where the kernel
 * refuses that (no CAP_CHECKPOINT_RESTORE), by path with O_NOFOLLOW; the
 * file must be a regular file with that device and inode, before and after
 * the open, which never blocks. Returns the descriptor or -errno.
 */
int st_insp_open_mapped(const struct st_insp_proc *p, uint64_t start, uint64_t end, dev_t dev,
			ino_t ino, const char *path);

/* The identity of the file fd; 0 or -errno. */
int st_insp_key_of(int fd, struct st_insp_key *key);

/*
 * The devices of the file systems served by a user process (FUSE) in p's
 * mount namespace, from /proc/PID/mountinfo: a file there is never
 * opened (its open, and its close, wait on whatever that process does).
 * Returns how many (*out: the caller frees), SIZE_MAX when unknown.
 */
size_t st_insp_user_fs(const struct st_insp_proc *p, dev_t **out);

/* Whether dev is one of the n devices of devs. */
bool st_insp_dev_in(dev_t dev, const dev_t *devs, size_t n);

/* Reads the text file at path under dirfd (a /proc file: status) into buf,
 * at most size - 1 bytes, NUL-terminated: the length read, or -1. */
ssize_t st_insp_read_text(int dirfd, const char *path, char *buf, size_t size);

/* One line of /proc/PID/maps. */
struct st_insp_mapping {
	uint64_t start, end, offset;
	dev_t dev;
	ino_t ino;
	char *path; /* a file path, or NULL */
};

/* The mappings of p that are regular files (not deleted, not memfds). */
int st_insp_read_maps(const struct st_insp_proc *p, struct st_insp_mapping **out, size_t *n);
void st_insp_maps_free(struct st_insp_mapping *m, size_t n);

#endif /* ST_INSPECT_TARGET_H */
