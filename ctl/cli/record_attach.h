/*
 * record --pid (record_attach.c): record's daemon attached to running
 * processes for the length of the recording.
 */
#ifndef ST_CLI_RECORD_ATTACH_H
#define ST_CLI_RECORD_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/daemon/cmd/attach.h"
#include "ctl/daemon/model/state.h"

/*
 * Attaches the n processes pids to d (listening in rundir; w: what is
 * loaded into them, libshimtrace-attach.so, libshimtrace.so, then the
 * families, and their call stacks), runs d until they have all exited or
 * a signal came, and detaches those still running. Returns 0, or -1 when
 * one could not be attached (said; none is left attached).
 */
int st_record_attach(struct st_daemon *d, const char *rundir, const struct st_attach_what *w,
		     const pid_t *pids, int n, bool quiet);

#endif /* ST_CLI_RECORD_ATTACH_H */
