/*
 * What the requester of a command sees, and how it names sessions
 * (requester.c).
 */
#ifndef ST_DAEMON_CMD_REQUESTER_H
#define ST_DAEMON_CMD_REQUESTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

/* Whether r's requester may see (and control) ses; p. */
bool st_requester_sees(const struct st_request *r, const struct st_session *ses);
bool st_requester_sees_proc(const struct st_request *r, const struct st_proc *p);
/* The registered process pid the requester may see, or NULL. */
struct st_proc *st_requester_proc(struct st_daemon *d, const struct st_request *r, pid_t pid);
/* How the requester names ses: NAME if it is theirs, else NAME@UID (in buf). */
const char *st_requester_label(const struct st_request *r, const struct st_session *ses,
			       char *buf, size_t n);
/* The session named in the request (NAME: the requester's; NAME@UID:
 * uid's, for root or uid itself), else the requester's latest; NULL after
 * an error reply. */
struct st_session *st_requester_session(struct st_daemon *d, struct st_request *r);

#endif
