/*
 * The control socket (control.c): clients served without waiting,
 * replies sent as they read them. The verbs are above it (commands.c).
 */
#ifndef ST_DAEMON_CMD_CONTROL_H
#define ST_DAEMON_CMD_CONTROL_H

#include <stddef.h>

#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

/* Runs the request; returns the command's exit status, or ST_CTL_DEFERRED:
 * the verb answers later with st_request_finish(). */
#define ST_CTL_DEFERRED (-1000)

/* What runs a request: its exit status, or ST_CTL_DEFERRED. */
typedef int (*st_control_handler)(struct st_daemon *d, struct st_request *r);
/* Listens on RUNDIR/control.sock; each request goes to run (the verbs,
 * above this transport). */
int st_control_listen(struct st_daemon *d, st_control_handler run, char *err, size_t errlen);
/* Closes the clients past their deadline (the loop's timer). */
void st_control_tick(struct st_daemon *d);
/* Frees closed clients; between two loop rounds. */
void st_control_collect(void);
/* Closes every client (the daemon stops). */
void st_control_fini(struct st_daemon *d);

/* Appends to the standard output of the request. */
void st_reply(struct st_request *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sends one line for standard error; returns status. */
int st_reply_error(struct st_request *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Sends the standard output gathered, the exit status; closes the request. */
void st_request_finish(struct st_request *r, int status);

#endif
