/*
 * Control requests inside the daemon: the request as received
 * (control.c) and the verbs that act on it (commands.c).
 */
#ifndef ST_DAEMON_COMMANDS_H
#define ST_DAEMON_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/daemon/daemon.h"

/* The group whose members may control the system daemon. */
#define ST_GROUP "shimtrace"

#define ST_REQ_MAX_ITEMS 512

struct st_client;

struct st_request {
	struct st_client *client; /* the connection (control.c); NULL once answered */
	uid_t uid; /* the peer, from SO_PEERCRED */
	gid_t gid;
	pid_t pid;
	bool root;
	const char *verb;
	const char *items[ST_REQ_MAX_ITEMS]; /* "key=value" */
	uint32_t nitems;
	char *out; /* standard output text, sent at the end */
	size_t out_len, out_cap;
};

/* What runs a request: its exit status, or ST_CTL_DEFERRED. */
typedef int (*st_control_handler)(struct st_daemon *d, struct st_request *r);
/* Listens on RUNDIR/control.sock; each request goes to run (the verbs,
 * above this transport). */
int st_control_listen(struct st_daemon *d, st_control_handler run, char *err, size_t errlen);
/* Splits a request as received (request.c): 0, or -1 if malformed. */
int st_request_parse(struct st_request *r, char *buf, size_t len);
/* Closes the clients past their deadline (the loop's timer). */
void st_control_tick(struct st_daemon *d);
/* Frees closed clients; between two loop rounds. */
void st_control_collect(void);
/* Closes every client (the daemon stops). */
void st_control_fini(struct st_daemon *d);

/* The value of the first item `key`, or NULL. */
const char *st_req_get(const struct st_request *r, const char *key);
/* The values of every item `key`, at most max; returns how many. */
uint32_t st_req_all(const struct st_request *r, const char *key, const char **out, uint32_t max);

/* Appends to the standard output of the request. */
void st_reply(struct st_request *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sends one line for standard error; returns status. */
int st_reply_error(struct st_request *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Runs the request; returns the command's exit status, or ST_CTL_DEFERRED:
 * the verb answers later with st_request_finish(). */
#define ST_CTL_DEFERRED (-1000)
int st_command(struct st_daemon *d, struct st_request *r);
/* Answers deferred stops whose wait is over (all of them with now). */
void st_commands_poll(struct st_daemon *d, bool now);
/* Objects or a line table arrived: a stop waiting for them waits on. */
void st_commands_progress(void);
/* Sends the standard output gathered, the exit status; closes the request. */
void st_request_finish(struct st_request *r, int status);

/* Verbs needing more than the session table (snapshot.c, probe.c). */
int st_cmd_snapshot(struct st_daemon *d, struct st_request *r, struct st_session *ses);
int st_cmd_load_probe(struct st_daemon *d, struct st_request *r, struct st_proc *p,
		      const char *library);

#endif
