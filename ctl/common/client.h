/*
 * Talking to a session daemon from the command line (client.c).
 */
#ifndef ST_CTL_CLIENT_H
#define ST_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/abi.h"

#define ST_SYSTEM_RUNDIR ST_ABI_SYSTEM_RUNDIR

/* The run directory of the user's own daemon ($SHIMTRACE_RUNDIR,
 * $XDG_RUNTIME_DIR/shimtrace, or the system one for root); "" if unknown. */
void st_user_rundir(char *buf, size_t n);

/*
 * Sends verb and its "key=value" items to the daemon and relays the reply;
 * returns the exit status. With autostart, starts the user's daemon first
 * if none runs.
 */
int st_client_request(const char *verb, const char *const *items, size_t nitems, bool autostart);
/* The same, the reply's text to out and its error lines to errout, the
 * client's own too ("shimtrace LABEL: ...": on standard error, said as
 * st_err says, when errout is stderr). */
int st_client_call(const char *label, const char *verb, const char *const *items, size_t nitems,
		   bool autostart, FILE *out, FILE *errout);

#endif
