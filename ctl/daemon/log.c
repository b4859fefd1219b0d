/*
 * Daemon logging: to stderr (foreground, or the private instance of
 * `shimtrace record`, which shows only warnings and errors) or syslog.
 */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "ctl/daemon/daemon.h"

static const char *ident = "shimtrace";
static int max_level = ST_LOG_WARN;
static bool to_syslog;

void st_log_setup(const char *id, int level, bool use_syslog)
{
	ident = id;
	max_level = level;
	to_syslog = use_syslog;
	if (use_syslog)
		openlog(id, LOG_PID, LOG_DAEMON);
}

void st_log(int level, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	if (to_syslog) {
		vsyslog(prio[level], fmt, ap);
	} else {
		fprintf(stderr, "%s: ", ident);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
