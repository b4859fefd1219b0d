/*
 * Waiting for the records under way (quiesce.c).
 */
#ifndef ST_DAEMON_DRAIN_QUIESCE_H
#define ST_DAEMON_DRAIN_QUIESCE_H

#include "ctl/daemon/model/state.h"

/* quiesce.c: waits (bounded) for the records under way in session ses,
 * whose enable bits were just cleared. */
void st_writers_quiesce(struct st_daemon *d, const struct st_session *ses);

#endif
