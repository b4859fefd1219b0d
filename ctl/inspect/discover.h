/*
 * DISCOVER and TAKE_POOL (discover.c): the status memfd of a process
 * found running, and the buffer pool a process offers, taken with
 * pidfd_getfd().
 */
#ifndef ST_INSPECT_DISCOVER_H
#define ST_INSPECT_DISCOVER_H

#include "ctl/inspect/proto.h"

/* Answers a DISCOVER request about t (pidfd: its pidfd). */
void st_insp_discover(const struct st_insp_target *t, int pidfd);
/* Answers a TAKE_POOL request (pidfd: the target's pidfd). */
void st_insp_take_pool(const struct st_insp_take_pool *r, int pidfd);

#endif /* ST_INSPECT_DISCOVER_H */
