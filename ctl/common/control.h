/*
 * The control protocol between the shimtrace command and a session daemon.
 *
 * SOCK_SEQPACKET on RUNDIR/control.sock, one request per connection:
 *
 *   request  one message: the verb, then "key=value" items, each
 *            NUL-terminated; a key may repeat (pattern=, pid=)
 *   reply    messages starting with struct st_ctl_reply: OUT (text for
 *            standard output), ERR (a line for standard error), then END
 *            whose status is the command's exit status
 *
 * The daemon checks the peer with SO_PEERCRED before reading a request.
 */
#ifndef ST_CTL_CONTROL_H
#define ST_CTL_CONTROL_H

#include <stdint.h>

#define ST_CTL_SOCKET "control.sock"
#define ST_PROC_SOCKET "shimtrace.sock"
#define ST_CTL_MSG_MAX 65536

enum st_ctl_kind {
	ST_CTL_OUT = 1,
	ST_CTL_ERR = 2,
	ST_CTL_END = 3,
};

struct st_ctl_reply {
	uint32_t kind;	/* enum st_ctl_kind */
	int32_t status; /* END: exit status */
};

/* Exit statuses of control verbs. */
enum {
	ST_EXIT_OK = 0,
	ST_EXIT_FAIL = 1,  /* the daemon could not do it */
	ST_EXIT_USAGE = 2, /* the request itself is wrong */
};

#endif
