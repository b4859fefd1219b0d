/*
 * An inspector becomes the owner of the processes it serves (owner.c):
 * their uid, gid and supplementary groups, and no capability but those
 * the daemon chose for it.
 */
#ifndef ST_INSPECT_OWNER_H
#define ST_INSPECT_OWNER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define ST_INSP_MAX_GROUPS 256

/* Whose credentials, and what capabilities to keep (bit n: capability n). */
struct st_insp_owner {
	uid_t uid;
	gid_t gid;
	gid_t groups[ST_INSP_MAX_GROUPS];
	int ngroups;
	uint64_t caps;
};

/*
 * Switches to o's credentials (uid, gid and groups when started by root;
 * a process that is not root must already be o's uid), keeps at most
 * o->caps of the capabilities, clears the ambient ones, sets no-new-privs
 * and makes the process not dumpable. Returns 0, or -1 with errno set and
 * *what naming the step that failed.
 */
int st_insp_become(const struct st_insp_owner *o, const char **what);

/* Whether this process holds exactly o's ids (gids and groups only where
 * it changed them: started by root) and no capability beyond o->caps in
 * any set, none ambient. */
bool st_insp_holds_no_more(const struct st_insp_owner *o, bool by_root);

#endif /* ST_INSPECT_OWNER_H */
