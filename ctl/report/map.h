/*
 * A hash map from a pair of 64-bit keys (a process and an address, say)
 * to a 32-bit value (an index into the caller's array): open addressing,
 * linear probing, deletion by backward shift, so that a map of live heap
 * blocks keeps its size with the blocks, not with the frees.
 */
#ifndef ST_REPORT_MAP_H
#define ST_REPORT_MAP_H

#include <stdbool.h>
#include <stdint.h>

struct st_map_slot {
	uint64_t a, b;
	uint32_t value;
	bool used;
};

struct st_map {
	struct st_map_slot *v;
	uint32_t size, n; /* size: a power of two, or 0 */
};

/* The value of (a, b), or -1. */
int64_t st_map_get(const struct st_map *m, uint64_t a, uint64_t b);
/* Sets (a, b) to value; 0, or -1 when out of memory. */
int st_map_put(struct st_map *m, uint64_t a, uint64_t b, uint32_t value);
/* Removes (a, b); its value, or -1 when it was not there. */
int64_t st_map_del(struct st_map *m, uint64_t a, uint64_t b);
void st_map_free(struct st_map *m);

#endif
