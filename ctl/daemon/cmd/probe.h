/*
 * The load-probe verb (probe.c).
 */
#ifndef ST_DAEMON_CMD_PROBE_H
#define ST_DAEMON_CMD_PROBE_H

#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

int st_cmd_load_probe(struct st_daemon *d, struct st_request *r, struct st_proc *p,
		      const char *library);

#endif
