/*
 * Where a trace is written: its directory, made new or checked, reached from
 * descriptors only, and the files created in it (tracedir.c).
 */
#ifndef ST_DAEMON_TRACEDIR_H
#define ST_DAEMON_TRACEDIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whom a trace directory is for: its owner, and the umask its modes follow. */
struct st_tracedir_owner {
	uid_t uid;
	gid_t gid;
	mode_t umask;
};

/* What an open trace directory is: its descriptor, the descriptor of the
 * directory holding it (O_PATH) and its name there. */
struct st_tracedir {
	int fd;
	int parent;
	char name[NAME_MAX + 1];
	bool made; /* created now, not found */
};

/*
 * Opens dir for a new trace, creating it and its missing parents (mode
 * 0777 & ~umask), run with the owner's file system credentials. The path
 * (absolute, or from the working directory) is walked one component at a
 * time from a descriptor; a symbolic link is followed only if it belongs
 * to the owner or to root. The directory itself must be new, or an empty
 * directory of the owner's that nobody else may write (group-writable
 * only when its group is the owner's gid); it is opened O_NOFOLLOW and
 * checked on the descriptor. 0, or -errno with a line in err.
 */
int st_tracedir_open(struct st_tracedir *td, const char *dir, const struct st_tracedir_owner *o,
		     char *err, size_t errlen);
/* Creates directory name in parent, new: -EEXIST when the name is taken
 * (by anything, a link too), otherwise as st_tracedir_open. td->parent is
 * not set (-1). */
int st_tracedir_make(struct st_tracedir *td, int parent, const char *name,
		     const struct st_tracedir_owner *o, char *err, size_t errlen);
/* Removes td's directory by its name in td->parent, if it is still the one
 * td holds and empty; true if removed. */
bool st_tracedir_remove(const struct st_tracedir *td);
void st_tracedir_close(struct st_tracedir *td);

/*
 * Creates file name in directory dirfd, opened O_WRONLY|extra: new
 * (O_EXCL, never through a link), mode 0666 & ~umask exactly. Returns the
 * descriptor, or -1 with errno.
 */
int st_tracedir_create(int dirfd, const char *name, int extra, mode_t umask);

/* The path of the open directory fd (for messages), else fallback. */
void st_tracedir_path(int fd, char *buf, size_t n, const char *fallback);

#endif
