/*
 * The live heap blocks of a trace (see heapblocks.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ctl/report/grow.h"
#include "ctl/report/heapblocks.h"

void st_heapblocks_init(struct st_heapblocks *h)
{
	memset(h, 0, sizeof(*h));
}

void st_heapblocks_fini(struct st_heapblocks *h)
{
	free(h->cls);
	st_map_free(&h->live);
	free(h->blocks);
	free(h->free_slots);
	memset(h, 0, sizeof(*h));
}

static int drop(struct st_heapblocks *h, int32_t pid, uint64_t ptr)
{
	int64_t b = st_map_del(&h->live, (uint64_t)(uint32_t)pid, ptr);

	if (b < 0)
		return 0;
	h->last_change -= (int64_t)h->blocks[b].size;
	if (st_grow(&h->free_slots, &h->free_cap, h->nfree, sizeof(*h->free_slots)) < 0)
		return -1;
	h->free_slots[h->nfree++] = (uint32_t)b;
	return 0;
}

static int add(struct st_heapblocks *h, int32_t pid, uint64_t ptr, uint64_t size, uint64_t ip)
{
	uint32_t b;

	/* (handed out again while live: its free was not traced) */
	if (drop(h, pid, ptr) < 0)
		return -1;
	if (h->nfree) {
		b = h->free_slots[--h->nfree];
	} else {
		if (st_grow(&h->blocks, &h->blocks_cap, h->nblocks, sizeof(*h->blocks)) < 0)
			return -1;
		b = h->nblocks++;
	}
	h->blocks[b] = (struct st_heapblock){ .start = ptr, .size = size, .ip = ip };
	h->last_change += (int64_t)size;
	return st_map_put(&h->live, (uint64_t)(uint32_t)pid, ptr, b);
}

int st_heapblocks_event(struct st_heapblocks *h, const struct st_event *ev)
{
	struct st_heap_cls *k = st_class_slot(&h->cls, &h->ncls, sizeof(*h->cls), ev->cls->index);
	struct st_heap_change c;

	h->last_was_heap = false;
	h->last_change = 0;
	if (!k)
		return -1;
	if (!k->known)
		st_heap_cls_init(k, ev->cls);
	if (k->op == ST_HEAP_NONE)
		return 0;
	h->any = h->last_was_heap = true;
	st_heap_change_of(k, ev, &c);
	if (c.failed)
		return 0;
	if (c.op == ST_HEAP_FREE)
		return drop(h, ev->pid, c.ptr);
	if (c.op == ST_HEAP_REALLOC && c.old && drop(h, ev->pid, c.old) < 0)
		return -1;
	return c.ptr ? add(h, ev->pid, c.ptr, c.size, ev->ip) : 0;
}

const struct st_heapblock *st_heapblocks_find(const struct st_heapblocks *h, int32_t pid,
					      uint64_t addr)
{
	if (!h->any)
		return NULL;
	for (uint64_t back = 0; back < ST_HEAPBLOCK_REACH && back <= addr; back += 16) {
		int64_t b = st_map_get(&h->live, (uint64_t)(uint32_t)pid, (addr - back) & ~(uint64_t)15);

		if (b >= 0) {
			const struct st_heapblock *blk = &h->blocks[b];

			return addr - blk->start < blk->size ? blk : NULL;
		}
	}
	return NULL;
}
