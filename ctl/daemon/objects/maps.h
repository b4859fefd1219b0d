/*
 * A process's loaded objects (maps.c): read by its owner's inspector,
 * written as its statedump, and waited for by drains and stops.
 */
#ifndef ST_DAEMON_OBJECTS_MAPS_H
#define ST_DAEMON_OBJECTS_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/model/state.h"
#include "ctl/daemon/out/trace.h"

void st_objects_free(struct st_object *objs, uint32_t n);
/* The mappings of p changed (a MAPS message of this kind, at ts): its
 * objects are read again if a session traces it, else when one does. */
void st_statedump(struct st_daemon *d, struct st_proc *p, uint32_t kind, uint64_t ts);
/* Session s just got p's pool: the objects loaded now, as its statedump. */
void st_statedump_session(struct st_daemon *d, struct st_proc *p, uint32_t s);
/* The statedumps owed to the sessions that gave p its user's pool
 * (p->statedump_owed), as st_statedump_session. */
void st_statedump_owed(struct st_daemon *d, struct st_proc *p);
/* Writes p's full statedump (the objects known now), at ts, into stream. */
int st_statedump_into(struct st_proc *p, struct st_trace *t,
		      struct st_stream *stream, uint64_t ts);
/* Reads p's objects again if p->refresh_objects (their files are handed
 * to the lines inspector again); between two drains. */
void st_objects_refresh(struct st_daemon *d, struct st_proc *p);
/* Answers p's SYNC with sequence seq: now, or once its objects are in. */
void st_proc_sync(struct st_daemon *d, struct st_proc *p, uint64_t seq);
/* Whether the consumer should wait before draining p (its objects or line
 * tables are on their way, for a bounded time). */
bool st_proc_waiting(struct st_proc *p);
/* How maps.c drains a process's events before one of its objects goes
 * (the consumer, above it: set by the wiring). */
extern void (*st_objects_drain)(struct st_daemon *d, struct st_proc *p, bool wait);
/* Applies p's new object list if it waited and may wait no more. */
void st_proc_apply_due(struct st_daemon *d, struct st_proc *p);

/* What maps.c holds of p, freed (p is being freed). */
void st_objects_forget(struct st_proc *p);
/* The consumer left p's events waiting for line tables (now), or a line
 * table came: drains wait (st_proc_waiting), or wait no more. */
void st_objects_lines_wait(struct st_proc *p);
void st_objects_lines_came(struct st_proc *p);
/* p's objects are dated from ts when next read (a process found running:
 * the time it was found). */
void st_objects_changed(struct st_proc *p, uint64_t ts);
/* p's objects are to be read again between two drains (a line table's
 * file must be handed to the lines inspector again: callsite.c). */
void st_objects_want_refresh(struct st_proc *p);

#endif
