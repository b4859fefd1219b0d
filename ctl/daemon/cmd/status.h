/*
 * status and list, as text or JSON (status.c).
 */
#ifndef ST_DAEMON_CMD_STATUS_H
#define ST_DAEMON_CMD_STATUS_H

#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

int st_cmd_status(struct st_daemon *d, struct st_request *r);
int st_cmd_list(struct st_daemon *d, struct st_request *r);
/* "N EVENTS, M lost[ (K writing the trace: why)], from P processes" */
void st_reply_totals(struct st_request *r, struct st_session *ses, const char *events);
/* The session's losses by cause, each with what would have kept them. */
void st_reply_losses(struct st_request *r, const struct st_session *ses);

#endif
