/*
 * The live heap blocks of a trace's processes, as a pass goes (from the
 * malloc family's events, heapev.h), to tell which block holds an
 * address: `report locks` names a lock in the heap by its block's
 * allocation ("in a 64-byte block from conn_new (conn.c:88)").
 *
 * A block is kept by its process and address with its size and the call
 * site that allocated it. Finding the block that holds an address looks
 * for a block starting at it or below, 16 bytes at a time (malloc's
 * alignment) for up to ST_HEAPBLOCK_REACH bytes: a lock farther into a
 * bigger block is not named. Memory grows with the live blocks.
 */
#ifndef ST_REPORT_HEAPBLOCKS_H
#define ST_REPORT_HEAPBLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/reader.h"
#include "ctl/report/heapev.h"
#include "ctl/report/map.h"

#define ST_HEAPBLOCK_REACH 65536

struct st_heapblock {
	uint64_t start, size, ip; /* ip: where it was allocated */
};

struct st_heapblocks {
	struct st_heap_cls *cls;
	uint32_t ncls;
	struct st_map live; /* (pid, start) -> blocks[] */
	struct st_heapblock *blocks;
	uint32_t nblocks, blocks_cap;
	uint32_t *free_slots;
	uint32_t nfree, free_cap;
	bool any; /* a heap event was seen */
	/* what the last event given was: a heap event or not, and the bytes
	 * it added to its process's live blocks (negative: freed), for a
	 * counter of the heap's size (the Perfetto export's) */
	bool last_was_heap;
	int64_t last_change;
};

void st_heapblocks_init(struct st_heapblocks *h);
void st_heapblocks_fini(struct st_heapblocks *h);
/* Takes ev into account if it is a heap event; -1 when out of memory. */
int st_heapblocks_event(struct st_heapblocks *h, const struct st_event *ev);
/* The live block of process pid that holds addr, or NULL. */
const struct st_heapblock *st_heapblocks_find(const struct st_heapblocks *h, int32_t pid,
					      uint64_t addr);

#endif
