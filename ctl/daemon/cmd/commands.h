/*
 * The verbs the daemon takes from the shimtrace command (commands.c).
 */
#ifndef ST_DAEMON_CMD_COMMANDS_H
#define ST_DAEMON_CMD_COMMANDS_H

#include <stdbool.h>

#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

/* The group whose members may control the system daemon. */
#define ST_GROUP "shimtrace"

/* Runs the request: the command's exit status, or ST_CTL_DEFERRED. */
int st_command(struct st_daemon *d, struct st_request *r);
/* Answers deferred stops whose wait is over (all of them with now). */
void st_commands_poll(struct st_daemon *d, bool now);
/* Objects or a line table arrived: a stop waiting for them waits on. */
void st_commands_progress(void);

#endif
