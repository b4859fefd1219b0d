/*
 * Sessions started, stopped and destroyed (lifecycle.c).
 */
#ifndef ST_DAEMON_DRAIN_LIFECYCLE_H
#define ST_DAEMON_DRAIN_LIFECYCLE_H

#include <stdbool.h>
#include <stddef.h>

#include "ctl/daemon/model/state.h"

int st_session_start(struct st_daemon *d, struct st_session *ses, char *err, size_t errlen);
/* Drains everything, writes the final metadata, closes the trace. */
int st_session_stop(struct st_daemon *d, struct st_session *ses);
/* True when the session had never started and its directory, which it
 * had made and which is empty, is removed with it. */
bool st_session_destroy(struct st_daemon *d, struct st_session *ses);

#endif
