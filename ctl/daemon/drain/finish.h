/*
 * The last drain of a process in a session (finish.c).
 */
#ifndef ST_DAEMON_DRAIN_FINISH_H
#define ST_DAEMON_DRAIN_FINISH_H

#include <stdint.h>

#include "ctl/daemon/model/state.h"

/* What p's buffers of session s still hold, what it lost for want of a
 * buffer, and its losses in the session's statistics: when p ended, or s
 * stops. */
void st_session_finish_proc(struct st_daemon *d, struct st_proc *p, uint32_t s);

#endif
