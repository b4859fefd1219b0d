/*
 * The snapshot verb (snapshot.c).
 */
#ifndef ST_DAEMON_CMD_SNAPSHOT_H
#define ST_DAEMON_CMD_SNAPSHOT_H

#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

int st_cmd_snapshot(struct st_daemon *d, struct st_request *r, struct st_session *ses);

#endif
