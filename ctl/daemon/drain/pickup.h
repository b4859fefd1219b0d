/*
 * Pools offered by processes without a connection (pickup.c).
 */
#ifndef ST_DAEMON_DRAIN_PICKUP_H
#define ST_DAEMON_DRAIN_PICKUP_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/daemon/model/state.h"

/* pickup.c: takes the pools a process without a connection offers. */
void st_pickup(struct st_daemon *d, struct st_proc *p);
/* Whether p offers a pool of session s the daemon has yet to take (a
 * stop waits for it). */
bool st_pickup_due(const struct st_daemon *d, const struct st_proc *p, uint32_t s);

#endif
