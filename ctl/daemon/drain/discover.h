/*
 * Processes found running (discover.c).
 */
#ifndef ST_DAEMON_DRAIN_DISCOVER_H
#define ST_DAEMON_DRAIN_DISCOVER_H

#include "ctl/daemon/model/state.h"

/* Processes found running (discover.c): asked of their owners' inspectors;
 * they register as their answers come. */
void st_discover(struct st_daemon *d);
void st_reglog_catch_up(struct st_daemon *d, struct st_proc *p);

#endif
