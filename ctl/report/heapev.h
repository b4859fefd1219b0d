/*
 * What a malloc-family event does to the heap (heapev.c), for every
 * report that follows the heap: `report malloc`, and `report locks`,
 * which names a lock in a heap block by the block's allocation.
 *
 * An allocation hands out ptr (size bytes: calloc's nmemb times size,
 * saturated); a realloc frees old and hands out ptr (realloc(p, 0)
 * returning NULL only frees p); a free frees ptr. A failed call (a NULL
 * result, or a non-zero result field: posix_memalign) changes nothing.
 */
#ifndef ST_REPORT_HEAPEV_H
#define ST_REPORT_HEAPEV_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/reader.h"

enum st_heap_op { ST_HEAP_NONE, ST_HEAP_ALLOC, ST_HEAP_REALLOC, ST_HEAP_FREE };

/* An event class, as the heap sees it (op NONE: not a heap event). */
struct st_heap_cls {
	bool known;
	enum st_heap_op op;
	int size, nmemb, ptr, old, result, stack;
};

/* What an event did. */
struct st_heap_change {
	enum st_heap_op op;
	bool failed; /* the call failed: nothing changed */
	uint64_t ptr, size, old;
	const struct st_value *stack; /* its call stack's field, or NULL */
};

/* Fills k for class c (from the malloc spec's means=). */
void st_heap_cls_init(struct st_heap_cls *k, const struct st_event_class *c);

/* What ev, of class k (op not NONE), did. */
void st_heap_change_of(const struct st_heap_cls *k, const struct st_event *ev,
		       struct st_heap_change *out);

#endif
