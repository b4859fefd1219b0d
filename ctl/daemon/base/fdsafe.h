/*
 * Descriptors others handed over, let go of without waiting on anyone
 * (fdsafe.c).
 */
#ifndef ST_DAEMON_BASE_FDSAFE_H
#define ST_DAEMON_BASE_FDSAFE_H

#include <stdbool.h>
#include <sys/types.h>

/* Received descriptors (fdsafe.c): closed if shared memory, else kept
 * open for good, counted against the sender's descriptors quota (closing
 * one may wait on a file system a user serves); true if kept. */
bool st_fd_drop(int fd, uid_t sender);
/* Whether uid may still hand over descriptors: below its quota of those
 * the daemon keeps. A user at it is refused: connections, pickups. */
bool st_fd_room(uid_t uid);

#endif
