/*
 * Dynamic probes planted in running processes through the daemon
 * (dynprobe.c): enable --function/--probe, disable probe:NAME, and what
 * status and list say of them.
 */
#ifndef ST_DAEMON_CMD_DYNPROBE_H
#define ST_DAEMON_CMD_DYNPROBE_H

#include <stdbool.h>

#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

/*
 * Plants (kind "function" or "probe", at spec) or, with kind NULL,
 * removes the dynamic probe NAME in p, by a probe inspector that loads
 * library (the probe library's absolute path) if needed. The request is
 * answered when the inspector is done: ST_CTL_DEFERRED, or an exit
 * status at once. Its output so far is kept.
 */
int st_cmd_dynprobe(struct st_daemon *d, struct st_request *r, struct st_proc *p,
		    const char *name, const char *kind, const char *spec, const char *library);

/* Whether a probe NAME was planted in p through the daemon, and is still. */
bool st_dynprobe_planted(const struct st_proc *p, const char *name);

/* How probe NAME of p was planted (one line), or NULL. */
const char *st_dynprobe_how(const struct st_proc *p, const char *name);

/* status: the dynamic probes of the processes the requester sees, and
 * those refused. */
void st_dynprobe_status(struct st_daemon *d, struct st_request *r);

#endif
