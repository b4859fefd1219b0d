/*
 * The daemon's log (log.c): stderr or syslog; one line per call, escaped,
 * and the lines about a user's processes held to a rate per uid.
 */
#ifndef ST_DAEMON_BASE_LOG_H
#define ST_DAEMON_BASE_LOG_H

#include <stdbool.h>
#include <sys/types.h>

void st_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line a user's process (connection, inspector) made the daemon write:
 * rate-limited per uid (log.c). */
void st_log_user(uid_t uid, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void st_log_setup(const char *ident, int level, bool use_syslog);
enum { ST_LOG_ERR = 0, ST_LOG_WARN = 1, ST_LOG_INFO = 2, ST_LOG_DEBUG = 3 };

#endif
