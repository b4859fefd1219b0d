/*
 * Potential deadlocks: the cycles of the lock-order graph (lockstat.h's
 * edges: lock B taken, blocking, while A was held). A cycle means threads
 * took the same locks in orders that can deadlock, whether or not this
 * run did. Try-locks give no edge (they cannot wait), a recursive lock
 * taken again gives none, nor do two sides of one rwlock; a cycle of read
 * sides only is not one (readers do not exclude each other).
 */
#ifndef ST_REPORT_LOCKORDER_H
#define ST_REPORT_LOCKORDER_H

#include <stdint.h>

#include "ctl/report/lockstat.h"

/* At most this many cycles are listed, of at most this many locks. */
#define ST_CYCLES_MAX 100
#define ST_CYCLE_LEN_MAX 8

struct st_cycle {
	uint32_t n;			    /* locks in the cycle */
	uint32_t edges[ST_CYCLE_LEN_MAX]; /* indexes into ls->edges, in order */
};

/* Finds the elementary cycles (each once, from its lowest lock); returns
 * how many were stored in *out (allocated; free it), or -1 when out of
 * memory. *more: some were left out (over the limits). */
int st_lock_cycles(const struct st_lockstat *ls, struct st_cycle **out, bool *more);

#endif
