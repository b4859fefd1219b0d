/*
 * Call sites (callsite.c).
 */
#ifndef ST_DAEMON_OBJECTS_CALLSITE_H
#define ST_DAEMON_OBJECTS_CALLSITE_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/daemon/model/state.h"

/* Call sites (callsite.c): the start of the source line that made a call,
 * from its return address; *unsettled set when the object's line table is
 * on its way (the answer is then the return address, and not kept). */
uint64_t st_callsite(struct st_daemon *d, struct st_proc *p, uint64_t ip, bool *unsettled);
void st_callsites_reset(struct st_proc *p);

#endif
