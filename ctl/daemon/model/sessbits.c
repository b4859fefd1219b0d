/*
 * Which session a bit of the enable masks belongs to, for each process.
 *
 * A process's control page holds the state of 32 sessions, one per bit
 * (core/abi.h); a session's bit is its index. The daemon has more
 * sessions than that: the bits are shared out per user, so that one
 * user's sessions never take a bit from another user (st_session_bit).
 * Bit s of a process of uid U belongs to the one session with index s
 * that may trace U's processes: one of root's (every user's), or one of
 * U's own.
 *
 * A bit's session is found by a scan of the sessions: not cds_lfht: only
 * the daemon's thread reads and changes it, so an RCU table would add
 * grace periods and a library to the one thread for no reader; cds_lfht is
 * for a table another thread reads while this one changes it.
 *
 * Owns: nothing kept: which session a bit means, computed from the
 *       sessions.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: none.
 */
#include "core/abi.h"
#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/sessbits.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"

bool st_session_covers(const struct st_session *ses, const struct st_proc *p)
{
	return ses->all_users || p->uid == ses->owner;
}

struct st_session *st_session_at(const struct st_daemon *d, uint32_t s, const struct st_proc *p)
{
	for (struct st_session *ses = d->sessions; ses; ses = ses->next)
		if (ses->index == s && st_session_covers(ses, p))
			return ses;
	return NULL;
}

/*
 * The bits of the enable masks are shared out so that no user can take
 * another's: a session of root's (it traces every user) takes a bit no
 * session uses, from the top; a user's session a bit that neither root's
 * sessions nor that user's own use, from the bottom, below the last
 * ST_SESSION_ROOT_BITS (kept for root's sessions whatever users do), and at most the
 * user's sessions quota. So users' sessions do not count against each
 * other, and root always has ST_SESSION_ROOT_BITS sessions.
 */
static bool bit_taken(const struct st_daemon *d, uint32_t s, uid_t owner, bool all_users)
{
	for (const struct st_session *ses = d->sessions; ses; ses = ses->next)
		if (ses->index == s && (all_users || ses->all_users || ses->owner == owner))
			return true;
	return false;
}

int st_session_bit(const struct st_daemon *d, uid_t owner, bool all_users)
{
	uint32_t top = owner == d->uid ? ST_ABI_MAX_SESSIONS : ST_ABI_MAX_SESSIONS - ST_SESSION_ROOT_BITS;

	for (uint32_t i = 0; i < top; i++) {
		uint32_t s = all_users ? ST_ABI_MAX_SESSIONS - 1 - i : i;

		if (!bit_taken(d, s, owner, all_users))
			return (int)s;
	}
	return -1;
}

