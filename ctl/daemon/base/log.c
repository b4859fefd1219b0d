/*
 * Daemon logging: to stderr (foreground, or the private instance of
 * `shimtrace record`, which shows only warnings and errors) or syslog.
 *
 * Lines that a user's processes (or connections, or inspectors) make the
 * daemon write go through st_log_user, which holds each uid to USER_RATE
 * lines a second (USER_BURST at once): the log is shared by every user of
 * the machine, and one must not flood it, nor hide another's lines in it.
 * What a user had suppressed is said, with how many, before its next line
 * that is written.
 *
 * Owns: the log's settings and each uid's rate of lines.
 * Thread: the daemon's, the reactor's one thread; the file writer's
 *         threads call st_log too, which only reads settings made before
 *         they start (st_log_user is the daemon thread's alone).
 * Calls: none.
 */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

#include "core/monotime.h"
#include "ctl/common/escape.h"
#include "ctl/daemon/base/log.h"

#define USER_RATE 10   /* lines a second, on average */
#define USER_BURST 100 /* lines at once */
#define USERS_KEPT 64  /* uids whose rate is followed; the least recent goes */

static const char *ident = "shimtrace";
static int max_level = ST_LOG_WARN;
static bool to_syslog;

/* One uid's allowance: milli-lines, refilled at USER_RATE a second. */
static struct user_rate {
	uid_t uid;
	bool used;
	uint64_t allowance;
	uint64_t last_ms;
	uint64_t suppressed;
} rates[USERS_KEPT];

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
 * (ctl/common/escape.h), so that no process writes into the log's reader's
 * terminal or makes a line of its own.
 */
static void vlog(int level, const char *fmt, va_list ap)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char msg[2048], line[ST_ESC_SIZE(sizeof(msg))];
	size_t used, n;
	int len = vsnprintf(msg, sizeof(msg), fmt, ap);

	if (len < 0)
		return;
	n = (size_t)len < sizeof(msg) ? (size_t)len : sizeof(msg) - 1;
	line[st_esc_part(line, sizeof(line) - 1, msg, n, ST_ESC_TEXT, &used)] = '\0';
	if (to_syslog)
		syslog(prio[level], "%s", line);
	else
		fprintf(stderr, "%s: %s\n", ident, line);
}

void st_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

/* uid's allowance: followed already, else a new one in place of the least
 * recent (whose suppressed lines, if any, are said first). */
static struct user_rate *rate_of(uid_t uid, uint64_t now)
{
	struct user_rate *oldest = &rates[0];

	for (int i = 0; i < USERS_KEPT; i++) {
		if (rates[i].used && rates[i].uid == uid)
			return &rates[i];
		if (!rates[i].used || (oldest->used && rates[i].last_ms < oldest->last_ms))
			oldest = &rates[i];
	}
	if (oldest->used && oldest->suppressed)
		st_log(ST_LOG_WARN, "uid %u: %llu more log lines about its processes suppressed",
		       (unsigned)oldest->uid, (unsigned long long)oldest->suppressed);
	*oldest = (struct user_rate){ uid, true, USER_BURST * 1000ull, now, 0 };
	return oldest;
}

void st_log_user(uid_t uid, int level, const char *fmt, ...)
{
	uint64_t now = st_now_ms();
	struct user_rate *r;
	va_list ap;

	if (level > max_level)
		return;
	r = rate_of(uid, now);
	r->allowance += (now - r->last_ms) * USER_RATE;
	if (r->allowance > USER_BURST * 1000ull)
		r->allowance = USER_BURST * 1000ull;
	r->last_ms = now;
	if (r->allowance < 1000) {
		r->suppressed++;
		return;
	}
	r->allowance -= 1000;
	if (r->suppressed) {
		st_log(ST_LOG_WARN, "uid %u: %llu log lines about its processes suppressed (at most %d "
				    "a second)",
		       (unsigned)uid, (unsigned long long)r->suppressed, USER_RATE);
		r->suppressed = 0;
	}
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}
