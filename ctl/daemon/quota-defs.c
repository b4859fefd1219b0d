/*
 * The per-user quotas, their names, defaults and meaning: the one source
 * of `shimtraced --quota`, its --help and its man page (quota.h).
 */
#include "ctl/daemon/quota.h"

const struct st_quota_def st_quota_defs[ST_Q_COUNT] = {
	[ST_Q_CONNECTIONS] = { "connections", 16384, "",
			       "connections of one user's processes open at once" },
	[ST_Q_PROCESSES] = { "processes", 16384, "", "registered processes of one user" },
	[ST_Q_CLASSES] = { "classes", 16384, "",
			   "distinct event classes of one user's processes (and tracepoints "
			   "one process may register, and classes one trace declares for the "
			   "user's processes)" },
	[ST_Q_FIELDS] = { "fields", 128, "", "fields of one event class" },
	[ST_Q_METADATA] = { "metadata", 16ull << 20, "bytes",
			    "metadata the event classes of one user's processes declare" },
	[ST_Q_SYMBOLS] = { "symbols", 512ull << 20, "bytes",
			   "line tables kept for the objects one user's processes map" },
};
