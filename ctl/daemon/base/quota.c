/*
 * Per-user quotas: the limits, and what each uid uses (see quota.h).
 *
 * The users are a list, one per uid that has used anything: not cds_lfht:
 * only the daemon's thread reads and changes it, so an RCU table would add
 * grace periods and a library to the one thread for no reader; cds_lfht is
 * for a table another thread reads while this one changes it.
 *
 * Owns: each quota's limit and what each user uses of each (the users).
 * Thread: the daemon's, the reactor's one thread.
 * Calls: base.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl/daemon/base/clock.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/base/quota.h"


/* Limits set with --quota, and defaults the daemon set; 0: none. */
static uint64_t set[ST_Q_COUNT], defaults[ST_Q_COUNT];

uint64_t st_quota_limit(enum st_quota_kind kind)
{
	if (set[kind])
		return set[kind];
	return defaults[kind] ? defaults[kind] : st_quota_defs[kind].def;
}

void st_quota_default(enum st_quota_kind kind, uint64_t value)
{
	defaults[kind] = value;
}

static struct st_user *users;

static int parse_value(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int st_quota_set(const char *spec, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '=');
	uint64_t v;

	for (int k = 0; eq && k < ST_Q_COUNT; k++) {
		size_t n = strlen(st_quota_defs[k].name);

		if ((size_t)(eq - spec) != n || strncmp(spec, st_quota_defs[k].name, n) != 0)
			continue;
		if (parse_value(eq + 1, &v) < 0 || v == 0) {
			snprintf(err, errlen, "--quota %s: '%s' is not a positive number",
				 st_quota_defs[k].name, eq + 1);
			return -1;
		}
		if (k == ST_Q_FIELDS && v > 255) {
			snprintf(err, errlen, "--quota fields: at most 255");
			return -1;
		}
		set[k] = v;
		return 0;
	}
	{
		char names[256];
		size_t n = 0;

		names[0] = '\0';
		for (int k = 0; k < ST_Q_COUNT && n < sizeof(names); k++)
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", k ? ", " : "",
					      st_quota_defs[k].name);
		snprintf(err, errlen, "--quota: '%s' is not NAME=VALUE with NAME one of %s", spec,
			 names);
	}
	return -1;
}

struct st_user *st_user_of(uid_t uid)
{
	struct st_user *u;

	for (u = users; u; u = u->next)
		if (u->uid == uid)
			return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	u->next = users;
	users = u;
	return u;
}

struct st_user *st_users(void)
{
	return users;
}

bool st_quota_refuse(struct st_user *u, enum st_quota_kind kind, pid_t pid, const char *what)
{
	uint64_t now;

	if (!u)
		return false;
	u->refused[kind]++;
	now = st_now_ms();
	if (!u->warned_at[kind] || now - u->warned_at[kind] >= 10000) {
		u->warned_at[kind] = now;
		st_log_user(u->uid, ST_LOG_WARN,
		       "uid %u over its quota of %s (%llu): process %d refused (%s; --quota %s=N)",
		       (unsigned)u->uid, st_quota_defs[kind].name,
		       (unsigned long long)st_quota_limit(kind), pid, what, st_quota_defs[kind].name);
	}
	return false;
}

bool st_quota_take(struct st_user *u, enum st_quota_kind kind, uint64_t more, pid_t pid,
		   const char *what)
{
	if (!u || u->used[kind] + more > st_quota_limit(kind) || u->used[kind] + more < more)
		return st_quota_refuse(u, kind, pid, what);
	u->used[kind] += more;
	return true;
}

bool st_quota_check(struct st_user *u, enum st_quota_kind kind, uint64_t value, pid_t pid,
		    const char *what)
{
	return value <= st_quota_limit(kind) ? true : st_quota_refuse(u, kind, pid, what);
}

void st_quota_give(struct st_user *u, enum st_quota_kind kind, uint64_t less)
{
	if (u)
		u->used[kind] -= less < u->used[kind] ? less : u->used[kind];
}
