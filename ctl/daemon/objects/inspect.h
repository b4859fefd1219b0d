/*
 * Inspectors, seen from the daemon (inspect.c): starting them, sending
 * requests, taking replies (see ctl/inspect/proto.h for why they exist).
 *
 * Nothing here waits. A request goes into the inspector's socket and
 * its replies come back through the event loop to the handler given with
 * it; an inspector that does not finish a request within its deadline, or
 * breaks the protocol, is killed, and the handlers of its requests learn
 * that they failed.
 */
#ifndef ST_DAEMON_INSPECT_H
#define ST_DAEMON_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/inspect/proto.h"
#include "ctl/daemon/wire/inspect_msg.h"

struct st_daemon;
struct st_proc;

#define ST_OWNER_GROUPS 64

/* Whom an inspector works for: a process's owner, as the kernel knows it. */
struct st_owner {
	uid_t uid;
	gid_t gid;
	bool own_userns; /* the process is in the daemon's user namespace */
	uint64_t caps;	 /* its permitted capabilities there; 0 if not there */
	uint32_t ngroups;
	gid_t groups[ST_OWNER_GROUPS];
};

/*
 * The owner of the process t is about (pidfd its pidfd): the uid and gid
 * t names (ids of the daemon's user namespace: SO_PEERCRED and
 * /proc/PID/status give them so, for a process of a user namespace below
 * it too), and its supplementary groups and permitted capabilities now
 * (from /proc/PID/status). Capabilities count only for a process of the
 * daemon's own user namespace (its /proc/PID/ns/user is the daemon's):
 * those of another are its namespace's, none here. The inspector gets
 * what st_insp_caps_max() allows, only for a process of the daemon's user
 * namespace, and CAP_SYS_PTRACE only for one that holds capabilities.
 */
void st_owner_of(const struct st_insp_target *t, int pidfd, struct st_owner *o);

/*
 * Called for each reply to a request, with the descriptor that came with
 * it (the handler owns it) or -1; the DONE reply ends the request. A
 * request that fails (the inspector died, missed its deadline, or could
 * not be started) gets one call with r == NULL.
 */
typedef void (*st_insp_handler)(struct st_daemon *d, void *ctx, const struct st_insp_reply *r,
				int fd);

/*
 * Sends msg (whose header type and len are set; the id is filled in here)
 * with fd (if >= 0; not taken) to the inspector of owner o and role,
 * started if needed. The deadline counts from when the inspector starts on
 * the request. Returns 0, or -errno (then the handler is not called).
 */
int st_insp_request(struct st_daemon *d, const struct st_owner *o, uint32_t role, void *msg,
		    size_t len, int fd, uint32_t deadline_ms, st_insp_handler h, void *ctx);
/* The requests made with ctx are no longer wanted: their handlers are not
 * called again (the process they were for is gone). */
void st_insp_forget(void *ctx);
/* Requests not answered yet. */
uint32_t st_insp_pending(void);

/* Frees what was taken out of service; between two rounds of the loop. */
void st_insp_collect(void);
/* Whether owner o's objects and lines pair holds files that may still be
 * asked for, so that it is not stopped for being idle (linecache.c's
 * st_lines_held, above this module: set by the wiring). */
extern bool (*st_insp_pair_held)(const struct st_owner *o);
/* uid's idle objects and lines pairs (but those holding files of tables
 * still to be asked for) are stopped now, not when idle long enough: a
 * probe inspector of uid wants their room (its bound, MAX_PER_USER). */
void st_insp_make_room(struct st_daemon *d, uid_t uid);
/* Every tick: deadlines, idle inspectors, the dead to reap. */
void st_insp_tick(struct st_daemon *d);
/* Daemon exit: every inspector stopped (probe inspectors finish alone). */
void st_insp_fini(struct st_daemon *d);

/* Limits (shimtraced options): inspector memory, per-request time. */
struct st_insp_limits {
	uint64_t memory;     /* bytes of address space per inspector */
	uint32_t timeout_ms; /* deadline of one object's line table */
};
extern struct st_insp_limits st_insp_limits;

#endif /* ST_DAEMON_INSPECT_H */
