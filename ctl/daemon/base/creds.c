/*
 * Acting as a session's owner when creating its files.
 *
 * The system daemon runs as root and writes traces for other users: it
 * creates their directories and files with the owner's filesystem
 * credentials (fsuid, fsgid, no supplementary groups), so a user can have
 * it write only where the user could, and the files are theirs. The raw
 * system calls change the calling thread only (glibc's setgroups would
 * change every thread); the writer thread only writes to files already
 * open.
 *
 * Owns: nothing kept: it switches the calling thread's filesystem
 *       credentials and back.
 * Thread: the daemon's, the reactor's one thread (the file writer's
 *         threads only write to files already open).
 * Calls: none.
 */
#include <errno.h>
#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl/daemon/base/creds.h"

int st_creds_become(uid_t uid, gid_t gid, struct st_creds *saved)
{
	saved->changed = false;
	if (geteuid() != 0 || uid == 0)
		return 0;
	saved->ngroups = getgroups(ST_CREDS_MAX_GROUPS, saved->groups);
	if (saved->ngroups < 0)
		return -errno;
	if (syscall(SYS_setgroups, 0, NULL) < 0)
		return -errno;
	syscall(SYS_setfsgid, gid);
	syscall(SYS_setfsuid, uid);
	saved->changed = true;
	return 0;
}

void st_creds_owner(uid_t uid, gid_t gid, uid_t *fsuid, gid_t *fsgid)
{
	bool become = geteuid() == 0;

	*fsuid = become ? uid : geteuid();
	*fsgid = become ? gid : getegid();
}

void st_creds_restore(struct st_creds *saved)
{
	if (!saved->changed)
		return;
	syscall(SYS_setfsuid, 0);
	syscall(SYS_setfsgid, 0);
	syscall(SYS_setgroups, saved->ngroups, saved->groups);
	saved->changed = false;
}
