/*
 * A pool's mapping and the consumer's state of it, let go of: a process's
 * own pool (proc.c) or a user's (userpool.c).
 *
 * Owns: nothing kept.
 * Thread: the daemon's, the reactor's one thread.
 * Calls: out.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctl/daemon/model/proc.h"
#include "ctl/daemon/out/trace.h"

void st_proc_pool_unmap(struct st_proc_pool *pool)
{
	for (uint32_t i = 0; pool->slots && i < pool->ring.nslots; i++) {
		if (pool->slots[i].has_stream)
			st_stream_close(&pool->slots[i].stream);
		free(pool->slots[i].taken);
		free(pool->slots[i].in_place);
	}
	if (pool->has_meta)
		st_stream_close(&pool->meta);
	if (pool->ring.base)
		munmap(pool->ring.base, pool->ring.size);
	if (pool->ring.base && pool->ring.fd >= 0)
		close(pool->ring.fd); /* a memfd: its close never waits */
	free(pool->slots);
	memset(pool, 0, sizeof(*pool));
}
