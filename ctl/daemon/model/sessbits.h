/*
 * Which session a bit of the enable masks belongs to, for each process
 * (sessbits.c).
 */
#ifndef ST_DAEMON_MODEL_SESSBITS_H
#define ST_DAEMON_MODEL_SESSBITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/daemon/model/state.h"

/* The session of bit s that may trace p (root's, or p's owner's), or NULL:
 * what p's state in slot s (its control page, pools, grants) belongs to. */
struct st_session *st_session_at(const struct st_daemon *d, uint32_t s, const struct st_proc *p);
/* Whether ses may trace p's processes at all (it is root's, or p's owner's). */
bool st_session_covers(const struct st_session *ses, const struct st_proc *p);
/* Bits kept for root's sessions (the daemon's own user's) whatever users do. */
#define ST_SESSION_ROOT_BITS 8
/* A bit for a new session of owner (all_users: root's, tracing every
 * user), -1 if none is free (sessbits.c). */
int st_session_bit(const struct st_daemon *d, uid_t owner, bool all_users);
struct st_geometry;

#endif
