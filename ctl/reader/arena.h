/*
 * A bump allocator for the parsed metadata: everything the TSDL parser
 * builds lives until the trace is closed and is freed at once, so no
 * error path has to unwind half-built lists.
 */
#ifndef ST_READER_ARENA_H
#define ST_READER_ARENA_H

#include <stddef.h>

struct st__chunk;

struct st__arena {
	struct st__chunk *head;
	size_t total; /* bytes handed out: bounds what hostile metadata costs */
};

/* Zeroed memory aligned for any type, or NULL when out of memory. */
void *st__arena_alloc(struct st__arena *a, size_t n);
/* A NUL-terminated copy of s[0..n), or NULL when out of memory. */
char *st__arena_strndup(struct st__arena *a, const char *s, size_t n);
void st__arena_free(struct st__arena *a);

#endif
