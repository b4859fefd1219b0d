/*
 * DYNPROBE (dynprobe.c): planting or removing a dynamic probe in a
 * running process, by ptrace.
 */
#ifndef ST_INSPECT_DYNPROBE_H
#define ST_INSPECT_DYNPROBE_H

#include "ctl/inspect/proto.h"

/*
 * Answers a DYNPROBE request: the library (its absolute path) loaded if
 * it is not, the command (dynprobe/ctl.h) run by it at a safe point,
 * and what it planned written with every thread stopped.
 */
void st_insp_dynprobe(const struct st_insp_target *t, const char *library, const char *command,
		      int pidfd);

#endif /* ST_INSPECT_DYNPROBE_H */
