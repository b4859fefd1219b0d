/*
 * The per-user quotas, their names, defaults and meaning: the one source
 * of `shimtraced --quota`, its --help and its man page (quota.h).
 *
 * Owns: the table of quotas (constant).
 * Thread: any (nothing changes).
 * Calls: none.
 */
#include "ctl/daemon/base/quota.h"

const struct st_quota_def st_quota_defs[ST_Q_COUNT] = {
	[ST_Q_CONNECTIONS] = { "connections", 16384, "",
			       "connections of one user's processes open at once (at most an "
			       "eighth of the daemon's descriptor limit: a connection holds three)" },
	[ST_Q_PROCESSES] = { "processes", 16384, "",
			     "registered processes of one user (at most an eighth of the "
			     "daemon's descriptor limit)" },
	[ST_Q_CLASSES] = { "classes", 16384, "",
			   "distinct event classes of one user's processes (and tracepoints "
			   "one process may register, and classes one trace declares for the "
			   "user's processes)" },
	[ST_Q_FIELDS] = { "fields", 128, "", "fields of one event class" },
	[ST_Q_METADATA] = { "metadata", 16ull << 20, "bytes",
			    "metadata the event classes of one user's processes declare" },
	[ST_Q_SYMBOLS] = { "symbols", 512ull << 20, "bytes",
			   "line tables kept for the objects one user's processes map" },
	[ST_Q_SESSIONS] = { "sessions", 16, "",
			    "sessions one user (not the daemon's own) has at once; a user's "
			    "sessions take none from another's, and root always has 8" },
	[ST_Q_DESCRIPTORS] = { "descriptors", 16, "",
			       "descriptors that are not shared memory one user's processes "
			       "handed over, which the daemon keeps (closing them could wait on "
			       "a file system a user serves); past it, the user's processes are "
			       "refused" },
	[ST_Q_MEMORY] = { "memory", 0, "bytes",
			  "buffer memory granted to one user's processes, in all sessions "
			  "(default: a quarter of the daemon's --max-memory; the daemon's own "
			  "user is bound by the sessions' bounds alone)" },
};
