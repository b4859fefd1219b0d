/*
 * Daemon logging: to stderr (foreground, or the private instance of
 * `shimtrace record`, which shows only warnings and errors) or syslog.
 */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "ctl/daemon/daemon.h"
#include "ctl/escape.h"

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

/*
 * Lines name processes by what they say of themselves (comm, executable)
 * and quote what inspectors read: each is one line, escaped
 * (ctl/escape.h), so that no process writes into the log's reader's
 * terminal or makes a line of its own.
 */
void st_log(int level, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char msg[2048], line[ST_ESC_SIZE(sizeof(msg))];
	va_list ap;
	size_t used, n;
	int len;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	n = (size_t)len < sizeof(msg) ? (size_t)len : sizeof(msg) - 1;
	line[st_esc_part(line, sizeof(line) - 1, msg, n, ST_ESC_TEXT, &used)] = '\0';
	if (to_syslog)
		syslog(prio[level], "%s", line);
	else
		fprintf(stderr, "%s: %s\n", ident, line);
}
