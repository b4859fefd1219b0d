/*
 * What the requester of a command sees, and how it names sessions: a user
 * sees and controls only the sessions they created and the processes of
 * their uid; root sees everything. Session names are each user's own:
 * -s NAME names the requester's session NAME, and only root reaches
 * another user's, as NAME@UID. Without -s a verb acts on the requester's
 * latest session, never another user's.
 *
 * Owns: nothing kept.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: cmd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/common/control.h"
#include "ctl/daemon/cmd/control.h"
#include "ctl/daemon/cmd/requester.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

bool st_requester_sees(const struct st_request *r, const struct st_session *ses)
{
	return r->root || ses->owner == r->uid;
}

bool st_requester_sees_proc(const struct st_request *r, const struct st_proc *p)
{
	return r->root || p->uid == r->uid;
}

/* The registered process pid the requester may see, or NULL. */
struct st_proc *st_requester_proc(struct st_daemon *d, const struct st_request *r, pid_t pid)
{
	for (struct st_proc *p = d->procs; p; p = p->next)
		if (!p->conn.ended && p->pid == pid && st_requester_sees_proc(r, p))
			return p;
	return NULL;
}

/* How the requester names ses: NAME if it is theirs, else NAME@UID. */
const char *st_requester_label(const struct st_request *r, const struct st_session *ses,
			       char *buf, size_t n)
{
	if (ses->owner == r->uid)
		return ses->name;
	snprintf(buf, n, "%s@%u", ses->name, (unsigned)ses->owner);
	return buf;
}

/*
 * The session named in the request (NAME: the requester's; NAME@UID: uid's,
 * for root or uid itself), else the requester's latest; NULL after an
 * error reply.
 */
struct st_session *st_requester_session(struct st_daemon *d, struct st_request *r)
{
	const char *arg = st_req_get(r, "session"), *at = arg ? strchr(arg, '@') : NULL;
	struct st_session *best = NULL;
	char name[sizeof(best->name)];
	uid_t owner = r->uid;

	if (at) {
		char *end;
		unsigned long v = strtoul(at + 1, &end, 10);

		if (at == arg || (size_t)(at - arg) >= sizeof(name) || !at[1] || *end ||
		    v > UINT32_MAX - 1) {
			st_reply_error(r, 0, "shimtrace %s: '%s' is not a session name, nor NAME@UID",
				       r->verb, arg);
			return NULL;
		}
		owner = (uid_t)v;
		memcpy(name, arg, (size_t)(at - arg));
		name[at - arg] = '\0';
		arg = name;
	}
	if (owner == r->uid || r->root)
		for (struct st_session *ses = d->sessions; ses; ses = ses->next)
			if (ses->owner == owner &&
			    (arg ? strcmp(ses->name, arg) == 0 : !best || ses->created > best->created))
				best = ses;
	if (!best) {
		if (arg && at)
			st_reply_error(r, 0, "shimtrace %s: uid %u has no session named '%s'", r->verb,
				       (unsigned)owner, arg);
		else if (arg)
			st_reply_error(r, 0, "shimtrace %s: no session named '%s'%s", r->verb, arg,
				       r->root ? " (another user's: NAME@UID)" : "");
		else
			st_reply_error(r, 0, "shimtrace %s: no session (create one with shimtrace create)",
				       r->verb);
	}
	return best;
}
