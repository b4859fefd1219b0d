/*
 * ATTACH (attach.c): the tracer loaded into a running process started
 * without it and its calls redirected, or sent back, by ptrace.
 */
#ifndef ST_INSPECT_ATTACH_H
#define ST_INSPECT_ATTACH_H

#include <stddef.h>

#include "ctl/inspect/proto.h"

/* Answers an ATTACH request a (pidfd: its process's), whose libraries
 * follow it: len bytes at libs. */
void st_insp_attach(const struct st_insp_attach *a, const char *libs, size_t len, int pidfd);

#endif /* ST_INSPECT_ATTACH_H */
