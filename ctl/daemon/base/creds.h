/*
 * Acting as a session's owner when creating its files (creds.c).
 */
#ifndef ST_DAEMON_BASE_CREDS_H
#define ST_DAEMON_BASE_CREDS_H

#include <stdbool.h>
#include <sys/types.h>

#define ST_CREDS_MAX_GROUPS 256
struct st_creds {
	bool changed;
	int ngroups;
	gid_t groups[ST_CREDS_MAX_GROUPS];
};
int st_creds_become(uid_t uid, gid_t gid, struct st_creds *saved);
/* Whose the files created after st_creds_become(uid, gid) are: uid and
 * gid, or the daemon's own ids where it cannot change them (a user's
 * daemon) or need not (root). */
void st_creds_owner(uid_t uid, gid_t gid, uid_t *fsuid, gid_t *fsgid);
void st_creds_restore(struct st_creds *saved);

#endif
