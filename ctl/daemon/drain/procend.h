/*
 * How processes end (procend.c): whether one is gone, and its
 * shimtrace:process_end.
 */
#ifndef ST_DAEMON_DRAIN_PROCEND_H
#define ST_DAEMON_DRAIN_PROCEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/daemon/model/state.h"

/* The state letter and flags of process pid's main thread, from
 * /proc/PID/stat; 0, or -1 when it cannot be read. */
int st_proc_stat(pid_t pid, char *state, unsigned int *flags);
/* The same of the stat file at path (/proc/PID/task/TID/stat). */
int st_proc_stat_at(const char *path, char *state, unsigned int *flags);
/* Whether p has exited or is exiting (its pidfd, else its /proc stat):
 * not a process that merely closed its connection (exec, or it closed the
 * descriptor). False when it cannot tell (no pidfd). */
bool st_proc_gone(const struct st_proc *p);
/* Whether p's pidfd says it has exited (the pidfd alone). */
bool st_proc_exited(const struct st_proc *p);
/* After p's final drain in session s: shimtrace:process_end into the
 * session's trace, if p was recorded there and how it ended is known. */
void st_proc_end_event(struct st_daemon *d, struct st_proc *p, uint32_t s);

#endif
