/*
 * The session daemon's wiring (daemon.c): it makes the daemon's state,
 * starts every module on the reactor, runs it, and ends it.
 *
 * One code base serves the system or per-user daemon (shimtraced) and the
 * private instance `shimtrace record` runs in its own process. The
 * daemon's modules run on one thread, around the reactor; the trace file
 * writer's threads only write (tracefile.h says what they share).
 *
 * Nothing that comes from a traced process is trusted: messages are parsed
 * with every length checked (wire/), shared memory is read with every
 * count, offset and sequence number checked, and records are validated in
 * a private copy before they reach a trace file (drain/consumer.c).
 */
#ifndef ST_DAEMON_H
#define ST_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/daemon/model/state.h"

struct st_daemon_config {
	const char *rundir;	/* where the socket lives */
	uint32_t clock;		/* 0: auto */
	bool foreground;
	bool private_instance;	/* started by `shimtrace record` */
	int log_level;
	const char *group;	/* who may send commands (default ST_GROUP) */
	uint64_t max_memory;	/* all sessions' buffers; 0: st_default_max_memory() */
	/* where the libraries an attach loads are (sessions that attach:
	 * cmd/sessattach.c); NULL: none attaches */
	const char *libdir_core, *libdir_wrappers;
};

int st_daemon_init(struct st_daemon *d, const struct st_daemon_config *cfg, char *err,
		   size_t errlen);
int st_daemon_run(struct st_daemon *d);
/* Ends st_daemon_run (a signal; record's command ended). */
void st_daemon_quit(struct st_daemon *d);
void st_daemon_fini(struct st_daemon *d);
/* Runs the loop until no inspector request is out, or for at most ms. */
void st_daemon_settle(struct st_daemon *d, uint32_t ms);

#endif
