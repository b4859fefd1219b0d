/*
 * Process connections (procconn.c): the registration socket, each
 * process's connection and pidfd, its messages, its end.
 */
#ifndef ST_DAEMON_DRAIN_PROCCONN_H
#define ST_DAEMON_DRAIN_PROCCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/daemon/model/state.h"

/* Listens on the registration socket (d->sock_path; all_users: mode
 * 0666, for the system daemon, else 0600) and watches it. */
int st_proc_listen(struct st_daemon *d, bool all_users, char *err, size_t errlen);
/* Takes the connections waiting on it. */
void st_proc_accept(struct st_daemon *d);
/* Watches it again after a tick, if it was paused (out of descriptors). */
void st_proc_accept_resume(struct st_daemon *d);
void st_proc_readable(struct st_daemon *d, struct st_proc *p);
/* The loop's callbacks: p's connection is readable; p's pidfd says it
 * exited. */
void st_proc_on_readable(struct st_loop *l, void *arg, uint32_t events);
void st_proc_on_exit(struct st_loop *l, void *arg, uint32_t events);
void st_proc_end(struct st_daemon *d, struct st_proc *p);
void st_proc_reap(struct st_daemon *d);
/* Handles one message of process p (from its connection or its log). */
int st_proc_message(struct st_daemon *d, struct st_proc *p, const uint8_t *buf, size_t len);
/* Ends p now, not waiting for its line tables (refused, or the daemon
 * stops). */
void st_proc_end_now(struct st_daemon *d, struct st_proc *p);
/* Ends the processes whose pidfd says they have exited but whose end the
 * loop has not handled yet (before a stop, or after `record`'s command
 * ended); with now, without waiting for line tables. */
void st_proc_end_gone(struct st_daemon *d, bool now);

/* Something a process waited for came: what waited for it goes on
 * (new objects applied, ends finished). */
void st_proc_recheck(struct st_daemon *d);
/* A line table came (or will not): the same, and waiting drains retry. */
void st_proc_lines_settled(struct st_daemon *d);

#endif
