/*
 * PROBE (probe.c): load-probe's dlopen of a library in a running process,
 * by ptrace.
 */
#ifndef ST_INSPECT_PROBE_H
#define ST_INSPECT_PROBE_H

#include "ctl/inspect/proto.h"

/* Answers a PROBE request: dlopen(library) in t (pidfd: its pidfd). */
void st_insp_probe(const struct st_insp_target *t, const char *library, int pidfd);

#endif /* ST_INSPECT_PROBE_H */
