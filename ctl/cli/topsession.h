/*
 * The session shimtrace top follows (topsession.c): one the session
 * daemon runs, found by name (its trace directory, state and losses, as
 * `status --json` gives them), or one of top's own (-e PATTERN): created,
 * enabled and started, then stopped and destroyed at the end, its trace
 * kept only where the user asked (-o DIR).
 */
#ifndef ST_CLI_TOPSESSION_H
#define ST_CLI_TOPSESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct st_topsession {
	char name[64];
	char dir[PATH_MAX]; /* its trace directory */
	bool own;	    /* top's: stopped and destroyed at the end */
	bool made_dir;	    /* top made dir: removed with the trace at the end */
	/* as of the last st_topsession_poll */
	bool gone;	    /* the daemon or the session is gone */
	char state[16];	    /* "created", "started", "stopped" */
	uint64_t lost;	    /* events the session lost */
};

/* What top's own session records. */
struct st_topsession_rules {
	const char *const *patterns; /* -e */
	uint32_t npatterns;
	const char *pids; /* "PID" or NULL */
	const char *uid;  /* or NULL */
	const char *output; /* -o: where its trace stays, or NULL */
};

/* The session named name: 0, or 1 when the daemon knows none of that
 * name (or none runs), or -1 after a one-line message. */
int st_topsession_find(struct st_topsession *s, const char *name);

/* Creates, enables and starts a session of top's own: 0, or -1 after a
 * one-line message (what it made is undone). */
int st_topsession_start(struct st_topsession *s, const struct st_topsession_rules *rules);

/* The session's state and losses now (s->gone when it cannot say). */
void st_topsession_poll(struct st_topsession *s);

/* Top's own session: stopped and destroyed, its trace removed unless
 * kept; others are left alone. */
void st_topsession_end(struct st_topsession *s);

#endif
