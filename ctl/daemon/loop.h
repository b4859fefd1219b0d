/*
 * The daemon's event loop: what each watched descriptor stands for.
 */
#ifndef ST_DAEMON_LOOP_H
#define ST_DAEMON_LOOP_H

#include "ctl/daemon/daemon.h"

enum st_tag_kind {
	ST_TAG_LISTEN = 1,
	ST_TAG_TIMER,
	ST_TAG_SIGNAL,
	ST_TAG_CHILD,
	ST_TAG_CONTROL,	  /* the control socket */
	ST_TAG_PROC,	  /* a process's control connection */
	ST_TAG_PROC_EXIT, /* a process's pidfd */
	ST_TAG_INSPECTOR, /* an inspector's socket (inspect.c) */
	ST_TAG_CLIENT,	  /* a control client's connection (control.c) */
};

/* Watches fd for input; tag and ptr come back with its events. Tags up to
 * ST_TAG_FIXED_LAST are the daemon's own descriptors; the others carry a
 * pointer (a process, an inspector). */
#define ST_TAG_FIXED_LAST ST_TAG_CONTROL
int st_loop_watch(struct st_daemon *d, int fd, enum st_tag_kind tag, void *ptr);
/* Changes what fd, watched with tag and ptr, is watched for (EPOLLIN,
 * EPOLLOUT). */
int st_loop_watch_events(struct st_daemon *d, int fd, enum st_tag_kind tag, void *ptr,
			 uint32_t events);
void st_loop_unwatch(struct st_daemon *d, int fd);

#endif
