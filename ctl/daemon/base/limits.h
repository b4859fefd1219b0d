/*
 * Sizes of the daemon's fixed buffers.
 */
#ifndef ST_DAEMON_BASE_LIMITS_H
#define ST_DAEMON_BASE_LIMITS_H

/* A path, with its NUL (as Linux's PATH_MAX). */
#define ST_PATH_MAX 4096

#endif
