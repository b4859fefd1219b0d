/*
 * OBJECTS (objects.c): the loaded objects of a process, each with its ELF
 * facts and the identity of its file, the files handed to the lines
 * inspector of the pair.
 */
#ifndef ST_INSPECT_OBJECTS_H
#define ST_INSPECT_OBJECTS_H

#include "ctl/inspect/proto.h"

/* Answers an OBJECTS request about t (pidfd: its pidfd). */
void st_insp_objects(const struct st_insp_target *t, int pidfd);

#endif /* ST_INSPECT_OBJECTS_H */
