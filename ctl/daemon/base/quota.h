/*
 * Per-user quotas of the daemon (quota.c).
 *
 * The system daemon serves every user of the machine: what one user's
 * processes cost it (connections, registered processes, event classes and
 * their fields, metadata, line tables) is counted per uid and bounded, so
 * that no user can take what the others need. The defaults are far above
 * what a normal machine uses; `shimtraced --quota NAME=VALUE` changes them.
 * A process over a limit is refused: its connection is closed (it then
 * runs on with tracing off), the refusal is logged and counted, and
 * `shimtrace status` shows it.
 */
#ifndef ST_DAEMON_QUOTA_H
#define ST_DAEMON_QUOTA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum st_quota_kind {
	ST_Q_CONNECTIONS, /* open connections of the user's processes */
	ST_Q_PROCESSES,	  /* registered processes (connected or found running) */
	ST_Q_CLASSES,	  /* distinct event classes; also tracepoints per process */
	ST_Q_FIELDS,	  /* fields of one event class */
	ST_Q_METADATA,	  /* bytes of metadata the user's classes declare */
	ST_Q_SYMBOLS,	  /* bytes of line tables kept for the user's objects */
	ST_Q_SESSIONS,	  /* sessions the user created (a control-group member) */
	ST_Q_DESCRIPTORS, /* descriptors of others' files the daemon holds for the user */
	ST_Q_MEMORY,	  /* bytes of buffers granted to the user's processes, all sessions */
	ST_Q_COUNT
};

struct st_quota_def {
	const char *name;
	uint64_t def;	   /* the default */
	const char *unit;  /* "" or "bytes" */
	const char *what;  /* for --help and the man page */
};
extern const struct st_quota_def st_quota_defs[ST_Q_COUNT];
/* The limit in force. */
uint64_t st_quota_limit(enum st_quota_kind kind);
/* Sets the default of a quota whose default depends on the daemon (a def
 * of 0 in st_quota_defs): what --quota does not set. */
void st_quota_default(enum st_quota_kind kind, uint64_t value);

/* "NAME=VALUE" (sizes take K, M, G): 0, or -1 with the reason in err. */
int st_quota_set(const char *spec, char *err, size_t errlen);

/* What one uid uses, and what it was refused. */
struct st_user {
	struct st_user *next;
	uid_t uid;
	uint64_t used[ST_Q_COUNT];
	uint64_t refused[ST_Q_COUNT];
	uint64_t warned_at[ST_Q_COUNT]; /* ms: refusals are logged at most every 10 s */
};

/* The account of uid, created at first use (NULL: out of memory). */
struct st_user *st_user_of(uid_t uid);
/* The accounts, for status. */
struct st_user *st_users(void);

/* Whether the user may use `more` of kind; if not, the refusal is counted
 * and logged (naming pid and what). */
bool st_quota_take(struct st_user *u, enum st_quota_kind kind, uint64_t more, pid_t pid,
		   const char *what);
/* Whether a single value (the fields of one class) is within the limit;
 * if not, the refusal is counted and logged. */
bool st_quota_check(struct st_user *u, enum st_quota_kind kind, uint64_t value, pid_t pid,
		    const char *what);
/* Counts and logs (at most every 10 s per uid and kind) a refusal of
 * process pid for what; false. */
bool st_quota_refuse(struct st_user *u, enum st_quota_kind kind, pid_t pid, const char *what);
/* Gives back what st_quota_take took. */
void st_quota_give(struct st_user *u, enum st_quota_kind kind, uint64_t less);

#endif /* ST_DAEMON_QUOTA_H */
