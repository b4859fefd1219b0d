/*
 * A session's trace streamed live to an lttng-relayd while it is written
 * (relaylive.c): `create --set-url` and `record --set-url`.
 *
 * The daemon writes the trace to its directory as always (the local copy);
 * a thread of its own follows that directory and sends each whole packet,
 * with its index, and the metadata as it grows (trace.h's live metadata),
 * so that live viewers read the session as it runs. Nothing here touches
 * the event path: a slow or dead relay makes the follower fall behind, not
 * the program wait.
 *
 * A relay that goes away: the follower connects again every second or
 * so, as a new relay session of the same name (the protocol has no way
 * back into the old one), and sends from the first packet the old one
 * had not said written: nothing is lost while the relay comes back
 * before the session ends. What no relay said written when the session
 * ends is counted as lost sending.
 */
#ifndef ST_DAEMON_OUT_RELAYLIVE_H
#define ST_DAEMON_OUT_RELAYLIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/common/relayurl.h"
#include "ctl/daemon/base/clock.h"

struct st_relaylive;

struct st_relaylive_stats {
	uint64_t packets, bytes; /* the relay said written */
	uint64_t pending;	 /* bytes of the local copy not said written yet */
	uint64_t lost;		 /* packets lost sending (once ended) */
	uint32_t sessions;	 /* relay sessions opened: more than one after a reconnection */
	bool connected;
	bool done;		 /* ended: everything sent, or counted as lost */
	char path[272];		 /* the latest relay session's trace, under its output */
	char err[256];		 /* why the relay was lost, the last time */
};

/*
 * Starts following the trace directory dirfd (duplicated: the caller keeps
 * its own) and streaming it to the relay at u as session `session` of this
 * host, live (beacons every live_us). Files are read with the rights of
 * owner and gid alone. NULL when out of memory or threads.
 */
struct st_relaylive *st_relaylive_start(const struct st_relay_url *u, const char *session,
					int dirfd, uid_t owner, gid_t gid, const struct st_clock *clk,
					uint32_t live_us);
/* What was sent and lost so far. */
void st_relaylive_stats(struct st_relaylive *rl, struct st_relaylive_stats *out);
/*
 * The trace is finished (its files are complete): the follower sends what
 * is left, waiting up to wait_ms for a relay that is away, then counts
 * what was not said written as lost and closes the relay session.
 */
void st_relaylive_end(struct st_relaylive *rl, uint32_t wait_ms);
/* Waits up to ms for the end: whether it is done. */
bool st_relaylive_wait(struct st_relaylive *rl, uint32_t ms);
/* Lets go of rl: freed now if done, else by its thread when it is. */
void st_relaylive_release(struct st_relaylive *rl);

#endif
