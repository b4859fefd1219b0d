/*
 * Descriptors the daemon received from others (processes, inspectors):
 * letting go of them without waiting on anyone.
 *
 * close(2) of a file runs its file system's flush, and FUSE's waits,
 * uninterruptibly, for the server of the file system -- which any user
 * may run. So a received descriptor is closed only if it is a memfd (shared
 * memory, whose close never waits), which F_GET_SEALS tells without asking
 * the file system anything. Any other is kept, open, for good: it is
 * counted against its sender's descriptors quota, and its sender is
 * refused (what the daemon expects from others are memfds only: proc.c
 * closes a connection that sent another). A user who reached the quota
 * is refused altogether (st_fd_room): the daemon's descriptor table is
 * shared by every user, and one must not fill it.
 *
 * Owns: the received descriptors it keeps open for good.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "ctl/daemon/base/fdsafe.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"

static int *held;
static size_t nheld, cap;

bool st_fd_drop(int fd, uid_t sender)
{
	struct st_user *u;

	if (fd < 0)
		return false;
	if (fcntl(fd, F_GET_SEALS) >= 0) {
		close(fd);
		return false;
	}
	u = st_user_of(sender);
	if (u)
		u->used[ST_Q_DESCRIPTORS]++; /* never given back */
	if (nheld == cap) {
		size_t c = cap ? cap * 2 : 64;
		int *v = realloc(held, c * sizeof(*v));

		if (!v)
			return true; /* leaked: the same as held */
		held = v;
		cap = c;
	}
	held[nheld++] = fd;
	st_log_user(sender, ST_LOG_WARN, "holding %zu descriptors that are not shared memory (the last from uid "
			    "%u, who has handed %llu): closing them could wait on a user's file system",
	       nheld, (unsigned)sender, u ? (unsigned long long)u->used[ST_Q_DESCRIPTORS] : 0ull);
	return true;
}

bool st_fd_room(uid_t uid)
{
	struct st_user *u = st_user_of(uid);

	return u && u->used[ST_Q_DESCRIPTORS] < st_quota_limit(ST_Q_DESCRIPTORS);
}
