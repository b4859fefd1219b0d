/*
 * Descriptors the daemon received from others (processes, inspectors):
 * letting go of them without waiting on anyone.
 *
 * close(2) of a file runs its file system's flush, and FUSE's waits,
 * uninterruptibly, for the server of the file system -- which any user
 * may run. So a received descriptor is closed only if it is a memfd (shared
 * memory, whose close never waits), which F_GET_SEALS tells without asking
 * the file system anything. Any other is kept, open, for good: it is
 * counted against its sender's connections quota (so a user can make the
 * daemon keep only so many), and its sender is refused anyway (what the
 * daemon expects from others are memfds only).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "ctl/daemon/daemon.h"
#include "ctl/daemon/quota.h"

static int *held;
static size_t nheld, cap;

void st_fd_drop(int fd, uid_t sender)
{
	struct st_user *u;

	if (fd < 0)
		return;
	if (fcntl(fd, F_GET_SEALS) >= 0) {
		close(fd);
		return;
	}
	u = st_user_of(sender);
	if (u)
		u->used[ST_Q_CONNECTIONS]++; /* never given back */
	if (nheld == cap) {
		size_t c = cap ? cap * 2 : 64;
		int *v = realloc(held, c * sizeof(*v));

		if (!v)
			return; /* leaked: the same as held */
		held = v;
		cap = c;
	}
	held[nheld++] = fd;
	if (!(nheld & (nheld - 1)))
		st_log(ST_LOG_WARN, "holding %zu descriptors that are not shared memory (the last from "
				    "uid %u): closing them could wait on a user's file system",
		       nheld, (unsigned)sender);
}
